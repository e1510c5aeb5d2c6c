//! Goose: `config.yaml` in `~/.config/goose/` (`$XDG_CONFIG_HOME/goose/` when set; Linux and
//! macOS) or `%APPDATA%\Block\goose\config\` (Windows), servers under the `extensions` map, in
//! Goose's own entry format:
//!
//! ```yaml
//! extensions:
//!   local:
//!     enabled: true
//!     type: stdio
//!     name: local
//!     description: ""
//!     cmd: python
//!     args:
//!       - server.py
//!     envs:
//!       DEBUG: "1"
//!     timeout: 300
//!   remote:
//!     enabled: true
//!     type: streamable_http
//!     name: remote
//!     description: ""
//!     uri: https://example.com/mcp
//!     headers: {}
//!     timeout: 300
//! ```
//!
//! The file is edited as text, not printed back from a parsed value (which would drop its
//! comments and change its quoting): the entry's lines are replaced, added at the end of the
//! `extensions` block, or removed, and every other line stays byte for byte. The file is parsed
//! before (a file that is not YAML is refused with its line and column) and after the edit,
//! which must give exactly the document intended, else nothing is written.

use std::path::PathBuf;

use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};

use super::{EditError, Installed, Os, ParseError, Places, ServerSpec};

const KEY: &str = "extensions";

/// When an entry is replaced, the old entry's keys that the new one does not set are dropped if
/// listed here for the new entry's transport; the others (`env_keys`, `bundled`,
/// `available_tools`, …) stay.
const STDIO_CLEARS: &[&str] = &["type", "cmd", "args", "envs", "uri", "headers"];
const HTTP_CLEARS: &[&str] = &["type", "cmd", "args", "envs", "env_keys", "uri", "headers"];
/// Keys written only when the old entry has none: a user's own timeout or description stays.
const DEFAULTS: &[&str] = &["description", "timeout"];
/// The timeout Goose itself writes, in seconds.
const TIMEOUT: i64 = 300;

pub(super) fn path(places: &Places, os: Os) -> Result<PathBuf, String> {
    let dir = match (os, &places.xdg_config_home) {
        (Os::Windows, _) => places.app_config(os)?.join("Block").join("goose").join("config"),
        (Os::Linux, Some(xdg)) => xdg.join("goose"),
        _ => places.home()?.join(".config").join("goose"),
    };
    Ok(dir.join("config.yaml"))
}

fn s(v: &str) -> Yaml {
    Yaml::String(v.to_owned())
}

fn string_hash(pairs: &[(String, String)]) -> Yaml {
    Yaml::Hash(pairs.iter().map(|(k, v)| (s(k), s(v))).collect())
}

/// The entry in Goose's format.
fn entry(name: &str, spec: &ServerSpec) -> Hash {
    let mut h = Hash::new();
    h.insert(s("enabled"), Yaml::Boolean(true));
    match spec {
        ServerSpec::Stdio { command, args, env } => {
            h.insert(s("type"), s("stdio"));
            h.insert(s("name"), s(name));
            h.insert(s("description"), s(""));
            h.insert(s("cmd"), s(command));
            h.insert(s("args"), Yaml::Array(args.iter().map(|a| s(a)).collect()));
            h.insert(s("envs"), string_hash(env));
        }
        ServerSpec::Http { url, headers } => {
            h.insert(s("type"), s("streamable_http"));
            h.insert(s("name"), s(name));
            h.insert(s("description"), s(""));
            h.insert(s("uri"), s(url));
            h.insert(s("headers"), string_hash(headers));
        }
    }
    h.insert(s("timeout"), Yaml::Integer(TIMEOUT));
    h
}

/// The old entry with its transport keys swapped for the new entry's, each in its old place.
fn replace_entry(old: &Hash, new: Hash, spec: &ServerSpec) -> Hash {
    let clears = match spec {
        ServerSpec::Stdio { .. } => STDIO_CLEARS,
        ServerSpec::Http { .. } => HTTP_CLEARS,
    };
    let mut out = old.clone();
    for key in clears {
        if !new.contains_key(&s(key)) {
            out.remove(&s(key));
        }
    }
    for (k, v) in new {
        let keep_old = k.as_str().is_some_and(|k| DEFAULTS.contains(&k));
        match out.get_mut(&k) {
            Some(_) if keep_old => {}
            Some(slot) => *slot = v,
            None => {
                out.insert(k, v);
            }
        }
    }
    out
}

fn parse(text: &str) -> Result<Yaml, EditError> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| {
        EditError::Parse(ParseError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: format!("not valid YAML: {}", e.info()),
        })
    })?;
    match docs.into_iter().next() {
        None | Some(Yaml::Null) => Ok(Yaml::Hash(Hash::new())),
        Some(doc @ Yaml::Hash(_)) => Ok(doc),
        Some(_) => Err(EditError::Invalid(
            "the file is YAML but not a map of settings".to_owned(),
        )),
    }
}

