//! `mcpkit dev` in a real headless Chromium, against `mcpkit dev --no-open -- mcpkit serve`:
//! a prompt's argument and a resource template's variable are completed as the user types
//! (`completion/complete`), a suggestion fills the input and the template is read with it; the
//! logging level is set and the server's log messages show in Logs; the page's roots are
//! offered (the working folder at first), a root added is announced
//! (`notifications/roots/list_changed`) and the server, asking for the roots, gets both; the server's skills are listed and one is
//! loaded; the regions are landmarks; the browser's console has no error.

use std::panic::AssertUnwindSafe;

use fantoccini::Locator;
use futures_util::FutureExt as _;

use crate::support::browser::Browser;
use crate::support::dev_host::DevHost;

const FORM: &str = "//form[@id='call-form']";

#[tokio::test(flavor = "multi_thread")]
async fn completions_logs_roots_and_skills_in_the_page() {
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
    b.button("//section[@id='tools']", "add").await;

    for (id, name) in [
        ("logs", "Logs"),
        ("roots", "Roots"),
        ("skills", "Skills"),
        ("prompts", "Prompts"),
    ] {
        let section = b.client().find(Locator::Id(id)).await.unwrap();
        assert_eq!(b.role_and_name(&section).await, ("region".to_owned(), name.to_owned()));
    }

    // A prompt's argument, completed as it is typed.
    b.button("//section[@id='prompts']", "test_prompt_with_arguments")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#call-name", "Prompt With Arguments").await;
    let arg1 = b.labelled(FORM, "arg1").await;
    arg1.send_keys("testV").await.unwrap();
    let suggestions = "//ul[@aria-label='Completions for arg1']";
    b.button(suggestions, "testValue1").await.click().await.unwrap();
    assert_eq!(arg1.prop("value").await.unwrap().as_deref(), Some("testValue1"));
    b.labelled(FORM, "arg2").await.send_keys("two").await.unwrap();
    b.button(FORM, "Get").await.click().await.unwrap();
    b.wait_text("#result-body", "testValue1").await;
    b.wait_text("#message-list", "completion/complete").await;

    // A template's variable, completed, then read.
    b.button("//section[@id='resources']", "test://template/{id}/data")
        .await
        .click()
        .await
        .unwrap();
    let id = b.labelled(FORM, "id").await;
    id.send_keys("4").await.unwrap();
    // With the keyboard alone: Tab from the field reaches the suggestion, Enter takes it.
    b.button("//ul[@aria-label='Completions for id']", "456").await;
    id.send_keys("\u{E004}").await.unwrap();
    let focused = b.client().active_element().await.unwrap();
    assert_eq!(focused.text().await.unwrap(), "456");
    focused.send_keys("\u{E007}").await.unwrap();
    assert_eq!(id.prop("value").await.unwrap().as_deref(), Some("456"));
    b.button(FORM, "Read").await.click().await.unwrap();
    b.wait_text("#result-body", "test://template/456/data").await;

    // The logging level, then the server's log messages in Logs.
    let level = b.labelled("//section[@id='logs']", "Logging level").await;
    level.select_by_value("info").await.unwrap();
    b.button("//section[@id='logs']", "Set level")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#log-note", "Level set to info.").await;
    b.wait_text("#message-list", "logging/setLevel").await;
    b.button("//section[@id='tools']", "test_tool_with_logging")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#call-name", "test_tool_with_logging").await;
    b.button(FORM, "Call").await.click().await.unwrap();
    for message in mcpkit_cli::reference::LOG_MESSAGES {
        b.wait_text("#log-list", message).await;
    }
    let logs = b.wait_text("#log-list", "info").await;
    assert!(logs.contains("info"), "{logs}");

    // Roots: the working folder first; a root added is sent to the server.
    let cwd = std::env::current_dir().unwrap();
    b.wait_text("#root-list", &format!("file://{}", cwd.display())).await;
    b.labelled("//section[@id='roots']", "Root URI")
        .await
        .send_keys("file:///tmp/mcpkit-dev-root")
        .await
        .unwrap();
    b.labelled("//section[@id='roots']", "Root name")
        .await
        .send_keys("scratch")
        .await
        .unwrap();
    b.button("//section[@id='roots']", "Add root")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#root-list", "file:///tmp/mcpkit-dev-root (scratch)").await;
    b.wait_text("#message-list", "notifications/roots/list_changed").await;
    let state = dev.state().await;
    assert_eq!(state["roots"][1]["uri"], "file:///tmp/mcpkit-dev-root", "{state}");
    assert_eq!(state["roots"][1]["name"], "scratch", "{state}");
    b.button("//section[@id='tools']", "test_input_required_result_list_roots")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#call-name", "test_input_required_result_list_roots").await;
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text(
        "#result-body",
        &format!("Client roots: file://{}, file:///tmp/mcpkit-dev-root", cwd.display()),
    )
    .await;

    // Skills: listed, and one loaded (its SKILL.md, checked against its entry).
    b.button("//section[@id='skills']", "git-workflow")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#result-body", "Skill git-workflow").await;
    b.wait_text("#result-body", "name: git-workflow").await;

    b.assert_no_console_errors().await;
}
