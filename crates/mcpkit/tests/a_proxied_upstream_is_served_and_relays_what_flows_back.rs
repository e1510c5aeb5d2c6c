//! `compose::Upstream`: an upstream server reached through a client, served as `NAME_<item>`:
//! listing, calls, reads, prompts and completions forwarded; its progress, sampling,
//! elicitation and roots requests relayed to the downstream client (a server→client request
//! on a handshake-era session, an input round on the stateless wire); a downstream
//! cancellation cancels the upstream call; an upstream whose connection ends leaves the lists
//! with `list_changed`, its calls fail at once naming it, and a mounted server keeps working.

use std::time::Duration;

use crate::common;

use common::within;
use mcpkit::client::{prompt_ref, resource_ref, CallOptions, ConnectMode, ServerNotification};
use mcpkit::engine::Connection;
use mcpkit::server::compose::Upstream;
use mcpkit::server::{from_list, Args, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitResult, JsonObject, ReadResourceResult,
    ResourceContents, Root, SamplingMessage,
};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, ClientBuilder, Server};
use tokio::sync::mpsc;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Message {
    message: String,
}

/// The upstream: a tool of each kind, a prompt with completions, a resource and a template.
/// `cancelled` hears when its `wait` tool is cancelled.
fn upstream_server(cancelled: mpsc::UnboundedSender<()>) -> Server {
    struct Hears(mpsc::UnboundedSender<()>);
    impl Drop for Hears {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    Server::builder()
        .tool(ToolDef::new("echo", |Args(m): Args<Message>| async move { m.message }))
        .tool(ToolDef::new("slow", |cx: RequestContext| async move {
            for i in 1..=3 {
                cx.progress(f64::from(i), Some(3.0), Some("working"));
            }
            "done"
        }))
        .tool(ToolDef::new("ask", |cx: RequestContext| async move {
            let yes = cx.confirm("Go on?").await?;
            Ok::<_, mcpkit::Error>(format!("confirmed: {yes}"))
        }))
        .tool(ToolDef::new("sample", |cx: RequestContext| async move {
            let r = cx
                .sample(CreateMessageParams::new(vec![SamplingMessage::user_text("hi")], 10))
                .await?;
            let text = r
                .content
                .as_slice()
                .first()
                .and_then(|c| c.as_text())
                .unwrap_or_default()
                .to_owned();
            Ok::<_, mcpkit::Error>(format!("model said: {text}"))
        }))
        .tool(ToolDef::new("roots", |cx: RequestContext| async move {
            let r = cx.list_roots().await?;
            Ok::<_, mcpkit::Error>(r.roots.into_iter().map(|r| r.uri).collect::<Vec<_>>().join(","))
        }))
        .tool(ToolDef::new("wait", move |cx: RequestContext| {
            let hears = Hears(cancelled.clone());
            async move {
                let _hears = hears;
                cx.cancellation().cancelled().await;
                "never"
            }
        }))
        .prompt(
            PromptDef::new("greet", || async { "Hello!" })
                .argument("name", "Who", false)
                .complete("name", from_list(["ada", "alan"])),
        )
        .resource(ResourceDef::text(
            "up://readme",
            "readme",
            "text/plain",
            "upstream text",
        ))
        .resource_template(
            ResourceTemplateDef::new(
                "up://item/{id}",
                "item",
                |mcpkit::server::Uri(uri): mcpkit::server::Uri| async move {
                    ReadResourceResult::new(vec![ResourceContents::text(
                        uri.clone(),
                        Some("text/plain"),
                        format!("item at {uri}"),
                    )])
                },
            )
            .unwrap()
            .complete("id", from_list(["one", "two"])),
        )
        .build()
}

/// The upstream served over the in-memory pair and attached: the upstream server's
/// connection (drop or close it to kill the upstream) and the handle.
async fn attached(server: &Server) -> (Connection, Upstream) {
    attached_as(server, Upstream::new("up")).await
}

/// [`attached`], as `upstream`.
async fn attached_as(server: &Server, upstream: Upstream) -> (Connection, Upstream) {
    let (here, there) = mcpkit::transport::memory::pair();
    let connection = server.start(there);
    let client = within("connect upstream", upstream.relay(Client::builder()).connect(here))
        .await
        .unwrap();
    within("attach", upstream.attach(client)).await.unwrap();
    (connection, upstream)
}

fn front(upstream: &Upstream) -> Server {
    let local = Server::builder()
        .tool(ToolDef::new("ping", || async { "pong" }))
        .build();
    Server::builder()
        .enable_tools()
        .mount("local", local)
        .proxy(upstream)
        .build()
}

/// A downstream client that answers everything it is asked.
fn answering() -> ClientBuilder {
    Client::builder()
        .on_elicitation(|_| async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(JsonObject::from_iter([("confirm".to_owned(), true.into())])),
                meta: None,
            })
        })
        .on_sampling(|_: CreateMessageParams| async { Ok(CreateMessageResult::text("test-llm", "forty-two")) })
        .roots(vec![Root::new("file:///downstream")])
}

