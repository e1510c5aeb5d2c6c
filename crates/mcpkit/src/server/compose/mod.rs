//! Composition: many servers behind one (the upstream side needs the `client` feature). [`ServerBuilder::mount`] serves another [`Server`] of
//! this process under a prefix; an [`Upstream`] serves the catalogue of a server reached
//! through a [`Client`](crate::Client) (a child process over stdio, Streamable HTTP or the
//! legacy HTTP+SSE transport, in either era), added with [`ServerBuilder::proxy`] or, at run
//! time, [`Server::add_upstream`].
//!
//! Names: the tools and prompts of a mount with prefix `a`, or of an upstream named `a`, are
//! listed as `a_<name>` (a name outside the spec's tool-name rules is a build error for a
//! mount, and left out with a warning for an upstream);
//! resources and resource templates keep their URIs and are read where they came from;
//! completions follow the prompt or template they name. Two items under one name or URI are a
//! [`BuildError`](super::BuildError) from [`ServerBuilder::try_build`] naming both; an item that
//! would collide when a catalogue changes at run time is left out, with a warning.
//!
//! ```
//! # async fn demo() -> mcpkit::Result<()> {
//! use mcpkit::server::compose::Upstream;
//! use mcpkit::server::ToolDef;
//! use mcpkit::testing::TestPair;
//! use mcpkit::Server;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Sum {
//!     a: i64,
//!     b: i64,
//! }
//! // A server of this process, mounted under `math`: its `add` is listed as `math_add`.
//! let math = Server::builder()
//!     .tool(ToolDef::new("add", |mcpkit::Args(s): mcpkit::Args<Sum>| async move { s.a + s.b }))
//!     .build();
//! // Another server, reached through a client (here over the in-memory pair; a child process
//! // or a URL in a gateway), proxied as the upstream `echo`.
//! let remote = Server::builder()
//!     .tool(ToolDef::new("say", || async { "hello" }))
//!     .build();
//! let (here, there) = mcpkit::transport::memory::pair();
//! let _remote_connection = remote.start(there);
//! let upstream = Upstream::new("echo");
//! let client = upstream.relay(mcpkit::Client::builder()).connect(here).await?;
//! upstream.attach(client).await?;
//!
//! let front = Server::builder().mount("math", math).proxy(&upstream).build();
//! let pair = TestPair::connect(front, mcpkit::Client::builder()).await?;
//! let names: Vec<String> = pair.client.list_all_tools().await?.into_iter().map(|t| t.name).collect();
//! assert_eq!(names, ["math_add", "echo_say"]);
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "client")]
mod follow;
#[cfg(feature = "client")]
mod forward;
mod items;
mod mount;
#[cfg(feature = "client")]
mod relay;
#[cfg(feature = "client")]
mod upstream;

#[cfg(feature = "client")]
pub use upstream::Upstream;
