//! Serde details the schema asks for: open objects keep unknown members, `_meta` reads as the
//! schema says, hand-written unions, raw tool arguments, absent optional params, ordered logging
//! levels, and a method catalogue that is exactly the schema's.

use crate::common;

use common::*;
use mcpkit_types::method::*;
use mcpkit_types::schema::*;
use serde_json::json;

#[test]
fn open_objects_keep_unknown_members() {
    let caps: ServerCapabilities = serde_json::from_value(json!({
        "tools": {"listChanged": true, "x-future": 1},
        "logging": {},
        "extensions": {"io.example/a": {"b": 2}}
    }))
    .unwrap();
    assert_eq!(caps.tools.as_ref().unwrap().extra["x-future"], json!(1));
    assert_eq!(
        serde_json::to_value(&caps).unwrap(),
        json!({"tools": {"listChanged": true, "x-future": 1}, "logging": {}, "extensions": {"io.example/a": {"b": 2}}})
    );
    assert_eq!(serde_json::to_string(&ClientCapabilities::default()).unwrap(), "{}");
    assert_eq!(serde_json::to_string(&RootsCapability::default()).unwrap(), "{}");
    let t = tool();
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(
        v["inputSchema"]["properties"]["location"]["x-custom"],
        json!({"keep": true})
    );
    assert_eq!(v["inputSchema"]["$defs"], json!({"unit": {"enum": ["c", "f"]}}));
    let req_meta: RequestMeta =
        serde_json::from_value(json!({"progressToken": 1, "io.modelcontextprotocol/related-task": {"taskId": "t"}}))
            .unwrap();
    assert_eq!(req_meta.progress_token, Some(ProgressToken::Number(1)));
    assert!(req_meta.extra.contains_key("io.modelcontextprotocol/related-task"));
}

#[test]
fn request_meta_reads_like_the_schema_says() {
    let text = r#"{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","x":{"y":[1]}}"#;
    let meta: RequestMeta = serde_json::from_str(text).unwrap();
    assert_eq!(meta.progress_token, Some(ProgressToken::String("p".into())));
    assert_eq!(meta.extra.len(), 2);
    assert_eq!(serde_json::to_string(&meta).unwrap(), text);
    let meta: RequestMeta = serde_json::from_str(r#"{"progressToken":null}"#).unwrap();
    assert_eq!(meta, RequestMeta::default());
    let dup = serde_json::from_str::<RequestMeta>(r#"{"progressToken":1,"progressToken":2}"#).unwrap_err();
    assert!(dup.to_string().contains("duplicate field `progressToken`"), "{dup}");
    assert!(serde_json::from_str::<RequestMeta>(r#"{"progressToken":1.5}"#).is_err());
    assert!(serde_json::from_str::<RequestMeta>("[1]").is_err());
}

#[test]
fn request_meta_leaves_out_the_protocol_members_only_when_asked() {
    let text = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3,
        "io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
        "io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/related-task":{"taskId":"t"},"x\u0079":1}"#;
    let all: RequestMeta = serde_json::from_str(text).unwrap();
    assert_eq!(all.extra.len(), 6);
    let skipped = ProtocolMembersSkipped::start();
    let lean: RequestMeta = serde_json::from_str(text).unwrap();
    drop(skipped);
    assert_eq!(lean.progress_token, Some(ProgressToken::Number(3)));
    let kept: Vec<&str> = lean.extra.keys().map(String::as_str).collect();
    assert_eq!(kept, ["io.modelcontextprotocol/related-task", "xy"]);
    // Only while the guard lived: the next decode keeps every member again.
    let again: RequestMeta = serde_json::from_str(text).unwrap();
    assert_eq!(again, all);
}

#[test]
fn hand_written_unions() {
    assert_eq!(
        serde_json::from_str::<ProgressToken>("\"1\"").unwrap(),
        ProgressToken::String("1".into())
    );
    assert_eq!(
        serde_json::from_str::<ProgressToken>("1").unwrap(),
        ProgressToken::Number(1)
    );
    assert!(serde_json::from_str::<ProgressToken>("1.5").is_err());
    assert!(serde_json::from_str::<ProgressToken>("null").is_err());

    assert!(matches!(
        serde_json::from_value::<ResourceContents>(json!({"uri": "u", "blob": "AA=="})).unwrap(),
        ResourceContents::Blob(_)
    ));
    assert!(matches!(
        serde_json::from_value::<ResourceContents>(json!({"uri": "u", "text": ""})).unwrap(),
        ResourceContents::Text(_)
    ));
    assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "u"})).is_err());
    assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "u", "text": "", "blob": ""})).is_err());

    let single: SamplingMessage =
        serde_json::from_str(r#"{"role":"user","content":{"type":"text","text":"hi"}}"#).unwrap();
    assert!(matches!(single.content, SamplingContentList::Single(_)));
    let many: SamplingMessage =
        serde_json::from_str(r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#).unwrap();
    assert!(matches!(many.content, SamplingContentList::Multiple(ref v) if v.len() == 1));
    assert_eq!(
        serde_json::to_value(&many).unwrap()["content"],
        json!([{"type": "text", "text": "hi"}])
    );
    assert!(serde_json::from_str::<SamplingMessage>(r#"{"role":"user","content":"hi"}"#).is_err());

    let no_mode: ElicitParams =
        serde_json::from_value(json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}))
            .unwrap();
    assert!(matches!(no_mode, ElicitParams::Form(_)));
    let url: ElicitParams =
        serde_json::from_value(json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"}))
            .unwrap();
    assert!(matches!(url, ElicitParams::Url(_)));
    assert!(serde_json::from_value::<ElicitParams>(json!({"mode": "telepathy", "message": "m"})).is_err());

    let r: CompletionReference = serde_json::from_value(json!({"type": "ref/resource", "uri": "a://{b}"})).unwrap();
    assert_eq!(r, CompletionReference::resource("a://{b}"));
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "hologram"})).is_err());
}