fn text(r: &mcpkit::types::schema::CallToolResult) -> &str {
    r.content.first().and_then(|c| c.as_text()).unwrap_or_default()
}

#[tokio::test]
async fn the_upstream_catalogue_is_listed_under_its_name_and_forwarded() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached(&upstream_server(tx)).await;
    assert!(upstream.is_connected());
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    let c = &pair.client;
    let tools: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(
        tools,
        [
            "local_ping",
            "up_echo",
            "up_slow",
            "up_ask",
            "up_sample",
            "up_roots",
            "up_wait"
        ]
    );
    let r = within("echo", c.call_tool("up_echo", serde_json::json!({"message": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&r), "hi");
    let prompts: Vec<String> = c
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(prompts, ["up_greet"]);
    let p = within("prompt", c.get_prompt("up_greet", [("name", "ada")]))
        .await
        .unwrap();
    assert_eq!(p.messages.len(), 1);
    let uris: Vec<String> = c
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(uris, ["up://readme"]);
    let read = within("read", c.read_resource("up://readme")).await.unwrap();
    assert!(format!("{read:?}").contains("upstream text"), "{read:?}");
    let read = within("template", c.read_resource("up://item/7")).await.unwrap();
    assert!(format!("{read:?}").contains("item at up://item/7"), "{read:?}");
    let done = within("complete prompt", c.complete(prompt_ref("up_greet"), "name", "al"))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["alan"]);
    let done = within(
        "complete template",
        c.complete(resource_ref("up://item/{id}"), "id", "o"),
    )
    .await
    .unwrap();
    assert_eq!(done.completion.values, ["one"]);
}

#[tokio::test]
async fn an_upstream_tool_named_outside_the_rules_is_left_out_and_the_rest_served() {
    let server = Server::builder()
        .tool(ToolDef::new("fine", || async { "fine" }))
        .build();
    // Added after the build, which would refuse the name, as another SDK's server might have it.
    server.add_tool(ToolDef::new("read file", || async { "never" }));
    let (here, there) = mcpkit::transport::memory::pair();
    let _conn = server.start(there);
    let upstream = Upstream::new("up");
    let client = upstream.relay(Client::builder()).connect(here).await.unwrap();
    within("attach", upstream.attach(client)).await.unwrap();
    let front = Server::builder()
        .proxy(&upstream)
        .try_build()
        .expect("the gateway starts");
    let listed = front
        .call::<mcpkit::types::method::ListTools>(Default::default())
        .await
        .unwrap();
    let names: Vec<String> = listed.tools.into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["up_fine"]);
}

#[tokio::test]
async fn an_allowlist_serves_only_the_tools_it_names() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = upstream_server(tx);
    let (here, there) = mcpkit::transport::memory::pair();
    let _conn = server.start(there);
    let upstream = Upstream::new("up").allow_tools(["echo"]);
    let client = upstream.relay(Client::builder()).connect(here).await.unwrap();
    within("attach", upstream.attach(client)).await.unwrap();
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    let tools: Vec<String> = pair
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tools, ["local_ping", "up_echo"]);
    let e = within("not allowed", pair.client.call_tool("up_slow", ()))
        .await
        .unwrap_err();
    assert!(e.rpc().is_some(), "{e:?}");
}

