//! `mcpkit codegen` against the reference server, a Python SDK server, two TypeScript SDK
//! servers and a server of awkward names and schemas: each generated file must be
//! byte-identical to the one checked in under `crates/mcpkit-codegen-check/src/` (which the
//! workspace compiles under its lints, so the generated code compiles without warnings), and
//! typed calls through that compiled module must succeed against the live server.
//!
//! `MCPKIT_CODEGEN_BLESS=1` rewrites the checked-in files instead of comparing (after a
//! deliberate change to the generator or to a test server).

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use mcpkit::server::ToolDef;
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::schema::CallToolResult;
use mcpkit::{Args, Client, HttpServer, Server};
use mcpkit_codegen_check::{awkward, python, reference, typescript, typescript_v2};
use serde_json::{json, Value};

use crate::support::peers;

/// Run `mcpkit codegen --out TMP` with `target` (arguments after `--out`).
fn codegen(target: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("client.rs");
    let run: Output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(["codegen", "--out", out.to_str().unwrap(), "--server-stderr", "quiet"])
        .args(target)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "mcpkit codegen failed: {stderr}");
    (std::fs::read_to_string(&out).unwrap(), stderr)
}

/// The generated source must be the checked-in, compiled one (or replace it when blessing).
fn assert_checked_in(name: &str, source: &str) {
    let path = peers::repo()
        .join("crates/mcpkit-codegen-check/src")
        .join(format!("{name}.rs"));
    if std::env::var_os("MCPKIT_CODEGEN_BLESS").is_some() {
        std::fs::write(&path, source).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == source,
        "{} differs from what `mcpkit codegen` generates now; if the change is meant, regenerate with \
         MCPKIT_CODEGEN_BLESS=1 cargo test -p mcpkit-cli --test behaviour codegen_clients_call_the_servers_they_were_generated_from",
        path.display()
    );
}

async fn connect_child(program: &Path, args: &[&str], cwd: Option<&Path>) -> Client {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let transport = ChildTransport::from_command(cmd, Stderr::Trace).unwrap();
    tokio::time::timeout(Duration::from_secs(30), Client::builder().connect(transport))
        .await
        .expect("connect timed out")
        .expect("connect")
}

#[tokio::test]
async fn reference_server_client_calls_typed_tools() {
    let (source, _) = codegen(&[]);
    assert_checked_in("reference", &source);
    let client = connect_child(Path::new(env!("CARGO_BIN_EXE_mcpkit")), &["serve"], None).await;
    let calc = reference::McpkitReferenceClient::new(client);
    let sum: reference::add::Output = calc.add(2.5, 4.0).await.unwrap();
    assert_eq!(sum.sum, 6.5);
    assert_eq!(calc.echo("hello".into()).await.unwrap(), "hello");
    assert_eq!(calc.greet("Ada".into()).await.unwrap(), "Hello, Ada!");
    let address = reference::json_schema_2020_12_tool::Address {
        city: Some("Paris".into()),
        street: None,
    };
    let text = calc
        .json_schema_2020_12_tool(
            Some("Ada".into()),
            Some(address),
            Some(reference::json_schema_2020_12_tool::ArgsContactMethod::Email),
            None,
            Some("ada@example.com".into()),
        )
        .await
        .unwrap();
    assert!(!text.is_empty());
    match calc.test_error_handling().await {
        Err(reference::CallError::Tool { tool, message, .. }) => {
            assert_eq!(tool, "test_error_handling");
            assert!(!message.is_empty());
        }
        other => panic!("expected a tool error, got {other:?}"),
    }
    calc.client().close().await.unwrap();
}

