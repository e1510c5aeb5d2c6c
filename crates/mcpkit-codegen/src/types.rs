//! One tool's argument and result types, from its prepared schemas ([`crate::schema`]) through
//! the `typify` generator, one type space per tool (so names never clash across tools).
//!
//! The generator refuses some schemas and panics on a few; either way the part it could not
//! type (one parameter, the argument struct, the output) falls back to `serde_json::Value`
//! with a warning, and the tool's types are generated again without it, so the file always
//! compiles.

use std::panic::{catch_unwind, AssertUnwindSafe};

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value};
use typify::{TypeDetails, TypeSpace, TypeSpaceSettings};

use crate::names::{camel, snake, Scope};
use crate::schema::Prepared;

/// A tool's arguments as the method takes them.
#[derive(Debug)]
pub(crate) enum Args {
    /// One parameter per top-level property (the input schema is a plain object).
    Params(Vec<Param>),
    /// One argument of the tool's `Args` type (any other input schema).
    Whole(TokenStream),
}

/// One parameter of a method.
#[derive(Debug)]
pub(crate) struct Param {
    /// The Rust parameter name.
    pub(crate) ident: String,
    /// The property name on the wire.
    pub(crate) key: String,
    /// The Rust type, `Option<…>` when the property is not required.
    pub(crate) ty: TokenStream,
    /// Whether the property may be left out (the parameter is an `Option`).
    pub(crate) optional: bool,
    /// The property's description.
    pub(crate) description: Option<String>,
}

/// What a successful call returns.
#[derive(Debug)]
pub(crate) enum Output {
    /// No output schema: the text of the result's content.
    Text,
    /// `structuredContent`, decoded as this type; `unwrap` when the schema is the
    /// `{"result": …}` wrapper some servers put around a non-object value, and the method
    /// returns what is inside it.
    Structured {
        /// The Rust type.
        ty: TokenStream,
        /// Whether to take `structuredContent.result`.
        unwrap: bool,
    },
}

/// Everything generated for one tool.
#[derive(Debug)]
pub(crate) struct ToolTypes {
    /// The items of the tool's module (its named types), when it has any.
    pub(crate) module: Option<TokenStream>,
    /// How the method takes the arguments.
    pub(crate) args: Args,
    /// What it returns.
    pub(crate) output: Output,
    /// What fell back to `serde_json::Value`, one sentence each.
    pub(crate) warnings: Vec<String>,
}

/// Parameter names the method body uses itself: none (it is one chain of calls on a
/// `CallBuilder`), so only keywords and clashes between the parameters are renamed.
const PARAM_RESERVED: &[&str] = &[];

/// The schemas to type, in order: the parameters (or the whole input), then the output.
struct Slot {
    name: String,
    schema: Value,
    forced: Option<String>,
}

