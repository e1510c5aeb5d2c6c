//! The App region of `mcpkit dev`, in a real headless Chromium against `mcpkit dev --no-open --
//! mcpkit serve`: calling `test_app_counter` (linked to the `ui://` counter view) renders the
//! view in an iframe sandboxed to scripts only, loaded from another origin (the views' own
//! listener) with the CSP built from the view's metadata; the view, bridged by the host's
//! `AppBridge`, is sent the call's input and result (it shows the count), and its "Increment"
//! button calls the app-only `test_app_counter_increment` through the host: the new count shows
//! in the view and the call is in Messages; a tool the server does not have is refused by the
//! bridge. The view cannot reach the page. The same in the stateless era, after the page's era
//! switch. The browser's console has no error.

use std::panic::AssertUnwindSafe;

use fantoccini::Locator;
use futures_util::FutureExt as _;
use serde_json::Value;

use crate::support::browser::Browser;
use crate::support::dev_host::DevHost;

const TOOLS: &str = "//section[@id='tools']";
const FORM: &str = "//form[@id='call-form']";

#[tokio::test(flavor = "multi_thread")]
async fn the_counter_view_increments_through_the_host_bridge() {
    let browser = Browser::start().await;
    let outcome = AssertUnwindSafe(exercise(&browser)).catch_unwind().await;
    browser.close().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// The JSON-RPC messages Messages holds (sent and received, on the wire to the server and
/// between the view and the host), each `{peer, dir, message}`.
async fn messages(b: &Browser) -> Vec<Value> {
    let script = "return [...document.querySelectorAll('#message-list li')].map(li => ({\
                  view: !!li.querySelector('.tag'), \
                  dir: li.className, \
                  text: li.querySelector('pre').textContent}))";
    let v = b.client().execute(script, vec![]).await.unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            serde_json::json!({
                "peer": if m["view"] == true { "view" } else { "server" },
                "dir": m["dir"],
                "message": serde_json::from_str::<Value>(m["text"].as_str().unwrap()).unwrap_or(Value::Null),
            })
        })
        .collect()
}

