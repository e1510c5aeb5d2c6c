//! `key=value` arguments on the command line, typed by a JSON Schema.
//!
//! Each value is converted by the type its property declares: `integer`, `number` and `boolean`
//! are parsed, `array` and `object` are read as JSON, `string` is taken as it is. A property
//! with several types (`["integer", "null"]`) or none tries JSON first and falls back to a
//! string. Keys the schema does not list are refused unless it allows additional properties.
//! `--args JSON` gives the object the pairs go on top of ([`json_object`]).

use mcpkit::types::schema::JsonObject;
use serde_json::{Map, Value};

use crate::target::Failure;

/// Parse `--args JSON` (of `call` and `bench`): it must be one JSON object.
pub fn json_object(text: &str) -> Result<Map<String, Value>, Failure> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Failure::usage(
            "--args must be a JSON object, e.g. '{\"message\":\"hi\"}'",
        )),
        Err(e) => Err(Failure::usage(format!("--args is not valid JSON: {e}"))),
    }
}

/// Split `key=value` pairs and type them by `schema` (a tool's `inputSchema`), on top of
/// `base` (from `--args JSON`). `what` names the thing for messages (`tool "echo"`).
pub fn typed_arguments(
    pairs: &[String],
    base: Map<String, Value>,
    schema: &JsonObject,
    what: &str,
) -> Result<Map<String, Value>, Failure> {
    let props = schema.get("properties").and_then(Value::as_object);
    let open = match schema.get("additionalProperties") {
        Some(Value::Bool(b)) => *b,
        Some(Value::Object(_)) => true,
        // A schema that lists no properties at all takes anything.
        _ => props.is_none_or(|p| p.is_empty()),
    };
    let mut out = base;
    for pair in pairs {
        let Some((key, raw)) = pair.split_once('=') else {
            return Err(Failure::usage(format!(
                "argument {pair:?} is not key=value (use --args JSON for whole objects)"
            )));
        };
        let prop = props.and_then(|p| p.get(key));
        let value = match prop {
            Some(s) => convert(key, raw, s)?,
            None if open => guess(raw),
            None => {
                let known: Vec<&str> = props
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(Failure::usage(format!(
                    "{what} has no argument {key:?} (it takes: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        };
        out.insert(key.to_owned(), value);
    }
    Ok(out)
}

/// Check `args` against `schema` and name the first problem. Built without the `validation`
/// feature, the server alone judges them (the types and names are still checked above).
#[cfg(not(feature = "validation"))]
pub fn validate(_args: &Map<String, Value>, _schema: &JsonObject, _what: &str) -> Result<(), Failure> {
    Ok(())
}

/// Check `args` against `schema` and name the first problem.
#[cfg(feature = "validation")]
pub fn validate(args: &Map<String, Value>, schema: &JsonObject, what: &str) -> Result<(), Failure> {
    let Ok(validator) = jsonschema::validator_for(&Value::Object(schema.clone())) else {
        // An input schema we cannot compile is the server's problem: let the server judge.
        return Ok(());
    };
    let value = Value::Object(args.clone());
    let first = validator.iter_errors(&value).next();
    match first {
        None => Ok(()),
        Some(e) => {
            let path = e.instance_path().to_string();
            let place = if path.is_empty() {
                String::new()
            } else {
                format!(" at {path}")
            };
            Err(Failure::usage(format!("invalid arguments for {what}{place}: {e}")))
        }
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn convert(key: &str, raw: &str, schema: &Value) -> Result<Value, Failure> {
    let types = types_of(schema);
    let wrong = |expected: &str| Failure::usage(format!("argument {key:?} must be {expected}, got {raw:?}"));
    match types.as_slice() {
        ["string"] => Ok(Value::String(raw.to_owned())),
        ["integer"] => raw
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| raw.trim().parse::<u64>().map(Value::from))
            .map_err(|_| wrong("an integer")),
        ["number"] => match serde_json::from_str::<Value>(raw.trim()) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err(wrong("a number")),
        },
        ["boolean"] => match raw.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(wrong("true or false")),
        },
        ["array"] => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Array(_)) => Ok(v),
            _ => Err(wrong("a JSON array, e.g. '[1,2]'")),
        },
        ["object"] => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(wrong("a JSON object, e.g. '{\"a\":1}'")),
        },
        ["null"] => match raw.trim() {
            "null" => Ok(Value::Null),
            _ => Err(wrong("null")),
        },
        many => {
            // Several types, or none: JSON when it parses to an allowed type, else a string.
            if let Ok(v) = serde_json::from_str::<Value>(raw) {
                let allowed = many.is_empty() || many.iter().any(|t| json_type_matches(t, &v));
                if allowed && (!v.is_string() || many.is_empty() || many.contains(&"string")) {
                    return Ok(v);
                }
            }
            if many.is_empty() || many.contains(&"string") {
                Ok(Value::String(raw.to_owned()))
            } else {
                Err(wrong(&many.join(" or ")))
            }
        }
    }
}

fn json_type_matches(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => false,
    }
}

