//! The schema validator has teeth: it accepts a valid request and result, and rejects each kind
//! of invalid frame with exactly one error.

use mcpkit_test_support::schema::SchemaValidator;
use serde_json::json;

#[test]
fn the_validator_rejects_invalid_frames() {
    let v = SchemaValidator::v2025_11_25();
    // Requests and notifications by method.
    let ok = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}});
    v.check_def("CallToolRequest", &ok).unwrap();
    assert_eq!(v.method_def("tools/call"), Some("CallToolRequest"));
    assert_eq!(v.method_def("notifications/progress"), Some("ProgressNotification"));
    let no_name = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}});
    assert!(v.check_def("CallToolRequest", &no_name).is_err());
    // Results by the method of the request with the same id.
    let asked = vec![r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#.to_owned()];
    let good = vec![r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#.to_owned()];
    let r = v.check_transcript(&good, &asked);
    r.assert_valid();
    assert_eq!(r.count("result tools/call"), 1);
    for bad in [
        // A content block of an unknown type.
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"bogus"}]}}"#,
        // No content at all.
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        // A result for an id nobody asked.
        r#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#,
        // A null id on a result.
        r#"{"jsonrpc":"2.0","id":null,"result":{"content":[]}}"#,
        // An error without a code.
        r#"{"jsonrpc":"2.0","id":7,"error":{"message":"x"}}"#,
        // A method the schema does not know.
        r#"{"jsonrpc":"2.0","method":"notifications/bogus"}"#,
        // A wrong protocol marker.
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        // A log message without data.
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#,
        "not json",
    ] {
        let r = v.check_transcript(&[bad.to_owned()], &asked);
        assert_eq!(r.errors.len(), 1, "the validator accepted {bad}");
    }
}
