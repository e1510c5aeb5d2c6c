//! Codex: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`; a trusted project's own
//! `.codex/config.toml`), one table per server, `[mcp_servers.NAME]`:
//!
//! ```toml
//! [mcp_servers.local]
//! command = "python"
//! args = ["server.py"]
//! env = { "DEBUG" = "1" }
//!
//! [mcp_servers.remote]
//! url = "https://example.com/mcp"
//! http_headers = { "X-Team" = "tools" }
//! ```
//!
//! Edited with `toml_edit`, so the rest of the file (its other tables, comments, blank lines,
//! quoting) is printed back as it was.

use std::path::PathBuf;

use serde_json::{Map, Value};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use super::{EditError, Installed, ParseError, Places, Scope, ServerSpec};

/// When an entry is replaced, the old table's keys that the new one does not set are dropped if
/// they are listed here for the new entry's transport: the ones mcpkit writes, and those of the
/// other transport. The others stay (`enabled`, `startup_timeout_sec`, `enabled_tools`, a stdio
/// server's `cwd` and `env_vars`, an HTTP server's `bearer_token_env_var` and
/// `env_http_headers`).
const STDIO_CLEARS: &[&str] = &[
    "command",
    "args",
    "env",
    "url",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
];
const HTTP_CLEARS: &[&str] = &["command", "args", "env", "env_vars", "cwd", "url", "http_headers"];

pub(super) fn path(scope: Scope, places: &Places) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".codex").join("config.toml")),
        Scope::Local => Err(super::only_claude_code_has_local()),
        Scope::User => match &places.codex_home {
            Some(h) => Ok(h.join("config.toml")),
            None => Ok(places.home()?.join(".codex").join("config.toml")),
        },
    }
}

fn parse(text: &str) -> Result<DocumentMut, EditError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let (line, column) = line_column(text, offset);
        EditError::Parse(ParseError {
            line,
            column,
            message: format!("not valid TOML: {}", e.message().trim()),
        })
    })
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn servers_mut(doc: &mut DocumentMut) -> Result<&mut Table, EditError> {
    let item = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        // No `[mcp_servers]` header of its own: only the `[mcp_servers.NAME]` tables show.
        t.set_implicit(true);
        Item::Table(t)
    });
    item.as_table_mut().ok_or_else(not_a_table)
}

fn not_a_table() -> EditError {
    EditError::Invalid("mcp_servers is not a table; fix or remove it first".to_owned())
}

fn string_table(pairs: &[(String, String)]) -> Item {
    let mut t = InlineTable::new();
    for (k, v) in pairs {
        t.insert(k, v.as_str().into());
    }
    toml_edit::value(t)
}

/// The keys of the new entry, in the order Codex documents them.
fn entry_items(spec: &ServerSpec) -> Vec<(&'static str, Item)> {
    match spec {
        ServerSpec::Stdio { command, args, env } => {
            let mut items = vec![
                ("command", toml_edit::value(command.as_str())),
                (
                    "args",
                    toml_edit::value(args.iter().map(String::as_str).collect::<Array>()),
                ),
            ];
            if !env.is_empty() {
                items.push(("env", string_table(env)));
            }
            items
        }
        ServerSpec::Http { url, headers } => {
            let mut items = vec![("url", toml_edit::value(url.as_str()))];
            if !headers.is_empty() {
                items.push(("http_headers", string_table(headers)));
            }
            items
        }
    }
}

pub(super) fn install(text: Option<&str>, name: &str, spec: &ServerSpec) -> Result<String, EditError> {
    let mut doc = parse(text.unwrap_or(""))?;
    let servers = servers_mut(&mut doc)?;
    let items = entry_items(spec);
    match servers.get_mut(name) {
        Some(Item::Table(old)) => {
            let clears = match spec {
                ServerSpec::Stdio { .. } => STDIO_CLEARS,
                ServerSpec::Http { .. } => HTTP_CLEARS,
            };
            for key in clears {
                if !items.iter().any(|(k, _)| k == key) {
                    old.remove(key);
                }
            }
            for (k, v) in items {
                // An existing key keeps its place and the spacing before it.
                match old.get_mut(k) {
                    Some(slot) => *slot = v,
                    None => {
                        old.insert(k, v);
                    }
                }
            }
        }
        _ => {
            let mut t = Table::new();
            for (k, v) in items {
                t.insert(k, v);
            }
            servers.insert(name, Item::Table(t));
        }
    }
    Ok(doc.to_string())
}

