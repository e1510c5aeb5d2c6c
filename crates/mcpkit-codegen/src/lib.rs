//! Typed Rust client stubs for one MCP server, generated from its `tools/list` (the engine of
//! `mcpkit codegen`; see the guide's codegen chapter).
//!
//! [`generate`] takes the tools and writes one Rust module: a client wrapper with one `async`
//! method per tool — one parameter per top-level property when the input schema is a plain
//! object, one argument struct otherwise — argument and result types generated from
//! `inputSchema` and `outputSchema` by the `typify` JSON-Schema generator, doc comments from
//! the descriptions, results decoded from `structuredContent` (the content's text when the tool
//! has no output schema), tool errors as `CallError::Tool`, and a
//! [fingerprint](fingerprint::of_tools) of the tools so a later run can tell whether the server
//! drifted ([`read_stamp`], [`drift`]).
//!
//! What cannot be typed falls back to `serde_json::Value` with a warning; tool and argument
//! names that are not Rust identifiers are made into ones. The module always compiles.
//!
//! ```
//! use mcpkit_types::schema::Tool;
//! let add = Tool::new(
//!     "add",
//!     serde_json::json!({
//!         "type": "object",
//!         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
//!         "required": ["a", "b"]
//!     })
//!     .as_object()
//!     .cloned()
//!     .unwrap_or_default(),
//! );
//! let out = mcpkit_codegen::generate(&[add], &mcpkit_codegen::Options::for_server("calc", "1.0.0"))?;
//! assert!(out.source.contains("pub async fn add(&self, a: i64, b: i64)"));
//! assert!(out.source.contains(&out.fingerprint));
//! # Ok::<(), mcpkit_codegen::Error>(())
//! ```
//!
//! # The generated module
//!
//! `FINGERPRINT`, the client (`new`, `client`, `into_inner`, one method per tool) and a module
//! per tool holding its named types. What the methods share is `mcpkit::client::generated`
//! (its `CallBuilder` sends each call and decodes the result); the module re-exports its
//! `CallError` (`Request`, `Tool`, `Arguments`, `Decode`) and `CallResult<T>`.
#![forbid(unsafe_code)]

mod docs;
mod emit;
pub mod fingerprint;
mod names;
mod schema;
mod types;
mod undocumented;

use mcpkit_types::schema::Tool;
use proc_macro2::TokenStream;

pub use fingerprint::{drift, read_stamp, Stamp};

/// How to generate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The client type's name (made into an identifier if it is not one).
    pub client_name: String,
    /// The server's name, for the docs.
    pub server_name: Option<String>,
    /// The server's version, for the docs.
    pub server_version: Option<String>,
}

impl Options {
    /// Options for the server `name` `version`: the client is named after it
    /// (`python-echo-server` → `PythonEchoClient`).
    pub fn for_server(name: &str, version: &str) -> Self {
        Options {
            client_name: client_name_for(name),
            server_name: Some(name.to_owned()),
            server_version: Some(version.to_owned()),
        }
    }
}

/// The client type name for a server name: upper camel case, a trailing `Server` word
/// dropped, `Client` appended.
pub fn client_name_for(server: &str) -> String {
    let base = names::camel(server, "Mcp");
    let base = match base.strip_suffix("Server") {
        Some(b) if !b.is_empty() => b.to_owned(),
        _ => base,
    };
    format!("{base}Client")
}

/// A generated module.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The Rust source, formatted.
    pub source: String,
    /// The fingerprint written into it.
    pub fingerprint: String,
    /// What was not typed, or was renamed, one sentence each (for stderr).
    pub warnings: Vec<String>,
}

/// Why nothing was generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// Names the client impl already uses, and helper names of the module.
const RESERVED_METHODS: &[&str] = &["new", "client", "into_inner"];
/// Module names that would shadow crates or the generator's own modules.
const RESERVED_MODULES: &[&str] = &[
    "std",
    "core",
    "alloc",
    "serde",
    "serde_json",
    "mcpkit",
    "error",
    "defaults",
    "builder",
];

