//! What the builder checks before a server starts: each catalogue item registered once (by
//! its name, or its URI / URI template), tool names within the spec's rules (SEP-986), no
//! definition built wrong, and every resource an item links to registered. Every registration
//! remembers where in the program it was made, so an error names both places of a duplicate.

use std::panic::Location;
use std::sync::Arc;

use super::extension::Extension;

/// Why [`ServerBuilder::try_build`](super::ServerBuilder::try_build) refused a catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two items of one kind under one key (a tool or prompt name, a resource URI, a
    /// template's URI template).
    #[error("{kind} {key:?} is registered twice: at {first} and at {second}")]
    Duplicate {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name or URI both use.
        key: String,
        /// Where the first registration was made (`file:line:column`).
        first: String,
        /// Where the second was.
        second: String,
    },
    /// A tool name outside the spec's rules: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
    #[error("tool name {name:?} (registered at {at}) {rule}; a tool name is 1 to 128 of A-Z, a-z, 0-9, '_', '-', '.'")]
    ToolName {
        /// The name.
        name: String,
        /// Where it was registered.
        at: String,
        /// What is wrong with it.
        rule: String,
    },
    /// A definition built wrong (for example an MCP App view whose URI is not `ui://`).
    #[error("{kind} {key:?} (registered at {at}): {reason}")]
    Definition {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// Its name or URI.
        key: String,
        /// Where it was registered.
        at: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An item links to a resource that is not registered (an MCP App tool's view).
    #[error("{kind} {key:?} (registered at {at}) links to resource {uri:?}, which is not registered")]
    MissingResource {
        /// `tool` or `resource`.
        kind: &'static str,
        /// Its name or URI.
        key: String,
        /// Where it was registered.
        at: String,
        /// The URI no resource has.
        uri: String,
    },
}

/// What an item needs of the rest of the server, checked or supplied when it is registered:
/// the resources it links to, a mistake made while defining it (reported by `try_build`, not
/// at the call that made it, so builders stay chainable), and an extension that serves it.
#[derive(Clone, Default)]
pub(crate) struct Needs {
    pub(crate) links: Vec<String>,
    pub(crate) fault: Option<String>,
    pub(crate) extension: Option<Arc<dyn Extension>>,
}

/// What kind of item a registration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
    Template,
}

impl Kind {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "resource template",
        }
    }
}

/// One registered item's needs, as checked.
#[derive(Debug)]
struct Needed {
    kind: Kind,
    key: String,
    at: &'static Location<'static>,
    links: Vec<String>,
    fault: Option<String>,
}

/// The registrations of one builder, in order.
#[derive(Debug, Default)]
pub(crate) struct Registrations(Vec<(Kind, String, Origin)>, Vec<Needed>);

/// Where an item was registered: the call, and what brought it when it came with others (a
/// mounted server, an upstream), said in words.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub(crate) at: &'static Location<'static>,
    pub(crate) by: Option<Arc<str>>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.by {
            Some(by) => write!(f, "{} ({by})", self.at),
            None => write!(f, "{}", self.at),
        }
    }
}

impl Registrations {
    pub(crate) fn add(&mut self, kind: Kind, key: &str, at: &'static Location<'static>) {
        self.0.push((kind, key.to_owned(), Origin { at, by: None }));
    }

    /// Register an item brought by something else (`by`: "mount \"a\" (its tool \"echo\")").
    pub(crate) fn add_by(&mut self, kind: Kind, key: &str, at: &'static Location<'static>, by: String) {
        self.0.push((
            kind,
            key.to_owned(),
            Origin {
                at,
                by: Some(by.into()),
            },
        ));
    }

    /// Remember what the item registered at `at` needs (nothing to remember: nothing kept).
    pub(crate) fn add_needs(&mut self, kind: Kind, key: &str, needs: &Needs, at: &'static Location<'static>) {
        if needs.links.is_empty() && needs.fault.is_none() {
            return;
        }
        self.1.push(Needed {
            kind,
            key: key.to_owned(),
            at,
            links: needs.links.clone(),
            fault: needs.fault.clone(),
        });
    }

    /// The first rule broken, in registration order.
    pub(crate) fn check(&self) -> Result<(), BuildError> {
        let mut seen: std::collections::HashMap<(Kind, &str), &Origin> = Default::default();
        for (kind, key, at) in &self.0 {
            if *kind == Kind::Tool {
                if let Some(rule) = tool_name_rule(key) {
                    return Err(BuildError::ToolName {
                        name: key.clone(),
                        at: at.to_string(),
                        rule,
                    });
                }
            }
            if let Some(first) = seen.insert((*kind, key), at) {
                return Err(BuildError::Duplicate {
                    kind: kind.word(),
                    key: key.clone(),
                    first: first.to_string(),
                    second: at.to_string(),
                });
            }
        }
        for needed in &self.1 {
            if let Some(reason) = &needed.fault {
                return Err(BuildError::Definition {
                    kind: needed.kind.word(),
                    key: needed.key.clone(),
                    at: needed.at.to_string(),
                    reason: reason.clone(),
                });
            }
        }
        for needed in &self.1 {
            for uri in &needed.links {
                if !seen.contains_key(&(Kind::Resource, uri.as_str())) {
                    return Err(BuildError::MissingResource {
                        kind: needed.kind.word(),
                        key: needed.key.clone(),
                        at: needed.at.to_string(),
                        uri: uri.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// What is wrong with a tool name, if anything (spec 2025-11-25 and later, "Tool Names").
pub(crate) fn tool_name_rule(name: &str) -> Option<String> {
    let length = name.chars().count();
    if length == 0 {
        return Some("is empty".into());
    }
    if length > 128 {
        return Some(format!("is {length} characters long"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    name.chars().find(|c| !allowed(*c)).map(|c| format!("contains {c:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_examples_are_valid_names_and_the_rest_are_named() {
        for ok in ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a", &"x".repeat(128)] {
            assert_eq!(tool_name_rule(ok), None, "{ok}");
        }
        assert_eq!(tool_name_rule("").as_deref(), Some("is empty"));
        assert_eq!(
            tool_name_rule(&"x".repeat(129)).as_deref(),
            Some("is 129 characters long")
        );
        assert_eq!(tool_name_rule("get user").as_deref(), Some("contains ' '"));
        assert_eq!(tool_name_rule("a,b").as_deref(), Some("contains ','"));
        assert_eq!(tool_name_rule("files/read").as_deref(), Some("contains '/'"));
        assert_eq!(tool_name_rule("naïve").as_deref(), Some("contains 'ï'"));
    }
}
