//! Test support: a client connected to a server over the in-memory pair, with the server's
//! wire traffic recorded, so each test is a few lines.
//!
//! ```no_run
//! # async fn t() -> mcpkit::Result<()> {
//! use mcpkit::testing::TestPair;
//! let server = mcpkit::Server::builder().build();
//! let pair = TestPair::connect(server, mcpkit::Client::builder()).await?;
//! pair.client.ping().await?;
//! # Ok(()) }
//! ```

use crate::client::{Client, ClientBuilder};
use crate::engine::Connection;
use crate::server::Server;
use crate::transport::memory;
use crate::transport::tap::{Direction, Log, Tap};

/// A connected client/server pair.
#[derive(Debug)]
pub struct TestPair {
    /// The connected, initialized client.
    pub client: Client,
    /// The server.
    pub server: Server,
    /// The server side of the connection.
    pub connection: Connection,
    /// Every frame the server read and wrote.
    pub server_wire: Log,
}

impl TestPair {
    /// Start `server` on one end of an in-memory pair and connect `client` to the other.
    pub async fn connect(server: Server, client: ClientBuilder) -> crate::Result<TestPair> {
        let (a, b) = memory::pair();
        let (tap, server_wire) = Tap::new(a);
        let connection = server.start(tap);
        let client = client.connect(b).await?;
        Ok(TestPair {
            client,
            server,
            connection,
            server_wire,
        })
    }

    /// The frames the server wrote, so far.
    pub fn server_sent(&self) -> Vec<String> {
        self.frames(Direction::Outgoing)
    }

    /// The frames the server read, so far.
    pub fn server_received(&self) -> Vec<String> {
        self.frames(Direction::Incoming)
    }

    fn frames(&self, d: Direction) -> Vec<String> {
        self.server_wire
            .lock()
            .map(|l| l.iter().filter(|(dir, _)| *dir == d).map(|(_, f)| f.clone()).collect())
            .unwrap_or_default()
    }
}
