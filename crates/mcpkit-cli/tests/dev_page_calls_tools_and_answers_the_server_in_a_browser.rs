//! `mcpkit dev` in a real headless Chromium, against `mcpkit dev --no-open -- mcpkit serve`:
//! the tools are listed as buttons; `add`, called through the form generated from its input
//! schema, shows 5; Messages shows the `tools/call`; an elicitation and a sampling request are
//! answered in their dialogs and the answers reach the server (its tools echo them back);
//! progress arrives; the server's text is shown as text; the regions are landmarks with names;
//! and the browser's console has no error.

use std::panic::AssertUnwindSafe;

use fantoccini::Locator;
use futures_util::FutureExt as _;

use crate::common::REFERENCE_TOOL_NAMES;
use crate::support::browser::Browser;
use crate::support::dev_host::DevHost;

const TOOLS: &str = "//section[@id='tools']";
const FORM: &str = "//form[@id='call-form']";
const DIALOG: &str = "//dialog[@open]";

#[tokio::test(flavor = "multi_thread")]
async fn the_page_calls_tools_and_answers_the_server() {
    let browser = Browser::start().await;
    let outcome = AssertUnwindSafe(exercise(&browser)).catch_unwind().await;
    browser.close().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn exercise(b: &Browser) {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    b.client().goto(&dev.url).await.unwrap();
    b.button(TOOLS, "add").await;
    eprintln!(
        "mcpkit dev: the first tool was listed {} ms after mcpkit dev started",
        dev.started.elapsed().as_millis()
    );

    // Every tool of the reference server, one button each.
    let buttons = b.client().find_all(Locator::Css("#tool-list button")).await.unwrap();
    let mut names = Vec::new();
    for button in &buttons {
        names.push(button.text().await.unwrap());
    }
    names.sort();
    assert_eq!(names, REFERENCE_TOOL_NAMES, "stderr: {}", dev.stderr());

    // The regions are landmarks named by their headings.
    for (id, name) in [("tools", "Tools"), ("result", "Result"), ("messages", "Messages")] {
        let section = b.client().find(Locator::Id(id)).await.unwrap();
        assert_eq!(b.role_and_name(&section).await, ("region".to_owned(), name.to_owned()));
    }

    // `add` through its generated form: an input labelled by each argument, required.
    b.button(TOOLS, "add").await.click().await.unwrap();
    b.wait_text("#call-name", "add").await;
    let a = b.labelled(FORM, "a").await;
    assert_eq!(b.role_and_name(&a).await.1, "a");
    assert_eq!(a.attr("type").await.unwrap().as_deref(), Some("number"));
    assert!(a.attr("required").await.unwrap().is_some(), "a is required");
    a.send_keys("2").await.unwrap();
    b.labelled(FORM, "b").await.send_keys("3").await.unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    let result = b.wait_text("#result-body .structured", "\"sum\": 5").await;
    assert_eq!(result.trim(), "{\n  \"sum\": 5\n}");
    b.wait_text("#message-list", "tools/call").await;

    // The server's text is shown as text, never as markup.
    b.button(TOOLS, "echo").await.click().await.unwrap();
    b.wait_text("#call-name", "echo").await;
    let markup = "<img src=x onerror=\"document.title='owned'\"><b>bold</b>";
    b.labelled(FORM, "message").await.send_keys(markup).await.unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#result-body", markup).await;
    let injected = b
        .client()
        .find_all(Locator::Css("#result-body img, #result-body b"))
        .await
        .unwrap();
    assert!(injected.is_empty(), "the server's text became markup");

    // Elicitation: a dialog with a form generated from the requested schema.
    b.button(TOOLS, "test_elicitation").await.click().await.unwrap();
    b.wait_text("#call-name", "test_elicitation").await;
    b.labelled(FORM, "message")
        .await
        .send_keys("Who are you?")
        .await
        .unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    let dialog = b.wait("dialog[open]").await;
    assert_eq!(b.role_and_name(&dialog).await.0, "dialog");
    b.wait_text("dialog[open]", "Who are you?").await;
    b.labelled(DIALOG, "username").await.send_keys("alice").await.unwrap();
    b.labelled(DIALOG, "email")
        .await
        .send_keys("alice@example.com")
        .await
        .unwrap();
    b.button(DIALOG, "Accept").await.click().await.unwrap();
    let text = b.wait_text("#result-body", "User response: action=accept").await;
    assert!(text.contains(r#""username":"alice""#), "{text}");
    assert!(text.contains(r#""email":"alice@example.com""#), "{text}");

    // Sampling: the request shown, a "Response" field and "Send".
    b.button(TOOLS, "test_sampling").await.click().await.unwrap();
    b.wait_text("#call-name", "test_sampling").await;
    b.labelled(FORM, "prompt").await.send_keys("Say hello").await.unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("dialog[open]", "Say hello").await;
    b.labelled(DIALOG, "Response")
        .await
        .send_keys("hello from the page")
        .await
        .unwrap();
    b.button(DIALOG, "Send").await.click().await.unwrap();
    b.wait_text("#result-body", "LLM response: hello from the page").await;

    // Progress: the notifications reach the page (and Messages).
    b.button(TOOLS, "test_tool_with_progress").await.click().await.unwrap();
    b.wait_text("#call-name", "test_tool_with_progress").await;
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#message-list", "notifications/progress").await;
    b.wait_text("#result-body", "test_tool_with_progress").await;

    // The browser's console: nothing at error level.
    b.assert_no_console_errors().await;
}