/// Wait (up to 20 s) until the view's count is `count` (the frame entered).
async fn view_shows(b: &Browser, count: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = match b.client().find(Locator::Id("count")).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if text == count {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the view did not show the count {count} within 20 s: {text:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn exercise(b: &Browser) {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    b.client().goto(&dev.url).await.unwrap();

    // The App region is a landmark named "App".
    let region = b.client().find(Locator::Id("app")).await.unwrap();
    assert_eq!(b.role_and_name(&region).await, ("region".to_owned(), "App".to_owned()));

    b.button(TOOLS, "test_app_counter").await.click().await.unwrap();
    b.wait_text("#call-name", "test_app_counter").await;
    b.button(FORM, "Call").await.click().await.unwrap();
    // The model's answer, as text, in Result.
    b.wait_text("#result-body", "Count: 0").await;

    // The view: in an iframe sandboxed to scripts alone, from another origin than the page's.
    let frame = b.wait("#app-frame iframe").await;
    assert_eq!(frame.attr("sandbox").await.unwrap().as_deref(), Some("allow-scripts"));
    let src = frame.attr("src").await.unwrap().expect("the iframe has a src");
    let page_origin = dev.base().to_owned();
    let view_origin: String = src.split("/view?").next().unwrap().to_owned();
    assert!(view_origin.starts_with("http://127.0.0.1:"), "{src}");
    assert_ne!(
        view_origin, page_origin,
        "the view is served from the page's own origin"
    );
    assert!(!src.contains(dev.token()), "the view's URL carries the page's token");
    // Its document carries the CSP built from its metadata (the counter declares no origins:
    // it may connect nowhere), framed by the page alone and sandboxed even when opened alone.
    let reply = reqwest::get(&src).await.unwrap();
    let csp = reply
        .headers()
        .get("content-security-policy")
        .expect("the view has a CSP")
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("connect-src 'none'"), "{csp}");
    assert!(csp.contains(&format!("frame-ancestors {page_origin}")), "{csp}");
    assert!(csp.ends_with("sandbox allow-scripts"), "{csp}");
    // Without its key, no view.
    let keyless = src.split("&key=").next().unwrap();
    assert_eq!(reqwest::get(keyless).await.unwrap().status(), 404);

    // Inside the view: it was sent the call's result (the count), then "Increment" calls the
    // app-only tool through the host.
    frame.enter_frame().await.unwrap();
    view_shows(b, "0").await;
    let increment = b
        .client()
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::XPath(
            "//button[normalize-space(.)='Increment' and not(@disabled)]",
        ))
        .await
        .unwrap();
    increment.click().await.unwrap();
    view_shows(b, "1").await;
    // From the keyboard too: Enter on the focused button.
    b.button("", "Increment").await.send_keys("\u{E007}").await.unwrap();
    view_shows(b, "2").await;
    // The view runs in an opaque origin and cannot reach the page.
    let reach = b
        .client()
        .execute(
            "let parent; try { parent = window.parent.document.title; } catch (e) { parent = e.name; } \
             return [self.origin, parent];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(reach, serde_json::json!(["null", "SecurityError"]));
    // The host's visibility gate is on the view's path: a tool its server does not have is
    // refused by the bridge.
    let refused = b
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             window.addEventListener('message', (e) => { \
               if (e.data && e.data.id === 1000) done(e.data.error ? e.data.error.message : 'answered'); }); \
             window.parent.postMessage({jsonrpc: '2.0', id: 1000, method: 'tools/call', \
               params: {name: 'no_such_tool', arguments: {}}}, '*');",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        refused,
        serde_json::json!("\"no_such_tool\" is not a tool of this view's server")
    );
    b.client().enter_parent_frame().await.unwrap();

    // The view's calls reached the server through the host, and show in Messages: the view's
    // request to the host, and the host's to the server.
    b.wait_text("#app-note", "ready").await;
    let all = messages(b).await;
    let increments = |peer: &str| {
        all.iter()
            .filter(|m| {
                m["peer"] == peer
                    && m["message"]["method"] == "tools/call"
                    && m["message"]["params"]["name"] == "test_app_counter_increment"
            })
            .count()
    };
    assert_eq!(increments("view"), 2, "{all:#?}");
    assert_eq!(increments("server"), 2, "{all:#?}");
    for method in [
        "ui/initialize",
        "ui/notifications/initialized",
        "ui/notifications/tool-input",
        "ui/notifications/tool-result",
    ] {
        assert!(
            all.iter()
                .any(|m| m["peer"] == "view" && m["message"]["method"] == method),
            "no {method} between the view and the host: {all:#?}"
        );
    }
    // The count the model reads moved too.
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#result-body", "Count: 2").await;

    // The stateless era: reconnected (a new server process, its count at 0), the view works the
    // same way.
    b.labelled("//section[@id='server']", "Protocol")
        .await
        .select_by_value("2026-07-28")
        .await
        .unwrap();
    b.button("//section[@id='server']", "Reconnect")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#status", "Connected (2026-07-28)").await;
    b.button(TOOLS, "test_app_counter").await.click().await.unwrap();
    b.wait_text("#call-name", "test_app_counter").await;
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#result-body", "Count: 0").await;
    b.wait_text("#app-note", "ready").await;
    let frame = b.wait("#app-frame iframe").await;
    frame.enter_frame().await.unwrap();
    view_shows(b, "0").await;
    b.button("", "Increment").await.click().await.unwrap();
    view_shows(b, "1").await;
    b.client().enter_parent_frame().await.unwrap();

    b.assert_no_console_errors().await;
    // The view's own console is read too: a line it writes shows up.
    b.wait("#app-frame iframe").await.enter_frame().await.unwrap();
    b.client()
        .execute("console.error('mcpkit-view-console-probe')", vec![])
        .await
        .unwrap();
    b.client().enter_parent_frame().await.unwrap();
    let probe = b.console().await;
    assert!(
        probe.iter().any(|e| e["message"]
            .as_str()
            .is_some_and(|m| m.contains("mcpkit-view-console-probe"))),
        "the view's console is not read back: {probe:#?}"
    );
}
