//! Text a server sent, made safe to show on a terminal.
//!
//! What a server says reaches the user's terminal: its name, instructions, descriptions, tool
//! results, log and progress messages, the questions it asks and the errors it returns. Left
//! as sent, its control characters would act instead of being read: an ESC sequence sets the
//! window title, writes the clipboard (OSC 52), clears the screen or hides text, and a bidi
//! override reorders what the user reads (a URL can show one destination and hold another).
//!
//! So where a stream is a terminal, those characters are shown escaped (see [`escape`]) and a
//! note says so once on stderr; `--raw` ([`set_raw`]) prints them as sent. stdout and stderr
//! are judged apart: a pipe or a file gets the text unchanged. `--json` output is JSON, whose
//! escaping already covers C0 controls; on a terminal the rest ([`json`]) is written as `\u`
//! escapes, the same JSON value.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// `--raw`: every stream gets the text as sent.
static RAW: AtomicBool = AtomicBool::new(false);

/// Whether the note about escaping was printed.
static NOTED: AtomicBool = AtomicBool::new(false);

/// The note printed on stderr the first time something is escaped.
pub const NOTE: &str = "mcpkit: control characters from the server are shown escaped; --raw prints them as sent";

/// `--raw`: print server text as sent, control characters and all. Set once, before any output.
pub fn set_raw(raw: bool) {
    RAW.store(raw, Ordering::Relaxed);
}

/// How text is shown on one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// As sent: a pipe, a file, or `--raw`.
    AsSent,
    /// Control characters escaped: a terminal.
    Escaped,
}

impl Shown {
    /// `s` as this stream shows it. The first time something is escaped, [`NOTE`] goes to stderr.
    pub fn text(self, s: &str) -> Cow<'_, str> {
        match self {
            Shown::AsSent => Cow::Borrowed(s),
            Shown::Escaped => {
                let shown = escape(s);
                if matches!(shown, Cow::Owned(_)) && !NOTED.swap(true, Ordering::Relaxed) {
                    eprintln!("{NOTE}");
                }
                shown
            }
        }
    }

    fn of(is_terminal: bool) -> Shown {
        if is_terminal && !RAW.load(Ordering::Relaxed) {
            Shown::Escaped
        } else {
            Shown::AsSent
        }
    }
}

/// How stdout shows server text.
pub fn stdout() -> Shown {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    Shown::of(*TERMINAL.get_or_init(|| std::io::stdout().is_terminal()))
}

/// How stderr shows server text.
pub fn stderr() -> Shown {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    Shown::of(*TERMINAL.get_or_init(|| std::io::stderr().is_terminal()))
}

/// `s` for stdout (see [`stdout`]).
pub fn out(s: &str) -> Cow<'_, str> {
    stdout().text(s)
}

/// `s` for stderr (see [`stderr`]).
pub fn err(s: &str) -> Cow<'_, str> {
    stderr().text(s)
}

/// Whether a terminal would act on `c` rather than show it: C0 controls but newline and tab,
/// DEL, C1 controls (U+0080–U+009F; U+009B is CSI), and the bidi embeddings, overrides and
/// isolates (U+202A–U+202E, U+2066–U+2069).
fn acts(c: char) -> bool {
    matches!(c,
        '\0'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with the characters a terminal would act on written visibly: C0 controls and DEL as
/// `\x1b`, the others as `\u{9b}`. Newlines and tabs stay; text without such characters is
/// borrowed unchanged.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acts) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !acts(c) {
            out.push(c);
        } else if u32::from(c) <= 0x7f {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

/// A JSON text for stdout: on a terminal, the characters a terminal would act on that JSON
/// leaves as they are (DEL, C1, bidi controls) are written as `\u` escapes. They can only stand
/// inside strings, so the value is the same.
pub fn json(text: &str) -> Cow<'_, str> {
    match stdout() {
        Shown::AsSent => Cow::Borrowed(text),
        Shown::Escaped => json_escaped(text),
    }
}

fn json_escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let s = "tab\there\nnew line, ünïcödé — “quotes” \\x1b";
        assert!(matches!(escape(s), Cow::Borrowed(t) if t == s));
    }

    #[test]
    fn escape_sequences_are_shown_not_run() {
        assert_eq!(escape("\u{1b}]0;pwned\u{7}"), "\\x1b]0;pwned\\x07");
        assert_eq!(escape("\u{1b}]52;c;aGk=\u{1b}\\"), "\\x1b]52;c;aGk=\\x1b\\");
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape("\u{9b}31m red"), "\\u{9b}31m red");
        assert_eq!(escape("\u{80}\u{9f}"), "\\u{80}\\u{9f}");
        assert_eq!(
            escape("nul\0 bs\u{8} cr\r del\u{7f}"),
            "nul\\x00 bs\\x08 cr\\x0d del\\x7f"
        );
        assert_eq!(escape("keep\ttab\nand newline"), "keep\ttab\nand newline");
    }

    #[test]
    fn bidi_controls_are_shown() {
        assert_eq!(
            escape("https://good.example/\u{202e}lmth.exe"),
            "https://good.example/\\u{202e}lmth.exe"
        );
        assert_eq!(
            escape("\u{202a}\u{202b}\u{202c}\u{202d}\u{2066}\u{2067}\u{2068}\u{2069}"),
            "\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{2066}\\u{2067}\\u{2068}\\u{2069}"
        );
        // Not controls: the left-to-right mark and the characters beside the ranges.
        assert_eq!(escape("\u{200e}\u{2029}\u{206a}"), "\u{200e}\u{2029}\u{206a}");
    }

    #[test]
    fn as_sent_keeps_every_byte() {
        assert_eq!(Shown::AsSent.text("\u{1b}[2J\u{9b}\u{7}"), "\u{1b}[2J\u{9b}\u{7}");
        assert_eq!(Shown::Escaped.text("\u{1b}[2J"), "\\x1b[2J");
    }

    #[test]
    fn json_gets_json_escapes_of_the_same_value() {
        let value = serde_json::json!({"t": "\u{9b}2J \u{202e}x\u{7f}\u{1b}"});
        let text = serde_json::to_string(&value).unwrap_or_default();
        let escaped = json_escaped(&text);
        assert_eq!(escaped, r#"{"t":"\u009b2J \u202ex\u007f\u001b"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&escaped).ok(), Some(value));
    }
}
