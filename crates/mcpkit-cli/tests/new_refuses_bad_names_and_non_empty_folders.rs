//! `mcpkit new` refuses a folder that exists and is not empty, and a name that cannot be a
//! crate's, with one line saying why (and writes nothing).

use assert_cmd::Command;

fn new(args: &[&str], cwd: &std::path::Path) -> (Option<i32>, String) {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .arg("new")
        .args(args)
        .current_dir(cwd)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_non_empty_folder_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("demo")).unwrap();
    std::fs::write(dir.path().join("demo/notes.txt"), "mine").unwrap();
    let (code, stderr) = new(&["demo"], dir.path());
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "mcpkit new: demo already exists and is not empty; pick another name or empty it first\n"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path().join("demo")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn an_empty_folder_is_used() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("demo")).unwrap();
    let (code, stderr) = new(&["demo"], dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(dir.path().join("demo/src/lib.rs").is_file());
}

#[test]
fn names_that_are_not_crate_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("my server", "mcpkit new: \"my server\" is not a valid crate name: ' ' is not allowed (use letters, digits, '-' and '_'), e.g. \"my-server\"\n"),
        ("2fast", "mcpkit new: \"2fast\" is not a valid crate name: it starts with a digit, e.g. \"mcp-2fast\" would do\n"),
        ("struct", "mcpkit new: \"struct\" is not a valid crate name: struct is a Rust keyword, e.g. \"struct-server\" would do\n"),
        ("mcpkit", "mcpkit new: \"mcpkit\" is not a valid crate name: the project depends on mcpkit itself, e.g. \"mcpkit-server\" would do\n"),
    ];
    for (name, expected) in cases {
        let (code, stderr) = new(&[name], dir.path());
        assert_eq!(code, Some(2), "{name}");
        assert_eq!(stderr, expected);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_path_that_is_not_a_checkout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = new(&["demo", "--mcpkit-path", "."], dir.path());
    assert_eq!(code, Some(2));
    assert!(stderr.contains("neither a clone of the mcpkit repository"), "{stderr}");
    assert!(!dir.path().join("demo").exists());
}
