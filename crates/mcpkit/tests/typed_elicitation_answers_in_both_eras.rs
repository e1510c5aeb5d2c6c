//! Typed elicitation (spec: `client/elicitation`, form mode): `cx.elicit_as::<T>(message)` sends a
//! `requestedSchema` derived from `T` — a flat object of primitives and enums, exactly as pinned
//! here and valid against the revision's `ElicitRequestFormParams` — and reads the answer back
//! as `Elicited::{Accepted(T), Declined, Cancelled}`; `cx.confirm(message)` asks yes or no with
//! a form without fields. Both work in both eras: a server→client `elicitation/create` on a
//! 2025-11-25 session, an input round (`input_required`, then `inputResponses`) on the
//! 2026-07-28 wire. A type a form cannot hold fails at the call, naming the field, and nothing
//! is sent.

use crate::common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use common::within;
use mcpkit::client::ConnectMode;
use mcpkit::server::{elicitation_schema, Elicited, RequestContext, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{CallToolResult, ElicitResult};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use mcpkit_test_support::schema::SchemaValidator;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
enum Drink {
    /// Hot coffee
    Coffee,
    /// Cold tea
    Tea,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Order {
    /// Who the order is for.
    name: String,
    /// How many cups.
    cups: u8,
    size: Size,
    drink: Drink,
    /// Where to send the receipt.
    #[schemars(email)]
    email: Option<String>,
    #[serde(default)]
    rush: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Delivery {
    name: String,
    address: Address,
}

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("order", |cx: RequestContext| async move {
            Ok::<_, mcpkit::Error>(match cx.elicit_as::<Order>("Your order?").await? {
                Elicited::Accepted(o) => format!(
                    "{} x{} {:?} {:?} {:?} rush={}",
                    o.name, o.cups, o.size, o.drink, o.email, o.rush
                ),
                Elicited::Declined => "declined".to_owned(),
                Elicited::Cancelled => "cancelled".to_owned(),
            })
        }))
        .tool(ToolDef::new("delete", |cx: RequestContext| async move {
            let yes = cx.confirm("Delete the note?").await?;
            Ok::<_, mcpkit::Error>(if yes { "deleted" } else { "kept" })
        }))
        .tool(ToolDef::new("deliver", |cx: RequestContext| async move {
            let answer = cx.elicit_as::<Delivery>("Where to?").await?;
            Ok::<_, mcpkit::Error>(format!("{:?}", answer.accepted().map(|d| (d.name, d.address.street))))
        }))
        .build()
}

/// A client that answers each elicitation with the next queued answer.
fn client(answers: &Arc<Mutex<VecDeque<ElicitResult>>>) -> mcpkit::ClientBuilder {
    let answers = Arc::clone(answers);
    Client::builder().on_elicitation(move |_params| {
        let next = answers.lock().unwrap().pop_front();
        async move { Ok(next.unwrap_or_else(ElicitResult::cancel)) }
    })
}

fn text(r: &CallToolResult) -> String {
    let content = serde_json::to_value(&r.content).unwrap();
    content[0]["text"].as_str().unwrap().to_owned()
}

/// The `elicitation/create` params the server wrote: a request's params on a session, an entry
/// of `inputRequests` on the stateless wire.
fn elicitations_sent(pair: &TestPair) -> Vec<Value> {
    let mut out = Vec::new();
    for frame in pair.server_sent() {
        let v: Value = serde_json::from_str(&frame).unwrap();
        if v["method"] == "elicitation/create" {
            out.push(v["params"].clone());
        }
        if let Some(requests) = v["result"]["inputRequests"].as_object() {
            out.extend(requests.values().map(|r| r["params"].clone()));
        }
    }
    out
}

fn order_form() -> Value {
    json!({
        "mode": "form",
        "message": "Your order?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"description": "Who the order is for.", "type": "string"},
                "cups": {"description": "How many cups.", "type": "integer", "minimum": 0, "maximum": 255},
                "size": {"type": "string", "enum": ["small", "large"]},
                "drink": {
                    "type": "string",
                    "oneOf": [{"const": "Coffee", "title": "Hot coffee"}, {"const": "Tea", "title": "Cold tea"}]
                },
                "email": {"description": "Where to send the receipt.", "type": "string", "format": "email"},
                "rush": {"type": "boolean", "default": false}
            },
            "required": ["name", "cups", "size", "drink"]
        }
    })
}

