//! Matching URIs against RFC 6570 templates, without building a regex from user input.
//!
//! The template is parsed once (and checked with `iri-string`'s RFC 6570 parser) into literal
//! parts and expressions; matching walks the URI left to right. Supported when matching:
//! `{var}` (one path segment's worth: no `/`, `?` or `#`), `{+var}` and `{#var}` (anything up to
//! the next literal), `{/var}`, `{.var}`, `{;var}`, `{?a,b}` and `{&a,b}` query parts.

use std::collections::BTreeMap;

/// A parsed URI template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Expr { op: Option<char>, vars: Vec<String> },
}

/// The template was not valid RFC 6570.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid URI template {template:?}: {reason}")]
pub struct TemplateError {
    template: String,
    reason: String,
}

impl UriTemplate {
    /// Parse a template.
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        let err = |reason: &str| TemplateError {
            template: source.to_owned(),
            reason: reason.to_owned(),
        };
        // RFC 6570 allows `%` only as `%` HEXDIG HEXDIG. Checked here first: iri-string 0.7
        // panics on `%X` followed by a multi-byte character (found by fuzzing).
        let bytes = source.as_bytes();
        for (i, _) in source.match_indices('%') {
            if !bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
            {
                return Err(err("`%` must start a percent-encoding (`%` and two hex digits)"));
            }
        }
        iri_string::template::UriTemplateStr::new(source).map_err(|e| err(&e.to_string()))?;
        let mut parts = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..].find('}').ok_or_else(|| err("unclosed expression"))? + open;
            let body = &rest[open + 1..close];
            let (op, list) = match body.chars().next() {
                Some(c @ ('+' | '#' | '/' | '.' | ';' | '?' | '&')) => (Some(c), &body[1..]),
                _ => (None, body),
            };
            let vars = list
                .split(',')
                .map(|v| v.split([':', '*']).next().unwrap_or(v).to_owned())
                .filter(|v| !v.is_empty())
                .collect::<Vec<_>>();
            if vars.is_empty() {
                return Err(err("empty expression"));
            }
            parts.push(Part::Expr { op, vars });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate {
            source: source.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|p| match p {
            Part::Expr { vars, .. } => vars.iter().map(String::as_str).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Match a URI; on success, the decoded variable values.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        let mut rest = uri;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Expr { op, vars } => {
                    let next_literal = self.parts[i + 1..].iter().find_map(|p| match p {
                        Part::Literal(l) => Some(l.as_str()),
                        Part::Expr { .. } => None,
                    });
                    let stop: &[char] = match op {
                        None | Some('/') | Some('.') | Some(';') => &['/', '?', '#'],
                        Some('?') | Some('&') => &['#'],
                        _ => &[],
                    };
                    let mut end = rest.find(stop).unwrap_or(rest.len());
                    if let Some(l) = next_literal.filter(|_| matches!(self.parts.get(i + 1), Some(Part::Literal(_)))) {
                        end = rest[..end].find(l).unwrap_or(end);
                    }
                    let (taken, after) = rest.split_at(end);
                    rest = after;
                    bind(*op, vars, taken, &mut out)?;
                }
            }
        }
        rest.is_empty().then_some(out)
    }
}

fn bind(op: Option<char>, vars: &[String], text: &str, out: &mut BTreeMap<String, String>) -> Option<()> {
    match op {
        Some('?') | Some('&') | Some(';') => {
            let prefix = op.unwrap_or('?');
            let body = text.strip_prefix(prefix).unwrap_or(text);
            for pair in body.split(['&', ';']).filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                if vars.iter().any(|x| x == k) {
                    out.insert(k.to_owned(), decode(v));
                }
            }
            Some(())
        }
        _ => {
            let body = match op {
                Some(c @ ('/' | '.' | '#')) => text.strip_prefix(c).unwrap_or(text),
                _ => text,
            };
            if vars.len() == 1 {
                if body.is_empty() && op.is_none() {
                    return None; // a simple variable must match something
                }
                out.insert(vars[0].clone(), decode(body));
            } else {
                let sep = match op {
                    Some('/') => '/',
                    Some('.') => '.',
                    _ => ',',
                };
                for (var, value) in vars.iter().zip(body.split(sep)) {
                    out.insert(var.clone(), decode(value));
                }
            }
            Some(())
        }
    }
}

/// Percent-decode; invalid escapes are kept as written.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 3 <= bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t)
            .unwrap()
            .matches(uri)
            .map(|m| m.into_iter().collect())
    }

    #[test]
    fn simple_and_reserved_and_query() {
        let v = |pairs: &[(&str, &str)]| Some(pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect());
        assert_eq!(
            m("test://template/{id}/data", "test://template/123/data"),
            v(&[("id", "123")])
        );
        assert_eq!(m("test://template/{id}/data", "test://template/1/2/data"), None);
        assert_eq!(m("test://template/{id}/data", "test://template//data"), None);
        assert_eq!(m("file:///{+path}", "file:///a/b/c.txt"), v(&[("path", "a/b/c.txt")]));
        assert_eq!(
            m("db://{table}{?limit,offset}", "db://users?limit=5&offset=10"),
            v(&[("limit", "5"), ("offset", "10"), ("table", "users")])
        );
        assert_eq!(m("x://{a}-{b}", "x://one-two"), v(&[("a", "one"), ("b", "two")]));
        assert_eq!(m("x://{name}", "x://hello%20world"), v(&[("name", "hello world")]));
        assert_eq!(m("x://{name}", "x://%zz"), v(&[("name", "%zz")]));
        assert_eq!(m("x://{name}", "x://%é"), v(&[("name", "%é")]));
        assert!(UriTemplate::parse("x://{unclosed").is_err());
    }
}
