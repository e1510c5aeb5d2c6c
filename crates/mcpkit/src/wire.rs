//! Stage-2 decoding and result encoding shared by both roles.

#[cfg(feature = "server")]
use std::borrow::Cow;

#[cfg(feature = "server")]
use mcpkit_types::schema::MemberName;
use mcpkit_types::ErrorObject;
use serde::de::DeserializeOwned;
#[cfg(feature = "server")]
use serde::de::{IgnoredAny, MapAccess, Visitor};
#[cfg(feature = "server")]
use serde::Deserializer;
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

/// The string member `key` of a params object, read only as far as that member: for code that
/// picks a route by one member (the tool's `name`) and leaves the whole params to the route,
/// which decodes and checks them; a full read here would be one more scan of the arguments and
/// `_meta`. None when the params are no object, lack the member before the text stops being
/// JSON, or it is not a string. Of a duplicated member the first is read (the route's decode
/// refuses the duplicate).
#[cfg(feature = "server")]
pub(crate) fn member_str<'a>(raw: Option<&'a RawValue>, key: &str) -> Option<Cow<'a, str>> {
    struct Seek<'k, 's, 'de> {
        key: &'k str,
        found: &'s mut Option<Cow<'de, str>>,
    }
    impl<'de> Visitor<'de> for Seek<'_, '_, 'de> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(MemberName(k)) = map.next_key::<MemberName<'de>>()? {
                if k == self.key {
                    *self.found = Some(map.next_value::<MemberName<'de>>()?.0);
                    // Stop here: the deserializer then reports the members left unread, an
                    // error nobody reads.
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let mut de = serde_json::Deserializer::from_str(raw?.get());
    let _ = de.deserialize_map(Seek { key, found: &mut found });
    found
}

/// A `RawValue` from JSON text, for the unit tests of the modules that read raw params.
#[cfg(test)]
pub(crate) fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_str_reads_one_member_without_the_rest() {
        let name = |s: &str| member_str(Some(&raw(s)), "name").map(Cow::into_owned);
        assert_eq!(name(r#"{"name":"echo","arguments":{"a":1}}"#).as_deref(), Some("echo"));
        assert_eq!(
            name(r#"{"arguments":{"name":"no"},"name":"echo"}"#).as_deref(),
            Some("echo")
        );
        assert_eq!(name(r#"{"name":"e\"cho"}"#).as_deref(), Some("e\"cho"));
        // Members after the one read are not looked at: a duplicate is the route's to refuse.
        assert_eq!(name(r#"{"name":"echo","name":"other"}"#).as_deref(), Some("echo"));
        assert_eq!(name(r#"{"name":1}"#), None);
        assert_eq!(name(r#"{"arguments":{}}"#), None);
        assert_eq!(name(r#"["echo"]"#), None);
        assert_eq!(member_str(None, "name"), None);
    }
}
