//! The protocol fields every stateless-era request carries in its `_meta`, read and validated
//! (spec: 2026-07-28 `basic/index` "_meta", `basic/versioning`).

use std::cell::RefCell;
use std::sync::Arc;

use mcpkit_types::schema::{ClientCapabilities, Implementation, LoggingLevel, MemberName};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

/// The protocol fields of one stateless-era request, validated.
#[derive(Debug, Clone)]
pub(crate) struct StatelessMeta {
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientProfile>,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// The protocol fields of a request's `_meta` as its text has them: the version borrowed, the
/// client's capabilities and identity still text, built by `validate` once for every distinct
/// text (a client sends the same ones on every request).
#[derive(Default, Deserialize)]
pub(crate) struct MetaText<'a> {
    #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion", default)]
    protocol_version: Option<MemberName<'a>>,
    #[serde(borrow, rename = "io.modelcontextprotocol/clientCapabilities", default)]
    client_capabilities: Option<&'a RawValue>,
    #[serde(borrow, rename = "io.modelcontextprotocol/clientInfo", default)]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    log_level: Option<LoggingLevel>,
}

impl<'a> MetaText<'a> {
    pub(crate) fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_ref().map(|v| &*v.0)
    }

    /// The client capabilities this request declares itself, if it declares any that read.
    pub(crate) fn client_capabilities(&self) -> Option<ClientCapabilities> {
        serde_json::from_str(self.client_capabilities?.get()).ok()
    }
}

#[derive(Deserialize)]
struct MetaOf<'a> {
    #[serde(borrow, rename = "_meta", default)]
    meta: Option<MetaText<'a>>,
}

/// Read the protocol fields of a request's `_meta` (nothing else in the params is built).
pub(crate) fn read_meta(raw: Option<&RawValue>) -> Result<Option<MetaText<'_>>, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    serde_json::from_str::<MetaOf<'_>>(text)
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
pub(crate) fn validate(meta: Option<MetaText<'_>>) -> Result<StatelessMeta, ErrorObject> {
    let missing = |what: &str| {
        ErrorObject::invalid_params(format!(
            "Invalid params: the request's _meta must carry {what} (required on every 2026-07-28 request)"
        ))
        .with_data(json!({ "path": format!("_meta.{what}") }))
    };
    let Some(meta) = meta else {
        return Err(missing("io.modelcontextprotocol/protocolVersion"));
    };
    let Some(requested) = meta.protocol_version() else {
        return Err(missing("io.modelcontextprotocol/protocolVersion"));
    };
    let version = match requested.parse::<ProtocolVersion>() {
        Ok(v) if v.era() == mcpkit_types::Era::Stateless => v,
        _ => return Err(unsupported_version(requested)),
    };
    let Some(capabilities) = meta.client_capabilities else {
        return Err(missing("io.modelcontextprotocol/clientCapabilities"));
    };
    Ok(StatelessMeta {
        version,
        client: profile(capabilities, meta.client_info)?,
        log_level: meta.log_level,
    })
}

/// Profiles built from `_meta` texts on this thread, the latest first: a client sends the same
/// capabilities and identity on every request, and building them is most of reading `_meta`.
/// A pure memo keyed by the exact texts, so sharing one among servers and clients is sound.
struct Memo {
    caps: Box<str>,
    info: Box<str>,
    profile: Arc<ClientProfile>,
}

/// Distinct clients remembered per thread (the least recent is forgotten).
const MEMO_ENTRIES: usize = 8;
/// Longer texts are built every time: the memo stays under ~8 × 2 × 2 KiB per thread.
const MEMO_TEXT_LIMIT: usize = 2048;

thread_local! {
    static PROFILES: RefCell<Vec<Memo>> = const { RefCell::new(Vec::new()) };
}

