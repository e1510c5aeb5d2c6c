//! Compat: messages adapted for an older revision (2024-11-05, 2025-03-26, 2025-06-18) validate
//! against that revision's schema, and the same messages unadapted do not.

use crate::common;

use common::*;
use mcpkit_types::schema::*;
use mcpkit_types::ProtocolVersion;
use serde_json::json;

const OLDER: [(ProtocolVersion, &str); 3] = [
    (ProtocolVersion::V2024_11_05, "2024-11-05"),
    (ProtocolVersion::V2025_03_26, "2025-03-26"),
    (ProtocolVersion::V2025_06_18, "2025-06-18"),
];

#[test]
fn unadapted_messages_are_invalid_for_old_revisions() {
    // The compat tests below have teeth: these fail before adaptation.
    let r = CallToolResult::success(vec![ContentBlock::audio("AA==", "audio/wav")]);
    assert!(!errors_for("2024-11-05", "CallToolResult", &serde_json::to_value(&r).unwrap()).is_empty());
    let link = CallToolResult::success(vec![ContentBlock::resource_link(Resource::new("file:///x", "x"))]);
    assert!(!errors_for("2025-03-26", "CallToolResult", &serde_json::to_value(&link).unwrap()).is_empty());
}

#[test]
fn compat_results_validate_against_older_schemas() {
    for (v, name) in OLDER {
        let mut call = CallToolResult::success(all_content());
        call.structured_content = Some(json!({"t": 1}));
        call.result_type = Some("complete".into());
        let adapted = call.for_version(v);
        assert_valid_in(name, "CallToolResult", &adapted);
        assert!(adapted.result_type.is_none());
        if v < ProtocolVersion::V2025_06_18 {
            assert!(adapted.structured_content.is_none());
        }
        let structured_only = CallToolResult {
            structured_content: Some(json!([1, 2])),
            ..Default::default()
        };
        let adapted = structured_only.for_version(v);
        assert_valid_in(name, "CallToolResult", &adapted);
        assert_eq!(adapted.content[0].as_text(), Some("[1,2]"));

        let messages = all_content()
            .into_iter()
            .map(|c| PromptMessage::new(Role::User, c))
            .collect();
        assert_valid_in(name, "GetPromptResult", &GetPromptResult::new(messages).for_version(v));

        let mut list = ListToolsResult::new(vec![tool()]);
        list.ttl_ms = Some(1000);
        list.cache_scope = Some(CacheScope::Public);
        let list = list.for_version(v);
        assert_valid_in(name, "ListToolsResult", &list);
        assert!(list.ttl_ms.is_none() && list.tools[0].execution.is_none());
        assert_eq!(list.tools[0].input_schema, tool().input_schema);

        assert_valid_in(
            name,
            "ReadResourceResult",
            &ReadResourceResult::new(vec![
                ResourceContents::text("u:", None, "t"),
                ResourceContents::blob("u:", None, "AA=="),
            ])
            .for_version(v),
        );
        assert_valid_in(
            name,
            "ListResourcesResult",
            &ListResourcesResult::new(vec![Resource::new("u:", "n")]).for_version(v),
        );
        assert_valid_in(
            name,
            "ListPromptsResult",
            &ListPromptsResult::new(vec![Prompt::new("p")]).for_version(v),
        );
        assert_valid_in(
            name,
            "CompleteResult",
            &CompleteResult::new(vec!["a".into()]).for_version(v),
        );
        assert_valid_in(
            name,
            "InitializeResult",
            &InitializeResult::new(
                name,
                ServerCapabilities {
                    tools: Some(ToolsCapability::default()),
                    ..Default::default()
                },
                Implementation::new("s", "1")
                    .with_title("S")
                    .with_icons(vec![Icon::new("https://x")]),
            ),
        );
    }
}

#[test]
fn compat_sampling_validates_against_older_schemas() {
    let tool_use = SamplingContent::ToolUse(ToolUseContent {
        id: "c1".into(),
        name: "w".into(),
        input: obj(json!({"q": 1})),
        meta: None,
    });
    let tool_result = SamplingContent::ToolResult(ToolResultContent {
        tool_use_id: "c1".into(),
        content: vec![ContentBlock::text("sunny")],
        ..Default::default()
    });
    let audio = SamplingContent::Audio(AudioContent {
        data: "AA==".into(),
        mime_type: "audio/wav".into(),
        ..Default::default()
    });
    for (v, name) in OLDER {
        let result = CreateMessageResult {
            role: Role::Assistant,
            content: vec![SamplingContent::text("checking"), tool_use.clone()].into(),
            model: "m".into(),
            stop_reason: Some("toolUse".into()),
            meta: None,
        };
        assert_valid_in(name, "CreateMessageResult", &result.for_version(v));
        let audio_result = CreateMessageResult {
            content: audio.clone().into(),
            ..CreateMessageResult::text("m", "")
        };
        assert_valid_in(name, "CreateMessageResult", &audio_result.for_version(v));

        let params = CreateMessageParams::new(
            vec![
                SamplingMessage::user_text("hi"),
                SamplingMessage {
                    role: Role::Assistant,
                    content: vec![tool_use.clone()].into(),
                    meta: None,
                },
                SamplingMessage {
                    role: Role::User,
                    content: vec![tool_result.clone(), audio.clone()].into(),
                    meta: None,
                },
            ],
            10,
        )
        .with_tools(vec![tool()], None)
        .for_version(v);
        assert!(params.tools.is_none());
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": params});
        assert_valid_in(name, "CreateMessageRequest", &msg);
    }
}

#[test]
fn compat_elicitation() {
    let v = ProtocolVersion::V2025_06_18;
    let form = ElicitParams::form("Who?", elicitation_schema()).for_version(v).unwrap();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": form});
    assert_valid_in("2025-06-18", "ElicitRequest", &msg);
    let ElicitParams::Form(f) = &form else {
        panic!("form expected")
    };
    assert_eq!(
        f.requested_schema.properties().unwrap()["size"]["enumNames"],
        json!(["Small", "Large"])
    );
    // Not representable before 2025-11-25 / 2025-06-18.
    assert!(ElicitParams::url("m", "https://x", "1").for_version(v).is_none());
    assert!(ElicitParams::form("m", ElicitationSchema::new())
        .for_version(ProtocolVersion::V2025_03_26)
        .is_none());
    let multi = ElicitationSchema::new().with_property(
        "tags",
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
    );
    assert!(ElicitParams::form("m", multi).for_version(v).is_none());
    // Unchanged for 2025-11-25.
    let same = ElicitParams::form("Who?", elicitation_schema());
    assert_eq!(same.clone().for_version(ProtocolVersion::V2025_11_25), Some(same));
}