#[tokio::test]
async fn python_sdk_server_client_calls_typed_tools() {
    let py = peers::python();
    let script = peers::repo().join("tests-interop/python/codegen_server.py");
    let (source, _) = codegen(&["--", py.to_str().unwrap(), script.to_str().unwrap()]);
    assert_checked_in("python", &source);
    let client = connect_child(&py, &[script.to_str().unwrap()], None).await;
    let server = python::PythonCodegenClient::new(client);
    // `-> int` is the `{"result": …}` wrapper: the method returns the integer.
    assert_eq!(server.add(2, 3).await.unwrap(), 5);
    let made: python::make_contact::Output = server.make_contact("Ada".into(), "London".into()).await.unwrap();
    assert_eq!(made.name, "Ada");
    assert_eq!(made.address.city, "London");
    assert_eq!(made.tags, vec!["new".to_owned()]);
    let contact = python::describe::Contact {
        name: "Grace".into(),
        kind: python::describe::ContactKind::Company,
        address: python::describe::Address {
            street: "2 Side Street".into(),
            city: "Arlington".into(),
            postcode: None,
        },
        tags: vec!["navy".into()],
    };
    assert_eq!(
        server.describe(contact, Some(true)).await.unwrap(),
        "GRACE (COMPANY) IN ARLINGTON [NAVY]"
    );
    match server.fail().await {
        Err(python::CallError::Tool { message, .. }) => assert!(message.contains("intentional failure"), "{message}"),
        other => panic!("expected a tool error, got {other:?}"),
    }
    server.client().close().await.unwrap();
}

#[tokio::test]
async fn typescript_sdk_server_client_calls_typed_tools() {
    let dir = peers::node_package_dir("ts", "@modelcontextprotocol/sdk");
    let script = dir.join("echo_server.mjs");
    let (source, _) = codegen(&["--", "node", script.to_str().unwrap(), "stdio"]);
    assert_checked_in("typescript", &source);
    let client = connect_child(Path::new("node"), &[script.to_str().unwrap(), "stdio"], Some(&dir)).await;
    let server = typescript::TsEchoClient::new(client);
    assert_eq!(server.add(1.5, 2.0).await.unwrap(), 3.5);
    assert_eq!(server.echo("hi".into()).await.unwrap(), "hi");
    assert!(matches!(server.fail().await, Err(typescript::CallError::Tool { .. })));
    server.client().close().await.unwrap();
}

#[tokio::test]
async fn typescript_v2_sdk_server_client_calls_typed_tools() {
    let dir = peers::node_package_dir("ts2", "@modelcontextprotocol/server");
    let script = dir.join("echo_server.mjs");
    let (source, _) = codegen(&["--", "node", script.to_str().unwrap(), "stdio"]);
    assert_checked_in("typescript_v2", &source);
    let client = connect_child(Path::new("node"), &[script.to_str().unwrap(), "stdio"], Some(&dir)).await;
    let server = typescript_v2::Ts2EchoClient::new(client);
    assert_eq!(server.add(1.5, 2.0).await.unwrap(), 3.5);
    assert_eq!(server.echo("hi".into()).await.unwrap(), "hi");
    assert!(matches!(
        server.fail().await,
        Err(typescript_v2::CallError::Tool { .. })
    ));
    server.client().close().await.unwrap();
}

fn object(v: Value) -> mcpkit::types::schema::JsonObject {
    v.as_object().cloned().unwrap()
}

/// A tool that answers with its arguments as text.
fn echo_args(name: &str, input: Value) -> ToolDef {
    ToolDef::new(name, |Args(v): Args<Value>| async move { v.to_string() }).input_schema(object(input))
}

