//! VS Code reads its `mcp.json` as JSON with comments (line and block comments, trailing
//! commas). Such a file is not printed back from a parsed value — that would drop the
//! comments — but edited in its concrete syntax tree (the `jsonc-parser` crate): the one entry
//! is added, replaced or removed, and every other byte (comments, blank lines, trailing commas,
//! layout) stays as it was. Plain JSON files take the [`super::json`] path as before.

use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::{Map, Value};

use super::json::{not_an_object, replace_entry, Format};
use super::{EditError, ParseError, ServerSpec};

/// What VS Code accepts beyond JSON: comments and trailing commas, nothing else of JSON5.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn parse_error(e: &jsonc_parser::errors::ParseError) -> EditError {
    EditError::Parse(ParseError {
        line: e.line_display(),
        column: e.column_display(),
        message: format!("not valid JSON with comments: {}", e.kind()),
    })
}

fn tree(text: &str) -> Result<CstRootNode, EditError> {
    CstRootNode::parse(text, &options()).map_err(|e| parse_error(&e))
}

/// Whether `text` is valid JSON with comments (the error names its line and column).
pub(super) fn check(text: &str) -> Result<(), EditError> {
    tree(text).map(|_| ())
}

/// The file as a value (comments dropped), for reading its entries.
pub(super) fn parse(text: &str) -> Result<Map<String, Value>, EditError> {
    match tree(text)?.to_serde_value() {
        Some(Value::Object(m)) => Ok(m),
        None => Ok(Map::new()),
        Some(_) => Err(EditError::Invalid(
            "the file is JSON but not an object ({…})".to_owned(),
        )),
    }
}

/// The root object; a file whose top value is something else is refused.
fn root_object(root: &CstRootNode) -> Result<CstObject, EditError> {
    match root.value() {
        None => Ok(root.object_value_or_set()),
        Some(_) => root
            .object_value()
            .ok_or_else(|| EditError::Invalid("the file is JSON but not an object ({…})".to_owned())),
    }
}

/// The servers object; with `create`, made (with the objects leading to it) when missing.
fn servers(format: &Format, root: &CstRootNode, create: bool) -> Result<Option<CstObject>, EditError> {
    let mut object = root_object(root)?;
    for key in &format.servers_at {
        object = match (object.get(key), create) {
            (None, false) => return Ok(None),
            (None, true) => object
                .object_value_or_create(key)
                .ok_or_else(|| not_an_object(format))?,
            (Some(_), _) => object.object_value(key).ok_or_else(|| not_an_object(format))?,
        };
    }
    Ok(Some(object))
}

pub(super) fn install(
    format: &Format,
    text: &str,
    name: &str,
    new: Map<String, Value>,
    spec: &ServerSpec,
) -> Result<String, EditError> {
    let root = tree(text)?;
    let Some(servers) = servers(format, &root, true)? else {
        return Err(not_an_object(format));
    };
    match servers.get(name) {
        Some(prop) => {
            let old = prop.value().and_then(|v| v.to_serde_value());
            let entry = match &old {
                Some(Value::Object(old)) => replace_entry(old, new, spec),
                _ => new,
            };
            // An entry already as given is left exactly as written.
            if old.as_ref() != Some(&Value::Object(entry.clone())) {
                prop.set_value(input(Value::Object(entry)));
            }
        }
        None => {
            servers.append(name, input(Value::Object(new)));
        }
    }
    Ok(root.to_string())
}

pub(super) fn uninstall(format: &Format, text: &str, name: &str) -> Result<Option<String>, EditError> {
    let root = tree(text)?;
    let Some(servers) = servers(format, &root, false)? else {
        return Ok(None);
    };
    let Some(prop) = servers.get(name) else {
        return Ok(None);
    };
    prop.remove();
    Ok(Some(root.to_string()))
}

/// A JSON value as the tree's input, in its key order.
fn input(value: Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s),
        Value::Array(items) => CstInputValue::Array(items.into_iter().map(input).collect()),
        Value::Object(members) => CstInputValue::Object(members.into_iter().map(|(k, v)| (k, input(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json5_beyond_comments_and_trailing_commas_is_refused() {
        for bad in ["{'a': 1}", "{a: 1}", "{\"a\": 0x1F}", "{\"a\": 1 \"b\": 2}"] {
            assert!(matches!(check(bad), Err(EditError::Parse(_))), "{bad}");
        }
        assert!(check("{\n  // c\n  \"a\": [1, 2,],\n}").is_ok());
    }

    #[test]
    fn parse_errors_name_line_and_column() {
        let Err(EditError::Parse(p)) = check("{\n  // c\n  \"servers\": {,}\n}") else {
            panic!("expected a parse error");
        };
        assert_eq!(p.line, 3);
        assert!(p.message.starts_with("not valid JSON with comments: "), "{}", p.message);
    }
}
