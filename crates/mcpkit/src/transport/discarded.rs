//! What the two ends of a discarded frame tell: whether it was a response, and to which request.
//!
//! A stream transport drops a frame over its size limit without holding it whole. When that
//! frame was the reply to one of our requests, the request would wait out its whole timeout for
//! an answer that already came. So the reader keeps the first and last [`KEPT`] bytes of what it
//! drops and reads the top-level members it can see from each end: `{"jsonrpc":"2.0","id":7,
//! "result":…` shows its id at the start, `{"result":…,"jsonrpc":"2.0","id":7}` at the end. When
//! the ends show a `result` or an `error` member and an `id`, and no `method`, the frame was the
//! answer to request `id`: the reader hands the engine an error answer for it instead
//! ([`error_reply`]), and the request fails at once, naming the size and the limit.
//!
//! Nothing is guessed beyond what the peer's own bytes say: a frame whose id stands in the middle,
//! or that may be a request or a notification, stays an [`Oversized`](super::Frame::Oversized)
//! frame (failing "the" pending request instead could fail a call whose real answer is still on
//! its way). And a peer that names an id this way could as well have sent an error answer for it.

use mcpkit_types::jsonrpc::OutgoingError;
use mcpkit_types::{ErrorObject, RequestId};

/// How many bytes of each end of a discarded frame are kept.
pub(crate) const KEPT: usize = 1024;

/// The first and last bytes of a frame being discarded.
#[derive(Debug, Default)]
pub(crate) struct Ends {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Ends {
    /// Forget the last frame.
    pub(crate) fn clear(&mut self) {
        self.head.clear();
        self.tail.clear();
    }

    /// The frame's next bytes.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let room = KEPT.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        if bytes.len() >= KEPT {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - KEPT..]);
        } else {
            self.tail.extend_from_slice(bytes);
            let over = self.tail.len().saturating_sub(KEPT);
            self.tail.drain(..over);
        }
    }

    /// The request this frame answered, when its ends show it was a response and name the id.
    pub(crate) fn answered(&self) -> Option<RequestId> {
        let mut seen = Seen::default();
        from_the_start(&self.head, &mut seen);
        from_the_end(&self.tail, &mut seen);
        if seen.method || !seen.outcome {
            return None;
        }
        serde_json::from_slice(seen.id?).ok()
    }
}

/// The request `frame` answered, read from its ends as a stream transport keeps them when it
/// discards the frame in chunks of `chunk` bytes. For the fuzz targets in `fuzz/` only
/// (cargo-fuzz builds with `--cfg fuzzing`): not part of the API, and not in any other build.
#[cfg(fuzzing)]
pub fn oversized_reply_id_for_fuzzing(frame: &[u8], chunk: usize) -> Option<RequestId> {
    let mut ends = Ends::default();
    for piece in frame.chunks(chunk.max(1)) {
        ends.push(piece);
    }
    ends.answered()
}

/// An error answer to `id`: its reply of `size` bytes was over the `limit`.
pub(crate) fn error_reply(id: &RequestId, size: usize, limit: usize) -> Option<Vec<u8>> {
    let error = ErrorObject::internal(too_large(size, limit));
    serde_json::to_vec(&OutgoingError::new(Some(id), &error)).ok()
}

/// The message of a response over the size limit.
pub(crate) fn too_large(size: usize, limit: usize) -> String {
    format!("the response ({size} bytes) exceeds the {limit}-byte message limit")
}

/// The top-level members seen.
#[derive(Default)]
struct Seen<'a> {
    /// The `id` member's value, as JSON.
    id: Option<&'a [u8]>,
    /// A `result` or `error` member.
    outcome: bool,
    /// A `method` member.
    method: bool,
}

impl<'a> Seen<'a> {
    fn member(&mut self, key: &[u8], value: Option<&'a [u8]>) {
        match key {
            b"id" => self.id = self.id.or(value),
            b"result" | b"error" => self.outcome = true,
            b"method" => self.method = true,
            _ => {}
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Read the members of the object `b` starts, until one is cut off or is not simple to skip.
fn from_the_start<'a>(b: &'a [u8], seen: &mut Seen<'a>) {
    let mut i = skip_space(b, 0);
    if b.get(i) != Some(&b'{') {
        return;
    }
    i += 1;
    loop {
        i = skip_space(b, i);
        let Some(key_end) = string_end(b, i) else { return };
        let key = &b[i + 1..key_end];
        i = skip_space(b, key_end + 1);
        if b.get(i) != Some(&b':') {
            return;
        }
        i = skip_space(b, i + 1);
        // The key is seen even when its value is cut off (`"result":{…` of a long answer).
        let Some(end) = value_end(b, i) else {
            seen.member(key, None);
            return;
        };
        seen.member(key, Some(&b[i..end]));
        i = skip_space(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return,
        }
    }
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while b.get(i).copied().is_some_and(is_space) {
        i += 1;
    }
    i
}

/// Where the string starting at `i` ends (its closing quote), if it is whole in `b`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j),
            _ => j += 1,
        }
    }
}

/// Where the value starting at `i` ends (just past it), if it is whole in `b`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i).map(|e| e + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => j = string_end(b, j)?,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let end = i + b[i..].iter().position(|&c| is_space(c) || c == b',' || c == b'}')?;
            (end > i).then_some(end)
        }
    }
}

