//! Typed elicitation: [`RequestContext::elicit_as`] asks for a form whose `requestedSchema` is
//! derived from a Rust type and reads the answer back into it; [`RequestContext::confirm`] asks
//! a yes-or-no question. Both go through [`RequestContext::elicit`], so they work in both eras
//! (a server→client request on a session, an input round on the stateless wire).

use mcpkit_types::schema::{ElicitAction, ElicitParams, ElicitResult, ElicitationSchema, JsonObject};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::RequestContext;
use crate::error::{Error, Result};
use crate::server::extract::{resolve_schema as resolve, schema_object};

/// The user's answer to [`RequestContext::elicit_as`] (spec: `client/elicitation`,
/// `ElicitResult.action`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form: its values.
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The values, if the user submitted the form.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(v) => Some(v),
            Elicited::Declined | Elicited::Cancelled => None,
        }
    }
}

impl RequestContext {
    /// Ask the user to fill in a form derived from `T` (spec: `client/elicitation`, form mode):
    /// each field is a form field, its doc comment the description, `Option` fields optional.
    ///
    /// A form holds only strings, numbers, integers, booleans and enums of strings (and, from
    /// 2025-11-25, `Vec`s of such enums: a multi-select). A `T` with anything else (a nested
    /// struct, a map, a list of strings) fails here with [`Error::ElicitationForm`] naming the
    /// field, before anything is sent; [`elicitation_schema`] runs the same check, for a test.
    ///
    /// Works in both eras like [`RequestContext::elicit`]: on the stateless wire the first run
    /// returns [`Error::InputRequired`] (pass it on with `?`).
    ///
    /// ```
    /// use mcpkit::server::{Elicited, RequestContext, ToolDef};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Booking {
    ///     /// How many guests.
    ///     guests: u8,
    ///     /// Anything we should know.
    ///     note: Option<String>,
    /// }
    ///
    /// let tool = ToolDef::new("book", |cx: RequestContext| async move {
    ///     Ok::<_, mcpkit::Error>(match cx.elicit_as::<Booking>("Book a table").await? {
    ///         Elicited::Accepted(b) => format!("booked for {}", b.guests),
    ///         Elicited::Declined | Elicited::Cancelled => "not booked".to_owned(),
    ///     })
    /// });
    /// # let _ = tool;
    /// ```
    pub async fn elicit_as<T: DeserializeOwned + JsonSchema>(&self, message: impl Into<String>) -> Result<Elicited<T>> {
        let schema = elicitation_schema::<T>()?;
        let answer = self.elicit(ElicitParams::form(message, schema)).await?;
        typed::<T>(answer)
    }

    /// Ask the user a yes-or-no question (spec: `client/elicitation`, a form without fields):
    /// `true` when the user accepts, `false` when they decline or dismiss it. Works in both
    /// eras like [`RequestContext::elicit`].
    pub async fn confirm(&self, message: impl Into<String>) -> Result<bool> {
        let answer = self
            .elicit(ElicitParams::form(message, ElicitationSchema::new()))
            .await?;
        Ok(answer.action == ElicitAction::Accept)
    }
}

fn typed<T: DeserializeOwned + JsonSchema>(answer: ElicitResult) -> Result<Elicited<T>> {
    match answer.action {
        ElicitAction::Accept => {
            let content = Value::Object(answer.content.unwrap_or_default());
            serde_json::from_value(content).map(Elicited::Accepted).map_err(|e| {
                Error::InvalidResponse(format!("the accepted form does not fit `{}`: {e}", T::schema_name()))
            })
        }
        ElicitAction::Decline => Ok(Elicited::Declined),
        ElicitAction::Cancel => Ok(Elicited::Cancelled),
    }
}

/// The `requestedSchema` [`RequestContext::elicit_as`] sends for `T`: a flat object of
/// primitive properties, keeping titles, descriptions, defaults, bounds and the formats the
/// spec lists. [`Error::ElicitationForm`] names the first field that a form cannot hold.
pub fn elicitation_schema<T: JsonSchema>() -> Result<ElicitationSchema> {
    let root = schema_object::<T>();
    let refuse = |why: String| {
        Error::ElicitationForm(format!(
            "`{}` cannot be an elicitation form: {why}; a form holds only strings, numbers, \
             integers, booleans and enums of strings (spec: client/elicitation, requestedSchema)",
            T::schema_name()
        ))
    };
    let object = resolve(&root, &root);
    let properties = match (object.get("type").and_then(Value::as_str), object.get("properties")) {
        (Some("object"), Some(Value::Object(p))) => p,
        _ => return Err(refuse("it is not a struct with named fields".into())),
    };
    let mut schema = ElicitationSchema::new();
    for (name, property) in properties {
        let field = property
            .as_object()
            .ok_or_else(|| refuse(format!("field `{name}` has no schema")))?;
        let field = form_field(&root, field).map_err(|why| refuse(format!("field `{name}` {why}")))?;
        schema = schema.with_property(name.clone(), Value::Object(field));
    }
    if let Some(Value::Array(required)) = object.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            schema = schema.require(name);
        }
    }
    Ok(schema)
}

