//! Rust names for what a server calls its tools and arguments: snake case for methods,
//! parameters and modules, upper camel case for types; keywords, dashes, dots, leading digits
//! and non-ASCII letters made safe; collisions resolved by a numbered suffix.

use std::collections::BTreeSet;

/// Every keyword of Rust 2021 and the reserved ones; an identifier that equals one gets a
/// trailing underscore (`type` → `type_`), which reads better at a call site than `r#type`.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "true", "try", "type", "union", "unsafe", "use", "where", "while",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield",
];

/// Split `name` into lower-case ASCII words at anything that is not a letter or digit and at
/// lower-to-upper case changes (`getHTTPStatus` → `get`, `http`, `status`).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase() || prev.is_ascii_digit() || (prev.is_ascii_uppercase() && next_lower) {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A snake-case identifier for `name`; `fallback` when nothing of it is usable, and prefixed
/// with `fallback_` when it starts with a digit.
pub(crate) fn snake(name: &str, fallback: &str) -> String {
    let mut s = words(name).join("_");
    if s.is_empty() {
        s = fallback.to_owned();
    } else if s.starts_with(|c: char| c.is_ascii_digit()) {
        s = format!("{fallback}_{s}");
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// An upper-camel-case identifier for `name`, `fallback` when nothing of it is usable.
pub(crate) fn camel(name: &str, fallback: &str) -> String {
    let mut s: String = words(name)
        .iter()
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + cs.as_str(),
                None => String::new(),
            }
        })
        .collect();
    if s.is_empty() {
        s = fallback.to_owned();
    } else if s.starts_with(|c: char| c.is_ascii_digit()) {
        s = format!("{fallback}{s}");
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Hands out identifiers that are unique within one scope: the second `foo` becomes `foo_2`.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    taken: BTreeSet<String>,
}

impl Scope {
    /// A scope where `reserved` are already taken.
    pub(crate) fn with_reserved(reserved: &[&str]) -> Self {
        Scope {
            taken: reserved.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// Whether `name` is still free.
    pub(crate) fn is_free(&self, name: &str) -> bool {
        !self.taken.contains(name)
    }

    /// `wanted`, or `wanted_N` with the first free N from 2.
    pub(crate) fn claim(&mut self, wanted: String) -> String {
        if self.taken.insert(wanted.clone()) {
            return wanted;
        }
        let mut n = 2;
        loop {
            let candidate = format!("{wanted}_{n}");
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_names_are_identifiers() {
        assert_eq!(snake("add", "tool"), "add");
        assert_eq!(snake("get-weather.v2", "tool"), "get_weather_v2");
        assert_eq!(snake("getHTTPStatus", "tool"), "get_http_status");
        assert_eq!(snake("contactMethod", "arg"), "contact_method");
        assert_eq!(snake("type", "arg"), "type_");
        assert_eq!(snake("self", "arg"), "self_");
        assert_eq!(snake("3d-render", "tool"), "tool_3d_render");
        assert_eq!(snake("!!!", "tool"), "tool");
        assert_eq!(snake("日本", "tool"), "tool");
        assert_eq!(snake("_", "arg"), "arg");
    }

    #[test]
    fn camel_names_are_identifiers() {
        assert_eq!(camel("python-echo-server", "Server"), "PythonEchoServer");
        assert_eq!(camel("9lives", "Server"), "Server9lives");
        assert_eq!(camel("", "Server"), "Server");
        assert_eq!(camel("self", "Server"), "Self_");
    }

    #[test]
    fn collisions_get_numbers() {
        let mut scope = Scope::with_reserved(&["new"]);
        assert_eq!(scope.claim("new".into()), "new_2");
        assert_eq!(scope.claim("a".into()), "a");
        assert_eq!(scope.claim("a".into()), "a_2");
        assert_eq!(scope.claim("a".into()), "a_3");
    }
}
