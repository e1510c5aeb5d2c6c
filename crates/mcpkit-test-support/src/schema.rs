//! The MCP JSON schemas (2024-11-05 to 2026-07-28) as a validator: single definitions, and whole
//! wire transcripts, each frame against the definition its method (or, for a response, the
//! method of the request with its id) calls for.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

/// The spec checkout, holding `schema/<revision>/schema.json` and `docs/<revision>/`:
/// `$MCPKIT_SPEC_DIR`, or the shared spec next to the workspace.
pub fn spec_dir() -> PathBuf {
    match std::env::var_os("MCPKIT_SPEC_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/spec")),
    }
}

/// The result definition of each request method of the 2025-11-25 catalogue.
pub fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "resources/subscribe" => "EmptyResult",
        "resources/unsubscribe" => "EmptyResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "logging/setLevel" => "EmptyResult",
        "sampling/createMessage" => "CreateMessageResult",
        "elicitation/create" => "ElicitResult",
        "roots/list" => "ListRootsResult",
        "tasks/get" => "GetTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        "tasks/list" => "ListTasksResult",
        "tasks/cancel" => "CancelTaskResult",
        // 2026-07-28.
        "server/discover" => "DiscoverResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => return None,
    })
}

/// A compiled MCP schema (one revision): every definition (`$defs`, or `definitions` in the
/// draft-07 schemas before 2025-11-25), plus the method → definition map read from each
/// definition's `properties.method.const`.
pub struct SchemaValidator {
    revision: String,
    /// The schema file, as read.
    document: Value,
    validators: jsonschema::ValidatorMap,
    /// `#/$defs/` or `#/definitions/`.
    prefix: String,
    /// The names of the response envelopes in this revision (they were renamed in 2025-11-25).
    result_envelope: &'static str,
    error_envelope: &'static str,
    /// method → request or notification definition name.
    method_defs: HashMap<String, String>,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

/// What validating a transcript found.
#[derive(Debug, Default)]
pub struct Report {
    /// Frames checked.
    pub checked: usize,
    /// One line per problem: the frame and what is wrong with it.
    pub errors: Vec<String>,
    /// How many frames of each kind were seen, e.g. `request tools/call`, `result tools/call`.
    pub kinds: HashMap<String, usize>,
}

impl Report {
    /// Panic with every problem if any frame was invalid, or if nothing at all was checked.
    pub fn assert_valid(&self) {
        assert!(self.checked > 0, "no frames were validated");
        assert!(
            self.errors.is_empty(),
            "{} of {} frames do not match the schema:\n{}",
            self.errors.len(),
            self.checked,
            self.errors.join("\n")
        );
    }

    /// How many frames of `kind` (e.g. `"notification notifications/progress"`) were checked.
    pub fn count(&self, kind: &str) -> usize {
        self.kinds.get(kind).copied().unwrap_or(0)
    }
}

fn truncate(s: &str) -> String {
    if s.len() <= 400 {
        s.to_owned()
    } else {
        let mut end = 400;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

impl SchemaValidator {
    /// Load and compile `<spec_dir>/schema/<revision>/schema.json`.
    pub fn load(revision: &str) -> SchemaValidator {
        let path = spec_dir().join("schema").join(revision).join("schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read the MCP schema at {}: {e}", path.display()));
        let schema: Value = serde_json::from_str(&text).expect("the schema file is JSON");
        let defs_key = if schema.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        let defs = schema[defs_key].as_object().expect("the schema has definitions");
        let pick = |names: [&'static str; 2]| {
            names
                .into_iter()
                .find(|n| defs.contains_key(*n))
                .unwrap_or_else(|| panic!("the {revision} schema has none of {names:?}"))
        };
        let result_envelope = pick(["JSONRPCResultResponse", "JSONRPCResponse"]);
        let error_envelope = pick(["JSONRPCErrorResponse", "JSONRPCError"]);
        let mut method_defs = HashMap::new();
        for (name, def) in defs {
            if let Some(method) = def.pointer("/properties/method/const").and_then(Value::as_str) {
                method_defs.insert(method.to_owned(), name.clone());
            }
        }
        assert!(
            method_defs.len() > 20,
            "found only {} methods in {}",
            method_defs.len(),
            path.display()
        );
        let validators = jsonschema::validator_map_for(&schema).expect("the MCP schema compiles");
        SchemaValidator {
            revision: revision.to_owned(),
            document: schema,
            validators,
            prefix: format!("#/{defs_key}/"),
            result_envelope,
            error_envelope,
            method_defs,
        }
    }

    /// The 2025-11-25 schema, compiled once per test binary.
    pub fn v2025_11_25() -> &'static SchemaValidator {
        Self::revision("2025-11-25")
    }

    /// The schema of a revision, compiled once per test binary.
    pub fn revision(revision: &str) -> &'static SchemaValidator {
        const REVISIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
        static V: [OnceLock<SchemaValidator>; 5] = [const { OnceLock::new() }; 5];
        let i = REVISIONS
            .iter()
            .position(|r| *r == revision)
            .unwrap_or_else(|| panic!("no schema for revision {revision}"));
        V[i].get_or_init(|| SchemaValidator::load(revision))
    }