fn not_a_map() -> EditError {
    EditError::Invalid(format!("{KEY:?} is not a map of extensions; fix or remove it first"))
}

/// The `extensions` map of a parsed file (`None` when the file has none, or `extensions: ~`).
fn extensions(doc: &Yaml) -> Result<Option<&Hash>, EditError> {
    match &doc[KEY] {
        Yaml::BadValue | Yaml::Null => Ok(None),
        Yaml::Hash(h) => Ok(Some(h)),
        _ => Err(not_a_map()),
    }
}

pub(super) fn install(text: Option<&str>, name: &str, spec: &ServerSpec) -> Result<String, EditError> {
    let text = text.unwrap_or("");
    let doc = parse(text)?;
    let new = entry(name, spec);
    let entry = match extensions(&doc)?.and_then(|h| h.get(&s(name))) {
        Some(Yaml::Hash(old)) => replace_entry(old, new, spec),
        _ => new,
    };
    let layout = Layout::of(text)?;
    let block = layout.render(name, &entry);
    let edited = match layout.entry_span(name) {
        Some((from, to)) => layout.splice(from, to, &block),
        None => layout.append(&block),
    };
    let mut expected = doc;
    set_entry(&mut expected, name, Some(entry));
    check(&edited, &expected)?;
    Ok(edited)
}

pub(super) fn uninstall(text: &str, name: &str) -> Result<Option<String>, EditError> {
    let mut expected = parse(text)?;
    if !extensions(&expected)?.is_some_and(|h| h.contains_key(&s(name))) {
        return Ok(None);
    }
    let layout = Layout::of(text)?;
    let Some((from, to)) = layout.entry_span(name) else {
        return Err(EditError::Invalid(format!(
            "the {name:?} extension is not written as a block under {KEY:?}; remove it by hand"
        )));
    };
    let edited = layout.remove(from, to);
    set_entry(&mut expected, name, None);
    check(&edited, &expected)?;
    Ok(Some(edited))
}

pub(super) fn list(text: &str) -> Result<Vec<Installed>, EditError> {
    let doc = parse(text)?;
    let Some(map) = extensions(&doc)? else {
        return Ok(Vec::new());
    };
    Ok(map
        .iter()
        .map(|(name, e)| Installed {
            name: name.as_str().map_or_else(|| format!("{name:?}"), str::to_owned),
            server: summary(e),
        })
        .collect())
}

/// The extensions that start or reach an MCP server, as `--server NAME` entries
/// (`{"command", "args", "env"}` or `{"url", "headers"}`); built-in ones are left out.
pub fn servers(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    use serde_json::{json, Value};
    let doc = parse(text).map_err(|e| e.to_string())?;
    let strings = |v: &Yaml| -> Value {
        match v {
            Yaml::Hash(h) => h
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), Value::String(scalar(v)?))))
                .collect::<serde_json::Map<_, _>>()
                .into(),
            _ => json!({}),
        }
    };
    let mut out = serde_json::Map::new();
    for (name, e) in extensions(&doc).map_err(|e| e.to_string())?.into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let entry = if let Some(uri) = e["uri"].as_str() {
            json!({"url": uri, "headers": strings(&e["headers"])})
        } else if let Some(cmd) = e["cmd"].as_str() {
            let args: Vec<String> = e["args"].as_vec().into_iter().flatten().filter_map(scalar).collect();
            json!({"command": cmd, "args": args, "env": strings(&e["envs"])})
        } else {
            continue;
        };
        out.insert(name.to_owned(), entry);
    }
    Ok(out)
}

