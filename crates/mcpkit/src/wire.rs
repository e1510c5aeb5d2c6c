//! Stage-2 decoding and result encoding shared by both roles.

use mcpkit_types::ErrorObject;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;

use crate::engine::HandlerResult;

/// Decode params into the method's type; absent params read as `{}`. A mismatch is -32602 with
/// the path of the offending field in `data`.
pub(crate) fn params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    decode_with_path(text).map_err(|(path, e)| {
        ErrorObject::invalid_params(format!("Invalid params: {e}")).with_data(json!({ "path": path }))
    })
}

/// Decode `text`; on failure, the path of the offending field and the error. The plain decoder
/// runs first: tracking the path costs on every field, and only a failure needs it.
pub(crate) fn decode_with_path<T: DeserializeOwned>(text: &str) -> Result<T, (String, serde_json::Error)> {
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| (e.path().to_string(), e.into_inner()))
}

/// Serialize a result for the reply.
pub(crate) fn to_raw<T: Serialize>(value: &T) -> HandlerResult {
    serde_json::value::to_raw_value(value).map_err(|e| ErrorObject::internal(format!("could not serialize: {e}")))
}
