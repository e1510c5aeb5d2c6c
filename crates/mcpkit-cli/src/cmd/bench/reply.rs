//! Reading replies the cheap way: one borrowed parse of only what the bench checks — the id, an
//! `error`, and the result's `isError` and `resultType` — and the request frame built once.

use std::borrow::Cow;

use mcpkit::types::method::CallTool;
use mcpkit::types::Method as _;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The bench's own request ids start here, far above any id the client's counter reaches, so
/// the bench's replies are told apart from the client's on a shared connection.
pub(super) const ID_BASE: u64 = 1 << 40;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(borrow, default)]
    result: Option<ResultFlags<'a>>,
    #[serde(borrow, default)]
    error: Option<ErrorFields<'a>>,
}

#[derive(Deserialize)]
struct ResultFlags<'a> {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorFields<'a> {
    #[serde(default)]
    code: Option<i64>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

/// How a call ended, borrowed from its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome<'a> {
    /// A result without `isError` (and complete, on the stateless wire).
    Ok,
    /// A result with `isError: true`.
    ToolError,
    /// A JSON-RPC error.
    Rpc { code: Option<i64>, message: Cow<'a, str> },
    /// A result that is not final (`resultType` other than `complete`: the server asks for
    /// input the load phase does not give).
    Incomplete(Cow<'a, str>),
}

impl Outcome<'_> {
    /// Whether the call counts as an error.
    pub(super) fn is_error(&self) -> bool {
        !matches!(self, Outcome::Ok)
    }

    /// The one-line description reported for the first error.
    pub(super) fn describe(&self) -> String {
        match self {
            Outcome::Ok => "ok".to_owned(),
            Outcome::ToolError => "the tool returned isError".to_owned(),
            Outcome::Rpc { code: Some(c), message } => format!("JSON-RPC error {c}: {message}"),
            Outcome::Rpc { code: None, message } => format!("JSON-RPC error: {message}"),
            Outcome::Incomplete(t) => {
                format!("the result is not final (resultType {t:?}); the load phase does not answer input requests")
            }
        }
    }
}

/// One message from the server, as far as the bench cares.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Message<'a> {
    /// A response to the request with this id.
    Response { id: &'a str, outcome: Outcome<'a> },
    /// A request or notification from the server, a response without a usable id, or text
    /// that is not JSON: none of the bench's business (the client gets it).
    Other,
}

/// Classify one JSON-RPC message.
pub(super) fn classify(frame: &[u8]) -> Message<'_> {
    let Ok(env) = serde_json::from_slice::<Envelope<'_>>(frame) else {
        return Message::Other;
    };
    let (Some(id), None) = (env.id, env.method) else {
        return Message::Other;
    };
    let outcome = match (env.error, env.result) {
        (Some(e), _) => Outcome::Rpc {
            code: e.code,
            message: e.message.unwrap_or(Cow::Borrowed("(no message)")),
        },
        (None, Some(r)) => match r.result_type {
            Some(t) if t != "complete" => Outcome::Incomplete(t),
            _ if r.is_error == Some(true) => Outcome::ToolError,
            _ => Outcome::Ok,
        },
        (None, None) => return Message::Other,
    };
    Message::Response { id: id.get(), outcome }
}

/// The outcome of a raw `result` (what the client's request functions return).
pub(super) fn classify_result(result: &RawValue) -> Result<Outcome<'_>, String> {
    let r: ResultFlags<'_> = serde_json::from_str(result.get()).map_err(|e| format!("unreadable result: {e}"))?;
    Ok(match r.result_type {
        Some(t) if t != "complete" => Outcome::Incomplete(t),
        _ if r.is_error == Some(true) => Outcome::ToolError,
        _ => Outcome::Ok,
    })
}

/// A bench id from a reply's raw id (`None`: not one of the bench's).
pub(super) fn bench_id(raw: &str) -> Option<u64> {
    raw.parse::<u64>().ok().filter(|&n| n >= ID_BASE)
}

/// The [`CallTool`] request frame, serialized once: only the id changes from call to call.
#[derive(Debug, Clone)]
pub(super) struct Template {
    prefix: &'static [u8],
    suffix: Vec<u8>,
}

impl Template {
    /// `{"jsonrpc":"2.0","id":ID,"method":NAME,"params":PARAMS}` with [`CallTool`]'s name.
    pub(super) fn new(params: &RawValue) -> Template {
        let mut suffix = Vec::with_capacity(params.get().len() + 32);
        suffix.extend_from_slice(br#","method":""#);
        suffix.extend_from_slice(CallTool::NAME.as_bytes());
        suffix.extend_from_slice(br#"","params":"#);
        suffix.extend_from_slice(params.get().as_bytes());
        suffix.push(b'}');
        Template {
            prefix: br#"{"jsonrpc":"2.0","id":"#,
            suffix,
        }
    }

    /// Append the frame with this id (no newline).
    pub(super) fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(self.prefix);
        out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
        out.extend_from_slice(&self.suffix);
    }

    /// The frame with this id.
    pub(super) fn frame(&self, id: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + self.suffix.len() + 20);
        self.write(id, &mut out);
        out
    }
}

