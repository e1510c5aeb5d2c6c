//! Every example in `crates/mcpkit/examples/` runs and does what its documentation says: each
//! test starts the example's real binary and checks what it prints or serves. Where an example's doc comment shows its output, the real output must
//! appear there verbatim, so the documentation cannot drift from the code.
#![cfg(all(
    feature = "server",
    feature = "client",
    feature = "http-server",
    feature = "http-client"
))]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use mcpkit::client::ConnectMode;
use mcpkit::transport::child::ChildTransport;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::schema::{ContentBlock, PromptMessage, ResourceContents};
use mcpkit::types::ProtocolVersion;
use mcpkit::Client;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// Generous: it only bounds a hang, nothing is timed.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The built binary of example `name`, in `target/<profile>/examples/` beside this test's own
/// `target/<profile>/deps/`. `cargo test --all-targets` compiles examples as test harnesses, not
/// as these binaries, so `scripts/test.sh` builds them first (`cargo build --workspace
/// --examples`); when one is missing or older than the sources it is built here, once.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_owned();
    let binary = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !is_fresh(&binary, name) {
        static BUILD: Mutex<bool> = Mutex::new(false);
        let mut built = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        if !*built {
            build_examples(&profile_dir);
            *built = true;
        }
    }
    assert!(binary.exists(), "no example binary at {}", binary.display());
    binary
}

/// Whether `binary` is newer than everything it is built from (the example, both library crates
/// and the manifests).
fn is_fresh(binary: &Path, name: &str) -> bool {
    let Ok(built) = std::fs::metadata(binary).and_then(|m| m.modified()) else {
        return false;
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.join("../..");
    let mut newest = SystemTime::UNIX_EPOCH;
    let mut visit = vec![
        crate_dir.join(format!("examples/{name}.rs")),
        crate_dir.join("src"),
        crate_dir.join("Cargo.toml"),
        root.join("crates/mcpkit-types/src"),
        root.join("Cargo.toml"),
        root.join("Cargo.lock"),
    ];
    while let Some(path) = visit.pop() {
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            visit.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(modified);
        }
    }
    built >= newest
}

/// `cargo build -p mcpkit --examples` into this test's target directory and profile, with this
/// test's features (cargo releases its build lock while tests run).
fn build_examples(profile_dir: &Path) {
    let features: Vec<&str> = [
        ("server", cfg!(feature = "server")),
        ("client", cfg!(feature = "client")),
        ("macros", cfg!(feature = "macros")),
        ("http-server", cfg!(feature = "http-server")),
        ("http-client", cfg!(feature = "http-client")),
        ("auth", cfg!(feature = "auth")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => "dev",
    };
    let mut cargo = std::process::Command::new(env!("CARGO"));
    // Without the variables cargo sets for this test (`CARGO_PKG_NAME`…): build scripts that
    // watch them (ring's) would otherwise see a change and rebuild, here and again afterwards.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let set_for_tests = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_CFG_",
        ]
        .iter()
        .any(|p| key.starts_with(p))
            || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&&*key);
        if set_for_tests {
            cargo.env_remove(&*key);
        }
    }
    let status = cargo
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "-p",
            "mcpkit",
            "--examples",
            "--no-default-features",
            "--profile",
            profile,
        ])
        .arg("--features")
        .arg(features.join(","))
        .arg("--target-dir")
        .arg(profile_dir.parent().unwrap())
        .status()
        .unwrap();
    assert!(status.success(), "building the examples failed");
}

/// The example's doc comment (its `//!` lines, without the markers).
fn doc_of(name: &str) -> String {
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"))).unwrap();
    source
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Run `binary args…` to completion; its stdout, after checking it exited with success.
async fn run(binary: &Path, args: &[&str]) -> String {
    let output = tokio::time::timeout(
        RUN_TIMEOUT,
        Command::new(binary)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{} did not finish", binary.display()))
    .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        binary.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn text(content: &[ContentBlock]) -> &str {
    content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

#[tokio::test]
async fn stdio_server_serves_its_tools_resource_and_prompt_on_both_eras() {
    let binary = example("stdio_server");
    let client = Client::builder()
        .connect(ChildTransport::spawn(&binary, [] as [&str; 0]).unwrap())
        .await
        .unwrap();
    assert_eq!(client.server_info().name, "example-stdio-server");
    assert_eq!(client.instructions(), Some("Greets people and adds numbers."));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["greet", "add"]);
    // The input schema comes from the argument type, doc comments included.
    let greet = &tools[0].input_schema;
    assert_eq!(greet["properties"]["name"]["description"], "Who to greet.");
    assert_eq!(greet["required"], json!(["name"]));
    assert!(tools[1].output_schema.is_some(), "add declares its output schema");

    let hello = client.call_tool("greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(text(&hello.content), "Hello, Ada!");
    let sum = client.call_tool("add", json!({"a": 2, "b": 3.5})).await.unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 5.5})));
    // Bad arguments are a tool error naming the problem, not a crash.
    let bad = client.call_tool("add", json!({"a": "two", "b": 3})).await.unwrap();
    assert_eq!(bad.is_error, Some(true));

    let readme = client.read_resource("example://readme").await.unwrap();
    match &readme.contents[..] {
        [ResourceContents::Text(t)] => assert!(t.text.starts_with("# Example"), "{}", t.text),
        other => panic!("unexpected contents {other:?}"),
    }
    let prompt = client.get_prompt("introduce", [("name", "Ada")]).await.unwrap();
    let [PromptMessage { content, .. }] = &prompt.messages[..] else {
        panic!("one message expected: {prompt:?}")
    };
    assert!(content.as_text().unwrap().contains("to Ada"), "{content:?}");
    client.close().await.unwrap();

    // The same process speaks the stateless wire too.
    let stateless_client = Client::builder()
        .mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28))
        .connect(ChildTransport::spawn(&binary, [] as [&str; 0]).unwrap())
        .await
        .unwrap();
    assert!(stateless_client.is_stateless());
    let sum = stateless_client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 2.0})));
    stateless_client.close().await.unwrap();
}

