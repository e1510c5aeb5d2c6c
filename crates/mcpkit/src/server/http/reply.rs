//! Small pieces every HTTP handler uses: JSON-RPC error responses, header reads, the one capped
//! body reader.

use axum::body::Body;
use axum::http::header::AsHeaderName;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mcpkit_types::headers::{PROTOCOL_VERSION, SESSION_ID};
use mcpkit_types::jsonrpc::OutgoingError;
use mcpkit_types::{ErrorCode, ErrorObject, RequestId};

use super::deadlines::BodyTimedOut;
use crate::transport::{Extensions, ScopeRefusal};

/// A JSON-RPC error as an HTTP response (the id only when the request's id was read). Every
/// refusal of the endpoint is one of the named constructors below.
fn rpc_error(status: StatusCode, code: ErrorCode, message: &str, id: Option<&RequestId>) -> Response {
    let error = ErrorObject::new(code, message);
    let body = serde_json::to_vec(&OutgoingError::new(id, &error)).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// 400: the request is not one the endpoint can take (invalid request).
pub(super) fn bad_request(message: &str, id: Option<&RequestId>) -> Response {
    rpc_error(StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST, message, id)
}

/// 400: the body is not JSON (parse error, no id).
pub(super) fn parse_error(message: &str) -> Response {
    rpc_error(StatusCode::BAD_REQUEST, ErrorCode::PARSE_ERROR, message, None)
}

/// 400: a session request without `Mcp-Session-Id`.
pub(super) fn missing_session() -> Response {
    bad_request("Missing Mcp-Session-Id", None)
}

/// 404: the session named is unknown (never issued, ended, expired, or another caller's).
pub(super) fn session_not_found() -> Response {
    rpc_error(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        "Session not found",
        None,
    )
}

/// 404: the session ended while its request was being delivered.
pub(super) fn session_ended() -> Response {
    rpc_error(StatusCode::NOT_FOUND, ErrorCode::INVALID_REQUEST, "Session ended", None)
}

/// 406: `Accept` does not list what the endpoint answers with.
pub(super) fn not_acceptable(message: &str) -> Response {
    rpc_error(StatusCode::NOT_ACCEPTABLE, ErrorCode::INVALID_REQUEST, message, None)
}

/// 415: the body is not `application/json`.
pub(super) fn unsupported_media_type(message: &str) -> Response {
    rpc_error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::INVALID_REQUEST,
        message,
        None,
    )
}

/// 409: the session's GET stream is open already.
pub(super) fn conflict(message: &str) -> Response {
    rpc_error(StatusCode::CONFLICT, ErrorCode::INVALID_REQUEST, message, None)
}

/// 421: `Host` is not allowed.
pub(super) fn host_not_allowed() -> Response {
    rpc_error(
        StatusCode::MISDIRECTED_REQUEST,
        ErrorCode::INVALID_REQUEST,
        "Host not allowed",
        None,
    )
}

/// 403: `Origin` is not allowed.
pub(super) fn origin_not_allowed() -> Response {
    rpc_error(
        StatusCode::FORBIDDEN,
        ErrorCode::INVALID_REQUEST,
        "Origin not allowed",
        None,
    )
}

/// 500: the endpoint cannot go on with the request (no randomness for an id).
pub(super) fn internal_error(message: &str) -> Response {
    rpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::INTERNAL_ERROR,
        message,
        None,
    )
}

/// 503: no new session now (a session cap), or a backend the request needs cannot be reached.
pub(super) fn unavailable(message: &str, id: Option<&RequestId>) -> Response {
    rpc_error(StatusCode::SERVICE_UNAVAILABLE, ErrorCode::INTERNAL_ERROR, message, id)
}