#[test]
fn call_tool_arguments_stay_raw() {
    let text = r#"{"name":"t","arguments":{"b":1,"a":[true, null]}}"#;
    let p: CallToolParams = serde_json::from_str(text).unwrap();
    assert_eq!(p.arguments.as_ref().unwrap().get(), r#"{"b":1,"a":[true, null]}"#);
    #[derive(serde::Deserialize)]
    struct Args {
        b: u32,
    }
    assert_eq!(p.arguments_as::<Args>().unwrap().b, 1);
    let none = CallToolParams::new("t");
    assert_eq!(none.arguments_as::<JsonObject>().unwrap(), JsonObject::new());
    assert_eq!(p.clone(), p);
}

#[test]
fn optional_params_parse_from_absent() {
    let p: PaginatedParams = parse_params(None).unwrap();
    assert_eq!(p, PaginatedParams::default());
    let p: <Ping as Method>::Params = parse_params(None).unwrap();
    assert_eq!(p, PingParams::default());
    let p: NotificationParams = parse_params(None).unwrap();
    assert_eq!(p, NotificationParams::default());
    let raw = serde_json::value::to_raw_value(&json!({"cursor": "c"})).unwrap();
    let p: PaginatedParams = parse_params(Some(&raw)).unwrap();
    assert_eq!(p.cursor.as_deref(), Some("c"));
    assert_eq!(serde_json::to_string(&PaginatedParams::default()).unwrap(), "{}");
}

#[test]
fn logging_levels_are_ordered() {
    let levels = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    let parsed: Vec<LoggingLevel> = levels
        .iter()
        .map(|l| serde_json::from_value(json!(l)).unwrap())
        .collect();
    for w in parsed.windows(2) {
        assert!(w[0] < w[1]);
    }
    assert!(LoggingLevel::Warning >= LoggingLevel::Info);
}

#[test]
fn method_catalogue_is_complete() {
    let schema = schema("2025-11-25");
    let names = |def: &str| -> Vec<String> {
        schema["$defs"][def]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let name = r["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
                schema["$defs"][name]["properties"]["method"]["const"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let sorted = |v: &[&str]| {
        let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    let check = |def: &str, ours: &[&str]| {
        let mut theirs = names(def);
        theirs.sort();
        assert_eq!(sorted(ours), theirs, "{def}");
    };
    check("ClientRequest", ALL_CLIENT_REQUESTS);
    check("ServerRequest", ALL_SERVER_REQUESTS);
    check("ClientNotification", ALL_CLIENT_NOTIFICATIONS);
    check("ServerNotification", ALL_SERVER_NOTIFICATIONS);
}
