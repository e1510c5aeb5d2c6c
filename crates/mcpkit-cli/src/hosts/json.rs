//! Editing the JSON configuration files (every host but Codex): the file is parsed into a value
//! that keeps key order (`serde_json`'s `preserve_order`), one entry of the servers object is
//! added, replaced or removed, and the file is printed back with the indentation and line
//! endings it had. Other entries and top-level keys keep their values and their order. A VS
//! Code file with comments is edited in place instead ([`super::jsonc`]). One [`Format`] per
//! host says where the servers object is and the [`Shape`] of its entries.

use serde::Serialize as _;
use serde_json::ser::{PrettyFormatter, Serializer};
use serde_json::{Map, Value};

use super::{string_map, summary, EditError, Installed, ParseError, ServerSpec};

/// When an entry is replaced, the old entry's keys that the new one does not set are dropped if
/// they are listed here for the new entry's transport: the ones mcpkit writes, and those of the
/// other transport (a stdio entry turned HTTP loses its `command` and `cwd`). Every other key of
/// the old entry (`disabled`, `autoApprove`, a stdio entry's `envFile`, …) stays.
const STDIO_CLEARS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "url",
    "serverUrl",
    "httpUrl",
    "headers",
];
const HTTP_CLEARS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "envFile",
    "cwd",
    "url",
    "serverUrl",
    "httpUrl",
    "headers",
];

/// The shape of one host's server entries.
pub(super) struct Shape {
    /// Whether every entry says its transport: `"type": "stdio"` / `"type": "http"`.
    pub(super) type_field: bool,
    /// Whether a stdio entry always has its `env` object, empty or not.
    pub(super) env_always: bool,
    /// The key of an HTTP entry's URL, or why the host's file cannot hold one.
    pub(super) http: Http,
}

/// How a host's file holds an HTTP server.
pub(super) enum Http {
    /// `{KEY: url, "headers": {…}}`.
    Url(&'static str),
    /// Not at all: the message for `url`.
    Refused(fn(&str) -> String),
}

/// A host's JSON file: where its servers object is, and the shape of its entries.
pub(super) struct Format {
    /// The keys from the top of the file to the servers object: `["mcpServers"]`,
    /// `["servers"]` for VS Code, `["projects", DIR, "mcpServers"]` for Claude Code's local
    /// scope.
    pub(super) servers_at: Vec<String>,
    /// The entries' shape.
    pub(super) shape: &'static Shape,
    /// Whether the host reads comments and trailing commas (VS Code): such a file is edited in
    /// place ([`super::jsonc`]).
    pub(super) comments: bool,
}

impl Format {
    /// The servers object at the top of the file, under `key`.
    pub(super) fn top(key: &str, shape: &'static Shape) -> Format {
        Format {
            servers_at: vec![key.to_owned()],
            shape,
            comments: false,
        }
    }

    /// The entry for a server in the host's shape, or why the host cannot take it.
    fn entry(&self, spec: &ServerSpec) -> Result<Map<String, Value>, String> {
        let shape = self.shape;
        let mut m = Map::new();
        match spec {
            ServerSpec::Stdio { command, args, env } => {
                if shape.type_field {
                    m.insert("type".into(), Value::String("stdio".into()));
                }
                m.insert("command".into(), Value::String(command.clone()));
                m.insert("args".into(), args.iter().cloned().map(Value::String).collect());
                if shape.env_always || !env.is_empty() {
                    m.insert("env".into(), string_map(env));
                }
            }
            ServerSpec::Http { url, headers } => {
                let key = match shape.http {
                    Http::Url(key) => key,
                    Http::Refused(message) => return Err(message(url)),
                };
                if shape.type_field {
                    m.insert("type".into(), Value::String("http".into()));
                }
                m.insert(key.into(), Value::String(url.clone()));
                if !headers.is_empty() {
                    m.insert("headers".into(), string_map(headers));
                }
            }
        }
        Ok(m)
    }

    /// The servers key, quoted, for messages (`"mcpServers"`, `"projects" → "/dir" → "mcpServers"`).
    fn servers_name(&self) -> String {
        self.servers_at
            .iter()
            .map(|k| format!("{k:?}"))
            .collect::<Vec<_>>()
            .join(" → ")
    }
}

/// Parse a configuration file: an object (an empty or blank file counts as `{}`).
fn parse(text: &str) -> Result<Map<String, Value>, EditError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(EditError::Invalid(
            "the file is JSON but not an object ({…})".to_owned(),
        )),
        Err(e) => Err(EditError::Parse(ParseError {
            line: e.line(),
            column: e.column(),
            message: format!("not valid JSON: {}", strip_position(&e.to_string())),
        })),
    }
}

/// serde_json ends its messages with " at line L column C"; the place is reported separately.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// The servers object, created (with the objects leading to it) when missing.
fn servers<'a>(format: &Format, doc: &'a mut Map<String, Value>) -> Result<&'a mut Map<String, Value>, EditError> {
    let mut map = doc;
    for key in &format.servers_at {
        let slot = map.entry(key.clone()).or_insert_with(|| Value::Object(Map::new()));
        map = slot.as_object_mut().ok_or_else(|| not_an_object(format))?;
    }
    Ok(map)
}

