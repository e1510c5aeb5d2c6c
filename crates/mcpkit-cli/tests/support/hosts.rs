//! Running `mcpkit install` and its siblings against a host file in a scratch home.

use std::path::Path;

use assert_cmd::Command;

/// What a run printed.
pub(crate) struct Run {
    /// Whether it exited 0.
    pub(crate) ok: bool,
    /// Its exit code.
    pub(crate) code: Option<i32>,
    /// Its standard output.
    pub(crate) stdout: String,
    /// Its standard error.
    pub(crate) stderr: String,
}

/// Run mcpkit with HOME, XDG_CONFIG_HOME and CODEX_HOME set to `home`, in `cwd`, so that no
/// default path can reach a real configuration file; with `config`, `--config PATH` goes
/// before any `-- CMD`.
pub(crate) fn mcpkit(args: &[&str], config: Option<&Path>, home: &Path, cwd: &Path) -> Run {
    let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let mut cmd = Command::cargo_bin("mcpkit").unwrap();
    cmd.args(&args[..split]);
    if let Some(config) = config {
        cmd.arg("--config").arg(config);
    }
    let out = cmd
        .args(&args[split..])
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("CODEX_HOME", home)
        .current_dir(cwd)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`mcpkit`] with `--config PATH` in a fresh scratch home and directory.
pub(crate) fn mcpkit_config(args: &[&str], config: &Path) -> (bool, String, String) {
    let scratch = tempfile::tempdir().unwrap();
    let run = mcpkit(args, Some(config), scratch.path(), scratch.path());
    (run.ok, run.stdout, run.stderr)
}
