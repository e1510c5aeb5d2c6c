//! Tool arguments that did not decode, said in the words of the tool's input schema: the
//! argument, the type the schema asks for and the value received
//! (`argument "a": expected a number, got "abc"`), instead of serde's `invalid type: string
//! "abc", expected f64 at line 1 column 10`, which names a Rust type and a place in a text
//! the model never saw. Runs only after a decode failed, so the schema is generated here.

use mcpkit_types::schema::JsonObject;
use serde_json::Value;
use serde_path_to_error::{Path, Segment};

/// What went wrong at `path` of `arguments`, or `None` when the schema does not say it better
/// than serde (a custom deserializer's error, a type the schema leaves open).
pub(super) fn explain(schema: &JsonObject, arguments: &Value, path: &Path) -> Option<String> {
    let root = schema;
    let mut at = root;
    let mut value = arguments;
    let mut name = String::new();
    for segment in path {
        let (next_schema, next_value) = match segment {
            Segment::Map { key } => {
                push_key(&mut name, key);
                (property(root, at, key)?, value.get(key.as_str()))
            }
            Segment::Seq { index } => {
                name.push_str(&format!("[{index}]"));
                (item(root, at, *index)?, value.get(*index))
            }
            Segment::Enum { .. } | Segment::Unknown => return None,
        };
        at = next_schema;
        // A member absent from the arguments: serde blamed its default or its field.
        value = next_value?;
    }
    let schema = resolve(root, at);
    if let Some(missing) = missing_required(root, schema, value) {
        let (key, wanted) = missing;
        push_key(&mut name, key);
        return Some(match expected(root, wanted) {
            Some(e) => format!("argument \"{name}\" is missing: expected {e}"),
            None => format!("argument \"{name}\" is missing"),
        });
    }
    let wanted = expected(root, schema)?;
    if fits(root, schema, value) {
        // The type fits, so serde refused something the schema words do not capture.
        return None;
    }
    let subject = if name.is_empty() {
        "arguments".to_owned()
    } else {
        format!("argument \"{name}\"")
    };
    Some(format!("{subject}: expected {wanted}, got {}", shown(value)))
}

fn push_key(name: &mut String, key: &str) {
    if !name.is_empty() {
        name.push('.');
    }
    name.push_str(key);
}

/// `#/$defs/X` references followed, and an optional value's non-null branch taken (schemars
/// writes `Option<Struct>` as `anyOf: [{$ref}, {type: null}]`).
pub(in crate::server) fn resolve<'a>(root: &'a JsonObject, mut schema: &'a JsonObject) -> &'a JsonObject {
    // Bounded: a reference cycle is not followed forever.
    for _ in 0..16 {
        if let Some(Value::String(r)) = schema.get("$ref") {
            let target = r
                .strip_prefix("#/$defs/")
                .and_then(|name| root.get("$defs")?.get(name)?.as_object());
            match target {
                Some(t) => schema = t,
                None => return schema,
            }
            continue;
        }
        let branches = schema.get("anyOf").or_else(|| schema.get("oneOf"));
        if let Some(Value::Array(branches)) = branches {
            let mut others = branches
                .iter()
                .filter_map(Value::as_object)
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"));
            if let (Some(only), None) = (others.next(), others.next()) {
                schema = only;
                continue;
            }
        }
        return schema;
    }
    schema
}

fn property<'a>(root: &'a JsonObject, schema: &'a JsonObject, key: &str) -> Option<&'a JsonObject> {
    let schema = resolve(root, schema);
    if let Some(p) = schema.get("properties").and_then(|p| p.get(key)) {
        return p.as_object();
    }
    schema.get("additionalProperties").and_then(Value::as_object)
}

fn item<'a>(root: &'a JsonObject, schema: &'a JsonObject, index: usize) -> Option<&'a JsonObject> {
    let schema = resolve(root, schema);
    if let Some(Value::Array(prefix)) = schema.get("prefixItems") {
        return prefix.get(index).and_then(Value::as_object);
    }
    schema.get("items").and_then(Value::as_object)
}

/// The first required property that `value` (an object) lacks, with its schema.
fn missing_required<'a>(
    root: &'a JsonObject,
    schema: &'a JsonObject,
    value: &Value,
) -> Option<(&'a str, &'a JsonObject)> {
    let object = value.as_object()?;
    let required = schema.get("required")?.as_array()?;
    let key = required
        .iter()
        .filter_map(Value::as_str)
        .find(|k| !object.contains_key(*k))?;
    let wanted = property(root, schema, key)?;
    Some((key, resolve(root, wanted)))
}

