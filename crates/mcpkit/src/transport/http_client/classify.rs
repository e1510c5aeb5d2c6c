//! What an outgoing message is, as far as the transport cares: the one place the HTTP client
//! reads a frame's envelope (its method and id) to choose headers and streams. The frame itself
//! is sent as is.

use std::collections::HashMap;

use mcpkit_types::headers::HeaderParam;
use mcpkit_types::jsonrpc::{self, MessageRef};
use mcpkit_types::method::{Cancelled, Initialize, Initialized, ListTools, Method, NotificationMethod};
use mcpkit_types::schema::CancelledParams;
use mcpkit_types::RequestId;
use reqwest::header::{HeaderName, HeaderValue};

use super::headers;

/// The transport's view of one outgoing message.
#[derive(Debug)]
pub(super) enum Kind {
    /// A handshake-era request (`initialize` starts the session).
    Request { id: RequestId, initialize: bool },
    /// A 2026-07-28 request: no session, and these mirrored headers.
    Stateless {
        id: RequestId,
        tools_list: bool,
        headers: Vec<(HeaderName, HeaderValue)>,
    },
    /// `notifications/initialized`, which ends the handshake.
    Initialized,
    /// `notifications/cancelled`, for this request when it names one.
    Cancelled(Option<RequestId>),
    /// Any other notification, or a response.
    Other,
}

impl Kind {
    /// Classify `frame`; `tools` are the mirrored tool parameters learned so far.
    pub(super) fn of(frame: &[u8], tools: &HashMap<String, Vec<HeaderParam>>) -> Kind {
        match jsonrpc::parse(frame) {
            Ok(MessageRef::Request(r)) => match headers::for_request(&r.method, r.params, tools) {
                Some(headers) => Kind::Stateless {
                    tools_list: r.method == ListTools::NAME,
                    id: r.id,
                    headers,
                },
                None => Kind::Request {
                    initialize: r.method == Initialize::NAME,
                    id: r.id,
                },
            },
            Ok(MessageRef::Notification(n)) => match &*n.method {
                Initialized::NAME => Kind::Initialized,
                Cancelled::NAME => Kind::Cancelled(
                    n.params
                        .and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok())
                        .and_then(|p| p.request_id),
                ),
                _ => Kind::Other,
            },
            _ => Kind::Other,
        }
    }
}