/// A scalar as the string a process would be given.
fn scalar(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `cmd args…`, the `uri`, or the type of a built-in extension.
fn summary(e: &Yaml) -> String {
    if let Some(uri) = e["uri"].as_str() {
        return uri.to_owned();
    }
    if let Some(cmd) = e["cmd"].as_str() {
        let mut parts = vec![cmd.to_owned()];
        if let Some(args) = e["args"].as_vec() {
            parts.extend(
                args.iter()
                    .map(|a| a.as_str().map_or_else(|| format!("{a:?}"), str::to_owned)),
            );
        }
        return parts.join(" ");
    }
    format!("({})", e["type"].as_str().unwrap_or("no cmd or uri"))
}

/// `doc` with `extensions[name]` set in place (or added at the end), or removed.
fn set_entry(doc: &mut Yaml, name: &str, entry: Option<Hash>) {
    let Yaml::Hash(top) = doc else { return };
    let ext = match top.get_mut(&s(KEY)) {
        Some(slot @ Yaml::Hash(_)) => slot,
        Some(slot) => {
            *slot = Yaml::Hash(Hash::new());
            slot
        }
        None => {
            top.insert(s(KEY), Yaml::Hash(Hash::new()));
            match top.get_mut(&s(KEY)) {
                Some(slot) => slot,
                None => return,
            }
        }
    };
    let Yaml::Hash(map) = ext else { return };
    match (entry, map.get_mut(&s(name))) {
        (Some(e), Some(slot)) => *slot = Yaml::Hash(e),
        (Some(e), None) => {
            map.insert(s(name), Yaml::Hash(e));
        }
        (None, _) => {
            map.remove(&s(name));
        }
    }
}

/// The edit must parse to exactly the document intended.
fn check(edited: &str, expected: &Yaml) -> Result<(), EditError> {
    let got = parse(edited).map_err(|e| {
        EditError::Invalid(format!(
            "mcpkit could not edit this file's layout ({e}); edit it by hand"
        ))
    })?;
    let empty_is_absent = |d: &Yaml| match &d[KEY] {
        Yaml::Hash(h) if h.is_empty() => true,
        Yaml::BadValue | Yaml::Null => true,
        _ => false,
    };
    if got == *expected
        || (empty_is_absent(&got) && empty_is_absent(expected) && without_key(&got) == without_key(expected))
    {
        Ok(())
    } else {
        Err(EditError::Invalid(
            "mcpkit could not edit this file's layout without changing other settings; edit it by hand".to_owned(),
        ))
    }
}

fn without_key(doc: &Yaml) -> Yaml {
    let mut d = doc.clone();
    if let Yaml::Hash(h) = &mut d {
        h.remove(&s(KEY));
    }
    d
}

/// The lines of the file and where its `extensions` block is.
struct Layout<'a> {
    lines: Vec<&'a str>,
    eol: &'static str,
    /// The `extensions:` line, when the file has one.
    key_line: Option<usize>,
    /// Whether that line holds an inline empty map (`extensions: {}`).
    inline_empty: bool,
    /// The indentation of the entries (two spaces when there are none).
    indent: String,
    /// The entry lines: each entry's key line, and the line after its last line of content.
    entries: Vec<(String, usize, usize)>,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Blank lines and comments belong to no entry.
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The key of a `key: …` line, unquoted.
fn key_of(line: &str) -> Option<String> {
    let t = line.trim_start();
    for q in ['"', '\''] {
        if let Some(rest) = t.strip_prefix(q) {
            let end = rest.find(q)?;
            return rest[end + 1..]
                .trim_start()
                .starts_with(':')
                .then(|| rest[..end].to_owned());
        }
    }
    let end = t.find(':')?;
    Some(t[..end].trim_end().to_owned())
}

impl<'a> Layout<'a> {
    fn of(text: &'a str) -> Result<Layout<'a>, EditError> {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let mut layout = Layout {
            lines,
            eol,
            key_line: None,
            inline_empty: false,
            indent: "  ".to_owned(),
            entries: Vec::new(),
        };
        let Some(at) = layout
            .lines
            .iter()
            .position(|l| indent_of(l) == 0 && key_of(l).as_deref() == Some(KEY))
        else {
            return Ok(layout);
        };
        layout.key_line = Some(at);
        let after = layout.lines[at].split_once(':').map_or("", |(_, v)| v);
        let value = after.split(" #").next().unwrap_or("").trim();
        match value {
            "" => {}
            "{}" => layout.inline_empty = true,
            _ => {
                return Err(EditError::Invalid(format!(
                    "{KEY:?} is written inline; write it as a block (one extension per indented key) first"
                )))
            }
        }
        let end = (at + 1..layout.lines.len())
            .find(|&i| is_content(layout.lines[i]) && indent_of(layout.lines[i]) == 0)
            .unwrap_or(layout.lines.len());
        let body: Vec<usize> = (at + 1..end).filter(|&i| is_content(layout.lines[i])).collect();
        let Some(&first) = body.first() else {
            return Ok(layout);
        };
        let child = indent_of(layout.lines[first]);
        layout.indent = " ".repeat(child);
        for (n, &i) in body.iter().enumerate() {
            if indent_of(layout.lines[i]) != child || layout.lines[i].trim_start().starts_with('-') {
                continue;
            }
            let Some(key) = key_of(layout.lines[i]) else { continue };
            let last = body[n + 1..]
                .iter()
                .take_while(|&&j| indent_of(layout.lines[j]) > child)
                .last()
                .copied()
                .unwrap_or(i);
            layout.entries.push((key, i, last + 1));
        }
        Ok(layout)
    }

    fn entry_span(&self, name: &str) -> Option<(usize, usize)> {
        self.entries
            .iter()
            .find(|(k, _, _)| k == name)
            .map(|&(_, from, to)| (from, to))
    }

    /// `{name: entry}` as YAML lines at the entries' indentation.
    fn render(&self, name: &str, entry: &Hash) -> String {
        let mut one = Hash::new();
        one.insert(s(name), Yaml::Hash(entry.clone()));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = YamlEmitter::new(&mut out).dump(&Yaml::Hash(one));
        out.strip_prefix("---\n")
            .unwrap_or(&out)
            .lines()
            .map(|l| format!("{}{l}{}", self.indent, self.eol))
            .collect()
    }

    fn splice(&self, from: usize, to: usize, block: &str) -> String {
        let mut out: String = self.lines[..from].concat();
        out.push_str(block);
        out.push_str(&self.lines[to..].concat());
        out
    }

    /// The block after the last entry's last line (or as a new `extensions` key at the end).
    fn append(&self, block: &str) -> String {
        let Some(at) = self.key_line else {
            let mut out: String = self.lines.concat();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push_str(self.eol);
            }
            out.push_str(&format!("{KEY}:{}", self.eol));
            out.push_str(block);
            return out;
        };
        if self.inline_empty {
            let mut out: String = self.lines[..at].concat();
            out.push_str(&format!("{KEY}:{}", self.eol));
            out.push_str(block);
            out.push_str(&self.lines[at + 1..].concat());
            return out;
        }
        let after = self.entries.iter().map(|&(_, _, to)| to).max().unwrap_or(at + 1);
        let mut out: String = self.lines[..after].concat();
        if !out.ends_with('\n') {
            out.push_str(self.eol);
        }
        out.push_str(block);
        out.push_str(&self.lines[after..].concat());
        out
    }

    /// The text without the lines `from..to`; an `extensions` block left empty becomes `{}`.
    fn remove(&self, from: usize, to: usize) -> String {
        let last_entry = self.entries.len() == 1;
        match self.key_line {
            Some(at) if last_entry => {
                let mut out: String = self.lines[..at].concat();
                out.push_str(&format!("{KEY}: {{}}{}", self.eol));
                out.push_str(&self.lines[at + 1..from].concat());
                out.push_str(&self.lines[to..].concat());
                out
            }
            _ => {
                let mut out: String = self.lines[..from].concat();
                out.push_str(&self.lines[to..].concat());
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> ServerSpec {
        ServerSpec::Stdio {
            command: "demo".into(),
            args: vec!["--stdio".into()],
            env: vec![("K".into(), "v".into())],
        }
    }

    #[test]
    fn an_empty_file_gets_the_block() {
        let text = install(None, "demo", &stdio()).unwrap();
        assert_eq!(
            text,
            "extensions:\n  demo:\n    enabled: true\n    type: stdio\n    name: demo\n    description: \"\"\n    cmd: demo\n    args:\n      - \"--stdio\"\n    envs:\n      K: v\n    timeout: 300\n"
        );
        assert_eq!(uninstall(&text, "demo").unwrap().unwrap(), "extensions: {}\n");
    }

    #[test]
    fn an_inline_empty_map_is_opened_and_closed_again() {
        let original = "GOOSE_MODEL: x # model\nextensions: {}\nGOOSE_MODE: auto\n";
        let text = install(Some(original), "demo", &stdio()).unwrap();
        assert!(
            text.starts_with("GOOSE_MODEL: x # model\nextensions:\n  demo:\n"),
            "{text}"
        );
        assert!(text.ends_with("GOOSE_MODE: auto\n"), "{text}");
        assert_eq!(uninstall(&text, "demo").unwrap().unwrap(), original);
    }

    #[test]
    fn other_layouts_are_refused_or_read() {
        assert!(matches!(
            install(Some("extensions: {a: {cmd: x}}\n"), "demo", &stdio()),
            Err(EditError::Invalid(_))
        ));
        assert!(matches!(
            install(Some("extensions:\n  - a\n"), "demo", &stdio()),
            Err(EditError::Invalid(_))
        ));
        let Err(EditError::Parse(p)) = install(Some("a: [\n"), "demo", &stdio()) else {
            panic!("not YAML");
        };
        assert!(p.message.starts_with("not valid YAML"), "{}", p.message);
        let listed = list("extensions:\n  dev:\n    type: builtin\n  r:\n    uri: http://h/mcp\n").unwrap();
        assert_eq!(listed[0].server, "(builtin)");
        assert_eq!(listed[1].server, "http://h/mcp");
    }

    #[test]
    fn a_name_yaml_would_misread_is_quoted() {
        let text = install(None, "true", &stdio()).unwrap();
        assert!(text.contains("  \"true\":\n"), "{text}");
        assert_eq!(list(&text).unwrap()[0].name, "true");
        assert_eq!(uninstall(&text, "true").unwrap().unwrap(), "extensions: {}\n");
    }
}