/// Tools whose names are not Rust identifiers or clash, and schemas the generator cannot type.
fn awkward_server() -> Server {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    Server::builder()
        .name("awkward", "0.0.1")
        .tool(echo_args("get-weather.v2", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})))
        .tool(echo_args(
            "type",
            json!({"type": "object", "properties": {"self": {"type": "string"}, "type": {"type": "integer"}}, "required": ["self"]}),
        ))
        .tool(echo_args("3d.render", text.clone()))
        .tool(echo_args("a-b", text.clone()))
        .tool(echo_args("a.b", text.clone()))
        .tool(echo_args("new", text.clone()))
        .tool(
            echo_args(
                "std",
                json!({"type": "object", "properties": {"mode": {
                    "enum": ["fast", "slow"],
                    "description": "One of <fast|slow>; see https://example.com/modes"
                }}, "required": ["mode"]}),
            )
            .description("See <https://example.com/docs> for *modes*:\n- fast\n- slow"),
        )
        .tool(echo_args(
            "refs",
            json!({"type": "object", "properties": {
                "remote": {"$ref": "https://example.com/schema.json"},
                "local": {"$ref": "#/properties/remote"}
            }}),
        ))
        .tool(echo_args("misspelt", json!({"type": "object", "properties": {"v": {"type": "objekt"}}})))
        .tool(
            ToolDef::new("pair", |Args(v): Args<Value>| async move {
                CallToolResult::structured(json!({"first": v["x"], "second": "two"}))
            })
            .input_schema(object(json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})))
            .output_schema(object(json!({
                "type": "object",
                "properties": {"first": {"type": "integer"}, "second": {"type": "string"}},
                "required": ["first", "second"],
                "if": {"properties": {"first": {"const": 0}}},
                "then": {"properties": {"second": {"const": "zero"}}}
            }))),
        )
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn awkward_names_and_schemas_give_a_client_that_compiles_and_calls() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let served = tokio::spawn(HttpServer::new(awkward_server()).serve(listener));

    let url2 = url.clone();
    let (source, stderr) = tokio::task::spawn_blocking(move || codegen(&["--server", &url2]))
        .await
        .unwrap();
    assert_checked_in("awkward", &source);
    for expected in [
        "tool \"get-weather.v2\" is not a Rust identifier (or clashes): its method is `get_weather_v2`",
        "tool \"type\" is not a Rust identifier (or clashes): its method is `type_`",
        "tool \"3d.render\" is not a Rust identifier (or clashes): its method is `tool_3d_render`",
        "tool \"a.b\" is not a Rust identifier (or clashes): its method is `a_b_2`",
        "tool \"new\" is not a Rust identifier (or clashes): its method is `new_2`",
        "cannot follow \"$ref\": \"https://example.com/schema.json\"",
        "cannot follow \"$ref\": \"#/properties/remote\"",
        "tool \"misspelt\": argument \"v\" cannot be typed",
    ] {
        assert!(
            stderr.contains(&format!("warning: {expected}")) || stderr.contains(expected),
            "no warning {expected:?} in:\n{stderr}"
        );
    }

    let transport = HttpClientTransport::builder(&url).build().unwrap();
    let client = Client::builder().connect(transport).await.unwrap();
    let awkward = awkward::AwkwardClient::new(client);
    let echoed: Value = serde_json::from_str(&awkward.get_weather_v2("Oslo".into()).await.unwrap()).unwrap();
    assert_eq!(echoed, json!({"city": "Oslo"}));
    let echoed: Value = serde_json::from_str(&awkward.type_("me".into(), Some(7)).await.unwrap()).unwrap();
    assert_eq!(echoed, json!({"self": "me", "type": 7}));
    let echoed: Value = serde_json::from_str(&awkward.type_("me".into(), None).await.unwrap()).unwrap();
    assert_eq!(echoed, json!({"self": "me"}));
    assert_eq!(awkward.tool_3d_render("x".into()).await.unwrap(), r#"{"text":"x"}"#);
    assert_eq!(awkward.a_b("1".into()).await.unwrap(), r#"{"text":"1"}"#);
    assert_eq!(awkward.a_b_2("2".into()).await.unwrap(), r#"{"text":"2"}"#);
    assert_eq!(awkward.new_2("3".into()).await.unwrap(), r#"{"text":"3"}"#);
    assert_eq!(
        awkward.std_2(awkward::std_2::ArgsMode::Slow).await.unwrap(),
        r#"{"mode":"slow"}"#
    );
    // The untypable arguments are serde_json::Value.
    let echoed: Value =
        serde_json::from_str(&awkward.refs(Some(json!(1)), Some(json!({"a": [true]}))).await.unwrap()).unwrap();
    assert_eq!(echoed, json!({"remote": 1, "local": {"a": [true]}}));
    assert_eq!(
        awkward.misspelt(Some(json!("anything"))).await.unwrap(),
        r#"{"v":"anything"}"#
    );
    let pair: awkward::pair::Output = awkward.pair(5).await.unwrap();
    assert_eq!((pair.first, pair.second.as_str()), (5, "two"));
    awkward.client().close().await.unwrap();
    served.abort();
}
