//! The JSON-RPC envelope parser (`mcpkit_types::jsonrpc::parse`). Properties: an accepted
//! message re-serializes to JSON that parses back to the same message, and the error reply
//! built for a rejected frame is a valid JSON-RPC error response.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpkit_types::jsonrpc::{self, Message, OutgoingError};
use serde_json::Value;

fuzz_target!(|frame: &[u8]| {
    match jsonrpc::parse(frame) {
        Ok(message) => round_trips(&message.to_owned_message()),
        Err(rejected) => {
            if let Some((id, error)) = rejected.reply() {
                let reply = serde_json::to_string(&OutgoingError::new(id.as_ref(), &error)).unwrap();
                is_valid_error_reply(&reply);
                if let Some(id) = id {
                    // A reply with an id is itself a frame the parser classifies as that response.
                    match jsonrpc::parse(reply.as_bytes()).unwrap() {
                        jsonrpc::MessageRef::Response(r) => {
                            assert_eq!(r.id, id);
                            assert_eq!(r.outcome.unwrap_err(), error);
                        }
                        other => panic!("the error reply {reply} parsed as {other:?}"),
                    }
                }
            }
        }
    }
});

fn round_trips(message: &Message) {
    let json = message.to_json();
    let again = jsonrpc::parse(json.as_bytes())
        .unwrap_or_else(|e| panic!("re-serialized {json} is rejected: {e:?}"))
        .to_owned_message();
    assert_eq!(again.to_json(), json, "the message changed on a round trip");
    match (message, &again) {
        (
            Message::Request { id, method, params },
            Message::Request {
                id: i,
                method: m,
                params: p,
            },
        ) => {
            assert_eq!((id, method), (i, m));
            assert_eq!(params.as_ref().map(|r| r.get()), p.as_ref().map(|r| r.get()));
        }
        (Message::Notification { method, params }, Message::Notification { method: m, params: p }) => {
            assert_eq!(method, m);
            assert_eq!(params.as_ref().map(|r| r.get()), p.as_ref().map(|r| r.get()));
        }
        (Message::Response { id, outcome }, Message::Response { id: i, outcome: o }) => {
            assert_eq!(id, i);
            match (outcome, o) {
                (Ok(r), Ok(s)) => assert_eq!(r.get(), s.get()),
                (Err(e), Err(f)) => assert_eq!(e, f),
                _ => panic!("a response changed between result and error: {json}"),
            }
        }
        _ => panic!("the message changed its kind on a round trip: {json}"),
    }
}

fn is_valid_error_reply(reply: &str) {
    let v: Value = serde_json::from_str(reply).unwrap();
    let o = v.as_object().unwrap();
    assert_eq!(o.get("jsonrpc"), Some(&Value::from("2.0")), "{reply}");
    assert!(
        matches!(o.get("id"), Some(Value::Null | Value::String(_))) || o["id"].is_i64() || o["id"].is_u64(),
        "{reply}"
    );
    assert!(!o.contains_key("result") && !o.contains_key("method"), "{reply}");
    let e = o["error"].as_object().unwrap();
    assert!(e["code"].is_i64(), "{reply}");
    assert!(e["message"].is_string(), "{reply}");
    assert!(
        o.len() == 3 && e.keys().all(|k| ["code", "message", "data"].contains(&k.as_str())),
        "{reply}"
    );
}