#[tokio::test]
async fn client_lists_and_calls_the_stdio_server_as_documented() {
    let server = example("stdio_server");
    let stdout = run(&example("client"), &[server.to_str().unwrap()]).await;
    let expected = "connected to example-stdio-server 1.0.0 (protocol 2025-11-25)\n\
                    tools:\n  \
                    greet    Greets someone by name\n  \
                    add      Adds two numbers\n\
                    greet: Hello, newcomer!!!\n\
                    add: 2 + 3 = 5\n";
    assert_eq!(stdout, expected);
    assert!(
        doc_of("client").contains(expected.trim_end()),
        "the client example's doc shows its output"
    );
}

#[tokio::test]
async fn axum_app_serves_its_routes_and_mcp_with_secure_defaults() {
    let mut child = Command::new(example("axum_app"))
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(RUN_TIMEOUT, lines.next_line())
        .await
        .expect("axum_app prints where it listens")
        .unwrap()
        .unwrap();
    let url = first.strip_prefix("listening on ").expect(&first).to_owned();
    let base = url.strip_suffix("/mcp").unwrap();
    let http = reqwest::Client::new();

    // The application's own routes are still there.
    let home = http.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(home.status(), 200);
    assert!(home.text().await.unwrap().contains("MCP is at /mcp"));
    assert_eq!(http.get(format!("{base}/health")).send().await.unwrap().status(), 200);

    // The client example's calls, over HTTP.
    let client = Client::builder()
        .connect(HttpClientTransport::new(&url).unwrap())
        .await
        .unwrap();
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["greet", "add"]);
    let hello = client
        .call_tool("greet", json!({"name": "newcomer", "excitement": 3}))
        .await
        .unwrap();
    assert_eq!(text(&hello.content), "Hello, newcomer!!!");
    let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 5.0})));
    client.close().await.unwrap();

    // A web page on another site cannot reach it (Origin), nor can a DNS-rebinding name (Host).
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let post = |origin: Option<&str>, host: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init);
        if let Some(o) = origin {
            request = request.header("origin", o);
        }
        if let Some(h) = host {
            request = request.header("host", h);
        }
        request.send()
    };
    assert_eq!(post(Some("http://evil.example"), None).await.unwrap().status(), 403);
    assert_eq!(post(None, Some("evil.example")).await.unwrap().status(), 421);

    child.kill().await.unwrap();
}

/// A client of the notes example answering its confirmation with `accept`.
async fn notes_client(transport: impl mcpkit::transport::Transport + 'static, accept: bool) -> Client {
    use mcpkit::types::schema::ElicitResult;
    Client::builder()
        .on_elicitation(move |_| async move {
            Ok(if accept {
                ElicitResult::accept_empty()
            } else {
                ElicitResult::decline()
            })
        })
        .connect(transport)
        .await
        .unwrap()
}

fn resource_text(contents: &[ResourceContents]) -> &str {
    match contents {
        [ResourceContents::Text(t)] => &t.text,
        other => panic!("unexpected contents {other:?}"),
    }
}