/// The servers object when the file has one (`None` when a key on the way is missing).
fn existing_servers<'a>(
    format: &Format,
    doc: &'a mut Map<String, Value>,
) -> Result<Option<&'a mut Map<String, Value>>, EditError> {
    let mut map = doc;
    for key in &format.servers_at {
        match map.get_mut(key) {
            None => return Ok(None),
            Some(slot) => map = slot.as_object_mut().ok_or_else(|| not_an_object(format))?,
        }
    }
    Ok(Some(map))
}

pub(super) fn not_an_object(format: &Format) -> EditError {
    EditError::Invalid(format!(
        "{} is not an object; fix or remove it first",
        format.servers_name()
    ))
}

pub(super) fn install(format: &Format, text: Option<&str>, name: &str, spec: &ServerSpec) -> Result<String, EditError> {
    let new = format.entry(spec).map_err(EditError::Invalid)?;
    if let Some(edit) = jsonc_fallback(format, text.unwrap_or("")) {
        return super::jsonc::install(format, &edit?, name, new, spec);
    }
    let mut doc = parse(text.unwrap_or(""))?;
    let map = servers(format, &mut doc)?;
    let entry = match map.get(name) {
        Some(Value::Object(old)) => replace_entry(old, new, spec),
        _ => new,
    };
    map.insert(name.to_owned(), Value::Object(entry));
    Ok(print(&doc, text))
}

/// For a host that reads comments, a file that is not plain JSON: its text to edit in place
/// when it is valid JSON with comments, the JSONC parse error when it is not. `None` for plain
/// JSON (printed back as usual) and for the other hosts.
fn jsonc_fallback(format: &Format, text: &str) -> Option<Result<String, EditError>> {
    if !format.comments || text.trim().is_empty() || serde_json::from_str::<Value>(text).is_ok() {
        return None;
    }
    Some(super::jsonc::check(text).map(|()| text.to_owned()))
}

/// The old entry with its transport keys swapped for the new entry's, each in its old place.
pub(super) fn replace_entry(
    old: &Map<String, Value>,
    new: Map<String, Value>,
    spec: &ServerSpec,
) -> Map<String, Value> {
    let mut out = old.clone();
    let clears = match spec {
        ServerSpec::Stdio { .. } => STDIO_CLEARS,
        ServerSpec::Http { .. } => HTTP_CLEARS,
    };
    for key in clears {
        if !new.contains_key(*key) {
            out.shift_remove(*key);
        }
    }
    for (k, v) in new {
        out.insert(k, v);
    }
    out
}

pub(super) fn uninstall(format: &Format, text: &str, name: &str) -> Result<Option<String>, EditError> {
    if let Some(edit) = jsonc_fallback(format, text) {
        return super::jsonc::uninstall(format, &edit?, name);
    }
    let mut doc = parse(text)?;
    let Some(map) = existing_servers(format, &mut doc)? else {
        return Ok(None);
    };
    if map.shift_remove(name).is_none() {
        return Ok(None);
    }
    Ok(Some(print(&doc, Some(text))))
}

pub(super) fn list(format: &Format, text: &str) -> Result<Vec<Installed>, EditError> {
    let mut doc = match jsonc_fallback(format, text) {
        Some(edit) => super::jsonc::parse(&edit?)?,
        None => parse(text)?,
    };
    let Some(map) = existing_servers(format, &mut doc)? else {
        return Ok(Vec::new());
    };
    Ok(map
        .iter()
        .map(|(name, entry)| Installed {
            name: name.clone(),
            server: summary(entry),
        })
        .collect())
}

/// Print `doc` the way the original file was laid out: its indentation unit (two spaces when
/// there was no file), its line endings, and a final newline unless it had none.
fn print(doc: &Map<String, Value>, original: Option<&str>) -> String {
    let indent = original.and_then(indent_unit).unwrap_or_else(|| "  ".to_owned());
    let mut buf = Vec::new();
    let mut ser = Serializer::with_formatter(&mut buf, PrettyFormatter::with_indent(indent.as_bytes()));
    // Serializing a map of JSON values into memory cannot fail.
    let _ = doc.serialize(&mut ser);
    let mut out = String::from_utf8_lossy(&buf).into_owned();
    let final_newline = original.is_none_or(|t| t.trim().is_empty() || t.ends_with('\n'));
    if final_newline {
        out.push('\n');
    }
    if original.is_some_and(|t| t.contains("\r\n")) {
        out = out.replace('\n', "\r\n");
    }
    out
}

/// The whitespace before the first indented line: one level of the file's indentation.
fn indent_unit(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let ws: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        (!ws.is_empty() && ws.len() < line.len()).then_some(ws)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indentation_is_detected() {
        assert_eq!(indent_unit("{\n    \"a\": 1\n}\n").as_deref(), Some("    "));
        assert_eq!(indent_unit("{\n\t\"a\": 1\n}").as_deref(), Some("\t"));
        assert_eq!(indent_unit("{\"a\": 1}"), None);
    }

    #[test]
    fn parse_errors_name_line_and_column() {
        let Err(EditError::Parse(p)) = parse("{\n  \"mcpServers\": {,}\n}") else {
            panic!("expected a parse error");
        };
        assert_eq!((p.line, p.column), (2, 18));
        assert!(p.message.starts_with("not valid JSON: "), "{}", p.message);
        assert!(!p.message.contains(" at line "), "{}", p.message);
    }
}