/// The profile a request's `_meta` declares, from the memo or built (and checked) from the text.
fn profile(caps: &RawValue, info: Option<&RawValue>) -> Result<Arc<ClientProfile>, ErrorObject> {
    let (caps, info) = (caps.get(), info.map_or("", RawValue::get));
    let found = PROFILES.with(|memo| {
        let mut memo = memo.borrow_mut();
        let at = memo.iter().position(|m| *m.caps == *caps && *m.info == *info)?;
        let hit = memo[at].profile.clone();
        // The latest stays first: most threads serve one client at a time.
        memo[..=at].rotate_right(1);
        Some(hit)
    });
    if let Some(profile) = found {
        return Ok(profile);
    }
    let invalid = |what: &str, e: serde_json::Error| ErrorObject::invalid_params(format!("Invalid _meta: {what}: {e}"));
    let capabilities = serde_json::from_str::<ClientCapabilities>(caps)
        .map_err(|e| invalid("io.modelcontextprotocol/clientCapabilities", e))?;
    let identity = match info {
        "" => Implementation::default(),
        text => serde_json::from_str::<Implementation>(text)
            .map_err(|e| invalid("io.modelcontextprotocol/clientInfo", e))?,
    };
    let profile = Arc::new(ClientProfile::new(capabilities, identity));
    if caps.len() <= MEMO_TEXT_LIMIT && info.len() <= MEMO_TEXT_LIMIT {
        PROFILES.with(|memo| {
            let mut memo = memo.borrow_mut();
            memo.truncate(MEMO_ENTRIES - 1);
            memo.insert(
                0,
                Memo {
                    caps: caps.into(),
                    info: info.into(),
                    profile: profile.clone(),
                },
            );
        });
    }
    Ok(profile)
}

/// What a client says of itself: its capabilities and who it is. Shared: stateless requests
/// that carry the same `_meta` text share one (the memo here); a handshake-era session holds
/// the one its `initialize` gave.
#[derive(Debug, PartialEq)]
pub(crate) struct ClientProfile {
    /// `None` for the empty object most clients send: ~1 KiB of empty maps not kept per session.
    pub(crate) capabilities: Option<Box<ClientCapabilities>>,
    pub(crate) info: Implementation,
}

impl ClientProfile {
    pub(crate) fn new(caps: ClientCapabilities, info: Implementation) -> ClientProfile {
        ClientProfile {
            capabilities: (caps != ClientCapabilities::default()).then(|| Box::new(caps)),
            info,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::raw;

    #[test]
    fn meta_validation_names_what_is_missing() {
        let e = validate(None).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        let params = raw(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        let e = validate(read_meta(Some(&params)).unwrap()).unwrap_err();
        assert!(e.message.contains("clientCapabilities"), "{}", e.message);
        let params = raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        let e = validate(read_meta(Some(&params)).unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.unwrap()["requested"], "v9");
    }

    fn meta(caps: &str, info: &str) -> Box<RawValue> {
        raw(&format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps},"io.modelcontextprotocol/clientInfo":{info}}}}}"#
        ))
    }

    fn profile_of(params: &RawValue) -> Result<Arc<ClientProfile>, ErrorObject> {
        validate(read_meta(Some(params))?).map(|m| m.client)
    }

    #[test]
    fn a_profile_is_built_once_per_text_and_checked_when_built() {
        let info = r#"{"name":"memo-test","version":"1"}"#;
        let first = profile_of(&meta(r#"{"roots":{}}"#, info)).unwrap();
        let again = profile_of(&meta(r#"{"roots":{}}"#, info)).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same text gives the same profile");
        let other = profile_of(&meta(r#"{"sampling":{}}"#, info)).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert_ne!(*first, *other);
        // The memo forgets the least recent text, never what a text means.
        for n in 0..MEMO_ENTRIES * 2 {
            let info = format!(r#"{{"name":"client-{n}","version":"1"}}"#);
            assert_eq!(profile_of(&meta("{}", &info)).unwrap().info.name, format!("client-{n}"));
        }
        assert_eq!(*profile_of(&meta(r#"{"roots":{}}"#, info)).unwrap(), *first);
        // Every text is checked when it is built, and a bad one is not remembered.
        for _ in 0..2 {
            let e = profile_of(&meta(r#"{"roots":5}"#, info)).unwrap_err();
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("clientCapabilities"), "{}", e.message);
            let e = profile_of(&meta("{}", r#"{"version":"1"}"#)).unwrap_err();
            assert!(e.message.contains("clientInfo"), "{}", e.message);
        }
    }
}
