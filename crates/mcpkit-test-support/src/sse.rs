//! The one SSE parser of the tests (the WHATWG event-stream format as the MCP endpoints write
//! it): bytes in, whole events out, comments skipped, CRLF and CR taken as line ends. The
//! readers of each layer's harness (a hyper body, a reqwest response, a background GET stream)
//! feed it chunks as they arrive; a whole body parses with [`events`].

use serde_json::Value;

/// One event.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id:` field (what a resume sends back as `Last-Event-ID`).
    pub id: Option<String>,
    /// The `retry:` field, in milliseconds.
    pub retry: Option<u64>,
    /// The `event:` field.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`; `Some("")` for one empty `data:` line (a priming
    /// event), `None` for an event without data.
    pub data: Option<String>,
}

impl SseEvent {
    /// The data as JSON (a panic names the event when it is not).
    pub fn json(&self) -> Value {
        let data = self
            .data
            .as_deref()
            .unwrap_or_else(|| panic!("an event with data: {self:?}"));
        serde_json::from_str(data).unwrap_or_else(|e| panic!("event data is not JSON ({e}): {data:?}"))
    }

    /// The JSON-RPC method of the message the event carries, if it carries one.
    pub fn method(&self) -> Option<String> {
        let v: Value = serde_json::from_str(self.data.as_deref()?).ok()?;
        v["method"].as_str().map(str::to_owned)
    }

    /// Whether the event carries a message (not a priming event, not a bare id or retry).
    pub fn has_message(&self) -> bool {
        self.data.as_deref().is_some_and(|d| !d.trim().is_empty())
    }
}

/// An event stream read chunk by chunk.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: String,
}

impl SseParser {
    /// Take in the next chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) {
        let text = String::from_utf8_lossy(chunk);
        if text.contains('\r') {
            self.buffer.push_str(&text.replace("\r\n", "\n").replace('\r', "\n"));
        } else {
            self.buffer.push_str(&text);
        }
    }

    /// The next whole event taken in, if one is complete (blocks of comments only are skipped).
    /// A field other than `id`, `retry`, `event` and `data` fails the test: the endpoints
    /// write no other.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            let end = self.buffer.find("\n\n")?;
            let block: String = self.buffer.drain(..end + 2).collect();
            if let Some(event) = parse_block(&block) {
                return Some(event);
            }
        }
    }
}

fn parse_block(block: &str) -> Option<SseEvent> {
    let mut event = SseEvent::default();
    let mut any = false;
    for line in block.lines() {
        if line.is_empty() || line.starts_with(':') {
            continue;
        }
        any = true;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => event.id = Some(value.to_owned()),
            "retry" => event.retry = Some(value.parse().unwrap_or_else(|_| panic!("a numeric retry: {line:?}"))),
            "event" => event.event = Some(value.to_owned()),
            "data" => match &mut event.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => event.data = Some(value.to_owned()),
            },
            other => panic!("unexpected SSE field {other:?} in {block:?}"),
        }
    }
    any.then_some(event)
}

/// Every event of a whole body (a final event without its blank line included).
pub fn events(body: &str) -> Vec<SseEvent> {
    let mut parser = SseParser::default();
    parser.push(body.as_bytes());
    parser.push(b"\n\n");
    std::iter::from_fn(|| parser.next_event()).collect()
}

/// The JSON-RPC reply in a POST's answer: the body itself when it is JSON, else the last event
/// of the stream that carries a message (`Null` when there is none).
pub fn reply_of(body: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return v;
    }
    events(body)
        .iter()
        .rev()
        .find(|e| e.has_message())
        .map_or(Value::Null, SseEvent::json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_arrive_whole_across_chunks_and_line_ends() {
        let mut p = SseParser::default();
        p.push(b": a comment\n\nid: s-0\r\nretry: 1000\r\ndata:\r\n\r\nid: s-1\nda");
        assert_eq!(
            p.next_event(),
            Some(SseEvent {
                id: Some("s-0".into()),
                retry: Some(1000),
                data: Some(String::new()),
                ..Default::default()
            })
        );
        assert_eq!(p.next_event(), None, "the second event is not whole yet");
        p.push(b"ta: {\"a\":1}\ndata: {\"b\":2}\n\n");
        let e = p.next_event().unwrap();
        assert_eq!(e.data.as_deref(), Some("{\"a\":1}\n{\"b\":2}"));
        assert_eq!(e.id.as_deref(), Some("s-1"));
    }

    #[test]
    fn a_reply_is_read_from_json_or_from_the_last_message_event() {
        assert_eq!(reply_of(r#"{"id":1}"#), serde_json::json!({"id": 1}));
        let body = "id: 0\ndata: \n\ndata: {\"method\":\"m\"}\n\ndata: {\"id\":2}\n\n";
        assert_eq!(reply_of(body), serde_json::json!({"id": 2}));
        assert_eq!(events(body)[1].method().as_deref(), Some("m"));
        assert_eq!(reply_of("id: 0\ndata:\n\n"), Value::Null);
    }
}
