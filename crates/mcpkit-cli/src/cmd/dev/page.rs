//! The page: one HTML document with its style and scripts inlined (embedded in the binary with
//! `include_str!`; no CDN, no build step), so one request loads it and the CSP allows only
//! what carries this run's nonce.

const HTML: &str = include_str!("assets/index.html");
const CSS: &str = include_str!("assets/app.css");
const FORM_JS: &str = include_str!("assets/form.js");
const APP_JS: &str = include_str!("assets/app.js");

/// The bytes of the embedded assets.
pub const WEIGHT: usize = HTML.len() + CSS.len() + FORM_JS.len() + APP_JS.len();

/// The page, with `nonce` on its style and scripts and `label` (the target) in its title.
pub fn html(nonce: &str, label: &str) -> String {
    // The label last: its text cannot name a placeholder.
    HTML.replace("{{STYLE}}", &format!("<style nonce=\"{nonce}\">\n{CSS}</style>"))
        .replace(
            "{{SCRIPT}}",
            &format!("<script nonce=\"{nonce}\">\n{FORM_JS}\n{APP_JS}</script>"),
        )
        .replace("{{TITLE}}", &escape(label))
}

/// `s` as HTML text.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_is_escaped_and_the_nonce_set() {
        let page = html("N0NCE", "<script>alert(1)</script>");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!page.contains("<script>alert(1)"));
        assert!(page.contains("<script nonce=\"N0NCE\">"));
        assert!(page.contains("<style nonce=\"N0NCE\">"));
        assert!(!page.contains("{{"));
    }
}
