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
use std::sync::{Arc, Mutex};

use crate::sync::lock;
use crate::transport::inspect::{inspect, Direction, Observed};
use crate::transport::memory;

/// Frames seen on a connection, in order, with the way each went.
pub type Log = Arc<Mutex<Vec<(Direction, String)>>>;

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
        let server_wire = Log::default();
        let record = server_wire.clone();
        let recorded = inspect(a, move |direction, frame| {
            if let Observed::Message(m) = frame {
                lock(&record).push((direction, String::from_utf8_lossy(m).into_owned()));
            }
        });
        let connection = server.start(recorded);
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
        lock(&self.server_wire)
            .iter()
            .filter(|(dir, _)| *dir == d)
            .map(|(_, f)| f.clone())
            .collect()
    }
}
