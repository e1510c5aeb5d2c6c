//! The output-schema check (spec: `server/tools` "Output Schema"): the schemas of the tools
//! listed so far, compiled once, and the validation of each structured tool result. Without the
//! `validation` feature only the presence of `structuredContent` is checked.

#[cfg(feature = "validation")]
use std::sync::Arc;

use mcpkit_types::schema::{CallToolResult, Tool};
use mcpkit_types::ProtocolVersion;

use super::Client;
use crate::error::{Error, Result};

/// What a tool's output schema checks: its compiled validator, or (without `validation`) that
/// there is structured content at all.
#[cfg(feature = "validation")]
pub(super) type Check = Arc<jsonschema::Validator>;
#[cfg(not(feature = "validation"))]
pub(super) type Check = ();

impl Client {
    pub(super) fn remember_output_schemas(&self, tools: &[Tool]) {
        let mut map = crate::sync::write(&self.inner.output_schemas);
        for t in tools {
            match &t.output_schema {
                #[cfg(feature = "validation")]
                Some(schema) => {
                    if let Ok(v) = jsonschema::validator_for(&serde_json::Value::Object(schema.clone())) {
                        map.insert(t.name.clone(), Arc::new(v));
                    }
                }
                #[cfg(not(feature = "validation"))]
                Some(_) => {
                    map.insert(t.name.clone(), ());
                }
                None => {
                    map.remove(&t.name);
                }
            }
        }
    }

    /// Spec: `server/tools` "Output Schema": clients SHOULD validate structured results.
    pub(super) fn check_output(&self, name: &str, result: &CallToolResult) -> Result<()> {
        // Before 2025-06-18 there is no structuredContent on the wire to check.
        if result.is_error() || self.inner.version < ProtocolVersion::V2025_06_18 {
            return Ok(());
        }
        let check = crate::sync::read(&self.inner.output_schemas).get(name).cloned();
        let Some(check) = check else { return Ok(()) };
        let Some(structured) = &result.structured_content else {
            return Err(Error::OutputSchema {
                tool: name.to_owned(),
                reason: "the tool declares an output schema but returned no structuredContent".into(),
            });
        };
        Self::validate(&check, name, structured)
    }

    #[cfg(not(feature = "validation"))]
    fn validate(_check: &Check, _name: &str, _structured: &serde_json::Value) -> Result<()> {
        Ok(())
    }

    #[cfg(feature = "validation")]
    fn validate(validator: &Check, name: &str, structured: &serde_json::Value) -> Result<()> {
        let first_error = validator.iter_errors(structured).next().map(|e| e.to_string());
        match first_error {
            None => Ok(()),
            Some(reason) => Err(Error::OutputSchema {
                tool: name.to_owned(),
                reason,
            }),
        }
    }
}
