//! Sessions on 2024-11-05, 2025-03-26 and 2025-06-18 against the reference server: every frame
//! either side writes validates against that revision's own schema.

use crate::common;

use std::sync::Arc;

use common::*;
use mcpkit::client::{prompt_ref, CallOptions};
use mcpkit::testing::TestPair;
use mcpkit::types::method::ListRoots;
use mcpkit::types::schema::LoggingLevel;
use mcpkit::types::{ErrorCode, ProtocolVersion};
use mcpkit::Error;
use mcpkit_cli::reference;
use serde_json::json;
use tokio::sync::mpsc;

/// A session on an older revision speaks that revision: the same calls against the reference
/// server, with the client asking for 2024-11-05, 2025-03-26 or 2025-06-18, produce frames that
/// validate against that revision's schema (results are adapted to what the revision can say).
#[tokio::test]
async fn older_revisions_get_frames_valid_in_their_own_schema() {
    let mut failures = Vec::new();
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let asked = Arc::new(Asked::default());
        let client = harness_client(asked).protocol_version(version);
        let pair = within("connect", TestPair::connect(reference::server(), client))
            .await
            .unwrap();
        let c = &pair.client;
        assert_eq!(c.protocol_version(), version);
        within("ping", c.ping()).await.unwrap();
        within("setLevel", c.set_log_level(LoggingLevel::Debug)).await.unwrap();
        let tools = within("tools", c.list_all_tools()).await.unwrap();
        for t in &tools {
            if common::NOT_PLAIN_TOOLS.contains(&t.name.as_str()) {
                continue;
            }
            let args = match t.name.as_str() {
                "echo" => json!({"message": "m"}),
                "add" => json!({"a": 1, "b": 2}),
                "test_sampling" => json!({"prompt": "p"}),
                "test_elicitation" => json!({"message": "m"}),
                "json_schema_2020_12_tool" => json!({"email": "e"}),
                _ => json!({}),
            };
            let (tx, _rx) = mpsc::unbounded_channel();
            let options = CallOptions {
                progress: Some(tx),
                ..Default::default()
            };
            if let Err(e) = within(&t.name, c.call_tool_with(&t.name, args, options)).await {
                failures.push(format!("{version}: tools/call {} failed: {e}", t.name));
            }
        }
        for r in within("resources", c.list_all_resources()).await.unwrap() {
            within("read", c.read_resource(&r.uri)).await.unwrap();
        }
        within("templates", c.list_all_resource_templates()).await.unwrap();
        within("read template", c.read_resource("test://template/7/data"))
            .await
            .unwrap();
        let _ = within("read unknown", c.read_resource("test://nope")).await;
        within("subscribe", c.subscribe("test://watched-resource"))
            .await
            .unwrap();
        pair.server.notify_resource_updated("test://watched-resource");
        for p in within("prompts", c.list_all_prompts()).await.unwrap() {
            let args: Vec<(String, String)> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| (a.name.clone(), "test://x".to_owned()))
                .collect();
            let got = within("prompt", c.get_prompt(&p.name, args)).await;
            // This prompt asks the user through elicitation, which these revisions' clients do
            // not all have: a client without the capability is told what is missing.
            match got {
                Err(Error::Rpc(e))
                    if p.name == "test_input_required_result_prompt" && version < ProtocolVersion::V2025_06_18 =>
                {
                    assert_eq!(
                        e.code,
                        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        "{version}: {e:?}"
                    );
                }
                other => {
                    other.unwrap_or_else(|e| panic!("{version}: prompts/get {} failed: {e}", p.name));
                }
            }
        }
        within(
            "complete",
            c.complete(prompt_ref("test_prompt_with_arguments"), "arg1", "t"),
        )
        .await
        .unwrap();
        within(
            "roots",
            pair.connection.peer().request::<ListRoots>(&Default::default()),
        )
        .await
        .unwrap();
        within("final ping", c.ping()).await.unwrap();

        let v = SchemaValidator::revision(version.as_str());
        let sent = pair.server_sent();
        let received = pair.server_received();
        let report = v.check_transcript(&sent, &received);
        assert!(report.count("result tools/call") >= 16, "{version}: {:?}", report.kinds);
        for e in report.errors {
            failures.push(format!("{version}: server frame: {e}"));
        }
        for e in v.check_transcript(&received, &sent).errors {
            failures.push(format!("{version}: client frame: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
