//! Serving the stateless era (2026-07-28) beside the handshake era: per-request protocol
//! metadata (`meta`), `resultType` and caching hints on results (`finish`), input rounds
//! (`input`) with their sealed `requestState` (`request_state`) (spec: 2026-07-28
//! `basic/index` "_meta", `basic/versioning`, `basic/patterns/*`, `server/utilities/caching`).
//! Below the server core: it knows no `Server`; `server/discover` and `subscriptions/listen`
//! are core methods (`routes`, `listen`).

mod finish;
mod input;
mod meta;
pub(crate) mod request_state;

pub use finish::CacheHint;
pub(crate) use finish::{complete, finish};
pub(crate) use input::InputState;
#[cfg(feature = "http-server")]
pub(crate) use meta::MetaText;
pub(crate) use meta::{read_meta, supported_versions, validate, ClientProfile, StatelessMeta};
pub use request_state::{RequestStateKeys, StateError};
