//! Servers' JSON Schemas (draft 2020-12 from most SDKs, draft-07 from some) made into what the
//! type generator reads, which is draft-07 shaped:
//!
//! - `$defs` (and `definitions`) of the input and output schema are hoisted into one list of
//!   named definitions per tool, renamed where two would share a Rust name, and every `$ref` to
//!   them is rewritten; a `$ref` elsewhere (`#`, `#/properties/…`, another document) cannot be
//!   followed and becomes "any value" (`serde_json::Value`) with a warning.
//! - `prefixItems` (2020-12 tuples) becomes the draft-07 `items` array, the 2020-12 `items`
//!   beside it `additionalItems`.
//! - What would make the generated types awkward to call or pull in crates the generated file
//!   does not depend on is dropped: `title` (names come from the tool and property names, so two
//!   tools' `"title": "Result"` never share a type), string `format`s (dates and UUIDs stay
//!   `String`), `pattern`, `minLength`/`maxLength` (no validating newtypes: the server checks its
//!   input) and the generator's own `x-rust-type` extension.
//! - Descriptions are made safe for doc comments ([`crate::docs`]).
//! - Validation-only keywords are dropped: `if`/`then`/`else` (the generator panics on them),
//!   `dependentRequired`/`dependentSchemas`/`dependencies`, and `allOf`/`anyOf`/`oneOf`
//!   branches that only require properties to be present.

use serde_json::{Map, Value};

use crate::names::{camel, Scope};

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
    "items",
];
/// Keywords whose value is a map of name → subschema.
const MAP: &[&str] = &["properties", "patternProperties"];
/// Keywords whose value is an array of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Numeric formats the generator maps to sized Rust numbers; every other format is dropped.
const NUMERIC_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float", "double",
];

/// One tool's schemas, ready for the generator.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// The hoisted definitions, under their new (unique, Rust-safe) names.
    pub(crate) definitions: Vec<(String, Value)>,
    /// The input schema without its definitions, references rewritten.
    pub(crate) input: Value,
    /// The output schema likewise, when the tool has one.
    pub(crate) output: Option<Value>,
    /// What could not be kept typed, one sentence each.
    pub(crate) warnings: Vec<String>,
}

/// Prepare a tool's input and output schema. Definition names never start with `Args` or
/// `Output`: those are the names of the generated argument and output types.
pub(crate) fn prepare(tool: &str, input: &Map<String, Value>, output: Option<&Map<String, Value>>) -> Prepared {
    let mut names = Scope::default();
    let mut definitions = Vec::new();
    let mut warnings = Vec::new();
    let mut input = Value::Object(input.clone());
    let renames = hoist(&mut input, &mut names, &mut definitions, &mut warnings);
    rewrite(&mut input, &renames, &mut warnings);
    let output = output.map(|o| {
        let mut o = Value::Object(o.clone());
        let renames = hoist(&mut o, &mut names, &mut definitions, &mut warnings);
        rewrite(&mut o, &renames, &mut warnings);
        o
    });
    warnings.sort();
    warnings.dedup();
    Prepared {
        definitions,
        input,
        output,
        warnings: warnings.into_iter().map(|w| format!("tool {tool:?}: {w}")).collect(),
    }
}

/// Take the root `$defs` and `definitions` out of `schema` into `defs` under unique names;
/// returns the old → new name map (each definition's own references rewritten already).
fn hoist(
    schema: &mut Value,
    names: &mut Scope,
    defs: &mut Vec<(String, Value)>,
    warnings: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut found = Vec::new();
    if let Value::Object(map) = schema {
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(d)) = map.remove(key) {
                for (name, def) in d {
                    found.push((key, name, def));
                }
            }
        }
    }
    let mut renames = Vec::new();
    let mut fresh = Vec::new();
    for (key, name, def) in found {
        let mut rust = camel(&name, "Definition");
        if rust.starts_with("Args") || rust.starts_with("Output") {
            rust = format!("Def{rust}");
        }
        let rust = names.claim(rust);
        renames.push((format!("#/{key}/{name}"), rust.clone()));
        fresh.push((rust, def));
    }
    for (rust, mut def) in fresh {
        rewrite(&mut def, &renames, warnings);
        defs.push((rust, def));
    }
    renames
}

/// Rewrite `$ref`s through `renames`, turn the ones that cannot be followed into "any", and
/// drop the keywords the module does not want (see the module docs). Walks subschemas only,
/// never into `enum`, `const`, `default` or `examples` values, nor treats a property named
/// `title` as the keyword.
fn rewrite(schema: &mut Value, renames: &[(String, String)], warnings: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::String(r)) = map.get("$ref").cloned() {
        let decoded = r.replace("~1", "/").replace("~0", "~");
        match renames.iter().find(|(old, _)| *old == r || *old == decoded) {
            Some((_, new)) => {
                map.insert("$ref".into(), Value::String(format!("#/definitions/{new}")));
            }
            None => {
                map.remove("$ref");
                warnings.push(format!(
                    "cannot follow \"$ref\": {r:?} (only root $defs/definitions are followed); typed as serde_json::Value"
                ));
            }
        }
    }
    // The generator copies descriptions into doc comments verbatim: make them safe first.
    if let Some(Value::String(d)) = map.get("description") {
        let safe = crate::docs::lines(d).join("\n");
        map.insert("description".into(), Value::String(safe));
    }
    map.remove("title");
    map.remove("pattern");
    map.remove("minLength");
    map.remove("maxLength");
    map.remove("x-rust-type");
    map.remove("$schema");
    map.remove("$id");
    map.remove("$anchor");
    map.remove("$dynamicAnchor");
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !NUMERIC_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    // Validation-only keywords: they constrain which objects are valid, not their shape, and
    // the generator does not read them (it stops at `if`).
    for key in [
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
    ] {
        map.remove(key);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(vs)) = map.get_mut(key) {
            let all_constraints = vs.iter().all(constraint_only);
            if key == "allOf" {
                vs.retain(|v| !constraint_only(v));
            }
            if vs.is_empty() || all_constraints {
                map.remove(key);
            }
        }
    }
    if let Some(prefix) = map.remove("prefixItems") {
        if let Some(rest) = map.remove("items") {
            map.insert("additionalItems".into(), rest);
        }
        map.insert("items".into(), prefix);
    }
    for key in ONE {
        if let Some(v @ Value::Object(_)) = map.get_mut(*key) {
            rewrite(v, renames, warnings);
        }
    }
    for key in LIST {
        if let Some(Value::Array(vs)) = map.get_mut(*key) {
            for v in vs {
                rewrite(v, renames, warnings);
            }
        }
    }
    for key in MAP {
        if let Some(Value::Object(m)) = map.get_mut(*key) {
            for v in m.values_mut() {
                rewrite(v, renames, warnings);
            }
        }
    }
}

/// Whether `schema` only says which properties must be present (`required`, possibly combined
/// with `anyOf`/`oneOf`/`allOf`/`not` of the same): a constraint, not a shape.
fn constraint_only(schema: &Value) -> bool {
    let Value::Object(map) = schema else { return false };
    !map.is_empty()
        && map.iter().all(|(k, v)| match k.as_str() {
            "required" => true,
            "anyOf" | "oneOf" | "allOf" => v.as_array().is_some_and(|vs| vs.iter().all(constraint_only)),
            "not" => constraint_only(v),
            _ => false,
        })
}