/// `require_scopes`: every item of the upstream needs the scopes; a caller without them does
/// not see them listed and gets the step-up challenge on use, a caller with them is served.
#[cfg(feature = "auth")]
#[tokio::test]
async fn an_upstream_requiring_scopes_serves_only_callers_that_have_them() {
    use crate::common::callers::protected;
    use crate::common::http::{config, header, initialize_body, json_body, request, send, Mcp};

    async fn session(mcp: &Mcp, token: &str) -> String {
        let r = send(mcp.post(None, initialize_body(0)).header("authorization", token)).await;
        header(&r, "mcp-session-id").expect("a session")
    }
    async fn names(mcp: &Mcp, session: &str, token: &str, method: &str, list: &str, key: &str) -> Vec<String> {
        let r = send(
            mcp.post(Some(session), request(1, method, serde_json::json!({})))
                .header("authorization", token),
        )
        .await;
        let body = json_body(r).await;
        body["result"][list]
            .as_array()
            .unwrap_or_else(|| panic!("{body}"))
            .iter()
            .map(|t| t[key].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    let (tx, _rx) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached_as(&upstream_server(tx), Upstream::new("up").require_scopes(["up:use"])).await;
    let mcp = protected(front(&upstream), config());

    let alice = "Bearer user-alice";
    let s = session(&mcp, alice).await;
    assert_eq!(
        names(&mcp, &s, alice, "tools/list", "tools", "name").await,
        ["local_ping"]
    );
    assert!(names(&mcp, &s, alice, "prompts/list", "prompts", "name")
        .await
        .is_empty());
    assert!(names(&mcp, &s, alice, "resources/list", "resources", "uri")
        .await
        .is_empty());
    let r = send(
        mcp.post(
            Some(&s),
            request(
                7,
                "tools/call",
                serde_json::json!({ "name": "up_echo", "arguments": {"message": "hi"} }),
            ),
        )
        .header("authorization", alice),
    )
    .await;
    assert_eq!(r.status(), reqwest::StatusCode::FORBIDDEN);
    let challenge = header(&r, "www-authenticate").expect("a step-up challenge");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#) && challenge.contains(r#"scope="up:use""#),
        "{challenge}"
    );
    assert_eq!(
        json_body(r).await["error"]["data"],
        serde_json::json!({ "requiredScopes": ["up:use"] })
    );

    let stepped_up = "Bearer user-alice#up:use";
    let s = session(&mcp, stepped_up).await;
    assert_eq!(
        names(&mcp, &s, stepped_up, "tools/list", "tools", "name").await,
        [
            "local_ping",
            "up_echo",
            "up_slow",
            "up_ask",
            "up_sample",
            "up_roots",
            "up_wait"
        ]
    );
    assert!(!names(&mcp, &s, stepped_up, "prompts/list", "prompts", "name")
        .await
        .is_empty());
    let r = send(
        mcp.post(
            Some(&s),
            request(
                8,
                "tools/call",
                serde_json::json!({ "name": "up_echo", "arguments": {"message": "hi"} }),
            ),
        )
        .header("authorization", stepped_up),
    )
    .await;
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    let body = json_body(r).await;
    assert_eq!(body["result"]["content"][0]["text"], "hi", "{body}");
}

#[tokio::test]
async fn upstream_progress_reaches_the_downstream_caller() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached(&upstream_server(tx)).await;
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(ptx),
        ..Default::default()
    };
    let r = within("slow", pair.client.call_tool_with("up_slow", (), options))
        .await
        .unwrap();
    assert_eq!(text(&r), "done");
    let mut seen = Vec::new();
    while let Ok(p) = prx.try_recv() {
        seen.push((p.progress, p.total, p.message));
    }
    assert_eq!(
        seen,
        (1..=3)
            .map(|i| (f64::from(i), Some(3.0), Some("working".to_owned())))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn sampling_elicitation_and_roots_are_asked_of_the_downstream_client_in_both_eras() {
    for (era, mode) in [
        ("handshake", ConnectMode::Handshake),
        ("stateless", ConnectMode::Pinned(ProtocolVersion::V2026_07_28)),
    ] {
        let (tx, _rx) = mpsc::unbounded_channel();
        let (_conn, upstream) = attached(&upstream_server(tx)).await;
        let pair = within("connect", TestPair::connect(front(&upstream), answering().mode(mode)))
            .await
            .unwrap();
        let c = &pair.client;
        let r = within("ask", c.call_tool("up_ask", ())).await.unwrap();
        assert_eq!(text(&r), "confirmed: true", "{era}: {r:?}");
        let r = within("sample", c.call_tool("up_sample", ())).await.unwrap();
        assert_eq!(text(&r), "model said: forty-two", "{era}: {r:?}");
        let r = within("roots", c.call_tool("up_roots", ())).await.unwrap();
        assert_eq!(text(&r), "file:///downstream", "{era}: {r:?}");
    }
}

#[tokio::test]
async fn a_downstream_cancellation_cancels_the_upstream_call() {
    let (tx, mut cancelled) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached(&upstream_server(tx)).await;
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let e = within("wait", pair.client.call_tool_with("up_wait", (), options))
        .await
        .unwrap_err();
    assert!(matches!(e, mcpkit::Error::Timeout(_)), "{e:?}");
    within("the upstream tool is cancelled", cancelled.recv())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_upstream_that_dies_leaves_the_lists_and_its_calls_fail_at_once_naming_it() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (conn, upstream) = attached(&upstream_server(tx)).await;
    let front = front(&upstream);
    let pair = within("connect", TestPair::connect(front, Client::builder()))
        .await
        .unwrap();
    within("ping", pair.client.ping()).await.unwrap();
    let mut rx = pair.client.notifications();

    // A call is running through the upstream when its end of the connection goes away.
    let running = {
        let client = pair.client.clone();
        tokio::spawn(async move { client.call_tool("up_wait", ()).await })
    };
    within("the call reaches the upstream", async {
        while upstream.in_flight() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    conn.peer().close();
    let e = within("the running call fails at once", running)
        .await
        .unwrap()
        .unwrap_err();
    let e = e.rpc().cloned().unwrap_or_else(|| panic!("a JSON-RPC error: {e:?}"));
    assert!(e.message.contains(r#"upstream "up""#), "{e:?}");
    within("list_changed", async {
        while !matches!(rx.recv().await.unwrap(), ServerNotification::ToolListChanged) {}
    })
    .await;
    within("disconnected", upstream.disconnected()).await;
    assert!(!upstream.is_connected());
    let tools: Vec<String> = pair
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tools, ["local_ping"]);
    let started = std::time::Instant::now();
    let e = within(
        "gone",
        pair.client.call_tool("up_echo", serde_json::json!({"message": "x"})),
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1));
    let e = e.rpc().cloned().unwrap_or_else(|| panic!("a JSON-RPC error: {e:?}"));
    assert!(e.message.contains(r#"upstream "up" is not connected"#), "{e:?}");
    let r = within("local", pair.client.call_tool("local_ping", ())).await.unwrap();
    assert_eq!(text(&r), "pong");

    // A new upstream connection puts the items back.
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = upstream_server(tx);
    let (here, there) = mcpkit::transport::memory::pair();
    let _conn = server.start(there);
    let client = upstream.relay(Client::builder()).connect(here).await.unwrap();
    within("attach again", upstream.attach(client)).await.unwrap();
    within("list_changed back", async {
        while !matches!(rx.recv().await.unwrap(), ServerNotification::ToolListChanged) {}
    })
    .await;
    let r = within(
        "echo again",
        pair.client.call_tool("up_echo", serde_json::json!({"message": "back"})),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "back");
}

#[tokio::test]
async fn a_detached_upstream_names_itself_in_the_error_and_can_be_removed_and_added() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached(&upstream_server(tx)).await;
    let server = front(&upstream);
    // Calls made while it is detached fail naming it (through the table, no transport).
    let detached = upstream.detach();
    assert!(detached.is_some());
    let listed = server
        .call::<mcpkit::types::method::ListTools>(Default::default())
        .await
        .unwrap();
    assert_eq!(listed.tools.len(), 1, "{listed:?}");
    let e = server
        .call::<mcpkit::types::method::CallTool>(mcpkit::types::schema::CallToolParams::new("up_echo"))
        .await
        .unwrap_err();
    assert_eq!(e.message, r#"upstream "up" is not connected"#);
    assert_eq!(e.data, Some(serde_json::json!({"upstream": "up"})));
    let e = server
        .call::<mcpkit::types::method::CallTool>(mcpkit::types::schema::CallToolParams::new("nothing"))
        .await
        .unwrap_err();
    assert_eq!(e.message, "Unknown tool: nothing", "other names are unknown as before");
    // The handle attached again, then the server stops serving it.
    within("attach", upstream.attach(detached.unwrap())).await.unwrap();
    let listed = server
        .call::<mcpkit::types::method::ListTools>(Default::default())
        .await
        .unwrap();
    assert_eq!(listed.tools.len(), 7);
    assert!(server.remove_upstream(&upstream));
    let listed = server
        .call::<mcpkit::types::method::ListTools>(Default::default())
        .await
        .unwrap();
    assert_eq!(listed.tools.len(), 1);
    server.add_upstream(&upstream);
    let listed = server
        .call::<mcpkit::types::method::ListTools>(Default::default())
        .await
        .unwrap();
    assert_eq!(listed.tools.len(), 7);
}

#[tokio::test]
async fn upstream_log_messages_and_list_changes_reach_the_downstream_session() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = upstream_server(tx);
    server.add_tool(ToolDef::new("chatty", |cx: RequestContext| async move {
        cx.log(mcpkit::types::schema::LoggingLevel::Warning, Some("inner"), "careful")?;
        Ok::<_, mcpkit::Error>("said it")
    }));
    let (_conn, upstream) = attached(&server).await;
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    within("ping", pair.client.ping()).await.unwrap();
    let mut rx = pair.client.notifications();

    let r = within("chatty", pair.client.call_tool("up_chatty", ())).await.unwrap();
    assert_eq!(text(&r), "said it");
    let log = within("the log message", async {
        loop {
            if let ServerNotification::Log(m) = rx.recv().await.unwrap() {
                return m;
            }
        }
    })
    .await;
    assert_eq!(log.logger.as_deref(), Some("up/inner"));
    assert_eq!(log.data, serde_json::json!("careful"));

    // The upstream adds a tool: the downstream session hears list_changed and can call it.
    server.add_tool(ToolDef::new("late", || async { "late" }));
    within("list_changed", async {
        while !matches!(rx.recv().await.unwrap(), ServerNotification::ToolListChanged) {}
    })
    .await;
    let r = within("late", pair.client.call_tool("up_late", ())).await.unwrap();
    assert_eq!(text(&r), "late");
}

#[tokio::test]
async fn an_upstream_spoken_to_on_the_stateless_wire_has_its_input_rounds_relayed() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = upstream_server(tx);
    let (here, there) = mcpkit::transport::memory::pair();
    let _conn = server.start(there);
    let upstream = Upstream::new("up");
    let client = upstream
        .relay(Client::builder().mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)))
        .connect(here)
        .await
        .unwrap();
    assert!(client.is_stateless());
    within("attach", upstream.attach(client)).await.unwrap();
    for (era, mode) in [
        ("handshake", ConnectMode::Handshake),
        ("stateless", ConnectMode::Pinned(ProtocolVersion::V2026_07_28)),
    ] {
        let pair = within("connect", TestPair::connect(front(&upstream), answering().mode(mode)))
            .await
            .unwrap();
        let r = within("ask", pair.client.call_tool("up_ask", ())).await.unwrap();
        assert_eq!(text(&r), "confirmed: true", "{era}: {r:?}");
        let r = within("sample", pair.client.call_tool("up_sample", ())).await.unwrap();
        assert_eq!(text(&r), "model said: forty-two", "{era}: {r:?}");
    }
}

#[tokio::test]
async fn a_downstream_subscription_is_made_upstream_and_its_updates_come_back() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = upstream_server(tx);
    let (_conn, upstream) = attached(&server).await;
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    let mut rx = pair.client.notifications();
    within("subscribe", pair.client.subscribe("up://readme")).await.unwrap();
    // The upstream learns of the subscription in the background: repeat the update until the
    // downstream session hears it.
    within("resources/updated", async {
        loop {
            server.notify_resource_updated("up://readme");
            let heard = tokio::time::timeout(Duration::from_millis(50), async {
                loop {
                    if let ServerNotification::ResourceUpdated(p) = rx.recv().await.unwrap() {
                        return p.uri;
                    }
                }
            })
            .await;
            if let Ok(uri) = heard {
                assert_eq!(uri, "up://readme");
                return;
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_ping_answers_while_connected_and_fails_naming_a_detached_upstream() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached(&upstream_server(tx)).await;
    within("ping", upstream.ping(Duration::from_secs(5))).await.unwrap();
    upstream.detach();
    let e = within("ping detached", upstream.ping(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(e.to_string().contains(r#"upstream "up" is not connected"#), "{e}");
}

/// Two downstream clients, each with its own answer, call an upstream tool that asks at the
/// same time: on the stateless wire upstream each question reaches the client whose call
/// made it.
#[tokio::test]
async fn concurrent_questions_of_a_stateless_upstream_reach_their_own_callers() {
    let server = Server::builder()
        .tool(ToolDef::new("who", |cx: RequestContext| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let r = cx
                .sample(CreateMessageParams::new(vec![SamplingMessage::user_text("who?")], 10))
                .await?;
            let text = r
                .content
                .as_slice()
                .first()
                .and_then(|c| c.as_text())
                .unwrap_or_default()
                .to_owned();
            Ok::<_, mcpkit::Error>(text)
        }))
        .build();
    let (here, there) = mcpkit::transport::memory::pair();
    let _conn = server.start(there);
    let upstream = Upstream::new("up");
    let client = upstream
        .relay(Client::builder().mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)))
        .connect(here)
        .await
        .unwrap();
    within("attach", upstream.attach(client)).await.unwrap();
    let front = front(&upstream);
    let named = |name: &'static str| {
        Client::builder()
            .on_sampling(move |_: CreateMessageParams| async move { Ok(CreateMessageResult::text("m", name)) })
    };
    let ada = within("connect ada", TestPair::connect(front.clone(), named("ada")))
        .await
        .unwrap();
    let bob = within("connect bob", TestPair::connect(front.clone(), named("bob")))
        .await
        .unwrap();
    let (a, b) = within("both", async {
        tokio::join!(ada.client.call_tool("up_who", ()), bob.client.call_tool("up_who", ()))
    })
    .await;
    assert_eq!(text(&a.unwrap()), "ada");
    assert_eq!(text(&b.unwrap()), "bob");
}

/// `/readyz` of the HTTP front end says not ready, naming the upstream, while it is not
/// connected (the check a gateway installs with `HttpServer::readiness`).
#[tokio::test]
async fn readyz_follows_the_upstreams_connection() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_conn, upstream) = attached(&upstream_server(tx)).await;
    let watched = upstream.clone();
    let http = mcpkit::HttpServer::new(front(&upstream)).readiness(move || {
        let (up, name) = (watched.is_connected(), watched.name().to_owned());
        async move {
            match up {
                true => Ok(String::new()),
                false => Err(format!("upstream {name:?} is not connected")),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/readyz", listener.local_addr().unwrap());
    tokio::spawn(http.serve(listener));
    let probe = |url: String| async move {
        let r = reqwest::get(url).await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(within("ready", probe(url.clone())).await, (200, "ready\n".to_owned()));
    upstream.detach();
    assert_eq!(
        within("not ready", probe(url.clone())).await,
        (503, "not ready: upstream \"up\" is not connected\n".to_owned())
    );
}

/// The upstream gives up on its sampling request (it cancels it): the question asked of the
/// downstream client is cancelled too.
#[tokio::test]
async fn an_upstream_cancelling_its_question_cancels_it_downstream() {
    let server = Server::builder()
        .tool(ToolDef::new("impatient", |cx: RequestContext| async move {
            let asked = cx.sample(CreateMessageParams::new(vec![SamplingMessage::user_text("hi")], 10));
            match tokio::time::timeout(Duration::from_millis(200), asked).await {
                Ok(_) => "answered",
                Err(_) => "gave up",
            }
        }))
        .build();
    let (here, there) = mcpkit::transport::memory::pair();
    let _conn = server.start(there);
    let upstream = Upstream::new("up");
    let client = upstream.relay(Client::builder()).connect(here).await.unwrap();
    within("attach", upstream.attach(client)).await.unwrap();

    struct Dropped(mpsc::UnboundedSender<()>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    let (tx, mut dropped) = mpsc::unbounded_channel();
    let downstream = Client::builder().on_sampling(move |_: CreateMessageParams| {
        let guard = Dropped(tx.clone());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(CreateMessageResult::text("m", "never"))
        }
    });
    let pair = within("connect", TestPair::connect(front(&upstream), downstream))
        .await
        .unwrap();
    let r = within("impatient", pair.client.call_tool("up_impatient", ()))
        .await
        .unwrap();
    assert_eq!(text(&r), "gave up");
    within("the downstream question is cancelled", dropped.recv())
        .await
        .unwrap();
}