/// A request's JSON reply: 200, or, when the server may refuse requests (`may_refuse`: it has
/// middleware, or items requiring scopes) and this reply is such a refusal, 429 with
/// `Retry-After` ([`ErrorCode::RATE_LIMITED`]) or 403 with a [`ScopeRefusal`] for the
/// authorization layer ([`ErrorCode::INSUFFICIENT_SCOPE`]). Other servers never look at the
/// reply.
pub(super) fn json_reply(frame: Bytes, may_refuse: bool) -> Response {
    let refusal = if may_refuse { Refusal::of(&frame) } else { None };
    let mut r = ([(header::CONTENT_TYPE, "application/json")], frame).into_response();
    if let Some(refusal) = refusal {
        refusal.apply(&mut r);
    }
    r
}

/// A reply that refuses its request for a reason HTTP has a status for.
pub(super) enum Refusal {
    /// 429, with `Retry-After` in seconds.
    TooMany(HeaderValue),
    /// 403, for want of these scopes.
    Forbidden(ScopeRefusal),
}

impl Refusal {
    /// The refusal `frame` (a JSON-RPC reply) is, if it is one: a search for the codes, then
    /// one parse.
    pub(super) fn of(frame: &[u8]) -> Option<Refusal> {
        #[derive(serde::Deserialize)]
        struct Reply {
            error: Option<Error>,
        }
        #[derive(serde::Deserialize)]
        struct Error {
            code: ErrorCode,
            data: Option<serde_json::Value>,
        }
        memchr::memmem::find(frame, b"-32029").or_else(|| memchr::memmem::find(frame, b"-32003"))?;
        let error = serde_json::from_slice::<Reply>(frame).ok()?.error?;
        let data = |key: &str| error.data.as_ref().and_then(|d| d.get(key)).cloned();
        match error.code {
            ErrorCode::RATE_LIMITED => {
                let ms = data("retryAfterMs").and_then(|v| v.as_u64()).unwrap_or(1000);
                HeaderValue::from_str(&ms.div_ceil(1000).max(1).to_string())
                    .ok()
                    .map(Refusal::TooMany)
            }
            ErrorCode::INSUFFICIENT_SCOPE => {
                let scopes = data("requiredScopes")
                    .and_then(|v| serde_json::from_value(v).ok())
                    .unwrap_or_default();
                Some(Refusal::Forbidden(ScopeRefusal { scopes }))
            }
            _ => None,
        }
    }

    /// Set the status (and header, or extension) on `response`.
    pub(super) fn apply(self, response: &mut Response) {
        match self {
            Refusal::TooMany(seconds) => {
                *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
                response.headers_mut().insert(header::RETRY_AFTER, seconds);
            }
            Refusal::Forbidden(scopes) => {
                *response.status_mut() = StatusCode::FORBIDDEN;
                response.extensions_mut().insert(scopes);
            }
        }
    }
}

/// 405, with the methods the endpoint does allow.
pub(super) fn method_not_allowed(allow: &'static str) -> Response {
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::INVALID_REQUEST,
        "Method not allowed",
        None,
    );
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// Whether `Accept` lists every one of `mimes` (`*/*` counts for all; media types compare
/// without regard to case, parameters are ignored), read in one pass over the bytes: `str`'s
/// `split` and `trim` took ~1,300 instructions per POST for the usual two types.
pub(super) fn accepts(headers: &HeaderMap, mimes: &[&str]) -> bool {
    // One bit per wanted type (callers ask for one or two; more than 31 are not looked at).
    let all = (1u32 << mimes.len().min(31)) - 1;
    let mut seen = 0u32;
    for v in headers.get_all(header::ACCEPT) {
        for range in v.as_bytes().split(|&b| b == b',') {
            let range = range.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
            if range == b"*/*" {
                return true;
            }
            if let Some(i) = mimes
                .iter()
                .take(31)
                .position(|w| w.as_bytes().eq_ignore_ascii_case(range))
            {
                seen |= 1 << i;
                if seen == all {
                    return true;
                }
            }
        }
    }
    seen == all
}

