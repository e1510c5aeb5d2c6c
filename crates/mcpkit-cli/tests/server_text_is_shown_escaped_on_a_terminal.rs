//! What a server says cannot act on the user's terminal: `mcpkit inspect` and `mcpkit call`
//! show the control characters in a server's name, version, instructions, tool descriptions,
//! tool results, log and progress messages, questions and errors escaped when they go to a
//! terminal (they used to reach it as sent: a server could set the window title, write the
//! clipboard with OSC 52, clear the screen or hide text). `--raw` prints them as sent; piped
//! output and `--json` are as before.
#![cfg(unix)]

use crate::support::terminal::mcpkit_on_a_terminal;

/// A window title (OSC 0, ended by BEL), a clipboard write (OSC 52), a screen clear (CSI 2J)
/// and a C1 CSI (U+009B) setting red, before the text they would hide: as JSON escapes.
const HOSTILE_JSON: &str = r"\u001b]0;pwned-title\u0007\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31mHIDDEN";

/// The same, as the server's text holds it.
const HOSTILE: &str = "\u{1b}]0;pwned-title\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J\u{9b}31mHIDDEN";

/// The same, as a terminal shows it.
const ESCAPED: &str = r"\x1b]0;pwned-title\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u{9b}31mHIDDEN";

const NOTE: &str = "mcpkit: control characters from the server are shown escaped; --raw prints them as sent";

/// A stdio server in sh whose every text carries `$H`: server name, version and instructions;
/// the description of tool `hostile`, whose call asks a question (elicitation), logs, reports
/// progress, waits for the bar to be drawn, and answers with a text; and tool `fails`, whose call
/// gets a JSON-RPC error.
const SERVER: &str = r#"
id() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
token() { printf '%s' "$1" | sed -n 's/.*"progressToken":\("[^"]*"\|[0-9]*\).*/\1/p'; }
say() { printf '%s\n' "$1"; }
while read -r l; do
  i=$(id "$l")
  case "$l" in
  *'"method":"initialize"'*)
    say '{"jsonrpc":"2.0","id":'"$i"',"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"name '"$H"'","version":"version '"$H"'"},"instructions":"instructions '"$H"'"}}' ;;
  *'"method":"tools/list"'*)
    say '{"jsonrpc":"2.0","id":'"$i"',"result":{"tools":[{"name":"hostile","description":"description '"$H"'","inputSchema":{"type":"object"}},{"name":"fails","inputSchema":{"type":"object"}}]}}' ;;
  *'"method":"tools/call"'*'"name":"fails"'*)
    say '{"jsonrpc":"2.0","id":'"$i"',"error":{"code":-32000,"message":"error '"$H"'"}}' ;;
  *'"method":"tools/call"'*)
    t=$(token "$l")
    say '{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{"message":"question '"$H"'","requestedSchema":{"type":"object","properties":{}}}}'
    read -r answer
    say '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":"log '"$H"'"}}'
    say '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":'"$t"',"progress":1,"total":2,"message":"progress '"$H"'"}}'
    sleep 0.5
    say '{"jsonrpc":"2.0","id":'"$i"',"result":{"content":[{"type":"text","text":"result '"$H"'"}]}}' ;;
  *'"method":"'*) [ -n "$i" ] && say '{"jsonrpc":"2.0","id":'"$i"',"result":{}}' ;;
  esac
done
"#;

/// `mcpkit ARGS… -- sh -c SERVER` on a terminal: exit code and what the terminal got.
fn on_a_terminal(args: &[&str]) -> (Option<i32>, Vec<u8>) {
    let script = format!("H='{HOSTILE_JSON}'\n{SERVER}");
    let mut all = args.to_vec();
    all.extend_from_slice(&["--timeout", "30s", "--", "sh", "-c", &script]);
    mcpkit_on_a_terminal(&all)
}

/// `mcpkit ARGS… -- sh -c SERVER` with stdout and stderr piped: exit code, stdout, stderr.
fn piped(args: &[&str]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let script = format!("H='{HOSTILE_JSON}'\n{SERVER}");
    let out = assert_cmd::Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .args(args)
        .args(["--timeout", "30s", "--", "sh", "-c", &script])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (out.status.code(), out.stdout, out.stderr)
}