/// An untyped value: JSON when it is a number, boolean, null, array or object; otherwise the
/// text as a string.
fn guess(raw: &str) -> Value {
    match serde_json::from_str::<Value>(raw) {
        Ok(v) if !v.is_string() => v,
        _ => Value::String(raw.to_owned()),
    }
}

/// Split `key=value` pairs into string arguments (for prompts, whose arguments are strings).
pub fn string_pairs(pairs: &[String]) -> Result<Vec<(String, String)>, Failure> {
    pairs
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) => Ok((k.to_owned(), v.to_owned())),
            None => Err(Failure::usage(format!("argument {p:?} is not key=value"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> JsonObject {
        json!({
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "i": {"type": "integer"},
                "n": {"type": "number"},
                "b": {"type": "boolean"},
                "a": {"type": "array", "items": {"type": "integer"}},
                "o": {"type": "object"},
                "u": {"type": ["integer", "null"]},
                "any": {}
            },
            "required": ["s"]
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn pairs(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn converts_by_schema() {
        let out = typed_arguments(
            &pairs(&[
                "s=42",
                "i=7",
                "n=1.5",
                "b=true",
                "a=[1,2]",
                "o={\"k\":1}",
                "u=null",
                "any=x y",
            ]),
            Map::new(),
            &schema(),
            "tool \"t\"",
        )
        .unwrap();
        assert_eq!(
            Value::Object(out),
            json!({"s": "42", "i": 7, "n": 1.5, "b": true, "a": [1, 2], "o": {"k": 1}, "u": null, "any": "x y"})
        );
    }

    #[test]
    fn refuses_bad_input_with_one_line() {
        let e = typed_arguments(&pairs(&["i=seven"]), Map::new(), &schema(), "tool \"t\"").unwrap_err();
        assert_eq!(e.message, "argument \"i\" must be an integer, got \"seven\"");
        assert_eq!(e.code, 2);
        let e = typed_arguments(&pairs(&["zz=1"]), Map::new(), &schema(), "tool \"t\"").unwrap_err();
        assert!(
            e.message.starts_with("tool \"t\" has no argument \"zz\""),
            "{}",
            e.message
        );
        let e = typed_arguments(&pairs(&["noequals"]), Map::new(), &schema(), "tool \"t\"").unwrap_err();
        assert!(e.message.contains("not key=value"));
        let e = typed_arguments(&pairs(&["b=yes"]), Map::new(), &schema(), "t").unwrap_err();
        assert!(e.message.contains("true or false"));
    }

    #[test]
    #[cfg(feature = "validation")]
    fn validation_names_missing_required() {
        let args = typed_arguments(&pairs(&["i=1"]), Map::new(), &schema(), "t").unwrap();
        let e = validate(&args, &schema(), "tool \"t\"").unwrap_err();
        assert!(e.message.contains("\"s\" is a required property"), "{}", e.message);
        let ok = typed_arguments(&pairs(&["s=x"]), Map::new(), &schema(), "t").unwrap();
        validate(&ok, &schema(), "t").unwrap();
    }

    #[test]
    fn open_schema_guesses() {
        let open = json!({"type": "object"}).as_object().unwrap().clone();
        let out = typed_arguments(&pairs(&["x=1", "y=hi"]), Map::new(), &open, "t").unwrap();
        assert_eq!(Value::Object(out), json!({"x": 1, "y": "hi"}));
    }
}
