//! Doc comments from what servers write in their descriptions. Plain sentences are kept as
//! prose; anything Markdown or rustdoc would read as markup (links, HTML, emphasis, lists,
//! URLs) is kept verbatim in a `text` block instead, so that no description can make the
//! generated file fail `cargo doc -D warnings` or clippy's doc lints.

/// Characters that never change how a sentence renders.
const PLAIN: &str = " .,;:!?'\"()/-+=%$@^~{}";

/// Whether `text` renders as itself in Markdown, with no rustdoc or clippy doc lint to trip.
fn is_plain(text: &str) -> bool {
    if text.contains("://") || text.contains("www.") {
        return false;
    }
    text.lines().all(|line| {
        let line = line.trim();
        let starts_well = line
            .chars()
            .next()
            .is_none_or(|c| c.is_alphanumeric() || "(\"'".contains(c));
        // `1.` or `1)` at the start of a line is an ordered list item.
        let numbered = {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && line[digits..].starts_with(['.', ')'])
        };
        starts_well && !numbered && line.chars().all(|c| c.is_alphanumeric() || PLAIN.contains(c))
    })
}

/// The doc-comment lines for `text` (empty for an empty text).
pub(crate) fn lines(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    // Already a text block (a description prepared for the type generator): keep it.
    if text.starts_with("```") && text.ends_with("```") && text.lines().count() >= 2 {
        return text.lines().map(str::to_owned).collect();
    }
    if is_plain(text) {
        let mut out: Vec<String> = text.lines().map(|l| l.trim().to_owned()).collect();
        // Runs of blank lines are one paragraph break.
        out.dedup_by(|a, b| a.is_empty() && b.is_empty());
        return out;
    }
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    let mut out = vec![format!("{fence}text")];
    out.extend(text.lines().map(|l| l.trim_end().replace('\t', "    ")));
    out.push(fence);
    out
}

/// `text` as inline code, whatever backticks it holds.
pub(crate) fn code(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_run(&one_line, '`') + 1);
    if one_line.starts_with('`') || one_line.ends_with('`') {
        format!("{fence} {one_line} {fence}")
    } else {
        format!("{fence}{one_line}{fence}")
    }
}

fn longest_run(text: &str, c: char) -> usize {
    let mut best = 0;
    let mut cur = 0;
    for ch in text.chars() {
        if ch == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_sentences_stay_prose() {
        assert_eq!(lines("Adds two numbers."), vec!["Adds two numbers."]);
        assert_eq!(lines("  One.\n\n\n  Two.  "), vec!["One.", "", "Two."]);
    }

    #[test]
    fn markup_goes_into_a_text_block() {
        assert_eq!(
            lines("See https://x.test"),
            vec!["```text", "See https://x.test", "```"]
        );
        assert_eq!(lines("- a\n- b")[0], "```text");
        assert_eq!(lines("1. first")[0], "```text");
        assert_eq!(lines("a <b> [c]")[0], "```text");
        assert_eq!(lines("````")[0], "`````text");
    }

    #[test]
    fn inline_code_survives_backticks() {
        assert_eq!(code("add"), "`add`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
    }
}
