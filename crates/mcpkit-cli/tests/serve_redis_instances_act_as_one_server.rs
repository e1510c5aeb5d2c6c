//! `mcpkit serve --http ADDR --redis URL`: two processes sharing one real `redis-server` act as
//! one server (a session opened on one is served by the other, and `/readyz` says ready), an
//! instance of another `--redis-prefix` does not know the session, `MCPKIT_REDIS_URL` stands in
//! for `--redis`, and bad flag values are usage errors (exit 2).

use crate::support;

use std::process::Stdio;

use mcpkit_test_support::redis::RedisProcess;
use support::{mcpkit, serve_http};

const VERSION: &str = "2025-11-25";

async fn post(url: &str, session: Option<&str>, body: &str) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    if let Some(s) = session {
        req = req.header("mcp-session-id", s).header("mcp-protocol-version", VERSION);
    }
    req.send().await.unwrap()
}

async fn open_session(url: &str) -> String {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    );
    let r = post(url, None, &init).await;
    assert_eq!(r.status(), 200);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let r = post(
        url,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(r.status(), 202);
    session
}

async fn ping(url: &str, session: &str) -> u16 {
    post(url, Some(session), r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#)
        .await
        .status()
        .as_u16()
}

#[tokio::test]
async fn instances_sharing_a_redis_serve_each_others_sessions() {
    let redis = RedisProcess::start();
    let url = redis.url();
    let (mut a, url_a, _) = serve_http(&["--redis", &url, "--instance-id", "a"]).await;
    let (mut b, url_b, _) = serve_http(&["--redis", &url, "--instance-id", "b"]).await;
    let (mut other, url_other, _) = serve_http(&["--redis", &url, "--redis-prefix", "elsewhere"]).await;

    let s = open_session(&url_a).await;
    assert_eq!(ping(&url_b, &s).await, 200, "B serves the session A opened");
    assert_eq!(ping(&url_other, &s).await, 404, "another deployment does not know it");
    let ready = reqwest::get(url_b.replace("/mcp", "/readyz")).await.unwrap();
    assert_eq!(ready.status(), 200);

    // The Redis URL from the environment.
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .env("MCPKIT_REDIS_URL", &url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = c.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let url_c = loop {
        let line = mcpkit_test_support::within("the listening line", lines.next_line())
            .await
            .unwrap()
            .expect("mcpkit serve exited before listening");
        if let Some(rest) = line.trim().strip_prefix("mcpkit serve: listening on ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    assert_eq!(
        ping(&url_c, &s).await,
        200,
        "MCPKIT_REDIS_URL joins the same deployment"
    );

    for child in [&mut a, &mut b, &mut other, &mut c] {
        let _ = child.kill().await;
    }
}

#[test]
fn bad_cluster_flags_are_usage_errors() {
    let (code, _, err) = mcpkit(&["serve", "--http", "127.0.0.1:0", "--instance-id", "a"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--redis"), "{err}");
    let (code, _, err) = mcpkit(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--redis",
        "redis://127.0.0.1:1",
        "--instance-id",
        "no spaces!",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--instance-id"), "{err}");
}
