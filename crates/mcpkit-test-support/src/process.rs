//! What every test that starts a real program needs: the program itself (a missing one fails the
//! test, naming its Debian package), a free loopback port, and a scratch directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The path of `program` (on the PATH, or in `/usr/sbin` where Debian puts daemons), or a panic
/// saying which Debian package provides it: a missing tool fails the test, it never skips it.
pub fn require_tool(program: &str, package: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{program} is not installed: apt-get install {package} \
                 (scripts/test.sh installs it when run as root: scripts/setup-cluster-tools.sh)"
            )
        })
}

/// A loopback port that was free a moment ago (bound, then released). Another process may take
/// it before the caller binds it; callers that can, retry.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// A directory of its own under the system temp dir, removed on drop.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new empty directory whose name says `what` it is for.
    pub fn new(what: &str) -> ScratchDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mcpkit-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
