//! `--watch`: when a file under the watched paths changes, rebuild (`cargo build` for a
//! `-- cargo run …` server, its errors shown in the page and the old server kept), restart the
//! server and reconnect; the page stays and reloads what it shows.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};
use serde_json::json;

use super::hub::Hub;
use super::session;
use crate::target::{Endpoint, Failure, Target};

/// Changes closer together than this are one change (an editor's save is several events).
const SETTLE: Duration = Duration::from_millis(250);

/// What to watch and how to rebuild.
#[derive(Debug)]
pub(super) struct Plan {
    paths: Vec<PathBuf>,
    /// The build: cargo (the target's own program), its arguments, and where to run it.
    build: Option<Build>,
}

/// The plan for `target`: `given` paths, or a Cargo project's `src/`; `None` when there is
/// nothing to watch.
pub(super) fn plan(target: &Target, given: &[PathBuf]) -> Result<Option<Plan>, Failure> {
    let build = cargo_build(target);
    let paths = match (&build, given.is_empty()) {
        (_, false) => given.to_vec(),
        (Some(b), true) if b.dir.join("Cargo.toml").is_file() => vec![b.dir.join("src")],
        _ => return Ok(None),
    };
    for p in &paths {
        if !p.exists() {
            return Err(Failure::usage(format!(
                "--watch {}: no such file or folder",
                p.display()
            )));
        }
    }
    Ok(Some(Plan { paths, build }))
}

/// `cargo build …` for a `cargo run …` server.
#[derive(Debug, PartialEq, Eq)]
struct Build {
    /// The target's cargo.
    program: String,
    args: Vec<String>,
    dir: PathBuf,
}

/// For `cargo [+toolchain] run ARGS [-- …]`: `cargo build` with the same ARGS, and the folder
/// it runs in.
fn cargo_build(target: &Target) -> Option<Build> {
    let Endpoint::Command { program, args, cwd, .. } = &target.endpoint else {
        return None;
    };
    if Path::new(program).file_stem().and_then(|s| s.to_str()) != Some("cargo") {
        return None;
    }
    let run = args.iter().position(|a| a == "run")?;
    let mut build: Vec<String> = args[..run].to_vec();
    build.push("build".to_owned());
    build.extend(args[run + 1..].iter().take_while(|a| *a != "--").cloned());
    let dir = match cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().ok()?,
    };
    Some(Build {
        program: program.clone(),
        args: build,
        dir,
    })
}

/// Watch until the task is dropped: on each change, rebuild when there is a build, then
/// restart the server.
pub(super) async fn run(plan: Plan, target: Target, hub: Arc<Hub>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(e) = event {
            // Reading a file is no change (the build reads them all).
            if !matches!(e.kind, EventKind::Access(_)) {
                let _ = tx.send(());
            }
        }
    });
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            eprintln!("mcpkit dev: cannot watch files: {e}");
            return;
        }
    };
    for p in &plan.paths {
        if let Err(e) = watcher.watch(p, RecursiveMode::Recursive) {
            eprintln!("mcpkit dev: cannot watch {}: {e}", p.display());
            return;
        }
    }
    while rx.recv().await.is_some() {
        // Let the burst settle.
        while let Ok(Some(())) = tokio::time::timeout(SETTLE, rx.recv()).await {}
        if let Some(b) = &plan.build {
            hub.publish(json!({"kind": "building"}));
            let (ok, output) = build(b).await;
            hub.publish(json!({"kind": "build", "ok": ok, "output": output}));
            if !ok {
                eprintln!("mcpkit dev: the build failed (its errors are in the page); the server keeps running");
                continue;
            }
        }
        eprintln!("mcpkit dev: a watched file changed; restarting the server");
        session::restart(&target, &hub).await;
    }
    drop(watcher);
}

/// Run the build: whether it succeeded, and what it wrote.
async fn build(b: &Build) -> (bool, String) {
    let out = tokio::process::Command::new(&b.program)
        .args(&b.args)
        .current_dir(&b.dir)
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    match out {
        Ok(o) => {
            let mut text = String::from_utf8_lossy(&o.stderr).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stdout));
            (o.status.success(), text)
        }
        Err(e) => (false, format!("cannot run cargo: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(program: &str, args: &[&str]) -> Target {
        Target {
            endpoint: Endpoint::Command {
                program: program.to_owned(),
                args: args.iter().map(|s| (*s).to_owned()).collect(),
                env: Default::default(),
                cwd: Some(PathBuf::from("/p")),
            },
            label: String::new(),
            stderr: Default::default(),
        }
    }

    #[test]
    fn cargo_run_becomes_cargo_build_with_its_flags() {
        let t = command("cargo", &["+nightly", "run", "-q", "--bin", "srv", "--", "--stdio"]);
        let b = cargo_build(&t).unwrap();
        assert_eq!(b.program, "cargo");
        assert_eq!(b.args, ["+nightly", "build", "-q", "--bin", "srv"]);
        assert_eq!(b.dir, PathBuf::from("/p"));
        assert!(cargo_build(&command("python", &["run"])).is_none());
        assert!(cargo_build(&command("cargo", &["test"])).is_none());
    }
}
