//! What the builder checks before a server starts: each catalogue item registered once (by
//! its name, or its URI / URI template), and tool names within the spec's rules (SEP-986).
//! Every registration remembers where in the program it was made, so an error names both
//! places of a duplicate.

use std::panic::Location;

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
    fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "resource template",
        }
    }
}

/// The registrations of one builder, in order.
#[derive(Debug, Default)]
pub(crate) struct Registrations(Vec<(Kind, String, &'static Location<'static>)>);

impl Registrations {
    pub(crate) fn add(&mut self, kind: Kind, key: &str, at: &'static Location<'static>) {
        self.0.push((kind, key.to_owned(), at));
    }

    /// The first rule broken, in registration order.
    pub(crate) fn check(&self) -> Result<(), BuildError> {
        let mut seen: std::collections::HashMap<(Kind, &str), &'static Location<'static>> = Default::default();
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