/// Generate the module for `tools`.
pub fn generate(tools: &[Tool], options: &Options) -> Result<Generated, Error> {
    let mut sorted: Vec<&Tool> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut warnings = Vec::new();
    let mut methods_scope = names::Scope::with_reserved(RESERVED_METHODS);
    let mut modules_scope = names::Scope::with_reserved(RESERVED_MODULES);
    let mut methods = Vec::new();
    let mut modules = Vec::new();
    for tool in &sorted {
        // One scope for both, so a method and its types module share the name.
        let wanted = names::snake(&tool.name, "tool");
        let mut ident = methods_scope.claim(wanted.clone());
        while !modules_scope.is_free(&ident) {
            ident = methods_scope.claim(wanted.clone());
        }
        modules_scope.claim(ident.clone());
        if ident != tool.name {
            warnings.push(format!(
                "tool {:?} is not a Rust identifier (or clashes): its method is `{ident}`",
                tool.name
            ));
        }
        let (method, module) = tool_code(tool, &ident, &mut warnings);
        methods.push(method);
        modules.extend(module);
    }
    let fingerprint = fingerprint::of_tools(tools);
    let client = names::camel(&options.client_name, "McpClient");
    let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
    let about = match (nonempty(&options.server_name), nonempty(&options.server_version)) {
        (Some(n), Some(v)) => format!("the MCP server {} {}", docs::code(&n), docs::code(&v)),
        (Some(n), None) => format!("the MCP server {}", docs::code(&n)),
        _ => "an MCP server".to_owned(),
    };
    let body = emit::file(&client, &about, &fingerprint, &methods, &modules);
    let file: syn::File =
        syn::parse2(body).map_err(|e| Error(format!("internal error: the generated code does not parse: {e}")))?;
    let mut source = String::new();
    source.push_str(&format!(
        "//! {} generated by `mcpkit codegen` from its `tools/list`.\n",
        capitalised(&format!("A typed client for {about},"))
    ));
    source.push_str("//!\n");
    source.push_str("//! Do not edit: run `mcpkit codegen` again with the same target and `--out` to regenerate;\n");
    source.push_str("//! `mcpkit codegen --check` fails when the server's tools no longer match [`FINGERPRINT`].\n");
    source.push_str(
        "//! Include it as a public module; it needs `mcpkit`, `serde` (with `derive`) and `serde_json`.\n\n",
    );
    for tool in &sorted {
        source.push_str(&fingerprint::tool_line(tool));
        source.push('\n');
    }
    source.push('\n');
    source.push_str(&prettyplease::unparse(&file));
    Ok(Generated {
        source,
        fingerprint,
        warnings,
    })
}

fn capitalised(s: &str) -> String {
    let mut cs = s.chars();
    match cs.next() {
        Some(c) => c.to_uppercase().collect::<String>() + cs.as_str(),
        None => String::new(),
    }
}

/// The method and module of one tool; a tool whose typed code does not parse (a generator
/// bug) is emitted untyped instead.
fn tool_code(tool: &Tool, ident: &str, warnings: &mut Vec<String>) -> (TokenStream, Option<TokenStream>) {
    let prepared = schema::prepare(&tool.name, &tool.input_schema, tool.output_schema.as_ref());
    let typed = types::tool_types(&tool.name, ident, prepared);
    let code = emit::ToolCode {
        name: &tool.name,
        ident: ident.to_owned(),
        description: tool.description.as_deref(),
        types: typed,
    };
    let method = emit::method(&code);
    let module = emit::module(&code);
    let parses = syn::parse2::<syn::ImplItemFn>(method.clone()).is_ok()
        && module
            .as_ref()
            .is_none_or(|m| syn::parse2::<syn::File>(m.clone()).is_ok());
    if parses {
        warnings.extend(code.types.warnings.iter().cloned());
        return (method, module);
    }
    warnings.push(format!(
        "tool {:?}: its generated types do not parse; every argument and the result are serde_json::Value",
        tool.name
    ));
    let untyped = types::untyped(&tool.input_schema, tool.output_schema.is_some());
    let code = emit::ToolCode { types: untyped, ..code };
    (emit::method(&code), None)
}
