//! `mcpkit skills` lists the reference server's skills; `mcpkit skills get NAME` writes every
//! file of the skill, verified, into ./NAME (or `--out DIR`), refuses an existing directory and
//! an unknown name with exit status 2; `mcpkit inspect` names the declared extension.

use assert_cmd::Command;
use mcpkit_cli::reference::skills::{PDF_FORMS_MD, PDF_SKILL_MD};

fn mcpkit(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_get_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = mcpkit(dir.path(), &["skills"]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(names, ["pdf-processing", "refunds", "git-workflow"]);

    let (code, out, err) = mcpkit(dir.path(), &["skills", "get", "pdf-processing"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("verified ")).count(), 4, "{out}");
    let root = dir.path().join("pdf-processing");
    assert_eq!(std::fs::read_to_string(root.join("SKILL.md")).unwrap(), PDF_SKILL_MD);
    assert_eq!(
        std::fs::read_to_string(root.join("references/FORMS.md")).unwrap(),
        PDF_FORMS_MD
    );

    // By URI, into a directory of our choosing.
    let (code, _, err) = mcpkit(
        dir.path(),
        &["skills", "get", "skill://acme/billing/refunds/SKILL.md", "--out", "r"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(dir.path().join("r/examples/email.md").is_file());

    let (code, _, err) = mcpkit(dir.path(), &["skills", "get", "pdf-processing"]);
    assert_eq!(code, 2);
    assert!(err.contains("already exists"), "{err}");
    let (code, _, err) = mcpkit(dir.path(), &["skills", "get", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no listed skill is named \"nope\""), "{err}");
    let (code, _, err) = mcpkit(dir.path(), &["skills", "get", "skill://nope/SKILL.md"]);
    assert_eq!(code, 2);
    assert!(err.contains("No skill is served at skill://nope/SKILL.md"), "{err}");
}

#[test]
fn inspect_json_carries_the_skills() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = mcpkit(dir.path(), &["inspect", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["initialize"]["capabilities"]["extensions"],
        serde_json::json!({
            "io.modelcontextprotocol/skills": {"directoryRead": true},
            "io.modelcontextprotocol/tasks": {},
            "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}
        })
    );
    assert_eq!(v["skills"].as_array().map(Vec::len), Some(3));
}
