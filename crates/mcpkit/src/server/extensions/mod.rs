//! Extensions (spec: 2026-07-28 `basic/versioning` "Extension negotiation"; SEP-2133, SEP-3392):
//! a server serves one only when it is added with [`ServerBuilder::extension`](crate::server::ServerBuilder::extension), and then
//! declares it in `capabilities.extensions` of `initialize` and `server/discover`.
//!
//! An [`Extension`] brings three things, all fixed when the server is built:
//! - its identifier and settings object (what the server declares);
//! - catalogue entries it serves through core methods (skill files as resources), added to the
//!   builder by [`Extension::extend`];
//! - its own methods and notifications, and decorations of core results, registered into each
//!   era's method table by [`Extension::register`], through the same `Methods::add` /
//!   `Methods::wrap` the core methods use.
//!
//! Negotiation is per request: the client's declaration comes from its `initialize`
//! capabilities (handshake era) or from the request's `_meta` (stateless era). An extension's
//! own methods are served whether or not the client declared it (a client that calls them knows
//! them); behaviour that changes a core result must check [`RequestContext::uses_extension`](crate::server::RequestContext::uses_extension)
//! and fall back to the core behaviour otherwise.

pub mod skills;
pub mod tasks;

pub use super::extension::{Extension, MethodTable};