/// A header's value, when it is visible ASCII. Given a `HeaderName` (the constants below), the
/// lookup skips parsing and lower-casing a `&str` name.
pub(super) fn header_str(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The MCP headers of the hot path as `HeaderName`s.
pub(super) const SESSION_ID_HEADER: HeaderName = HeaderName::from_static(SESSION_ID);
pub(super) const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static(PROTOCOL_VERSION);

/// Why a request body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Longer than the limit: 413.
    TooLarge,
    /// The body itself is broken (a malformed chunked encoding, or the connection ended before
    /// `Content-Length` bytes arrived): 400. The text names the problem.
    Broken(String),
    /// The body did not arrive within the body-read timeout of `HttpServer::serve`: 408, and
    /// the connection is closed (the rest of the body is never read). The text says so.
    TimedOut(String),
}

impl BodyError {
    /// The JSON-RPC error reply for this body error (`limit` is the cap that was applied).
    pub(crate) fn reply(&self, limit: usize) -> Response {
        match self {
            BodyError::TooLarge => rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::INVALID_REQUEST,
                &format!("Request body exceeds {limit} bytes"),
                None,
            ),
            BodyError::Broken(why) => bad_request(&format!("Malformed request body: {why}"), None),
            BodyError::TimedOut(why) => {
                let mut r = rpc_error(StatusCode::REQUEST_TIMEOUT, ErrorCode::INVALID_REQUEST, why, None);
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                r
            }
        }
    }
}

/// An error and its causes as one line, repeated messages once (wrappers often display their
/// cause's text as their own).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// The body deadline's error, if that is what `e` is (or wraps).
fn timed_out<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a BodyTimedOut> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(t) = err.downcast_ref::<BodyTimedOut>() {
            return Some(t);
        }
        next = err.source();
    }
    None
}

/// Read a request body of at most `limit` bytes: refused at once when `Content-Length`
/// already says more, otherwise as soon as the bytes read pass the limit. A read error of the
/// body itself is [`BodyError::Broken`], never mistaken for the limit; a body that stalled past
/// its deadline is [`BodyError::TimedOut`].
pub(crate) async fn read_capped(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, BodyError> {
    use futures_util::StreamExt as _;
    let declared = header_str(headers, header::CONTENT_LENGTH).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge);
    }
    let mut stream = body.into_data_stream();
    let mut read = bytes::BytesMut::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| match timed_out(&e) {
            Some(t) => BodyError::TimedOut(t.to_string()),
            None => BodyError::Broken(error_chain(&e)),
        })?;
        if read.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        read.extend_from_slice(&chunk);
    }
    Ok(read.freeze())
}

/// What the engine may learn about a request beyond its body: the values a layer in front
/// (such as `auth::resource`'s, with the caller's verified identity) attached to it as
/// [`Extensions`]. Never a header, so never the bearer token.
pub(super) fn extensions_of(parts: &axum::http::request::Parts) -> Extensions {
    parts.extensions.get::<Extensions>().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(values: &[&str], mimes: &[&str]) -> bool {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        accepts(&h, mimes)
    }

    #[test]
    fn accept_lists_every_wanted_type_in_any_spelling() {
        let both = ["application/json", "text/event-stream"];
        assert!(accept(&["application/json, text/event-stream"], &both));
        assert!(accept(&["text/event-stream;q=0.5 ,\tApplication/JSON"], &both));
        assert!(
            accept(&["application/json", "text/event-stream"], &both),
            "over two headers"
        );
        assert!(accept(&["*/*"], &both));
        assert!(accept(&["text/html, */*;q=0.1"], &both));
        assert!(!accept(&["application/json"], &both));
        assert!(!accept(&["application/jsonx, text/event-stream"], &both));
        assert!(!accept(&["application/*, text/event-stream"], &both));
        assert!(!accept(&[], &both));
        assert!(!accept(&[""], &["text/event-stream"]));
        assert!(accept(&["text/event-stream"], &["text/event-stream"]));
    }
}
