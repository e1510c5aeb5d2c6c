//! mcpkit: the Model Context Protocol for Rust — server and client SDK over one connection engine.
#![forbid(unsafe_code)]

#[cfg(feature = "client")]
pub mod client;
pub mod error;
pub mod peer;
#[cfg(feature = "server")]
pub mod server;
#[cfg(all(feature = "server", feature = "client"))]
pub mod testing;
pub mod transport;
mod wire;

#[cfg(feature = "client")]
pub use client::{Client, ClientBuilder};
pub use error::{Error, Result};
pub use mcpkit_types as types;
pub use peer::{Connection, Peer, PeerOptions, RequestOptions};
#[cfg(feature = "server")]
pub use server::{Server, ServerBuilder};