pub(super) fn uninstall(text: &str, name: &str) -> Result<Option<String>, EditError> {
    let mut doc = parse(text)?;
    let Some(item) = doc.get_mut("mcp_servers") else {
        return Ok(None);
    };
    let servers = item.as_table_like_mut().ok_or_else(not_a_table)?;
    if servers.remove(name).is_none() {
        return Ok(None);
    }
    Ok(Some(doc.to_string()))
}

pub(super) fn list(text: &str) -> Result<Vec<Installed>, EditError> {
    let entries = servers(text)?;
    Ok(entries
        .iter()
        .map(|(name, entry)| Installed {
            name: name.clone(),
            server: super::summary(entry),
        })
        .collect())
}

/// The servers of a Codex file as the JSON entries `mcpkit call --server NAME` reads:
/// `command`, `args`, `env`, `cwd`, `url`, and `http_headers` as `headers`. Codex's other keys
/// (timeouts, tool filters, `enabled`) say nothing about where the server is and are left out.
pub fn servers(text: &str) -> Result<Map<String, Value>, EditError> {
    let doc = parse(text)?;
    let Some(item) = doc.get("mcp_servers") else {
        return Ok(Map::new());
    };
    let table = item.as_table_like().ok_or_else(not_a_table)?;
    let mut out = Map::new();
    for (name, item) in table.iter() {
        let mut entry = Map::new();
        if let Some(server) = item.as_table_like() {
            for (key, value) in server.iter() {
                let key = match key {
                    "command" | "args" | "env" | "cwd" | "url" => key,
                    "http_headers" => "headers",
                    _ => continue,
                };
                entry.insert(key.to_owned(), item_json(value));
            }
        }
        out.insert(name.to_owned(), Value::Object(entry));
    }
    Ok(out)
}

fn item_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(t.iter().map(|(k, v)| (k.to_owned(), item_json(v))).collect()),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| Value::Object(t.iter().map(|(k, v)| (k.to_owned(), item_json(v))).collect()))
                .collect(),
        ),
        Item::None => Value::Null,
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        T::InlineTable(t) => Value::Object(t.iter().map(|(k, v)| (k.to_owned(), value_json(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_offsets_become_lines_and_columns() {
        assert_eq!(line_column("ab\ncd\nef", 4), (2, 2));
        assert_eq!(line_column("", 0), (1, 1));
    }

    #[test]
    fn an_update_keeps_the_keys_it_does_not_manage() {
        let text = "[mcp_servers.figma]\nurl = \"https://old.example/mcp\"\nbearer_token_env_var = \"FIGMA\"\nstartup_timeout_sec = 20\n";
        let http = ServerSpec::Http {
            url: "https://new.example/mcp".into(),
            headers: vec![],
        };
        let updated = install(Some(text), "figma", &http).unwrap();
        assert_eq!(
            updated,
            "[mcp_servers.figma]\nurl = \"https://new.example/mcp\"\nbearer_token_env_var = \"FIGMA\"\nstartup_timeout_sec = 20\n"
        );
        let stdio = ServerSpec::Stdio {
            command: "figma-mcp".into(),
            args: vec![],
            env: vec![],
        };
        let switched = install(Some(&updated), "figma", &stdio).unwrap();
        assert_eq!(
            switched,
            "[mcp_servers.figma]\nstartup_timeout_sec = 20\ncommand = \"figma-mcp\"\nargs = []\n"
        );
    }

    #[test]
    fn parse_errors_name_line_and_column() {
        let Err(EditError::Parse(p)) = parse("[a]\nx = 1\ny = \n") else {
            panic!("expected a parse error");
        };
        assert_eq!(p.line, 3, "{p:?}");
        assert!(p.message.starts_with("not valid TOML: "), "{}", p.message);
    }
}