#[cfg(feature = "macros")]
#[tokio::test]
async fn notes_serves_state_progress_cancel_elicitation_a_template_and_a_prompt_on_stdio_and_http() {
    use mcpkit::client::CallOptions;

    let binary = example("notes");
    let client = notes_client(ChildTransport::spawn(&binary, [] as [&str; 0]).unwrap(), true).await;
    let added = client
        .call_tool("add", json!({"title": "groceries", "body": "milk, eggs"}))
        .await
        .unwrap();
    assert_eq!(
        added.structured_content,
        Some(json!({"id": 1, "title": "groceries", "body": "milk, eggs"}))
    );
    let note = client.read_resource("notes://1").await.unwrap();
    assert_eq!(resource_text(&note.contents), "# groceries\n\nmilk, eggs");
    let missing = client.read_resource("notes://9").await.unwrap_err().to_string();
    assert!(missing.contains("Resource not found: notes://9"), "{missing}");
    let bad = client.read_resource("notes://first").await.unwrap_err().to_string();
    assert!(bad.contains("\"first\" is not an integer"), "{bad}");

    // Progress, then a call given up on: the server is told and stops early.
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(tx),
        ..CallOptions::default()
    };
    let imported = client
        .call_tool_with("import", json!({"count": 3}), options)
        .await
        .unwrap();
    assert_eq!(text(&imported.content), "imported 3 notes");
    let mut seen = Vec::new();
    while let Ok(p) = progress.try_recv() {
        seen.push(p.progress);
    }
    assert_eq!(seen, [1.0, 2.0, 3.0]);
    let options = CallOptions {
        timeout: Some(Duration::from_millis(300)),
        ..CallOptions::default()
    };
    let given_up = client.call_tool_with("import", json!({"count": 1000}), options).await;
    assert!(matches!(given_up, Err(mcpkit::Error::Timeout(_))), "{given_up:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;

    let prompt = client.get_prompt("summarize", [("style", "as a list")]).await.unwrap();
    let summary = prompt.messages[0].content.as_text().unwrap().to_owned();
    assert!(
        summary.starts_with("Summarize these notes (as a list): groceries; imported 1"),
        "{summary}"
    );
    // The user agrees: every note goes, far fewer than the 1000 of the cancelled import.
    let cleared = client.call_tool("clear", json!({})).await.unwrap();
    let deleted: usize = text(&cleared.content)
        .strip_prefix("deleted ")
        .and_then(|t| t.strip_suffix(" notes"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", text(&cleared.content)));
    assert!(
        (5..100).contains(&deleted),
        "deleted {deleted}: the cancelled import did not stop"
    );
    client.close().await.unwrap();

    // The same server over Streamable HTTP, the user declining this time.
    let mut child = Command::new(&binary)
        .args(["--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let banner = tokio::time::timeout(RUN_TIMEOUT, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = banner
        .strip_prefix("notes: listening on ")
        .expect("the banner")
        .to_owned();
    let client = notes_client(HttpClientTransport::new(url).unwrap(), false).await;
    client
        .call_tool("add", json!({"title": "t", "body": "b"}))
        .await
        .unwrap();
    let note = client.read_resource("notes://1").await.unwrap();
    assert_eq!(resource_text(&note.contents), "# t\n\nb");
    let kept = client.call_tool("clear", json!({})).await.unwrap();
    assert_eq!(text(&kept.content), "kept every note");
    client.close().await.unwrap();
}

#[tokio::test]
async fn sampling_elicitation_round_trip_works_on_both_eras_as_documented() {
    let stdout = run(&example("sampling_elicitation"), &[]).await;
    let expected = "== 2025-11-25 (stateless: false) ==\n\
                    [server] plan_trip, run 1\n\
                    [client] elicitation: Where would you like to go?\n\
                    [client] sampling: Suggest one thing to do in Lisbon.\n\
                    result: Trip to Lisbon: ride tram 28 up to the castle.\n\
                    == 2026-07-28 (stateless: true) ==\n\
                    [server] plan_trip, run 2\n\
                    [client] elicitation: Where would you like to go?\n\
                    [server] plan_trip, run 3\n\
                    [client] sampling: Suggest one thing to do in Lisbon.\n\
                    [server] plan_trip, run 4\n\
                    result: Trip to Lisbon: ride tram 28 up to the castle.\n";
    assert_eq!(stdout, expected);
    assert!(doc_of("sampling_elicitation").contains(expected.trim_end()));
}

#[cfg(feature = "auth")]
#[tokio::test]
async fn protected_server_refuses_without_a_token_and_serves_the_oauth_client() {
    let stdout = run(&example("protected_server"), &[]).await;
    // Ports vary: compare with them replaced by PORT, as in the doc comment.
    let mut normalized = String::new();
    let mut rest = stdout.as_str();
    while let Some(at) = rest.find("127.0.0.1:") {
        let (head, tail) = rest.split_at(at + "127.0.0.1:".len());
        normalized.push_str(head);
        normalized.push_str("PORT");
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    normalized.push_str(rest);
    let expected = "without a token: 401 Unauthorized, WWW-Authenticate: Bearer \
                    resource_metadata=\"http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp\", \
                    scope=\"mcp:tools\"\n\
                    connected with a token from http://127.0.0.1:PORT (scope mcp:tools)\n\
                    secret: The treasure is under the old oak.\n";
    assert_eq!(normalized, expected);
    assert!(doc_of("protected_server").contains(expected.trim_end()));
}
