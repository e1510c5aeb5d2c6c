//! A real headless Chromium driven over WebDriver: Debian's `chromium` and `chromium-driver`
//! (a missing one fails the test, naming its package; `scripts/setup-cluster-tools.sh`
//! installs them). chromedriver runs on a free loopback port and is stopped by pid; Chromium
//! gets a fresh profile folder, and its console is read back to check the page logged no error.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use mcpkit_test_support::process::{free_port, require_tool, ScratchDir};
use serde_json::{json, Value};

/// chromedriver and one browser session.
pub(crate) struct Browser {
    driver: Child,
    port: u16,
    /// The session; `None` once closed.
    client: Option<Client>,
    session: String,
    _profile: ScratchDir,
}

impl Browser {
    /// Start chromedriver and a headless Chromium session.
    pub(crate) async fn start() -> Browser {
        let chromium = require_tool("chromium", "chromium");
        let chromedriver = require_tool("chromedriver", "chromium-driver");
        let profile = ScratchDir::new("chromium-profile");
        // A port free a moment ago may be taken before chromedriver binds it: try a few.
        for _ in 0..3 {
            let port = free_port();
            let mut driver = Command::new(&chromedriver)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start chromedriver");
            if !ready(port, &mut driver).await {
                let _ = driver.kill();
                let _ = driver.wait();
                continue;
            }
            let args = [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--window-size=1400,1000",
                // A sandboxed iframe (an App view) in the page's renderer, so chromedriver's
                // log has its console too (an isolated frame's console is not read back).
                "--disable-features=IsolateSandboxedIframes",
            ]
            .iter()
            .map(|a| (*a).to_owned())
            .chain([format!("--user-data-dir={}", profile.path().display())])
            .collect::<Vec<_>>();
            let caps = json!({
                "goog:chromeOptions": {"binary": chromium, "args": args},
                "goog:loggingPrefs": {"browser": "ALL"},
            });
            let serde_json::Value::Object(caps) = caps else {
                unreachable!()
            };
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            let client = ClientBuilder::new(connector)
                .capabilities(caps)
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
                .expect("a Chromium session");
            let session = client.session_id().await.unwrap().expect("a session id");
            return Browser {
                driver,
                port,
                client: Some(client),
                session,
                _profile: profile,
            };
        }
        panic!("chromedriver did not start on a free port (3 tries)");
    }

    /// The WebDriver session.
    pub(crate) fn client(&self) -> &Client {
        self.client.as_ref().expect("the session is open")
    }

    /// Wait (up to 20 s) for an element.
    pub(crate) async fn wait(&self, css: &str) -> fantoccini::elements::Element {
        self.client()
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} within 20 s: {e}"))
    }

    /// Wait (up to 20 s) until the text of `css` contains `needle`; returns the text.
    pub(crate) async fn wait_text(&self, css: &str, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = match self.client().find(Locator::Css(css)).await {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "{css} did not show {needle:?} within 20 s; it shows:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The input labelled `name` (its `<label>`'s own text) within `scope` (an XPath).
    pub(crate) async fn labelled(&self, scope: &str, name: &str) -> fantoccini::elements::Element {
        let label = self
            .client()
            .find(Locator::XPath(&format!(
                "{scope}//label[normalize-space(text())='{name}']"
            )))
            .await
            .unwrap_or_else(|e| panic!("no label {name:?} in {scope}: {e}"));
        let id = label.attr("for").await.unwrap().expect("the label names its input");
        self.client().find(Locator::Id(&id)).await.unwrap()
    }

    /// The button whose text is `text` within `scope` (an XPath).
    pub(crate) async fn button(&self, scope: &str, text: &str) -> fantoccini::elements::Element {
        self.client()
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::XPath(&format!("{scope}//button[normalize-space(.)='{text}']")))
            .await
            .unwrap_or_else(|e| panic!("no button {text:?} in {scope} within 20 s: {e}"))
    }

    /// The accessibility tree's role and name of `element` (WebDriver's computed role and
    /// label).
    pub(crate) async fn role_and_name(&self, element: &fantoccini::elements::Element) -> (String, String) {
        let id = element.element_id();
        let get = |what: &'static str| {
            let url = format!(
                "http://127.0.0.1:{}/session/{}/element/{}/{what}",
                self.port, self.session, id
            );
            async move {
                let text = reqwest::get(url).await.unwrap().text().await.unwrap();
                let v: Value = serde_json::from_str(&text).unwrap();
                v["value"].as_str().unwrap_or_default().to_owned()
            }
        };
        (get("computedrole").await, get("computedlabel").await)
    }

    /// What the page wrote on the console (and the browser logged for it: failed loads, CSP
    /// violations), each `{level, message}`; read through chromedriver's log endpoint.
    pub(crate) async fn console(&self) -> Vec<Value> {
        let url = format!("http://127.0.0.1:{}/session/{}/se/log", self.port, self.session);
        let reply = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(r#"{"type":"browser"}"#)
            .send()
            .await
            .expect("chromedriver's log endpoint");
        let v: Value = serde_json::from_str(&reply.text().await.unwrap()).unwrap();
        v["value"].as_array().cloned().unwrap_or_default()
    }

    /// Assert the page logged nothing at error level (its frames included), and that the
    /// console is really read back: a line written now must show up.
    pub(crate) async fn assert_no_console_errors(&self) {
        let severe: Vec<_> = self
            .console()
            .await
            .into_iter()
            .filter(|e| e["level"] == "SEVERE")
            .collect();
        assert!(severe.is_empty(), "console errors: {severe:#?}");
        self.client()
            .execute("console.error('mcpkit-console-probe')", vec![])
            .await
            .unwrap();
        let probe = self.console().await;
        assert!(
            probe.iter().any(|e| e["message"]
                .as_str()
                .is_some_and(|m| m.contains("mcpkit-console-probe"))),
            "the console is not read back: {probe:#?}"
        );
    }

    /// End the session (Chromium quits) and stop chromedriver.
    pub(crate) async fn close(mut self) {
        if let Some(c) = self.client.take() {
            let _ = c.close().await;
        }
    }
}

/// Whether chromedriver on `port` says it is ready within 10 s (false if it exited).
async fn ready(port: u16, driver: &mut Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    let url = format!("http://127.0.0.1:{port}/status");
    while Instant::now() < deadline {
        if driver.try_wait().ok().flatten().is_some() {
            return false;
        }
        if let Ok(r) = reqwest::get(&url).await {
            if let Ok(text) = r.text().await {
                if serde_json::from_str::<Value>(&text).is_ok_and(|v| v["value"]["ready"] == true) {
                    return true;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

impl Drop for Browser {
    fn drop(&mut self) {
        // By pid: the chromedriver this helper started, nothing else.
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
