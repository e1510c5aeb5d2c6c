//! Streamable HTTP on a Unix domain socket: binding the socket file (its mode, a stale file
//! left by a server that died) and removing it when `HttpServer::serve_unix` returns.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{UnixListener, UnixSocket, UnixStream};

/// The backlog of a socket bound by [`bind_unix`] (the kernel caps it at `somaxconn`).
const BACKLOG: u32 = 1024;
/// How long [`bind_unix`] waits to learn whether a server still listens on an existing socket.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Bind a Unix domain socket at `path` for [`super::HttpServer::serve_unix`], readable and
/// writable by its owner alone (mode 0600: connecting needs write permission, so no other user
/// can connect). The mode is set between `bind` and `listen`, so no connection is ever accepted
/// under a looser one.
///
/// A socket file already at `path` is probed: when nothing listens there any more (a server
/// that died without removing it) it is replaced; when a server answers, the call fails with
/// `AddrInUse`. Any other kind of file at `path` is never removed (`AlreadyExists`).
pub async fn bind_unix(path: impl AsRef<Path>) -> io::Result<UnixListener> {
    let path = path.as_ref();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            match tokio::time::timeout(PROBE_TIMEOUT, UnixStream::connect(path)).await {
                Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    tracing::info!("removing the stale socket file {}", path.display());
                    std::fs::remove_file(path)?;
                }
                Ok(Err(e)) => return Err(e),
                Ok(Ok(_)) | Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrInUse,
                        format!("a server is listening on {} already", path.display()),
                    ))
                }
            }
        }
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket: it is not replaced", path.display()),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let socket = UnixSocket::new_stream()?;
    socket.bind(path)?;
    let listening =
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).and_then(|()| socket.listen(BACKLOG));
    match listening {
        Ok(listener) => Ok(listener),
        Err(e) => {
            // The file is ours (just bound): do not leave it behind.
            let _ = std::fs::remove_file(path);
            Err(e)
        }
    }
}

/// The socket file a listener was bound at, identified by its inode, to be removed when the
/// server is done with it.
#[derive(Debug)]
pub(super) struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl SocketFile {
    /// The file `listener` is bound at; `None` for an unnamed or abstract socket, or one whose
    /// file is already gone.
    pub(super) fn of(listener: &UnixListener) -> Option<SocketFile> {
        let addr = listener.local_addr().ok()?;
        let path = addr.as_pathname()?.to_path_buf();
        let meta = std::fs::symlink_metadata(&path).ok()?;
        meta.file_type().is_socket().then(|| SocketFile {
            dev: meta.dev(),
            ino: meta.ino(),
            path,
        })
    }

    /// Remove the file, unless another has taken its path since (a new server's socket).
    pub(super) fn remove(self) {
        let same = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.file_type().is_socket() && m.dev() == self.dev && m.ino() == self.ino);
        if same {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!("the socket file {} was not removed: {e}", self.path.display());
            }
        }
    }
}
