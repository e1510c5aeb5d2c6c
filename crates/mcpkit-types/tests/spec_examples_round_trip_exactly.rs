//! The spec's own examples (the JSON blocks of the 2025-11-25 documentation) parse into the
//! typed params and results and serialize back to exactly the same JSON.

use crate::common;

use common::*;
use mcpkit_types::method::*;
use mcpkit_types::schema::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// Numbers compared by value (`1` and `1.0` are the same JSON number).
fn normalize(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        other => other.clone(),
    }
}

fn rt<T: Serialize + DeserializeOwned>(v: &Value) -> Value {
    // Through text, as on the wire (raw-valued fields need a text deserializer).
    let typed: T = serde_json::from_str(&v.to_string()).unwrap_or_else(|e| panic!("parse {v:#}: {e}"));
    serde_json::to_value(&typed).unwrap()
}

fn rt_params(method: &str, v: &Value) -> Option<Value> {
    Some(match method {
        "initialize" => rt::<<Initialize as Method>::Params>(v),
        "ping" => rt::<<Ping as Method>::Params>(v),
        "tools/list" => rt::<<ListTools as Method>::Params>(v),
        "tools/call" => rt::<<CallTool as Method>::Params>(v),
        "resources/list" => rt::<<ListResources as Method>::Params>(v),
        "resources/templates/list" => rt::<<ListResourceTemplates as Method>::Params>(v),
        "resources/read" => rt::<<ReadResource as Method>::Params>(v),
        "resources/subscribe" => rt::<<Subscribe as Method>::Params>(v),
        "prompts/list" => rt::<<ListPrompts as Method>::Params>(v),
        "prompts/get" => rt::<<GetPrompt as Method>::Params>(v),
        "completion/complete" => rt::<<Complete as Method>::Params>(v),
        "sampling/createMessage" => rt::<<CreateMessage as Method>::Params>(v),
        "elicitation/create" => rt::<<Elicit as Method>::Params>(v),
        "notifications/initialized" => rt::<<Initialized as NotificationMethod>::Params>(v),
        "notifications/tools/list_changed" => rt::<<ToolListChanged as NotificationMethod>::Params>(v),
        "notifications/prompts/list_changed" => rt::<<PromptListChanged as NotificationMethod>::Params>(v),
        "notifications/resources/list_changed" => rt::<<ResourceListChanged as NotificationMethod>::Params>(v),
        "notifications/resources/updated" => rt::<<ResourceUpdated as NotificationMethod>::Params>(v),
        "notifications/elicitation/complete" => rt::<<ElicitationComplete as NotificationMethod>::Params>(v),
        _ => return None,
    })
}

fn rt_result(method: &str, v: &Value) -> Option<Value> {
    Some(match method {
        "initialize" => rt::<<Initialize as Method>::Result>(v),
        "tools/list" => rt::<<ListTools as Method>::Result>(v),
        "tools/call" => rt::<<CallTool as Method>::Result>(v),
        "resources/list" => rt::<<ListResources as Method>::Result>(v),
        "resources/templates/list" => rt::<<ListResourceTemplates as Method>::Result>(v),
        "resources/read" => rt::<<ReadResource as Method>::Result>(v),
        "prompts/list" => rt::<<ListPrompts as Method>::Result>(v),
        "prompts/get" => rt::<<GetPrompt as Method>::Result>(v),
        "completion/complete" => rt::<<Complete as Method>::Result>(v),
        "sampling/createMessage" => rt::<<CreateMessage as Method>::Result>(v),
        "elicitation/create" => rt::<<Elicit as Method>::Result>(v),
        _ => return None,
    })
}

#[test]
fn spec_examples_round_trip() {
    let docs = spec_dir().join("docs/2025-11-25");
    let files = [
        "basic/lifecycle.md",
        "server/tools.md",
        "server/prompts.md",
        "server/resources.md",
        "server/utilities/completion.md",
        "client/sampling.md",
        "client/elicitation.md",
    ];
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(docs.join(file)).unwrap();
        let mut last_method: Option<String> = None;
        for block in text.split("```json\n").skip(1).filter_map(|b| b.split("```").next()) {
            let Ok(v) = serde_json::from_str::<Value>(block) else {
                continue;
            };
            if let Some(method) = v.get("method").and_then(Value::as_str) {
                last_method = Some(method.to_owned());
                let params = v.get("params").cloned().unwrap_or_else(|| json!({}));
                if let Some(back) = rt_params(method, &params) {
                    let mut expected = params.clone();
                    // Form-mode elicitation is always sent with an explicit `mode`.
                    if method == "elicitation/create" && expected.get("mode").is_none() {
                        expected["mode"] = json!("form");
                    }
                    assert_eq!(normalize(&back), normalize(&expected), "{file}: {method} params");
                    checked += 1;
                }
            } else if let (Some(res), Some(method)) = (v.get("result"), last_method.as_deref()) {
                if let Some(back) = rt_result(method, res) {
                    assert_eq!(normalize(&back), normalize(res), "{file}: {method} result");
                    checked += 1;
                }
            } else if v.get("type").is_some() && v.get("text").is_some() || v.get("data").is_some() {
                let back = rt::<ContentBlock>(&v);
                assert_eq!(normalize(&back), normalize(&v), "{file}: content block");
                checked += 1;
            }
        }
    }
    eprintln!("{checked} spec examples round-tripped");
    assert!(checked >= 40, "only {checked} examples checked");
}
