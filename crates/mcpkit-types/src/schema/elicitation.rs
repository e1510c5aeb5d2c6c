//! Elicitation: the server asks the user for input (spec: `client/elicitation`).

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{JsonObject, Meta, RequestMeta};
use super::tasks::TaskMetadata;

/// Params of `elicitation/create` (spec: `client/elicitation`, `ElicitRequestParams`): form mode
/// (`mode` `"form"` or absent) or URL mode (`mode` `"url"`, 2025-11-25). Told apart by `mode`,
/// by hand. Serializes with an explicit `mode`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitParams {
    /// In-band structured input.
    Form(ElicitFormParams),
    /// Out-of-band interaction at a URL.
    Url(ElicitUrlParams),
}

impl ElicitParams {
    /// A form-mode request.
    pub fn form(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        ElicitParams::Form(ElicitFormParams {
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
        })
    }
    /// A URL-mode request.
    pub fn url(message: impl Into<String>, url: impl Into<String>, elicitation_id: impl Into<String>) -> Self {
        ElicitParams::Url(ElicitUrlParams {
            message: message.into(),
            url: url.into(),
            elicitation_id: elicitation_id.into(),
            task: None,
            meta: None,
        })
    }
    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitParams::Form(f) => &f.message,
            ElicitParams::Url(u) => &u.message,
        }
    }
}

#[derive(Serialize)]
struct WithMode<'a, T> {
    mode: &'static str,
    #[serde(flatten)]
    inner: &'a T,
}

impl Serialize for ElicitParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitParams::Form(f) => WithMode { mode: "form", inner: f }.serialize(s),
            ElicitParams::Url(u) => WithMode { mode: "url", inner: u }.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = JsonObject::deserialize(d)?;
        let mode = map.remove("mode");
        let value = Value::Object(map);
        match mode.as_ref().map(|m| m.as_str()) {
            None | Some(Some("form")) => serde_json::from_value(value)
                .map(ElicitParams::Form)
                .map_err(de::Error::custom),
            Some(Some("url")) => serde_json::from_value(value)
                .map(ElicitParams::Url)
                .map_err(de::Error::custom),
            Some(Some(other)) => Err(de::Error::custom(format_args!("unknown elicitation mode {other:?}"))),
            Some(None) => Err(de::Error::custom("elicitation `mode` must be a string")),
        }
    }
}

/// Form-mode elicitation params (spec: `ElicitRequestFormParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitFormParams {
    /// What is being asked.
    pub message: String,
    /// A flat object schema of primitive properties, kept verbatim.
    pub requested_schema: ElicitationSchema,
    /// Request task augmentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// URL-mode elicitation params (spec: `ElicitRequestURLParams`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitUrlParams {
    /// Why the user should visit the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Id correlating `notifications/elicitation/complete`.
    pub elicitation_id: String,
    /// Request task augmentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The `requestedSchema` of a form elicitation: a JSON object kept verbatim (`enumNames`,
/// `oneOf`, `default`, … all preserved), with a small builder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ElicitationSchema(pub JsonObject);

impl Default for ElicitationSchema {
    fn default() -> Self {
        ElicitationSchema::new()
    }
}

impl ElicitationSchema {
    /// `{"type": "object", "properties": {}}`.
    pub fn new() -> Self {
        let mut m = JsonObject::new();
        m.insert("type".into(), Value::String("object".into()));
        m.insert("properties".into(), Value::Object(JsonObject::new()));
        ElicitationSchema(m)
    }
    /// Adds a property with its primitive schema (e.g. `{"type": "string", "format": "email"}`).
    pub fn with_property(mut self, name: impl Into<String>, schema: Value) -> Self {
        if !matches!(self.0.get("properties"), Some(Value::Object(_))) {
            self.0.insert("properties".into(), Value::Object(JsonObject::new()));
        }
        if let Some(Value::Object(props)) = self.0.get_mut("properties") {
            props.insert(name.into(), schema);
        }
        self
    }
    /// Adds a property and marks it required.
    pub fn with_required_property(self, name: impl Into<String>, schema: Value) -> Self {
        let name = name.into();
        self.with_property(name.clone(), schema).require(name)
    }
    /// Marks `name` required.
    pub fn require(mut self, name: impl Into<String>) -> Self {
        let name = Value::String(name.into());
        match self.0.get_mut("required") {
            Some(Value::Array(list)) => {
                if !list.contains(&name) {
                    list.push(name);
                }
            }
            _ => {
                self.0.insert("required".into(), Value::Array(vec![name]));
            }
        }
        self
    }
    /// The `properties` object, if present.
    pub fn properties(&self) -> Option<&JsonObject> {
        self.0.get("properties").and_then(Value::as_object)
    }
    /// The underlying object.
    pub fn as_object(&self) -> &JsonObject {
        &self.0
    }
}

impl From<JsonObject> for ElicitationSchema {
    fn from(m: JsonObject) -> Self {
        ElicitationSchema(m)
    }
}

/// The user's response to an elicitation (spec: `ElicitResult.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// Result of `elicitation/create` (spec: `client/elicitation`, `ElicitResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Submitted values (form mode, `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitResult {
    /// Accepted with these values.
    pub fn accept(content: JsonObject) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
        }
    }
    /// Accepted without content (URL mode).
    pub fn accept_empty() -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: None,
            meta: None,
        }
    }
    /// Declined.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        }
    }
    /// Cancelled.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
    }
}

/// Params of `notifications/elicitation/complete` (spec: `ElicitationCompleteNotification`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteParams {
    /// The id from the URL-mode request.
    pub elicitation_id: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