const ERAS: [(ProtocolVersion, &str); 2] = [
    (ProtocolVersion::V2025_11_25, "2025-11-25"),
    (ProtocolVersion::V2026_07_28, "2026-07-28"),
];

async fn connect(version: ProtocolVersion, answers: &Arc<Mutex<VecDeque<ElicitResult>>>) -> TestPair {
    let mut builder = client(answers);
    if version.era() == mcpkit::types::Era::Stateless {
        builder = builder.mode(ConnectMode::Pinned(version));
    }
    within("connect", TestPair::connect(server(), builder)).await.unwrap()
}

#[tokio::test]
async fn elicit_as_sends_the_derived_form_and_reads_each_answer() {
    for (version, revision) in ERAS {
        let answers = Arc::new(Mutex::new(VecDeque::new()));
        let pair = connect(version, &answers).await;
        let content = json!({"name": "Ada", "cups": 2, "size": "large", "drink": "Tea", "email": "ada@example.com"});
        let misfit = json!({"name": 5, "cups": 2, "size": "large", "drink": "Tea"});
        let queued = [
            ElicitResult::accept(content.as_object().unwrap().clone()),
            ElicitResult::decline(),
            ElicitResult::cancel(),
            ElicitResult::accept(misfit.as_object().unwrap().clone()),
        ];
        let expected = [
            (false, r#"Ada x2 Large Tea Some("ada@example.com") rush=false"#),
            (false, "declined"),
            (false, "cancelled"),
            // A client that answers outside the form: the handler's `?` makes it a tool error.
            (
                true,
                "invalid response from the peer: the accepted form does not fit `Order`: invalid type: \
                 integer `5`, expected a string",
            ),
        ];
        for (answer, (is_error, expected)) in queued.into_iter().zip(expected) {
            answers.lock().unwrap().push_back(answer);
            let r = within("order", pair.client.call_tool("order", json!({})))
                .await
                .unwrap();
            assert_eq!(r.is_error(), is_error, "{revision}: {r:?}");
            assert_eq!(text(&r), expected, "{revision}");
        }
        let sent = elicitations_sent(&pair);
        assert_eq!(sent.len(), 4, "{revision}: one form per call: {sent:?}");
        for params in sent {
            assert_eq!(params, order_form(), "{revision}");
            SchemaValidator::revision(revision)
                .check_def("ElicitRequestFormParams", &params)
                .unwrap_or_else(|e| panic!("{revision}: {e}"));
        }
    }
}

#[tokio::test]
async fn confirm_is_a_form_without_fields_and_only_accept_is_yes() {
    for (version, revision) in ERAS {
        let answers = Arc::new(Mutex::new(VecDeque::new()));
        let pair = connect(version, &answers).await;
        let cases = [
            (ElicitResult::accept(Default::default()), "deleted"),
            (ElicitResult::decline(), "kept"),
            (ElicitResult::cancel(), "kept"),
        ];
        for (answer, expected) in cases {
            answers.lock().unwrap().push_back(answer);
            let r = within("delete", pair.client.call_tool("delete", json!({})))
                .await
                .unwrap();
            assert_eq!(text(&r), expected, "{revision}");
        }
        let form = json!({
            "mode": "form",
            "message": "Delete the note?",
            "requestedSchema": {"type": "object", "properties": {}}
        });
        let sent = elicitations_sent(&pair);
        assert_eq!(sent.len(), 3, "{revision}: one form per call: {sent:?}");
        for params in sent {
            assert_eq!(params, form, "{revision}");
            SchemaValidator::revision(revision)
                .check_def("ElicitRequestFormParams", &params)
                .unwrap_or_else(|e| panic!("{revision}: {e}"));
        }
    }
}

#[tokio::test]
async fn a_type_a_form_cannot_hold_fails_at_the_call_naming_the_field() {
    let why = "`Delivery` cannot be an elicitation form: field `address` is an object (a nested struct \
               or a map); a form holds only strings, numbers, integers, booleans and enums of strings \
               (spec: client/elicitation, requestedSchema)";
    for (version, revision) in ERAS {
        let answers = Arc::new(Mutex::new(VecDeque::new()));
        let pair = connect(version, &answers).await;
        let r = within("deliver", pair.client.call_tool("deliver", json!({})))
            .await
            .unwrap();
        assert!(r.is_error(), "{revision}: {r:?}");
        assert_eq!(text(&r), why, "{revision}");
        assert!(elicitations_sent(&pair).is_empty(), "{revision}: nothing is asked");
    }
    // The same check, without a request (for a unit test of one's own types).
    assert_eq!(elicitation_schema::<Delivery>().unwrap_err().to_string(), why);
    let schema = elicitation_schema::<Order>().unwrap();
    assert_eq!(
        Value::Object(schema.as_object().clone()),
        order_form()["requestedSchema"]
    );
    let not_a_struct = elicitation_schema::<Size>().unwrap_err().to_string();
    assert!(
        not_a_struct.starts_with("`Size` cannot be an elicitation form: it is not a struct with named fields"),
        "{not_a_struct}"
    );
}

// Only their schemas are used.
#[allow(dead_code)]
#[derive(schemars::JsonSchema)]
struct Picks {
    /// The sizes to stock.
    sizes: Vec<Size>,
}

#[allow(dead_code)]
#[derive(schemars::JsonSchema)]
struct Labels {
    labels: Vec<String>,
}

/// From 2025-11-25 a `Vec` of an enum of strings is a multi-select; a `Vec` of anything else is
/// refused, naming the field.
#[test]
fn a_list_is_a_multi_select_of_an_enum_only() {
    let schema = Value::Object(elicitation_schema::<Picks>().unwrap().as_object().clone());
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "sizes": {
                    "description": "The sizes to stock.",
                    "type": "array",
                    "items": {"type": "string", "enum": ["small", "large"]}
                }
            },
            "required": ["sizes"]
        })
    );
    let params = json!({"mode": "form", "message": "Stock?", "requestedSchema": schema});
    SchemaValidator::revision("2025-11-25")
        .check_def("ElicitRequestFormParams", &params)
        .unwrap();
    let e = elicitation_schema::<Labels>().unwrap_err().to_string();
    assert!(
        e.starts_with(
            "`Labels` cannot be an elicitation form: field `labels` is a list of something other than an \
             enum of strings (only a multi-select is allowed)"
        ),
        "{e}"
    );
}

/// A 2025-06-18 session gets the titled enum in that revision's words (`enum` + `enumNames`):
/// the derived form goes through the same per-revision adaptation as any `elicit`.
#[tokio::test]
async fn a_2025_06_18_session_gets_titles_as_enum_names() {
    let answers = Arc::new(Mutex::new(VecDeque::from([ElicitResult::cancel()])));
    let client = client(&answers).protocol_version(ProtocolVersion::V2025_06_18);
    let pair = within("connect", TestPair::connect(server(), client)).await.unwrap();
    let r = within("order", pair.client.call_tool("order", json!({})))
        .await
        .unwrap();
    assert_eq!(text(&r), "cancelled");
    let request = pair
        .server_sent()
        .into_iter()
        .map(|f| serde_json::from_str::<Value>(&f).unwrap())
        .find(|v| v["method"] == "elicitation/create")
        .expect("an elicitation/create request");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["drink"],
        json!({"type": "string", "enum": ["Coffee", "Tea"], "enumNames": ["Hot coffee", "Cold tea"]})
    );
    SchemaValidator::revision("2025-06-18")
        .check_def("ElicitRequest", &request)
        .unwrap();
}