/// One property as the spec's `PrimitiveSchemaDefinition`, or why it cannot be one.
fn form_field(root: &JsonObject, property: &JsonObject) -> std::result::Result<JsonObject, String> {
    let p = resolve(root, property);
    let mut out = JsonObject::new();
    // A field's doc comment sits beside its `$ref`; the type's own doc is the fallback.
    for key in ["title", "description"] {
        if let Some(v @ Value::String(_)) = property.get(key).or_else(|| p.get(key)) {
            out.insert(key.into(), v.clone());
        }
    }
    let default = property.get("default").or_else(|| p.get("default"));
    if let Some(choices) = string_choices(root, p)? {
        out.insert("type".into(), "string".into());
        out.extend(choices);
        keep_default(&mut out, default, Value::is_string);
        return Ok(out);
    }
    let kind = single_type(p).ok_or("has no single primitive type (an untagged enum or a union?)")?;
    out.insert("type".into(), kind.into());
    match kind {
        "string" => {
            copy(&mut out, p, &["minLength", "maxLength"]);
            if let Some(f @ Value::String(s)) = p.get("format") {
                // Other formats (uuid, ipv4, …) are not in the spec's list; serde still checks them.
                if matches!(s.as_str(), "email" | "uri" | "date" | "date-time") {
                    out.insert("format".into(), f.clone());
                }
            }
            keep_default(&mut out, default, Value::is_string);
        }
        "number" | "integer" => {
            copy(&mut out, p, &["minimum", "maximum"]);
            keep_default(&mut out, default, Value::is_number);
        }
        "boolean" => keep_default(&mut out, default, Value::is_boolean),
        "array" => {
            let items = p
                .get("items")
                .and_then(Value::as_object)
                .map(|i| resolve(root, i))
                .ok_or("is a list without an item type")?;
            let Some(choices) = string_choices(root, items)? else {
                return Err(
                    "is a list of something other than an enum of strings (only a multi-select is allowed)".into(),
                );
            };
            let mut item = JsonObject::new();
            match choices.get("oneOf") {
                // The multi-select spells titled options `anyOf`.
                Some(options) => {
                    item.insert("anyOf".into(), options.clone());
                }
                None => {
                    item.insert("type".into(), "string".into());
                    item.extend(choices);
                }
            }
            out.insert("items".into(), Value::Object(item));
            copy(&mut out, p, &["minItems", "maxItems"]);
            keep_default(&mut out, default, Value::is_array);
        }
        "object" => return Err("is an object (a nested struct or a map)".into()),
        other => return Err(format!("is of type {other}")),
    }
    Ok(out)
}

/// An enum of strings as the spec writes it: `{"enum": […]}`, or `{"oneOf": [{const, title}]}`
/// when schemars wrote each variant apart (a documented or renamed variant); `None` for no enum.
fn string_choices(root: &JsonObject, p: &JsonObject) -> std::result::Result<Option<JsonObject>, String> {
    let mut out = JsonObject::new();
    if let Some(Value::Array(values)) = p.get("enum") {
        if !values.iter().all(Value::is_string) {
            return Err("is an enum with values other than strings".into());
        }
        out.insert("enum".into(), Value::Array(values.clone()));
        return Ok(Some(out));
    }
    if let Some(c) = p.get("const") {
        if !c.is_string() {
            return Err("is a constant other than a string".into());
        }
        out.insert("enum".into(), Value::Array(vec![c.clone()]));
        return Ok(Some(out));
    }
    let Some(Value::Array(branches)) = p.get("oneOf").or_else(|| p.get("anyOf")) else {
        return Ok(None);
    };
    let mut options = Vec::with_capacity(branches.len());
    for branch in branches {
        let b = branch.as_object().map(|b| resolve(root, b));
        let values: Vec<&Value> = match b {
            Some(b) => match (b.get("const"), b.get("enum")) {
                (Some(c), _) => vec![c],
                (None, Some(Value::Array(values))) => values.iter().collect(),
                _ => return Err("is an enum whose variants carry data".into()),
            },
            None => return Err("is an enum whose variants carry data".into()),
        };
        for value in values {
            let Value::String(s) = value else {
                return Err("is an enum with values other than strings".into());
            };
            let title = b
                .and_then(|b| b.get("title").or_else(|| b.get("description")))
                .and_then(Value::as_str)
                .unwrap_or(s);
            options.push(serde_json::json!({ "const": s, "title": title }));
        }
    }
    out.insert("oneOf".into(), Value::Array(options));
    Ok(Some(out))
}

/// The one type of `p`, `null` left out (an `Option` field is optional, not nullable, in a form).
fn single_type(p: &JsonObject) -> Option<&str> {
    match p.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(list) => {
            let mut types = list.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            match (types.next(), types.next()) {
                (Some(t), None) => Some(t),
                _ => None,
            }
        }
        _ => None,
    }
}

fn copy(out: &mut JsonObject, p: &JsonObject, keys: &[&str]) {
    for key in keys {
        if let Some(v) = p.get(*key).filter(|v| v.is_number()) {
            out.insert((*key).into(), v.clone());
        }
    }
}

fn keep_default(out: &mut JsonObject, default: Option<&Value>, fits: fn(&Value) -> bool) {
    if let Some(d) = default.filter(|d| fits(d)) {
        out.insert("default".into(), d.clone());
    }
}
