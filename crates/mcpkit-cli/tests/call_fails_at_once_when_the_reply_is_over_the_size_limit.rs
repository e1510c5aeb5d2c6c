//! `mcpkit call` whose tool answers with a reply over the client's message-size limit (16 MiB)
//! fails at once, saying so, instead of waiting out its whole `--timeout` for an answer that
//! came and was dropped.

use assert_cmd::Command;

/// A stdio server in sh: answers the handshake and tools/list (one tool, `big`), answers the
/// call with a line of some 17 MB, then keeps the connection open.
const SH_SERVER: &str = r#"
id() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
while read -r l; do
  i=$(id "$l")
  case "$l" in
  *'"method":"initialize"'*)
    printf '%s\n' '{"jsonrpc":"2.0","id":'"$i"',"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"0"}}}' ;;
  *'"method":"tools/list"'*)
    printf '%s\n' '{"jsonrpc":"2.0","id":'"$i"',"result":{"tools":[{"name":"big","inputSchema":{"type":"object"}}]}}' ;;
  *'"method":"tools/call"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' "$i"
    head -c 17000000 /dev/zero | tr '\0' a
    printf '"}]}}\n' ;;
  esac
done
"#;

#[test]
fn a_reply_over_the_size_limit_fails_the_call_with_the_size_and_the_limit() {
    // The harness's own limit only keeps a broken build from hanging the suite; the call must
    // end long before its 30 s timeout, with the size error rather than a timeout.
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .args(["call", "big", "--timeout", "30s", "--", "sh", "-c", SH_SERVER])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.starts_with("mcpkit call: tool \"big\": "), "{err}");
    let (_, said) = err.split_once("the response (").unwrap_or_else(|| panic!("{err}"));
    let (size, rest) = said.split_once(' ').unwrap();
    // The text's 17,000,000 bytes and the JSON around them.
    let size: usize = size.parse().unwrap();
    assert!((17_000_000..17_000_100).contains(&size), "{err}");
    assert!(
        rest.starts_with("bytes) exceeds the 16777216-byte message limit"),
        "{err}"
    );
}