/// Read the members of the object `b` ends, backwards, while their values are strings, numbers
/// or literals.
fn from_the_end<'a>(b: &'a [u8], seen: &mut Seen<'a>) {
    let Some(mut i) = skip_space_back(b, b.len()) else {
        return;
    };
    if b[i] != b'}' {
        return;
    }
    loop {
        // `i` is at the `}` or `,` after a member.
        let Some(last) = skip_space_back(b, i) else { return };
        let value_start = match b[last] {
            b'"' => match string_start(b, last) {
                Some(s) => s,
                None => return,
            },
            c if c.is_ascii_alphanumeric() || c == b'.' || c == b'-' || c == b'+' => {
                let mut s = last;
                while s > 0 && (b[s - 1].is_ascii_alphanumeric() || matches!(b[s - 1], b'.' | b'-' | b'+')) {
                    s -= 1;
                }
                if s == 0 {
                    return; // maybe cut off
                }
                s
            }
            _ => return, // an object or array: not followed backwards
        };
        let value = &b[value_start..=last];
        let Some(colon) = skip_space_back(b, value_start) else {
            return;
        };
        if b[colon] != b':' {
            return;
        }
        let Some(key_close) = skip_space_back(b, colon) else {
            return;
        };
        if b[key_close] != b'"' {
            return;
        }
        let Some(key_open) = string_start(b, key_close) else {
            return;
        };
        seen.member(&b[key_open + 1..key_close], Some(value));
        let Some(before) = skip_space_back(b, key_open) else {
            return;
        };
        if b[before] != b',' {
            return; // `{`: every member was seen
        }
        i = before;
    }
}

/// The last byte before `i` that is not white space.
fn skip_space_back(b: &[u8], mut i: usize) -> Option<usize> {
    while i > 0 {
        i -= 1;
        if !is_space(b[i]) {
            return Some(i);
        }
    }
    None
}

/// The opening quote of the string whose closing quote is at `close`: the first quote before it
/// not escaped (inside a string every quote is, by an odd run of backslashes). `None` when the
/// run of backslashes before a quote reaches the start of `b` (it may have been cut).
fn string_start(b: &[u8], close: usize) -> Option<usize> {
    let mut j = close;
    while j > 0 {
        j -= 1;
        if b[j] != b'"' {
            continue;
        }
        let backslashes = b[..j].iter().rev().take_while(|&&c| c == b'\\').count();
        if backslashes == j {
            return None;
        }
        if backslashes % 2 == 0 {
            return Some(j);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `frame` discarded in chunks of `chunk` bytes: the request it answered.
    fn answered(frame: &str, chunk: usize) -> Option<RequestId> {
        let mut ends = Ends::default();
        for c in frame.as_bytes().chunks(chunk) {
            ends.push(c);
        }
        ends.answered()
    }

    fn big() -> String {
        format!(
            "{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}",
            "x".repeat(10_000)
        )
    }

    #[test]
    fn the_id_is_read_at_either_end_of_a_long_response() {
        let big = big();
        for chunk in [1, 7, 4096, 100_000] {
            let first = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{big}}}"#);
            assert_eq!(answered(&first, chunk), Some(RequestId::Number(7)), "{chunk}");
            let last = format!("{{\"result\":{big},\"jsonrpc\":\"2.0\",\n \"id\" : \"a\\\"b\" }}\r");
            assert_eq!(
                answered(&last, chunk),
                Some(RequestId::String("a\"b".into())),
                "{chunk}"
            );
            let error = format!(
                r#"{{"error":{{"code":1,"message":"{}"}},"id":3,"jsonrpc":"2.0"}}"#,
                "y".repeat(5000)
            );
            assert_eq!(answered(&error, chunk), Some(RequestId::Number(3)), "{chunk}");
        }
    }

    #[test]
    fn a_short_frame_is_read_whole() {
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","result":{"a":[1,{"b":"}"}]},"id":9}"#, 5),
            Some(RequestId::Number(9))
        );
    }

    #[test]
    fn nothing_is_guessed() {
        let big = big();
        // A request or a notification.
        assert_eq!(
            answered(
                &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{big}}}"#),
                64
            ),
            None
        );
        assert_eq!(
            answered(
                &format!(r#"{{"params":{big},"jsonrpc":"2.0","id":1,"method":"x"}}"#),
                64
            ),
            None
        );
        assert_eq!(
            answered(&format!(r#"{{"jsonrpc":"2.0","method":"x","params":{big}}}"#), 64),
            None
        );
        // The id in the middle, behind a long value, and an object after it.
        assert_eq!(
            answered(&format!(r#"{{"result":{big},"id":4,"x":{{"y":1}}}}"#), 64),
            None
        );
        // No id seen; an id of null; not JSON.
        assert_eq!(answered(&format!(r#"{{"jsonrpc":"2.0","result":{big}}}"#), 64), None);
        assert_eq!(answered(&format!(r#"{{"result":{big},"id":null}}"#), 64), None);
        assert_eq!(answered(&"z".repeat(5000), 64), None);
        // A key that only looks like one: the quote before `id` is escaped.
        assert_eq!(answered(&format!(r#"{{"result":{big},"x\"id":5}}"#), 64), None);
    }

    #[test]
    fn the_reply_names_the_size_and_the_limit() {
        let reply = error_reply(&RequestId::Number(2), 20_000_000, 16_777_216).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(v["id"], 2);
        assert_eq!(v["error"]["code"], -32603);
        assert_eq!(
            v["error"]["message"],
            "the response (20000000 bytes) exceeds the 16777216-byte message limit"
        );
    }
}
