//! An extension registers its own method into each era's table and decorates a core result
//! through `Router::wrap`; the tables run with no transport (`Server::call_as`).

use super::*;
use crate::server::router::Call;
use crate::wire::to_raw;
use mcpkit_types::method::{ListTools, Method};
use mcpkit_types::schema::{ListToolsResult, PaginatedParams, RequestParams};
use mcpkit_types::ProtocolVersion;
use serde_json::{json, Value};

/// `example/echo-era`: answers with the era whose table served it.
struct EchoEra;

impl Method for EchoEra {
    const NAME: &'static str = "example/echoEra";
    type Params = RequestParams;
    type Result = Value;
}

struct Example;

impl Extension for Example {
    fn id(&self) -> &str {
        "com.example/echo"
    }

    fn register(&self, table: &mut MethodTable<'_>) {
        table.router.request::<EchoEra, _, _>(|call: Call, _| async move {
            let era = format!("{:?}", call.era);
            call.finish(to_raw(&json!({ "era": era }))?, None)
        });
        // Decorate `tools/list`: mark each page as seen by the extension.
        table.router.wrap(|name, entry| {
            if name != ListTools::NAME {
                return entry;
            }
            Box::new(move |call| {
                let answer = entry(call);
                Box::pin(async move {
                    let mut page: Value = serde_json::from_str(answer.await?.get())
                        .map_err(|e| mcpkit_types::ErrorObject::internal(e.to_string()))?;
                    page["_meta"] = json!({ "com.example/echo": true });
                    to_raw(&page)
                })
            })
        });
    }
}

fn server() -> crate::Server {
    crate::Server::builder().enable_tools().extension(Example).build()
}

#[tokio::test]
async fn an_extension_method_is_served_in_each_era() {
    let s = server();
    let handshake = s.call::<EchoEra>(RequestParams::default()).await.unwrap();
    assert_eq!(handshake, json!({ "era": "Handshake" }));
    let stateless = s
        .call_as::<EchoEra>(ProtocolVersion::V2026_07_28, RequestParams::default())
        .await
        .unwrap();
    assert_eq!(stateless["era"], "Stateless");
    assert_eq!(stateless["resultType"], "complete");
}

#[tokio::test]
async fn an_extension_decorates_a_core_result() {
    let page: ListToolsResult = server().call::<ListTools>(PaginatedParams::default()).await.unwrap();
    assert_eq!(
        page.meta.and_then(|m| m.get("com.example/echo").cloned()),
        Some(json!(true))
    );
    // Without the extension the page is as before.
    let plain = crate::Server::builder().enable_tools().build();
    let page: ListToolsResult = plain.call::<ListTools>(PaginatedParams::default()).await.unwrap();
    assert!(page.meta.is_none());
}

#[test]
fn the_declaration_is_computed_per_era() {
    let s = server();
    assert_eq!(
        serde_json::to_value(s.capabilities().extensions).unwrap(),
        json!({ "com.example/echo": {} })
    );
}
