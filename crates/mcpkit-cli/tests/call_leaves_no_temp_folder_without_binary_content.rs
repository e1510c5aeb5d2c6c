//! `mcpkit call` without `--out` creates a `mcpkit-*` folder in the temporary directory only
//! when the result has something to save, and names where it saved each file.

use assert_cmd::Command;

fn call_in(tmp: &std::path::Path, tool: &str) -> String {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .env("TMPDIR", tmp)
        .args(["call", tool])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

#[test]
fn call_without_out_creates_no_temp_folder_when_nothing_is_saved() {
    let tmp = tempfile::tempdir().unwrap();
    call_in(tmp.path(), "test_simple_text");
    call_in(tmp.path(), "test_embedded_resource");
    assert_eq!(entries(tmp.path()), Vec::<std::path::PathBuf>::new());
}

#[test]
fn call_without_out_saves_binary_content_in_one_temp_folder_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let out = call_in(tmp.path(), "test_image_content");
    let made = entries(tmp.path());
    assert_eq!(made.len(), 1, "{made:?}");
    let folder = &made[0];
    assert!(folder.file_name().unwrap().to_str().unwrap().starts_with("mcpkit-"));
    let file = entries(folder).pop().unwrap();
    assert!(out.contains(&format!("saved to {}", file.display())), "{out}");
}
