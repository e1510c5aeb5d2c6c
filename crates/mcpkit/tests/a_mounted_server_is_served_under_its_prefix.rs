//! `ServerBuilder::mount`: another server's tools and prompts listed as `PREFIX_<name>`, its
//! resources and templates under their URIs, its completions found through the prompt or
//! template they name, its handlers run with its own state and the request's context (input
//! rounds on the stateless wire included); a name taken twice is a build error naming both;
//! what the mounted server adds later reaches the outer server's sessions with `list_changed`.

use crate::common;

use common::within;
use mcpkit::client::{prompt_ref, resource_ref, ConnectMode, ServerNotification};
use mcpkit::server::{
    from_list, BuildError, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, State, ToolDef,
};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{ElicitAction, ElicitResult, JsonObject};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};

#[derive(Clone)]
struct Greeting(&'static str);

fn inner() -> Server {
    Server::builder()
        .state(Greeting("hello from inside"))
        .tool(ToolDef::new("greet", |State(g): State<Greeting>| async move { g.0 }))
        .tool(ToolDef::new("ask", |cx: RequestContext| async move {
            let answer = cx.confirm("Go on?").await?;
            Ok::<_, mcpkit::Error>(format!("confirmed: {answer}"))
        }))
        .prompt(
            PromptDef::new("haiku", || async { "five seven five" })
                .argument("season", "Which season", false)
                .complete("season", from_list(["spring", "summer"])),
        )
        .resource(ResourceDef::text(
            "mem://inner/readme",
            "readme",
            "text/plain",
            "inner text",
        ))
        .resource_template(
            ResourceTemplateDef::new("mem://inner/{id}", "item", |cx: RequestContext| async move {
                let who = cx.state::<Greeting>().map_or("no state", |g| g.0);
                mcpkit::types::schema::ReadResourceResult::new(vec![mcpkit::types::schema::ResourceContents::text(
                    "mem://inner/x",
                    Some("text/plain"),
                    who,
                )])
            })
            .unwrap()
            .complete("id", from_list(["one", "two"])),
        )
        .build()
}

fn outer(inner: Server) -> Server {
    Server::builder()
        .tool(ToolDef::new("own", || async { "outer" }))
        .mount("in", inner)
        .build()
}

#[tokio::test]
async fn mounted_items_are_named_by_prefix_and_served_by_the_mounted_handlers() {
    let pair = within("connect", TestPair::connect(outer(inner()), Client::builder()))
        .await
        .unwrap();
    let c = &pair.client;
    let tools: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(tools, ["own", "in_greet", "in_ask"]);
    let prompts: Vec<String> = c
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(prompts, ["in_haiku"]);
    let uris: Vec<String> = c
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(uris, ["mem://inner/readme"]);

    let r = within("greet", c.call_tool("in_greet", ())).await.unwrap();
    assert_eq!(
        r.content[0].as_text(),
        Some("hello from inside"),
        "the mounted server's state"
    );
    let p = within("prompt", c.get_prompt("in_haiku", [("season", "spring")]))
        .await
        .unwrap();
    assert_eq!(p.messages.len(), 1);
    let read = within("read", c.read_resource("mem://inner/readme")).await.unwrap();
    assert!(format!("{:?}", read.contents).contains("inner text"), "{read:?}");
    let read = within("template", c.read_resource("mem://inner/7")).await.unwrap();
    assert!(format!("{:?}", read.contents).contains("hello from inside"), "{read:?}");

    let done = within("complete prompt", c.complete(prompt_ref("in_haiku"), "season", "su"))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["summer"]);
    let done = within(
        "complete template",
        c.complete(resource_ref("mem://inner/{id}"), "id", "t"),
    )
    .await
    .unwrap();
    assert_eq!(done.completion.values, ["two"]);
    let unknown = within("old name", c.call_tool("greet", ())).await.unwrap_err();
    assert!(
        unknown.rpc().is_some(),
        "the unprefixed name is not served: {unknown:?}"
    );
}

#[tokio::test]
async fn a_mounted_handler_asks_the_downstream_client_in_both_eras() {
    let answering = || {
        Client::builder().on_elicitation(|_| async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(JsonObject::from_iter([("confirm".to_owned(), true.into())])),
                meta: None,
            })
        })
    };
    for (era, client) in [
        ("handshake", answering()),
        (
            "stateless",
            answering().mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)),
        ),
    ] {
        let pair = within("connect", TestPair::connect(outer(inner()), client))
            .await
            .unwrap();
        let r = within(era, pair.client.call_tool("in_ask", ())).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("confirmed: true"), "{era}: {r:?}");
    }
}

#[tokio::test]
async fn a_name_taken_twice_is_a_build_error_naming_both() {
    let taken = Server::builder().tool(ToolDef::new("in_greet", || async { "outer" }));
    let e = taken.mount("in", inner()).try_build().unwrap_err();
    let BuildError::Duplicate {
        kind,
        key,
        first,
        second,
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!((*kind, key.as_str()), ("tool", "in_greet"));
    assert!(first.contains(file!()), "{first}");
    assert!(second.contains(r#"mount "in", its tool "greet""#), "{second}");
    assert!(e.to_string().contains("in_greet"), "{e}");

    // Two mounts sharing a resource URI.
    let e = Server::builder()
        .mount("a", inner())
        .mount("b", inner())
        .try_build()
        .unwrap_err();
    assert!(e.to_string().contains("mem://inner/readme"), "{e}");
    assert!(
        e.to_string().contains(r#"mount "a""#) && e.to_string().contains(r#"mount "b""#),
        "{e}"
    );

    // A prefix that makes names outside the spec's rules.
    let e = Server::builder().mount("bad prefix", inner()).try_build().unwrap_err();
    assert!(matches!(e, BuildError::ToolName { .. }), "{e:?}");
}

#[tokio::test]
async fn what_the_mounted_server_changes_reaches_the_outer_sessions() {
    let inside = inner();
    let pair = within("connect", TestPair::connect(outer(inside.clone()), Client::builder()))
        .await
        .unwrap();
    within("ping", pair.client.ping()).await.unwrap();
    let mut rx = pair.client.notifications();
    inside.add_tool(ToolDef::new("late", || async { "late" }));
    within("list_changed", async {
        while !matches!(rx.recv().await.unwrap(), ServerNotification::ToolListChanged) {}
    })
    .await;
    let tools: Vec<String> = pair
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tools, ["own", "in_greet", "in_ask", "in_late"]);
    let r = within("late", pair.client.call_tool("in_late", ())).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("late"));

    assert!(inside.remove_tool("late"));
    within("list_changed again", async {
        while !matches!(rx.recv().await.unwrap(), ServerNotification::ToolListChanged) {}
    })
    .await;
    let e = within("gone", pair.client.call_tool("in_late", ())).await.unwrap_err();
    assert!(e.rpc().is_some(), "{e:?}");
}
