//! One `Server` without shared backends: a tool or prompt declared `switched_off()` is neither
//! listed nor served until `set_tool_enabled` / `set_prompt_enabled` switches it on; every
//! initialized session is told (`list_changed`) when a switch changes the catalogue and not when
//! it changes nothing; `switchable()` items start on; a name not declared switchable is refused.

use crate::common;

use common::within;
use mcpkit::client::ServerNotification;
use mcpkit::server::{PromptDef, SwitchError, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::{Client, Server};

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("always", || async { "always" }))
        .tool(ToolDef::new("later", || async { "later" }).switched_off())
        .tool(ToolDef::new("for_now", || async { "for now" }).switchable())
        .prompt(PromptDef::new("hidden", || async { "hidden" }).switched_off())
        .build()
}

async fn tools(pair: &TestPair) -> Vec<String> {
    let tools = within("tools/list", pair.client.list_all_tools()).await.unwrap();
    tools.into_iter().map(|t| t.name).collect()
}

async fn prompts(pair: &TestPair) -> Vec<String> {
    let prompts = within("prompts/list", pair.client.list_all_prompts()).await.unwrap();
    prompts.into_iter().map(|p| p.name).collect()
}

#[tokio::test]
async fn a_switch_changes_what_every_session_lists_and_can_call() {
    let server = server();
    let one = within("connect", TestPair::connect(server.clone(), Client::builder()))
        .await
        .unwrap();
    let two = within("connect", TestPair::connect(server.clone(), Client::builder()))
        .await
        .unwrap();
    within("ping", one.client.ping()).await.unwrap();
    within("ping", two.client.ping()).await.unwrap();
    let (mut n1, mut n2) = (one.client.notifications(), two.client.notifications());

    assert_eq!(tools(&one).await, ["always", "for_now"], "switched off: not listed");
    assert!(prompts(&one).await.is_empty(), "switched off: not listed");
    let e = within("call", one.client.call_tool("later", ())).await.unwrap_err();
    assert!(e.rpc().is_some(), "switched off: not callable: {e:?}");
    assert!(!server.tool_enabled("later").await.unwrap());
    assert!(server.tool_enabled("for_now").await.unwrap(), "switchable() starts on");

    assert!(server.set_tool_enabled("later", true).await.unwrap(), "a change");
    for (rx, who) in [(&mut n1, "client 1"), (&mut n2, "client 2")] {
        let n = within(who, rx.recv()).await.unwrap();
        assert!(matches!(n, ServerNotification::ToolListChanged), "{who}: {n:?}");
    }
    for pair in [&one, &two] {
        assert_eq!(
            tools(pair).await,
            ["always", "later", "for_now"],
            "listed in its declared place"
        );
        let r = within("call", pair.client.call_tool("later", ())).await.unwrap();
        assert!(!r.is_error());
    }
    assert!(server.tool_enabled("later").await.unwrap());
    assert!(
        !server.set_tool_enabled("later", true).await.unwrap(),
        "already on: no change"
    );

    assert!(server.set_tool_enabled("for_now", false).await.unwrap());
    assert!(server.set_prompt_enabled("hidden", true).await.unwrap());
    assert_eq!(tools(&two).await, ["always", "later"]);
    assert_eq!(prompts(&two).await, ["hidden"]);
    let got = within(
        "prompts/get",
        two.client.get_prompt("hidden", Vec::<(String, String)>::new()),
    )
    .await;
    assert!(got.is_ok(), "switched on: served: {got:?}");

    // Exactly one notification per change: the no-op above sent none.
    let told: Vec<ServerNotification> = std::iter::from_fn(|| n1.try_recv().ok()).collect();
    let tools_told = told
        .iter()
        .filter(|n| matches!(n, ServerNotification::ToolListChanged))
        .count();
    let prompts_told = told
        .iter()
        .filter(|n| matches!(n, ServerNotification::PromptListChanged))
        .count();
    assert_eq!((tools_told, prompts_told), (1, 1), "{told:?}");

    for name in ["always", "missing"] {
        let refused = server.set_tool_enabled(name, false).await.unwrap_err();
        assert!(
            matches!(refused, SwitchError::NotSwitchable { .. }),
            "{name}: {refused:?}"
        );
    }
    assert!(
        tools(&one).await.contains(&"always".to_owned()),
        "a refused switch changes nothing"
    );
}
