//! Middleware over the method tables (`ServerBuilder::middleware`), run without a transport
//! (`Server::call`/`call_as`) in both eras: layers run in the order added, the first
//! outermost; a layer reads the method, what it targets, its typed params and `_meta`; it can
//! answer with a JSON-RPC error or a tool error without passing the request on, or change the
//! result; `initialize` and unknown methods pass no layer.
#![cfg(feature = "server")]

use std::sync::{Arc, Mutex};

use mcpkit::server::middleware::{self, Next};
use mcpkit::server::{Args, Call, ToolDef};
use mcpkit::types::method::{CallTool, ListTools, Method, Ping};
use mcpkit::types::schema::{CallToolParams, CallToolResult, PaginatedParams, RequestParams};
use mcpkit::types::{ErrorCode, ErrorObject, ProtocolVersion};
use mcpkit::Server;
use serde_json::{json, Value};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

type Log = Arc<Mutex<Vec<String>>>;

/// A layer that writes `name>` before and `<name` after the rest of the stack.
fn tracer(name: &'static str, log: Log) -> impl middleware::Middleware {
    middleware::from_fn(move |call: Call, next: Next| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(format!("{name}>{}", call.method()));
            let out = next.run(call).await;
            log.lock().unwrap().push(format!("<{name}"));
            out
        }
    })
}

fn echo() -> ToolDef {
    ToolDef::new("echo", |Args(t): Args<Text>| async move { t.text })
}

fn call_params(name: &str, arguments: Value) -> CallToolParams {
    serde_json::from_value(json!({ "name": name, "arguments": arguments })).unwrap()
}

fn text_of(r: &CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

#[tokio::test]
async fn layers_run_in_the_order_added_first_outermost_in_both_eras() {
    for version in ERAS {
        let log = Log::default();
        let server = Server::builder()
            .tool(echo())
            .middleware(tracer("a", log.clone()))
            .middleware(tracer("b", log.clone()))
            .build();
        let r = server
            .call_as::<CallTool>(version, call_params("echo", json!({ "text": "hi" })))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "hi");
        assert_eq!(
            *log.lock().unwrap(),
            ["a>tools/call", "b>tools/call", "<b", "<a"],
            "{version:?}"
        );
        // Every method the table serves passes the layers; an unknown one passes none.
        log.lock().unwrap().clear();
        server
            .call_as::<ListTools>(version, PaginatedParams::default())
            .await
            .unwrap();
        assert_eq!(log.lock().unwrap().len(), 4, "{version:?}");
        log.lock().unwrap().clear();
        struct Nope;
        impl Method for Nope {
            const NAME: &'static str = "nope/nope";
            type Params = RequestParams;
            type Result = Value;
        }
        let e = server
            .call_as::<Nope>(version, RequestParams::default())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(log.lock().unwrap().is_empty(), "{version:?}");
    }
}

#[tokio::test]
async fn a_layer_reads_the_target_typed_params_and_meta() {
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let record = seen.clone();
    let layer = middleware::from_fn(move |call: Call, next: Next| {
        let record = record.clone();
        async move {
            if call.is::<CallTool>() {
                let params = call.params::<CallTool>().unwrap().unwrap();
                record.lock().unwrap().push(json!({
                    "target": call.target(),
                    "arguments": serde_json::from_str::<Value>(params.arguments.unwrap().get()).unwrap(),
                    "vendor": call.meta().and_then(|m| m.extra.get("com.example/tenant").cloned()),
                    "era": format!("{:?}", call.era()),
                    "params_as_other_method": call.params::<Ping>().is_none(),
                }));
            }
            next.run(call).await
        }
    });
    let server = Server::builder().tool(echo()).middleware(layer).build();
    for version in ERAS {
        let p: CallToolParams = serde_json::from_value(json!({
            "name": "echo",
            "arguments": { "text": "x" },
            "_meta": { "com.example/tenant": "t1" }
        }))
        .unwrap();
        server.call_as::<CallTool>(version, p).await.unwrap();
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [
            json!({ "target": "echo", "arguments": { "text": "x" }, "vendor": "t1", "era": "Handshake", "params_as_other_method": true }),
            json!({ "target": "echo", "arguments": { "text": "x" }, "vendor": "t1", "era": "Stateless", "params_as_other_method": true }),
        ]
    );
}

#[tokio::test]
async fn a_layer_answers_with_an_error_or_a_tool_error_without_passing_the_request_on() {
    let ran = Arc::new(Mutex::new(0));
    let counter = ran.clone();
    let server = Server::builder()
        .tool(ToolDef::new("delete", move || {
            let counter = counter.clone();
            async move {
                *counter.lock().unwrap() += 1;
                "deleted"
            }
        }))
        .tool(echo())
        .middleware(middleware::from_fn(|call: Call, next: Next| async move {
            match call.target().as_deref() {
                Some("delete") => call.tool_error("delete is switched off here"),
                _ if call.is::<ListTools>() => Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, "no lists today")),
                _ => next.run(call).await,
            }
        }))
        .build();
    for version in ERAS {
        let r = server
            .call_as::<CallTool>(version, call_params("delete", json!({})))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true), "{version:?}");
        assert_eq!(text_of(&r), "delete is switched off here");
        let e = server
            .call_as::<ListTools>(version, PaginatedParams::default())
            .await
            .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::INVALID_REQUEST, "no lists today")
        );
        let r = server
            .call_as::<CallTool>(version, call_params("echo", json!({ "text": "still served" })))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "still served");
    }
    assert_eq!(*ran.lock().unwrap(), 0, "the refused tool never ran");
}

#[tokio::test]
async fn a_layer_changes_the_result() {
    let server = Server::builder()
        .tool(echo())
        .middleware(middleware::from_fn(|call: Call, next: Next| async move {
            let raw = next.run(call).await?;
            let mut v: Value = serde_json::from_str(raw.get()).map_err(|e| ErrorObject::internal(e.to_string()))?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("_meta".into(), json!({ "com.example/seen": true }));
            }
            middleware::serialize(&v)
        }))
        .build();
    for version in ERAS {
        let r = server
            .call_as::<CallTool>(version, call_params("echo", json!({ "text": "t" })))
            .await
            .unwrap();
        let meta = serde_json::to_value(&r.meta).unwrap();
        assert_eq!(meta["com.example/seen"], json!(true), "{version:?}: {meta}");
        assert_eq!(text_of(&r), "t");
    }
}

#[tokio::test]
async fn initialize_passes_no_layer() {
    let log = Log::default();
    let server = Server::builder()
        .tool(echo())
        .middleware(tracer("a", log.clone()))
        .build();
    let mut wire = crate::common::Wire::serve(&server);
    wire.initialize().await;
    assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
    server.call::<Ping>(RequestParams::default()).await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["a>ping", "<a"]);
}