/// The terminal's output without the progress bar's own sequences (indicatif clears the line
/// and moves the cursor up and down: `ESC[2K`, `ESC[1A`, `ESC[1B`).
fn without_the_bar(out: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(out.len());
    let mut rest = out;
    while let Some((&b, tail)) = rest.split_first() {
        let ours = [b"\x1b[2K", b"\x1b[1A", b"\x1b[1B"]
            .into_iter()
            .find(|s| rest.starts_with(&s[..]));
        match ours {
            Some(s) => rest = &rest[s.len()..],
            None => {
                kept.push(b);
                rest = tail;
            }
        }
    }
    kept
}

/// No ESC, no BEL and no C1 control (U+0080–U+009F: 0xC2 0x80–0x9F in UTF-8) in `out`.
fn assert_nothing_acts(out: &[u8]) {
    let text = String::from_utf8_lossy(out);
    assert!(!out.contains(&0x1b), "an ESC reached the terminal:\n{text}");
    assert!(!out.contains(&0x07), "a BEL reached the terminal:\n{text}");
    assert!(
        !out.windows(2).any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1])),
        "a C1 control reached the terminal:\n{text}"
    );
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn inspect_on_a_terminal_shows_the_servers_control_characters_escaped() {
    let (code, out) = on_a_terminal(&["inspect"]);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(0), "{text}");
    assert_nothing_acts(&out);
    for what in ["Server     name", "version", "Instructions instructions", "description"] {
        assert!(
            text.contains(&format!("{what} {ESCAPED}")),
            "{what} not shown escaped:\n{text}"
        );
    }
    assert_eq!(text.matches(NOTE).count(), 1, "{text}");
}

#[test]
fn call_on_a_terminal_shows_the_result_log_progress_and_question_escaped() {
    let (code, out) = on_a_terminal(&["call", "hostile"]);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(0), "{text}");
    assert_nothing_acts(&without_the_bar(&out));
    for what in ["result", "[server warning] log", "progress", "(elicitation: question"] {
        assert!(
            text.contains(&format!("{what} {ESCAPED}")),
            "{what} not shown escaped:\n{text}"
        );
    }
    assert_eq!(text.matches(NOTE).count(), 1, "{text}");
}

#[test]
fn a_servers_error_on_a_terminal_is_shown_escaped() {
    let (code, out) = on_a_terminal(&["call", "fails"]);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(2), "{text}");
    assert_nothing_acts(&out);
    assert!(text.contains(&format!("error {ESCAPED}")), "{text}");
}

#[test]
fn raw_prints_the_servers_bytes_on_a_terminal() {
    let (code, out) = on_a_terminal(&["inspect", "--raw"]);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        contains(&out, &format!("Server     name {HOSTILE} version {HOSTILE}")),
        "{text}"
    );
    assert!(contains(&out, &format!("description {HOSTILE}")), "{text}");
    assert!(!text.contains(NOTE), "{text}");

    let (code, out) = on_a_terminal(&["--raw", "call", "hostile"]);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(0), "{text}");
    assert!(contains(&out, &format!("result {HOSTILE}")), "{text}");
    assert!(contains(&out, &format!("log {HOSTILE}")), "{text}");
}

#[test]
fn piped_output_is_as_sent() {
    let (code, out, err) = piped(&["call", "hostile"]);
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&err));
    assert_eq!(out, format!("result {HOSTILE}\n").into_bytes());
    // stderr is a pipe too: the log line as sent, and no note.
    assert!(contains(&err, &format!("[server warning] log {HOSTILE}")));
    assert!(!contains(&err, NOTE));

    let (code, out, _) = piped(&["inspect"]);
    assert_eq!(code, Some(0));
    assert!(contains(&out, &format!("Server     name {HOSTILE} version {HOSTILE}")));
}

#[test]
fn json_output_is_the_same_json_piped_and_on_a_terminal() {
    let (code, out, _) = piped(&["call", "hostile", "--json"]);
    assert_eq!(code, Some(0));
    let piped: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(piped["content"][0]["text"], format!("result {HOSTILE}"));
    // serde_json's own output: C0 as JSON escapes, the C1 character as it is.
    assert!(contains(&out, "\\u001b]0;pwned-title\\u0007"));
    assert!(contains(&out, "\u{9b}31mHIDDEN"));

    // On a terminal the same JSON value, with the C1 character written as a JSON escape too.
    let (code, out) = on_a_terminal(&["call", "hostile", "--json"]);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(0), "{text}");
    assert_nothing_acts(&without_the_bar(&out));
    let escaped_text = format!("\"text\": \"result {HOSTILE_JSON}\"");
    assert!(text.contains(&escaped_text), "{text}");
}
