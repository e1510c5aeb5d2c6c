//! Prompts and resources take the same extractors as tools: a prompt's `Args<T>` gives its
//! argument list and receives the arguments, a resource template's handler receives its URI and
//! variables, and `State<Arc<T>>` is the registered `Arc<T>` itself.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcpkit::server::{Args, PromptDef, RawArgs, RequestContext, ResourceDef, ResourceTemplateDef, State, ToolDef, Uri};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{ContentBlock, ResourceContents};
use mcpkit::types::ErrorCode;
use mcpkit::{Client, Error, Server};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Translate {
    /// The text to translate.
    text: String,
    /// The language to translate into.
    language: Option<String>,
}

#[derive(Deserialize)]
struct Item {
    shelf: String,
    id: String,
}

/// Counts the calls every handler makes; registered as an `Arc`.
#[derive(Default)]
struct Calls(AtomicUsize);

fn server(calls: Arc<Calls>) -> Server {
    Server::builder()
        .state(calls)
        .prompt(
            PromptDef::new(
                "translate",
                |Args(t): Args<Translate>, State(calls): State<Arc<Calls>>, _cx: RequestContext| async move {
                    calls.0.fetch_add(1, Ordering::SeqCst);
                    format!("Translate into {}: {}", t.language.as_deref().unwrap_or("French"), t.text)
                },
            )
            .description("Translates a text"),
        )
        .resource_template(
            ResourceTemplateDef::new(
                "shop://{shelf}/items/{id}",
                "item",
                |State(calls): State<Arc<Calls>>, Uri(uri): Uri, Args(item): Args<Item>, RawArgs(raw): RawArgs| async move {
                    calls.0.fetch_add(1, Ordering::SeqCst);
                    let text = format!("{} on {} ({} variables) at {uri}", item.id, item.shelf, raw.len());
                    ResourceContents::text(uri, Some("text/plain"), text)
                },
            )
            .unwrap(),
        )
        .resource(ResourceDef::new("shop://count", "count", |State(calls): State<Arc<Calls>>| async move {
            calls.0.load(Ordering::SeqCst).to_string()
        }))
        .tool(ToolDef::new("count", |State(calls): State<Arc<Calls>>| async move {
            calls.0.fetch_add(1, Ordering::SeqCst);
            calls.0.load(Ordering::SeqCst).to_string()
        }))
        .build()
}

fn text_of(c: &ResourceContents) -> &str {
    match c {
        ResourceContents::Text(t) => &t.text,
        other => panic!("expected text contents, got {other:?}"),
    }
}

#[tokio::test]
async fn a_prompt_lists_the_arguments_of_its_args_type_and_receives_them() {
    let pair = TestPair::connect(server(Arc::default()), Client::builder())
        .await
        .unwrap();
    let prompts = pair.client.list_all_prompts().await.unwrap();
    let arguments = prompts[0].arguments.as_deref().unwrap();
    let listed: Vec<_> = arguments
        .iter()
        .map(|a| (a.name.as_str(), a.description.as_deref(), a.required))
        .collect();
    assert_eq!(
        listed,
        [
            ("text", Some("The text to translate."), Some(true)),
            ("language", Some("The language to translate into."), Some(false)),
        ]
    );

    let result = pair
        .client
        .get_prompt("translate", [("text", "good morning"), ("language", "Italian")])
        .await
        .unwrap();
    assert_eq!(result.messages.len(), 1);
    let ContentBlock::Text(text) = &result.messages[0].content else {
        panic!("expected a text message");
    };
    assert_eq!(text.text, "Translate into Italian: good morning");

    // A required argument derived from the type is checked like a declared one.
    let missing = pair.client.get_prompt("translate", [("language", "Italian")]).await;
    let Err(Error::Rpc(e)) = missing else {
        panic!("expected an error, got {missing:?}");
    };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn a_resource_template_handler_receives_its_uri_and_variables() {
    let pair = TestPair::connect(server(Arc::default()), Client::builder())
        .await
        .unwrap();
    let result = pair.client.read_resource("shop://tools/items/42").await.unwrap();
    assert_eq!(
        text_of(&result.contents[0]),
        "42 on tools (2 variables) at shop://tools/items/42"
    );
}

#[tokio::test]
async fn state_of_a_registered_arc_is_that_arc_in_every_kind_of_handler() {
    let calls = Arc::new(Calls::default());
    let pair = TestPair::connect(server(calls.clone()), Client::builder())
        .await
        .unwrap();
    pair.client.get_prompt("translate", [("text", "hi")]).await.unwrap();
    pair.client.read_resource("shop://a/items/1").await.unwrap();
    pair.client.call_tool("count", serde_json::json!({})).await.unwrap();
    // The handlers counted on the very `Calls` registered, not on copies of it.
    assert_eq!(calls.0.load(Ordering::SeqCst), 3);
    let count = pair.client.read_resource("shop://count").await.unwrap();
    assert_eq!(text_of(&count.contents[0]), "3");
}
