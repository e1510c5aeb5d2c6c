//! The one HTTP harness of mcpkit's tests: an [`HttpServer`] served on 127.0.0.1 (for what
//! needs a real socket: SSE streams, concurrency, shutdown, clients), or its router driven
//! with `tower::ServiceExt::oneshot` (no socket), and the raw requests both take.

use std::net::SocketAddr;

use mcpkit::server::http::HttpServer;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// An endpoint served on 127.0.0.1; stopped (aborted) when dropped.
pub struct Served {
    pub addr: SocketAddr,
    /// The Streamable HTTP endpoint, `http://ADDR/mcp`.
    pub url: String,
    /// Fires the graceful shutdown.
    pub stop: CancellationToken,
    pub task: JoinHandle<std::io::Result<()>>,
}

impl Served {
    /// Serve `http` (its stop token replaced by [`Served::stop`]) on a free loopback port.
    pub async fn start(http: HttpServer) -> Served {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let task = tokio::spawn(http.shutdown(stop.clone()).serve(listener));
        Served {
            addr,
            url: format!("http://{addr}/mcp"),
            stop,
            task,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}
