//! `mcpkit dev -- cargo run …` watches the project's `src/` without being told, and on a change
//! runs `cargo build` with the run's flags before restarting: a failed build is sent to the page
//! (its output) and the running server is kept; the next good build restarts it.
//!
//! The cargo here is a stand-in script named `cargo` (the target's program is what builds): its
//! `build` fails while `src/broken` exists, and its `run` starts the reference server, so the
//! test needs no Rust project compiled.

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use mcpkit_test_support::process::ScratchDir;

use crate::support::dev_host::DevHost;

#[tokio::test(flavor = "multi_thread")]
async fn a_cargo_server_is_rebuilt_and_a_failed_build_is_shown() {
    let project = ScratchDir::new("dev-cargo");
    let dir = project.path();
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"srv\"\n").unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let cargo = dir.join("cargo");
    let log = dir.join("builds.log");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\n\
             case \"$1\" in\n\
             build) echo \"$@\" >> {log}\n\
                    if [ -e src/broken ]; then echo 'error[E0308]: mismatched types' >&2; exit 101; fi\n\
                    echo 'Finished' >&2; exit 0;;\n\
             run) exec {mcpkit} serve;;\n\
             esac\n\
             exit 2\n",
            log = log.display(),
            mcpkit = env!("CARGO_BIN_EXE_mcpkit"),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();

    let dev = DevHost::start_in(dir, &["--", cargo.to_str().unwrap(), "run", "-q", "--bin", "srv"]);
    let mut events = dev.events().await;
    events
        .until("connected", |e| e["kind"] == "connected" && e["generation"] == 1)
        .await;

    // A broken change: the build's errors reach the page, the server stays.
    std::fs::write(dir.join("src/broken"), "").unwrap();
    let failed = events.until("build", |e| e["kind"] == "build").await;
    assert_eq!(failed["ok"], false, "{failed}");
    assert!(
        failed["output"]
            .as_str()
            .unwrap()
            .contains("error[E0308]: mismatched types"),
        "{failed}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let state = dev.state().await;
    assert_eq!(
        (state["connected"].clone(), state["generation"].clone()),
        (true.into(), 1.into())
    );
    assert!(dev.stderr().contains("the build failed"), "{}", dev.stderr());

    // Fixed: built, restarted, reconnected.
    std::fs::remove_file(dir.join("src/broken")).unwrap();
    // (An editor's save may come as two bursts: a second failed build may come first.)
    events
        .until("a good build", |e| e["kind"] == "build" && e["ok"] == true)
        .await;
    events
        .until("reconnected", |e| e["kind"] == "connected" && e["generation"] == 2)
        .await;
    // `cargo build` got the run's own flags.
    let builds = std::fs::read_to_string(&log).unwrap();
    assert!(builds.lines().all(|l| l == "build -q --bin srv"), "{builds}");
    assert!(builds.lines().count() >= 2, "{builds}");
}
