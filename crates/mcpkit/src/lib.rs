#![doc = include_str!("../../../README.md")]
//!
//! ## Modules
//!
//! - `apps`: MCP Apps, interactive views for tool results: the server side and the host
//!   bridge (`apps::host`, feature `client`).
//! - [`server`]: [`Server`] builder, tools with extractors, resources, templates, prompts, the
//!   request context; `server::http` (feature `http-server`): its HTTP front end, `HttpServer`
//!   (Streamable HTTP, and the legacy HTTP+SSE transport on request).
//! - [`client`]: [`Client`] with typed calls and handlers for the server's requests.
//! - [`engine`]: the connection engine both roles share.
//! - [`transport`]: stdio, child process, in-memory pair, the Streamable HTTP client
//!   (`transport::http_client`, with legacy HTTP+SSE fallback), a type-erased `BoxTransport`,
//!   and `inspect` (every frame to a callback).
//! - [`testing`]: `TestPair`, a connected client and server for tests.
//! - `auth` (feature `auth`): OAuth 2.1 for HTTP, both sides.
//! - [`telemetry`]: spans and metrics after the OpenTelemetry MCP conventions; Prometheus text
//!   and trace context with feature `otel`, OTLP export with feature `otlp`.
//! - [`types`]: the wire and schema types (the `mcpkit-types` crate).
//!
//! ## Feature flags
//!
//! The defaults are what a first server and client need (the README's, and `mcpkit new`'s
//! project): `server`, `client` and `macros`, with the stdio, child-process and in-memory
//! transports, which are always built. Each other flag adds one piece. "Crates" is the number
//! of distinct crates compiled (normal and build dependencies, mcpkit included):
//! `cargo tree -e normal,build -p mcpkit --prefix none --no-default-features -F SET | sed 's/ (\*)//' | sort -u | wc -l`.
//!
//! | flag | default | what it gates | crates |
//! | --- | --- | --- | ---: |
//! | `server` | yes | the [`server`] module | 67 (alone) |
//! | `client` | yes | the [`client`] module | 67 (alone) |
//! | `macros` | yes | `#[mcpkit::tools]`, `#[tool]`, `#[prompt]`, `#[resource]` (the `mcpkit-macros` crate) | 68 (the defaults) |
//! | `http-server` | no | `HttpServer`: Streamable HTTP and legacy HTTP+SSE server endpoints (axum, hyper) | 87 (defaults + it) |
//! | `http-client` | no | `HttpClientTransport`: the Streamable HTTP client with legacy fallback (reqwest, rustls) | 137 (defaults + it) |
//! | `auth` | no | the `auth` module: OAuth 2.1 client and resource-server layer (both HTTP sides, jsonwebtoken) | 155 (defaults + it) |
//! | `otel` | no | OpenTelemetry in [`telemetry`]: metrics, Prometheus text, trace context in `_meta` | 83 (defaults + it) |
//! | `otlp` | no | `telemetry::otlp`: OTLP/HTTP export of spans and metrics (`otel`, prost, an HTTP client) | 159 (defaults + it) |
//! | `validation` | no | JSON Schema validation (jsonschema): the client checks structured tool results against their `outputSchema` (without it, only that `structuredContent` is there); `ToolDef::validate_input` | 111 (defaults + it) |
//!
//! Every flag: 214 crates. The sets below are the documented ones; `scripts/feature-sets.sh`
//! builds each with warnings denied:
//!
//! | set | for |
//! | --- | --- |
//! | the defaults | a stdio server and its client; `mcpkit new` |
//! | `server` / `server,macros` (no defaults) | a server only, with the explicit API / with the macros |
//! | `server,client,macros,http-server` (no defaults) | `mcpkit new --http` |
//! | `server,http-server` (no defaults) | an HTTP server only |
//! | `client` / `client,http-client` (no defaults) | a client only, of stdio / of HTTP servers too |
//! | defaults + `http-server,http-client` | both roles over both transports |
//! | defaults + `otel`, + `otlp`, + `auth`, + `validation` | the add-ons |
#![forbid(unsafe_code)]

#[cfg(any(feature = "server", feature = "client"))]
pub mod apps;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "client")]
pub mod client;
pub mod engine;
pub mod error;
#[cfg(feature = "server")]
pub mod server;
mod sync;
pub mod telemetry;
#[cfg(all(feature = "server", feature = "client"))]
pub mod testing;
pub mod transport;
mod wire;

// What a first server and client need, at the crate root.
#[cfg(feature = "client")]
pub use client::{Client, ClientBuilder};
pub use engine::{Connection, Peer, PeerOptions, RequestOptions};
pub use error::{Error, Result};
pub use mcpkit_types as types;
/// The schema generator tool arguments derive (`#[derive(schemars::JsonSchema)]`), re-exported so
/// its version always matches the one mcpkit generates input schemas with.
pub use schemars;
#[cfg(feature = "http-server")]
pub use server::http::HttpServer;
#[cfg(feature = "server")]
pub use server::{Args, RequestContext, ToolDef};
#[cfg(feature = "server")]
pub use server::{Server, ServerBuilder};
pub use transport::child::ChildTransport;
#[cfg(feature = "http-client")]
pub use transport::http_client::HttpClientTransport;
pub use transport::stdio::stdio;

/// The attribute macros (feature `macros`, on by default): `#[mcpkit::tools]` on an impl block,
/// `#[tool]`, `#[prompt]` and `#[resource("uri")]` on its methods or on free functions. Sugar
/// over [`ToolDef`], [`server::PromptDef`] and [`server::ResourceDef`]; see `guide/macros.md`.
#[cfg(feature = "macros")]
pub use mcpkit_macros::{prompt, resource, tool, tools};

/// The macros chapter of the guide, compiled as a doctest so its examples stay true.
#[cfg(all(doctest, feature = "macros"))]
#[doc = include_str!("../../../guide/macros.md")]
pub struct GuideMacros;

/// The testing chapter of the guide, compiled and run as a doctest.
#[cfg(all(doctest, feature = "macros", feature = "client"))]
#[doc = include_str!("../../../guide/testing.md")]
pub struct GuideTesting;

#[cfg(all(doctest, feature = "server"))]
#[doc = include_str!("../../../guide/middleware.md")]
pub struct GuideMiddleware;
/// The composition chapter of the guide (mount and proxy), compiled and run as a doctest.
#[cfg(all(doctest, feature = "server", feature = "client"))]
#[doc = include_str!("../../../guide/composition.md")]
pub struct GuideComposition;
/// The MCP Apps chapter of the guide, compiled (and its server examples run) as a doctest.
#[cfg(all(doctest, feature = "server", feature = "client"))]
#[doc = include_str!("../../../guide/apps.md")]
pub struct GuideApps;

/// The transports chapter of the guide, compiled as a doctest.
#[cfg(all(doctest, unix, feature = "http-server", feature = "http-client"))]
#[doc = include_str!("../../../guide/transports.md")]
pub struct GuideTransports;

/// What the code the macros generate names: serde, for its derive, and the checks of each
/// parameter and return type. Not an API.
#[cfg(feature = "macros")]
#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __private;
