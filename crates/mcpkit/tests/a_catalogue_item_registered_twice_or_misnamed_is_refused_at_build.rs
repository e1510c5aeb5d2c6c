//! The builder refuses a catalogue that cannot be served as written: an item registered twice
//! (a tool or prompt by name, a resource by URI, a template by URI template — also when a
//! `#[mcpkit::tools]` group is added twice) and a tool name outside the spec's rules (1 to 128
//! of `A-Z a-z 0-9 _ - .`). `try_build` says which item and where each registration was made;
//! `build` stops with that message.

use mcpkit::server::{BuildError, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
use mcpkit::Server;

struct Notes;

#[mcpkit::tools]
impl Notes {
    /// Lists the notes.
    #[tool]
    async fn list_notes(&self) -> String {
        String::new()
    }
}

fn echo() -> ToolDef {
    ToolDef::new("echo", || async { "echo" })
}

#[test]
fn a_tool_registered_twice_names_both_places() {
    let first_line = line!() + 1;
    let builder = Server::builder().tool(echo());
    let second_line = line!() + 1;
    let refused = builder.tool(echo()).try_build().unwrap_err();
    let BuildError::Duplicate {
        kind,
        key,
        first,
        second,
    } = &refused
    else {
        panic!("{refused:?}")
    };
    assert_eq!((*kind, key.as_str()), ("tool", "echo"));
    assert!(first.contains(&format!("{}:{first_line}:", file!())), "{first}");
    assert!(second.contains(&format!("{}:{second_line}:", file!())), "{second}");
    assert!(
        refused
            .to_string()
            .starts_with("tool \"echo\" is registered twice: at "),
        "{refused}"
    );
}

#[test]
fn a_group_added_twice_is_refused() {
    let refused = Server::builder().tools(Notes).tools(Notes).try_build().unwrap_err();
    assert!(
        matches!(&refused, BuildError::Duplicate { kind: "tool", key, .. } if key == "list_notes"),
        "{refused:?}"
    );
}

#[test]
fn prompts_resources_and_templates_are_each_registered_once() {
    let prompt = || PromptDef::new("greet", || async { "hi" });
    let resource = || ResourceDef::text("file:///a.txt", "a", "text/plain", "a");
    let template = || ResourceTemplateDef::new("notes://{id}", "note", || async { String::new() }).unwrap();
    let cases = [
        ("prompt", "greet", Server::builder().prompt(prompt()).prompt(prompt())),
        (
            "resource",
            "file:///a.txt",
            Server::builder().resource(resource()).resource(resource()),
        ),
        (
            "resource template",
            "notes://{id}",
            Server::builder()
                .resource_template(template())
                .resource_template(template()),
        ),
    ];
    for (want_kind, want_key, builder) in cases {
        match builder.try_build() {
            Err(BuildError::Duplicate { kind, key, .. }) => assert_eq!((kind, key.as_str()), (want_kind, want_key)),
            other => panic!("{want_kind}: {other:?}"),
        }
    }
    // A prompt and a tool may share a name: they are different kinds.
    let server = Server::builder()
        .tool(ToolDef::new("greet", || async { "t" }))
        .prompt(prompt());
    assert!(server.try_build().is_ok());
}

#[test]
fn a_tool_name_outside_the_rules_is_refused_with_the_rule() {
    for (name, rule) in [
        ("get user", "contains ' '"),
        ("files/read", "contains '/'"),
        ("", "is empty"),
    ] {
        match Server::builder().tool(ToolDef::new(name, || async { "" })).try_build() {
            Err(e @ BuildError::ToolName { .. }) => {
                assert!(e.to_string().contains(rule), "{name:?}: {e}");
                assert!(e.to_string().contains(file!()), "{name:?}: {e}");
            }
            other => panic!("{name:?}: {other:?}"),
        }
    }
    let long = "x".repeat(128);
    assert!(Server::builder()
        .tool(ToolDef::new(&long, || async { "" }))
        .try_build()
        .is_ok());
}

#[test]
fn build_stops_with_the_same_message() {
    let stopped = std::panic::catch_unwind(|| Server::builder().tool(echo()).tool(echo()).build()).unwrap_err();
    let message = stopped.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.starts_with("mcpkit: cannot build the server: tool \"echo\" is registered twice"),
        "{message}"
    );
}
