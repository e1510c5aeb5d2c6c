//! Serving the stateless era (2026-07-28) beside the handshake era: per-request protocol
//! metadata (`meta`), `resultType` and caching hints on results (`finish`), input rounds
//! (`input`), `server/discover` (here) and `subscriptions/listen` (`listen`) (spec:
//! 2026-07-28 `basic/index` "_meta", `basic/versioning`, `basic/patterns/*`, `server/discover`,
//! `server/utilities/caching`).

mod finish;
mod input;
mod listen;
mod meta;

use mcpkit_types::schema::DiscoverResult;

pub use finish::CacheHint;
pub(crate) use finish::{complete, finish};
pub(crate) use input::InputState;
pub(crate) use listen::{listen, Change, FeedSlot, ListenFeed};
pub(crate) use meta::{read_meta, supported_versions, validate, MetaText, StatelessMeta};

use super::Server;
use crate::engine::HandlerResult;
use crate::wire::to_raw;

/// Spec: 2026-07-28 `server/discover`.
pub(crate) fn discover(server: &Server) -> HandlerResult {
    let result = DiscoverResult {
        supported_versions: supported_versions().into_iter().map(str::to_owned).collect(),
        capabilities: server.capabilities_in(mcpkit_types::Era::Stateless),
        instructions: server.inner.instructions.clone(),
        ..Default::default()
    };
    let raw = to_raw(&result)?;
    finish(&raw, &server.inner.info_json, Some(server.inner.cache.lists))
}
