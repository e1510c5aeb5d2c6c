//! Stage-2 decoding and result encoding shared by both roles.

use mcpkit_types::ErrorObject;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;

use crate::peer::HandlerResult;

/// Decode params into the method's type; absent params read as `{}`. A mismatch is -32602 with
/// the path of the offending field in `data`.
pub(crate) fn params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        ErrorObject::invalid_params(format!("Invalid params: {}", e.inner())).with_data(json!({ "path": path }))
    })
}

/// Serialize a result for the reply.
pub(crate) fn to_raw<T: Serialize>(value: &T) -> HandlerResult {
    serde_json::value::to_raw_value(value).map_err(|e| ErrorObject::internal(format!("could not serialize: {e}")))
}
