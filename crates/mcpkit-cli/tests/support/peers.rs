//! Where the interop tests find the other SDKs (the pinned installs under tests-interop/ and
//! the interop virtualenv) and how the mcpkit client connects to one of their stdio servers.
//! Each finder asserts the install is there, with how to make it, so a test fails rather
//! than skips.

use std::path::PathBuf;
use std::time::Duration;

use mcpkit::client::ConnectMode;
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::Client;

/// The repository's root.
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The interop Python (with the Python SDK): `MCPKIT_INTEROP_PYTHON`, else the repository's
/// virtualenv.
pub(crate) fn python() -> PathBuf {
    let p = std::env::var_os("MCPKIT_INTEROP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/interop-venv/bin/python"));
    assert!(
        p.exists(),
        "{} not found: run scripts/setup-interop.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

/// tests-interop/python/`file`.
pub(crate) fn python_script(file: &str) -> String {
    repo()
        .join("tests-interop/python")
        .join(file)
        .to_str()
        .unwrap()
        .to_owned()
}

/// tests-interop/`dir`, whose `node_modules` holds `package`.
pub(crate) fn node_package_dir(dir: &str, package: &str) -> PathBuf {
    let dir = repo().join("tests-interop").join(dir);
    assert!(
        dir.join("node_modules").join(package).exists(),
        "{package} is not installed in {}: run scripts/setup-interop-ts.sh (scripts/test.sh does)",
        dir.display()
    );
    dir
}

/// tests-interop/ts, with the TypeScript SDK 1.x installed.
pub(crate) fn ts_dir() -> PathBuf {
    node_package_dir("ts", "@modelcontextprotocol/sdk")
}

/// tests-interop/ts2, with the TypeScript SDK v2 packages installed.
pub(crate) fn ts2_dir() -> PathBuf {
    for package in ["server", "client", "node"] {
        node_package_dir("ts2", &format!("@modelcontextprotocol/{package}"));
    }
    repo().join("tests-interop/ts2")
}

/// tests-interop/apps, with the MCP Apps package installed.
pub(crate) fn apps_dir() -> PathBuf {
    node_package_dir("apps", "@modelcontextprotocol/ext-apps")
}

/// The Node binary: `MCPKIT_NODE` when set, else `node` from the PATH.
pub(crate) fn node() -> PathBuf {
    std::env::var_os("MCPKIT_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from)
}

/// [`node`], checked once to be a Node >= 20 (the v2 SDK's `engines`), so an old Node fails
/// with a clear message.
pub(crate) fn node_20() -> PathBuf {
    static NODE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    NODE.get_or_init(|| {
        let node = node();
        let out = std::process::Command::new(&node)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {} (Node >= 20 is needed): {e}", node.display()));
        let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let major: u32 = version
            .trim_start_matches('v')
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        assert!(
            major >= 20,
            "{} is Node {version}; the TypeScript SDK v2 needs Node >= 20 (set MCPKIT_NODE)",
            node.display()
        );
        node
    })
    .clone()
}

/// Connect the mcpkit client with `mode` to the stdio server `program args…` (its stderr
/// traced), giving the connection and an auto-mode probe 30 s each on a loaded machine.
pub(crate) async fn connect_stdio(mode: ConnectMode, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    let transport = ChildTransport::from_command(cmd, Stderr::Trace).unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder()
            .mode(mode)
            .probe_timeout(Duration::from_secs(30))
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .expect("connect")
}