/// The values `schema` allows, in words: `a number`, `a string or null`, `one of "a", "b"`,
/// `an integer from 0 to 255`.
fn expected(root: &JsonObject, schema: &JsonObject) -> Option<String> {
    let schema = resolve(root, schema);
    if let Some(options) = choices(schema) {
        let list: Vec<String> = options.iter().map(|v| v.to_string()).collect();
        return Some(match list.as_slice() {
            [one] => one.clone(),
            _ => format!("one of {}", list.join(", ")),
        });
    }
    if let Some(Value::Array(branches)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        let words: Option<Vec<String>> = branches
            .iter()
            .map(|b| b.as_object().and_then(|b| expected(root, b)))
            .collect();
        return words.map(|w| w.join(" or "));
    }
    let words: Vec<String> = types(schema)?.iter().map(|t| one_type(t, schema)).collect();
    Some(words.join(" or "))
}

/// `enum`, `const`, or a `oneOf` of `const`s (a documented Rust enum): the allowed values.
fn choices(schema: &JsonObject) -> Option<Vec<Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.clone());
    }
    if let Some(c) = schema.get("const") {
        return Some(vec![c.clone()]);
    }
    let Some(Value::Array(branches)) = schema.get("oneOf") else {
        return None;
    };
    let mut out = Vec::new();
    for b in branches {
        out.extend(choices(b.as_object()?)?);
    }
    Some(out)
}

fn types(schema: &JsonObject) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(list) => list.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

fn one_type(t: &str, schema: &JsonObject) -> String {
    match t {
        "integer" => match range(schema) {
            (Some(min), Some(max)) => format!("an integer from {min} to {max}"),
            (Some(min), None) => format!("an integer of at least {min}"),
            (None, Some(max)) => format!("an integer of at most {max}"),
            (None, None) => "an integer".to_owned(),
        },
        "number" => "a number".to_owned(),
        "string" => "a string".to_owned(),
        "boolean" => "a boolean".to_owned(),
        "array" => "an array".to_owned(),
        "object" => "an object".to_owned(),
        "null" => "null".to_owned(),
        other => format!("a value of type {other}"),
    }
}

/// An integer's bounds: `minimum`/`maximum`, else those of schemars' `format` (`uint8`, `int32`…).
/// Checking an unbounded side is left to serde, whose refusal sent us here.
fn range(schema: &JsonObject) -> (Option<String>, Option<String>) {
    let bound = |key: &str| schema.get(key).filter(|v| v.is_number()).map(Value::to_string);
    let (min, max) = match schema.get("format").and_then(Value::as_str) {
        Some("int8") => (Some(i8::MIN.to_string()), Some(i8::MAX.to_string())),
        Some("int16") => (Some(i16::MIN.to_string()), Some(i16::MAX.to_string())),
        Some("int32") => (Some(i32::MIN.to_string()), Some(i32::MAX.to_string())),
        Some("uint8") => (Some("0".into()), Some(u8::MAX.to_string())),
        Some("uint16") => (Some("0".into()), Some(u16::MAX.to_string())),
        Some("uint32") => (Some("0".into()), Some(u32::MAX.to_string())),
        // 64 bits: the bounds would be noise; only the sign says something.
        Some("uint64" | "uint") => (Some("0".into()), None),
        _ => (None, None),
    };
    (bound("minimum").or(min), bound("maximum").or(max))
}

/// Whether `value` is of a type `schema` allows, within its choices and integer range.
fn fits(root: &JsonObject, schema: &JsonObject, value: &Value) -> bool {
    let schema = resolve(root, schema);
    if let Some(options) = choices(schema) {
        return options.contains(value);
    }
    if let Some(Value::Array(branches)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        return branches
            .iter()
            .filter_map(Value::as_object)
            .any(|b| fits(root, b, value));
    }
    let Some(types) = types(schema) else {
        return true;
    };
    types.iter().any(|t| match (*t, value) {
        ("integer", Value::Number(n)) => integer_in_range(schema, n),
        ("number", Value::Number(_)) => true,
        ("string", Value::String(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) => true,
        ("null", Value::Null) => true,
        _ => false,
    })
}

fn integer_in_range(schema: &JsonObject, n: &serde_json::Number) -> bool {
    let Some(n) = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)) else {
        return false; // a fraction
    };
    let (min, max) = range(schema);
    let within = |bound: Option<String>, ok: fn(i128, i128) -> bool| {
        bound.and_then(|b| b.parse::<i128>().ok()).is_none_or(|b| ok(n, b))
    };
    within(min, |n, b| n >= b) && within(max, |n, b| n <= b)
}

/// The value received, short: scalars as JSON (long strings cut), containers by kind.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() > 40 => {
            let cut: String = s.chars().take(40).collect();
            format!("{}…", Value::String(cut))
        }
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        other => other.to_string(),
    }
}