    /// The schema file itself, as JSON.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The definition that describes requests or notifications of `method`.
    pub fn method_def(&self, method: &str) -> Option<&str> {
        self.method_defs.get(method).map(String::as_str)
    }

    /// Every method the schema defines.
    pub fn methods(&self) -> impl Iterator<Item = &str> {
        self.method_defs.keys().map(String::as_str)
    }

    /// Validate `value` against `#/$defs/<def>`; the errors, if any (at most five).
    pub fn check_def(&self, def: &str, value: &Value) -> Result<(), String> {
        let pointer = format!("{}{def}", self.prefix);
        let Some(v) = self.validators.get(&pointer) else {
            return Err(format!("the schema has no definition {def}"));
        };
        let errors: Vec<String> = v
            .iter_errors(value)
            .take(5)
            .map(|e| format!("{} (at {})", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("not a valid {def}: {}", errors.join("; ")))
        }
    }

    /// Every error of `value` against `#/$defs/<def>`, one line each; panics if this revision
    /// has no such definition.
    pub fn errors(&self, def: &str, value: &Value) -> Vec<String> {
        let pointer = format!("{}{def}", self.prefix);
        let Some(v) = self.validators.get(&pointer) else {
            panic!("{} has no definition {def}", self.revision);
        };
        v.iter_errors(value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    }

    /// Validate every frame one side sent. `other_side` is what the other side sent: its
    /// requests tell which result definition applies to each response in `frames`.
    pub fn check_transcript(&self, frames: &[String], other_side: &[String]) -> Report {
        let mut asked: HashMap<String, String> = HashMap::new();
        for f in other_side {
            let Ok(v) = serde_json::from_str::<Value>(f) else {
                continue;
            };
            if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
                asked.insert(id.to_string(), m.to_owned());
            }
        }
        let mut report = Report::default();
        for f in frames {
            report.checked += 1;
            let (kind, outcome) = self.check_frame(f, &asked);
            *report.kinds.entry(kind).or_default() += 1;
            if let Err(e) = outcome {
                report.errors.push(format!("{e}\n    frame: {}", truncate(f)));
            }
        }
        report
    }

    fn check_frame(&self, frame: &str, asked: &HashMap<String, String>) -> (String, Result<(), String>) {
        let v: Value = match serde_json::from_str(frame) {
            Ok(v) => v,
            Err(e) => return ("unparseable".into(), Err(format!("not JSON: {e}"))),
        };
        if !v.is_object() {
            return ("non-object".into(), Err("a message must be a JSON object".into()));
        }
        if let Some(method) = v.get("method").and_then(Value::as_str) {
            let is_request = v.get("id").is_some();
            let kind = format!("{} {method}", if is_request { "request" } else { "notification" });
            let envelope = if is_request {
                "JSONRPCRequest"
            } else {
                "JSONRPCNotification"
            };
            let outcome = self
                .check_def(envelope, &v)
                .and_then(|()| match self.method_def(method) {
                    Some(def) => self.check_def(def, &v),
                    None => Err(format!("{method} is not a method of the {} schema", self.revision)),
                });
            return (kind, outcome);
        }
        if v.get("error").is_some() {
            let code = v.pointer("/error/code").and_then(Value::as_i64).unwrap_or_default();
            return (format!("error {code}"), self.check_def(self.error_envelope, &v));
        }
        if let Some(result) = v.get("result") {
            let id = v.get("id").map(Value::to_string).unwrap_or_default();
            let Some(method) = asked.get(&id) else {
                return (
                    "result ?".into(),
                    Err(format!("a result for id {id}, which no request carried")),
                );
            };
            // 2026-07-28: a multi round-trip request may end with `input_required` instead.
            let input_required = result.get("resultType").and_then(Value::as_str) == Some("input_required");
            let kind = if input_required {
                format!("input_required {method}")
            } else {
                format!("result {method}")
            };
            let def = if input_required {
                Some("InputRequiredResult")
            } else {
                result_def(method)
            };
            let outcome = self.check_def(self.result_envelope, &v).and_then(|()| match def {
                Some(def) => self.check_def(def, result),
                None => Err(format!("no result definition is known for {method}")),
            });
            return (kind, outcome);
        }
        (
            "invalid".into(),
            Err("neither a request, a notification nor a response".into()),
        )
    }
}