/// An incremental reader of a `text/event-stream` body that yields the data of each message
/// event (events without a type, or of type `message`); comments, `id` and `retry` fields and
/// data-less events are skipped.
#[derive(Debug, Default)]
pub(super) struct SseReader {
    buf: Vec<u8>,
    pos: usize,
    data: Vec<u8>,
    has_data: bool,
    other_type: bool,
}

impl SseReader {
    /// Append a chunk of the body.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The data of the next complete message event, if one has arrived.
    pub(super) fn next_event(&mut self) -> Option<Vec<u8>> {
        loop {
            let rest = &self.buf[self.pos..];
            let end = memchr::memchr(b'\n', rest)?;
            let mut line = &rest[..end];
            self.pos += end + 1;
            if let [head @ .., b'\r'] = line {
                line = head;
            }
            if line.is_empty() {
                let message = self.has_data && !self.other_type;
                self.has_data = false;
                self.other_type = false;
                if message {
                    return Some(std::mem::take(&mut self.data));
                }
                self.data.clear();
                continue;
            }
            let (field, value) = match memchr::memchr(b':', line) {
                Some(0) => continue, // a comment
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (line, &b""[..]),
            };
            match field {
                b"data" => {
                    if self.has_data {
                        self.data.push(b'\n');
                    }
                    self.data.extend_from_slice(value);
                    self.has_data = true;
                }
                b"event" => self.other_type = !(value.is_empty() || value == b"message"),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(frame: &str) -> Outcome<'_> {
        match classify(frame.as_bytes()) {
            Message::Response { outcome, .. } => outcome,
            Message::Other => panic!("not a response: {frame}"),
        }
    }

    #[test]
    fn results_and_errors() {
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1099511627776,"result":{"content":[{"type":"text","text":"x"}]}}"#),
            Message::Response {
                id: "1099511627776",
                outcome: Outcome::Ok
            }
        );
        assert_eq!(
            outcome(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#),
            Outcome::ToolError
        );
        assert_eq!(
            outcome(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#),
            Outcome::Ok
        );
        let e = outcome(r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad \"x\""}}"#);
        assert!(e.is_error());
        assert_eq!(e.describe(), r#"JSON-RPC error -32602: bad "x""#);
        let e = outcome(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#);
        assert!(matches!(e, Outcome::Incomplete(ref t) if t == "input_required"));
        assert_eq!(
            outcome(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}"#),
            Outcome::Ok
        );
    }

    #[test]
    fn requests_notifications_and_junk_are_not_responses() {
        use mcpkit::types::method::{CreateMessage, Method, NotificationMethod, Progress};
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"{}","params":{{}}}}"#,
            CreateMessage::NAME
        );
        let notification = format!(r#"{{"jsonrpc":"2.0","method":"{}","params":{{}}}}"#, Progress::NAME);
        for frame in [
            request.as_str(),
            notification.as_str(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":3}"#,
            "not json",
        ] {
            assert_eq!(classify(frame.as_bytes()), Message::Other, "{frame}");
        }
    }

    #[test]
    fn bench_ids_and_the_template() {
        let params = serde_json::value::to_raw_value(&serde_json::json!({"name": "echo"})).unwrap();
        let t = Template::new(&params);
        let frame = t.frame(ID_BASE + 7);
        let v: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(v["id"], ID_BASE + 7);
        assert_eq!(v["method"], mcpkit::types::method::CallTool::NAME);
        assert_eq!(v["params"]["name"], "echo");
        assert_eq!(bench_id(&(ID_BASE + 7).to_string()), Some(ID_BASE + 7));
        assert_eq!(bench_id("3"), None);
        assert_eq!(bench_id("\"x\""), None);
    }

    #[test]
    fn sse_events_across_chunks() {
        let mut r = SseReader::default();
        r.push(b": comment\nid: 1\nretry: 10\n\nevent: message\nda");
        assert_eq!(r.next_event(), None);
        r.push(b"ta: {\"a\":1}\r\n\r\nevent: other\ndata: x\n\ndata: 1\ndata:2\n\n");
        assert_eq!(r.next_event().as_deref(), Some(&b"{\"a\":1}"[..]));
        assert_eq!(r.next_event().as_deref(), Some(&b"1\n2"[..]));
        assert_eq!(r.next_event(), None);
    }
}
