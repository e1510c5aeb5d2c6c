//! The protocol fields every stateless-era request carries in its `_meta`, read and validated
//! (spec: 2026-07-28 `basic/index` "_meta", `basic/versioning`).

use mcpkit_types::schema::{ClientCapabilities, Implementation, LoggingLevel, ProtocolMeta, ProtocolMetaOf};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use serde_json::json;
use serde_json::value::RawValue;

/// The protocol fields of one stateless-era request, validated.
#[derive(Debug, Clone)]
pub(crate) struct StatelessMeta {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Implementation>,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// Read the protocol fields of a request's `_meta` (nothing else in the params is built).
pub(crate) fn read_meta(raw: Option<&RawValue>) -> Result<Option<ProtocolMeta>, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    serde_json::from_str::<ProtocolMetaOf>(text)
        .map(|m| m.meta)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid _meta: {e}")))
}

/// Every revision this server speaks, newest first.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    ProtocolVersion::ALL.iter().rev().map(|v| v.as_str()).collect()
}

/// Spec: 2026-07-28 `basic/versioning` "Protocol Version Negotiation".
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": supported_versions(), "requested": requested }))
}

/// Spec: 2026-07-28 `basic/index` "_meta": the required fields must be there (-32602), and the
/// version must be one we serve statelessly (-32022).
pub(crate) fn validate(meta: Option<ProtocolMeta>) -> Result<StatelessMeta, ErrorObject> {
    let missing = |what: &str| {
        ErrorObject::invalid_params(format!(
            "Invalid params: the request's _meta must carry {what} (required on every 2026-07-28 request)"
        ))
        .with_data(json!({ "path": format!("_meta.{what}") }))
    };
    let Some(meta) = meta else {
        return Err(missing("io.modelcontextprotocol/protocolVersion"));
    };
    let Some(requested) = meta.protocol_version else {
        return Err(missing("io.modelcontextprotocol/protocolVersion"));
    };
    let version = match requested.parse::<ProtocolVersion>() {
        Ok(v) if v.era() == mcpkit_types::Era::Stateless => v,
        _ => return Err(unsupported_version(&requested)),
    };
    let Some(capabilities) = meta.client_capabilities else {
        return Err(missing("io.modelcontextprotocol/clientCapabilities"));
    };
    Ok(StatelessMeta {
        version,
        capabilities,
        client_info: meta.client_info,
        log_level: meta.log_level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn meta_validation_names_what_is_missing() {
        let e = validate(None).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        let m = read_meta(Some(&raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        )))
        .unwrap();
        let e = validate(m).unwrap_err();
        assert!(e.message.contains("clientCapabilities"), "{}", e.message);
        let m = read_meta(Some(&raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        )))
        .unwrap();
        let e = validate(m).unwrap_err();
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.unwrap()["requested"], "v9");
    }
}