/// Type the tool `tool` (its Rust module is `module`).
pub(crate) fn tool_types(tool: &str, module: &str, prepared: Prepared) -> ToolTypes {
    let mut warnings = prepared.warnings;
    let plain = plain_properties(&prepared.input);
    let mut slots = Vec::new();
    let mut params_meta = Vec::new();
    match &plain {
        Some(props) => {
            let mut scope = Scope::with_reserved(PARAM_RESERVED);
            for (key, schema, required) in props {
                let ident = scope.claim(snake(key, "arg"));
                slots.push(Slot {
                    name: format!("Args{}", camel(&ident, "Arg")),
                    schema: schema.clone(),
                    forced: None,
                });
                let description = schema.get("description").and_then(Value::as_str).map(str::to_owned);
                params_meta.push((ident, key.clone(), !required, description));
            }
        }
        None => slots.push(Slot {
            name: "Args".into(),
            schema: prepared.input.clone(),
            forced: None,
        }),
    }
    let unwrap = prepared.output.as_ref().and_then(result_wrapper);
    if let Some(output) = &prepared.output {
        slots.push(Slot {
            name: "Output".into(),
            schema: unwrap.clone().unwrap_or_else(|| output.clone()),
            forced: None,
        });
    }
    let mut definitions = prepared.definitions;

    // Each failure forces one more slot (or the definitions) to `Value`: at most that many rounds.
    let mut generated = None;
    for _ in 0..slots.len() + 2 {
        match attempt(module, &definitions, &slots) {
            Ok(done) => {
                generated = Some(done);
                break;
            }
            Err(Failed::Definitions(reason)) => {
                warnings.push(format!(
                    "tool {tool:?}: its schema definitions cannot be typed ({reason}); what refers to them is serde_json::Value"
                ));
                definitions.clear();
                for slot in &mut slots {
                    strip_refs(&mut slot.schema);
                }
            }
            Err(Failed::Slot(i, reason)) => {
                let what = slot_words(&slots[i].name, &params_meta);
                warnings.push(format!(
                    "tool {tool:?}: {what} cannot be typed ({reason}); it is serde_json::Value"
                ));
                slots[i].forced = Some(reason);
            }
        }
    }
    // Every slot forced and still failing is impossible (forced slots are not generated), but
    // fall back to untyped everything rather than trust that.
    let (module_tokens, types) =
        generated.unwrap_or_else(|| (None, vec![(quote!(::serde_json::Value), false); slots.len()]));

    let value = quote!(::serde_json::Value);
    let args = match plain {
        Some(_) => Args::Params(
            params_meta
                .into_iter()
                .zip(&types)
                .map(|((ident, key, optional, description), (ty, is_option))| Param {
                    ident,
                    key,
                    ty: if optional && !is_option {
                        quote!(::std::option::Option<#ty>)
                    } else {
                        ty.clone()
                    },
                    optional: optional || *is_option,
                    description,
                })
                .collect(),
        ),
        None => Args::Whole(types.first().map(|(t, _)| t.clone()).unwrap_or(value)),
    };
    let output = match prepared.output {
        None => Output::Text,
        Some(_) => Output::Structured {
            ty: types
                .last()
                .map(|(t, _)| t.clone())
                .unwrap_or_else(|| quote!(::serde_json::Value)),
            unwrap: unwrap.is_some(),
        },
    };
    ToolTypes {
        module: module_tokens,
        args,
        output,
        warnings,
    }
}

/// The tool with every argument and the result as `serde_json::Value` (the last resort).
pub(crate) fn untyped(input: &Map<String, Value>, has_output: bool) -> ToolTypes {
    let value = quote!(::serde_json::Value);
    let args = match plain_properties(&Value::Object(input.clone())) {
        Some(props) => {
            let mut scope = Scope::with_reserved(PARAM_RESERVED);
            Args::Params(
                props
                    .into_iter()
                    .map(|(key, schema, required)| Param {
                        ident: scope.claim(snake(&key, "arg")),
                        ty: if required {
                            value.clone()
                        } else {
                            quote!(::std::option::Option<::serde_json::Value>)
                        },
                        optional: !required,
                        description: schema.get("description").and_then(Value::as_str).map(str::to_owned),
                        key,
                    })
                    .collect(),
            )
        }
        None => Args::Whole(value.clone()),
    };
    ToolTypes {
        module: None,
        args,
        output: if has_output {
            Output::Structured {
                ty: value,
                unwrap: false,
            }
        } else {
            Output::Text
        },
        warnings: Vec::new(),
    }
}

fn slot_words(name: &str, params: &[(String, String, bool, Option<String>)]) -> String {
    match name {
        "Args" => "its input schema".to_owned(),
        "Output" => "its output schema".to_owned(),
        _ => {
            let ident = name.trim_start_matches("Args");
            let key = params
                .iter()
                .find(|(i, ..)| camel(i, "Arg") == ident)
                .map(|(_, k, ..)| k.as_str())
                .unwrap_or(ident);
            format!("argument {key:?}")
        }
    }
}

enum Failed {
    Definitions(String),
    Slot(usize, String),
}

type Generated = (Option<TokenStream>, Vec<(TokenStream, bool)>);

/// One try at typing every slot in a fresh type space.
fn attempt(module: &str, definitions: &[(String, Value)], slots: &[Slot]) -> Result<Generated, Failed> {
    let mut settings = TypeSpaceSettings::default();
    settings.with_type_mod(module).with_struct_builder(false);
    let mut space = TypeSpace::new(&settings);
    if !definitions.is_empty() {
        let mut defs = Vec::new();
        for (name, schema) in definitions {
            let s = to_schema(schema).map_err(Failed::Definitions)?;
            defs.push((name.clone(), s));
        }
        guarded(|| space.add_ref_types(defs)).map_err(Failed::Definitions)?;
    }
    let mut types = Vec::new();
    for (i, slot) in slots.iter().enumerate() {
        if slot.forced.is_some() {
            types.push((quote!(::serde_json::Value), false));
            continue;
        }
        let schema = to_schema(&slot.schema).map_err(|e| Failed::Slot(i, e))?;
        let id =
            guarded(|| space.add_type_with_name(&schema, Some(slot.name.clone()))).map_err(|e| Failed::Slot(i, e))?;
        let typed = guarded(|| {
            space.get_type(&id).map(|t| {
                let is_option = matches!(t.details(), TypeDetails::Option(_));
                (t.ident(), is_option)
            })
        })
        .map_err(|e| Failed::Slot(i, e))?;
        types.push(typed);
    }
    let named = space.iter_types().any(|t| {
        matches!(
            t.details(),
            TypeDetails::Struct(_) | TypeDetails::Enum(_) | TypeDetails::Newtype(_)
        )
    });
    let stream = if named {
        Some(guarded(|| Ok::<_, String>(space.to_stream())).map_err(Failed::Definitions)?)
    } else {
        None
    };
    if space.uses_chrono() || space.uses_uuid() || space.uses_regress() {
        // The preparation drops what leads there; refuse rather than emit a file that needs
        // crates the user may not have.
        return Err(Failed::Definitions("it needs chrono, uuid or regress".into()));
    }
    Ok((stream, types))
}

/// Run `f`, turning both its error and a panic of the generator into a sentence.
fn guarded<T, E: std::fmt::Display>(f: impl FnOnce() -> Result<T, E>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "the type generator gave up".into())),
    }
}

