//! The header codec of `mcpkit_types::headers` (`Mcp-Param-*` values and the `x-mcp-header`
//! schema walk). Properties: every text encodes to a valid header value that decodes back to
//! it; a decoded header re-encodes to one that decodes the same; and for a schema's mirrored
//! parameters, the header text of a body value matches that body value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpkit_types::headers::{decode_value, encode_value, header_params, matches, param_text, value_at};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let encoded = encode_value(&text);
    assert!(
        http::HeaderValue::from_str(&encoded).is_ok(),
        "{encoded:?} is not a header value"
    );
    assert_eq!(
        decode_value(&encoded).as_deref(),
        Ok(&*text),
        "{text:?} did not survive encoding"
    );
    if let Ok(decoded) = decode_value(&text) {
        assert_eq!(decode_value(&encode_value(&decoded)).as_deref(), Ok(&*decoded));
    }
    // A JSON input: `{"inputSchema": …, "arguments": …}`, or a schema that is its own arguments.
    let Ok(Value::Object(input)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let schema = match input.get("inputSchema") {
        Some(Value::Object(s)) => s.clone(),
        _ => input.clone(),
    };
    let arguments = input.get("arguments").cloned().unwrap_or(Value::Object(input));
    let Ok(params) = header_params(&schema) else { return };
    for p in &params {
        assert!(
            http::HeaderName::from_bytes(p.header().as_bytes()).is_ok(),
            "{:?}",
            p.header()
        );
        let Some(value) = value_at(&arguments, &p.path) else {
            continue;
        };
        let Some(header) = param_text(value, p.kind) else {
            continue;
        };
        let decoded = decode_value(&encode_value(&header)).unwrap();
        assert!(matches(&decoded, value, p.kind), "{header:?} does not match {value}");
    }
});
