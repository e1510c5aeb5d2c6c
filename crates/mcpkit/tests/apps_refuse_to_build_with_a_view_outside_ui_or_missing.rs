//! MCP Apps start-up errors (`ServerBuilder::try_build`): a view whose URI is not `ui://`, a
//! tool linked to a view outside `ui://`, and a tool linked to a view the server does not
//! register are each refused, naming the item and where it was registered.

use mcpkit::apps::UiResource;
use mcpkit::server::{BuildError, ToolDef};
use mcpkit::Server;

#[test]
fn a_view_outside_ui_is_refused() {
    let at = line!() + 1;
    let builder = Server::builder().resource(UiResource::html("https://example.com/view", "<p>"));
    let err = builder.try_build().unwrap_err();
    let BuildError::Definition {
        kind,
        key,
        reason,
        at: where_,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*kind, key.as_str()), ("resource", "https://example.com/view"));
    assert_eq!(reason, "a view's URI must start with ui://");
    assert!(where_.contains(&format!(":{at}:")), "{where_} {at}");
    assert!(
        err.to_string()
            .starts_with("resource \"https://example.com/view\" (registered at "),
        "{err}"
    );
}

#[test]
fn a_tool_linked_to_a_view_outside_ui_is_refused() {
    let err = Server::builder()
        .tool(ToolDef::new("counter", || async { "3" }).ui("https://example.com/view"))
        .try_build()
        .unwrap_err();
    assert!(
        matches!(&err, BuildError::Definition { kind: "tool", key, reason, .. }
            if key == "counter" && reason == "its view \"https://example.com/view\" is not a ui:// URI"),
        "{err:?}"
    );
}

#[test]
fn a_tool_linked_to_a_view_not_registered_is_refused() {
    let err = Server::builder()
        .tool(ToolDef::new("counter", || async { "3" }).ui("ui://counter/view"))
        .resource(UiResource::html("ui://counter/other", "<p>"))
        .try_build()
        .unwrap_err();
    let BuildError::MissingResource { kind, key, uri, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*kind, key.as_str(), uri.as_str()),
        ("tool", "counter", "ui://counter/view")
    );
    assert!(
        err.to_string()
            .ends_with("links to resource \"ui://counter/view\", which is not registered"),
        "{err}"
    );
}

#[test]
fn a_view_registered_after_its_tool_is_found() {
    Server::builder()
        .tool(ToolDef::new("counter", || async { "3" }).ui("ui://counter/view"))
        .resource(UiResource::html("ui://counter/view", "<p>"))
        .try_build()
        .unwrap();
}