fn to_schema(v: &Value) -> Result<schemars08::schema::Schema, String> {
    serde_json::from_value(v.clone()).map_err(|e| format!("not a schema the generator reads: {e}"))
}

/// The properties of a plain-object input schema (`type: object`, `properties`, `required`,
/// nothing that combines or constrains across properties): name, schema, required.
fn plain_properties(schema: &Value) -> Option<Vec<(String, Value, bool)>> {
    let map = schema.as_object()?;
    const ALLOWED: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "description",
        "$comment",
        "examples",
        "default",
    ];
    if map.keys().any(|k| !ALLOWED.contains(&k.as_str())) {
        return None;
    }
    if map.get("type").is_some_and(|t| t != "object") {
        return None;
    }
    if map.get("type").is_none() && !map.contains_key("properties") {
        return None;
    }
    if map.get("additionalProperties").is_some_and(|a| !a.is_boolean()) {
        return None;
    }
    let empty = Map::new();
    let props = match map.get("properties") {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => return None,
    };
    let required: Vec<&str> = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        Some(_) => return None,
    };
    Some(
        props
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), required.contains(&k.as_str())))
            .collect(),
    )
}

/// The schema inside the `{"type": "object", "properties": {"result": S}, "required":
/// ["result"]}` wrapper, when `output` is exactly that.
fn result_wrapper(output: &Value) -> Option<Value> {
    let (props, required) = plain_properties(output).map(|p| {
        let required = p.iter().all(|(_, _, r)| *r);
        (p, required)
    })?;
    match props.as_slice() {
        [(key, schema, true)] if key == "result" && required => Some(schema.clone()),
        _ => None,
    }
}

/// Drop every `$ref` in `schema` (its definitions are gone), leaving "any value" there.
fn strip_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.remove("$ref");
            for v in map.values_mut() {
                strip_refs(v);
            }
        }
        Value::Array(vs) => vs.iter_mut().for_each(strip_refs),
        _ => {}
    }
}
