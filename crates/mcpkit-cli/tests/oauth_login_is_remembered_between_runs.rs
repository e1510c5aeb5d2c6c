//! `--oauth` remembers its login: against a protected `mcpkit serve` process and the
//! authorization-server stand-in of mcpkit's tests, the first `mcpkit call --oauth` registers
//! and logs in (the test plays the browser: it follows the URL mcpkit prints, whose redirect
//! reaches mcpkit's loopback listener); a second run logs in no more; a run whose kept access
//! token has expired refreshes it with the refresh token instead of logging in; `mcpkit auth
//! list` names the server and `mcpkit auth logout SERVER` forgets it, after which a run logs
//! in again. The store is the file one (`MCPKIT_AUTH_STORE=file`, as on a machine without a
//! keyring), `0600` in a `0700` folder.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use mcpkit_test_support::auth_server::{listen, start_auth_server_on, AuthServer};
use mcpkit_test_support::within;
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use crate::support;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

/// A protected `mcpkit serve` (every method needs `mcp:read`) and its authorization server.
async fn protected() -> (tokio::process::Child, String, std::sync::Arc<AuthServer>) {
    let (as_listener, issuer) = listen().await;
    let jwks = format!("{issuer}/jwks");
    let (child, url, _stderr) = support::serve_http(&[
        "--auth-issuer",
        &issuer,
        "--auth-jwks",
        &jwks,
        "--auth-scopes-supported",
        "mcp:read",
        "--auth-scope",
        "mcp:read",
    ])
    .await;
    let auth = start_auth_server_on(as_listener, issuer, &url);
    (child, url, auth)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What one run did: its exit code, stdout, stderr, and how many times it asked to log in.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    logins: usize,
}

/// `mcpkit ARGS…` with its configuration folder in `home`; every authorization URL it prints
/// is followed as a browser would (the redirect goes to mcpkit's loopback listener).
async fn mcpkit(home: &Path, args: &[&str]) -> Run {
    let mut child = tokio::process::Command::new(BIN)
        .args(args)
        .env("XDG_CONFIG_HOME", home)
        .env("HOME", home)
        .env("MCPKIT_AUTH_STORE", "file")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let out = tokio::spawn(async move {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s).await;
        s
    });
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let browser = reqwest::Client::new();
    let (mut stderr, mut logins, mut next_is_url) = (String::new(), 0, false);
    while let Some(line) = within("mcpkit's stderr", lines.next_line()).await.unwrap() {
        stderr.push_str(&line);
        stderr.push('\n');
        if next_is_url {
            logins += 1;
            let page = within("the browser", browser.get(line.trim()).send()).await.unwrap();
            assert!(page.status().is_success(), "the loopback page: {}", page.status());
        }
        next_is_url = line.starts_with("Open this URL in a browser to authorize mcpkit");
    }
    let code = within("mcpkit's exit", child.wait()).await.unwrap().code();
    Run {
        code,
        stdout: out.await.unwrap(),
        stderr,
        logins,
    }
}

async fn call(home: &Path, url: &str, port: u16, message: &str) -> Run {
    let message = format!("message={message}");
    let port = port.to_string();
    let run = mcpkit(
        home,
        &[
            "call",
            "echo",
            &message,
            "--server",
            url,
            "--oauth",
            "--oauth-port",
            &port,
        ],
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run
}

fn store_file(home: &Path) -> PathBuf {
    home.join("mcpkit").join("oauth.json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_oauth_run_reuses_the_kept_login() {
    let (_child, url, auth) = protected().await;
    let home = tempfile::tempdir().unwrap();
    let port = free_port();

    // First run: registration and login (its first token is issued expired, and refreshed).
    let first = call(home.path(), &url, port, "one").await;
    assert_eq!(first.stdout, "one\n");
    assert_eq!(first.logins, 1, "{}", first.stderr);
    let (registrations, code_grants) = {
        let seen = auth.seen.lock().unwrap();
        (seen.registrations, seen.code_grants)
    };
    assert_eq!((registrations, code_grants), (1, 1));
    let file = store_file(home.path());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600, "the kept login is the user's alone");
        assert_eq!(mode(file.parent().unwrap()), 0o700);
    }

    // Second run: no login, no registration.
    let second = call(home.path(), &url, port, "two").await;
    assert_eq!(second.stdout, "two\n");
    assert_eq!(second.logins, 0, "{}", second.stderr);
    {
        let seen = auth.seen.lock().unwrap();
        assert_eq!((seen.registrations, seen.code_grants), (1, 1), "nothing asked again");
    }

    // The kept access token expires: the next run refreshes it instead of logging in.
    let refreshes = auth.seen.lock().unwrap().refresh_grants;
    let mut index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let tokens = &mut index["tokens"][0]["secret"]["value"];
    assert!(tokens["refresh_token"].is_string(), "{index}");
    tokens["expires_at"] = serde_json::json!({"secs_since_epoch": 1, "nanos_since_epoch": 0});
    std::fs::write(&file, index.to_string()).unwrap();
    let third = call(home.path(), &url, port, "three").await;
    assert_eq!(third.stdout, "three\n");
    assert_eq!(third.logins, 0, "{}", third.stderr);
    {
        let seen = auth.seen.lock().unwrap();
        assert_eq!(
            seen.refresh_grants,
            refreshes + 1,
            "refreshed with the kept refresh token"
        );
        assert_eq!(seen.code_grants, 1);
    }

    // `auth list` names the server (never a token); `auth logout SERVER` forgets it.
    let list = mcpkit(home.path(), &["auth", "list", "--json"]).await;
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    let rows: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(rows[0]["server"], url.as_str());
    assert_eq!(rows[0]["issuer"], auth.issuer.as_str());
    assert_eq!(rows[0]["refreshable"], true);
    assert_eq!(rows[0]["kept_in"], "file");
    assert!(
        !list.stdout.contains("refresh-"),
        "no token is printed: {}",
        list.stdout
    );
    let out = mcpkit(home.path(), &["auth", "logout", &url]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.starts_with("logged out of "), "{}", out.stdout);
    assert!(!file.exists(), "nothing is left to keep");
    let list = mcpkit(home.path(), &["auth", "list"]).await;
    assert!(list.stdout.starts_with("no OAuth logins are kept"), "{}", list.stdout);

    // Logged out: the next run registers and logs in again.
    let fourth = call(home.path(), &url, port, "four").await;
    assert_eq!(fourth.logins, 1, "{}", fourth.stderr);
    assert_eq!(auth.seen.lock().unwrap().registrations, 2);
}
