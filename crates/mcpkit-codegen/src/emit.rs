//! The Rust code of a generated module: the client wrapper with one method per tool, the error
//! type, the decoding helpers the methods use, and each tool's types module.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::docs;
use crate::types::{Args, Output, ToolTypes};

/// One tool, ready to emit.
pub(crate) struct ToolCode<'a> {
    /// The name on the wire.
    pub(crate) name: &'a str,
    /// The method (and, when it has types, module) name.
    pub(crate) ident: String,
    /// The tool's description.
    pub(crate) description: Option<&'a str>,
    /// Its types.
    pub(crate) types: ToolTypes,
}

/// Which helpers the methods call (only those are emitted: no dead code).
#[derive(Default)]
pub(crate) struct Uses {
    argument: bool,
    structured: bool,
    text: bool,
}

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

fn doc_attrs(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|l| format!(" {l}").trim_end().to_owned());
    quote!(#(#[doc = #lines])*)
}

/// The method of one tool (and the helpers it needs, recorded in `uses`). Helpers are called
/// as `self::helper` so that a parameter of the same name cannot shadow them.
pub(crate) fn method(tool: &ToolCode<'_>, uses: &mut Uses) -> TokenStream {
    let name = tool.name;
    let method = ident(&tool.ident);
    let mut doc = tool.description.map(docs::lines).unwrap_or_default();
    if !doc.is_empty() {
        doc.push(String::new());
    }
    doc.push(format!("Calls the tool {}.", docs::code(name)));
    let (params, build) = match &tool.types.args {
        Args::Params(params) => {
            let described: Vec<&crate::types::Param> = params.iter().filter(|p| p.description.is_some()).collect();
            if !described.is_empty() {
                doc.push(String::new());
                doc.push("Arguments:".into());
                for p in described {
                    let lines = p.description.as_deref().map(docs::lines).unwrap_or_default();
                    match lines.as_slice() {
                        [one] if !one.starts_with('`') => doc.push(format!("- `{}`: {one}", p.ident)),
                        _ => {
                            // Several lines, or a text block: indented under the list item.
                            doc.push(format!("- `{}`:", p.ident));
                            doc.extend(lines.iter().map(|l| format!("  {l}")));
                        }
                    }
                }
            }
            let decls = params.iter().map(|p| {
                let i = ident(&p.ident);
                let t = &p.ty;
                quote!(#i: #t)
            });
            let puts = params.iter().map(|p| {
                let i = ident(&p.ident);
                let key = &p.key;
                if p.optional {
                    quote! {
                        if let ::std::option::Option::Some(value) = &#i {
                            self::argument(&mut mcpkit_arguments, #name, #key, value)?;
                        }
                    }
                } else {
                    quote!(self::argument(&mut mcpkit_arguments, #name, #key, &#i)?;)
                }
            });
            let build = if params.is_empty() {
                quote!(let mcpkit_arguments = ::serde_json::Map::new();)
            } else {
                uses.argument = true;
                quote! {
                    let mut mcpkit_arguments = ::serde_json::Map::new();
                    #(#puts)*
                }
            };
            (quote!(#(, #decls)*), build)
        }
        Args::Whole(ty) => (quote!(, args: #ty), quote!(let mcpkit_arguments = args;)),
    };
    let (ret, finish) = match &tool.types.output {
        Output::Text => {
            uses.text = true;
            (quote!(::std::string::String), quote!(self::text(#name, mcpkit_result)))
        }
        Output::Structured { ty, unwrap } => {
            uses.structured = true;
            (quote!(#ty), quote!(self::structured(#name, mcpkit_result, #unwrap)))
        }
    };
    let doc = doc_attrs(&doc);
    let many = match &tool.types.args {
        Args::Params(p) if p.len() > 6 => quote!(#[allow(clippy::too_many_arguments)]),
        _ => quote!(),
    };
    quote! {
        #doc
        #many
        pub async fn #method(&self #params) -> CallResult<#ret> {
            #build
            let mcpkit_result = self
                .client
                .call_tool(#name, mcpkit_arguments)
                .await
                .map_err(CallError::Request)?;
            #finish
        }
    }
}

/// The module of one tool's types, when it has any.
pub(crate) fn module(tool: &ToolCode<'_>) -> Option<TokenStream> {
    let items = tool.types.module.as_ref()?;
    // Document what the schema left undescribed (when the items parse: otherwise the caller
    // finds out and falls back).
    let items = match syn::parse2::<syn::File>(items.clone()) {
        Ok(mut file) => {
            crate::undocumented::fill(&mut file.items);
            quote!(#file)
        }
        Err(_) => items.clone(),
    };
    let m = ident(&tool.ident);
    let doc = format!(" Types of the tool {}.", docs::code(tool.name));
    Some(quote! {
        #[doc = #doc]
        pub mod #m {
            #items
        }
    })
}

/// The whole body of the file (after the header comments).
pub(crate) fn file(
    client: &str,
    about: &str,
    fingerprint: &str,
    methods: &[TokenStream],
    modules: &[TokenStream],
    uses: &Uses,
) -> TokenStream {
    let client = format_ident!("{}", client);
    let client_doc = format!(" A typed client for {about}: one method per tool.");
    let argument = uses.argument.then(|| {
        quote! {
            /// Put one argument into the arguments object.
            fn argument<T: ::serde::Serialize>(
                arguments: &mut ::serde_json::Map<::std::string::String, ::serde_json::Value>,
                tool: &str,
                key: &str,
                value: &T,
            ) -> CallResult<()> {
                let value = ::serde_json::to_value(value).map_err(|e| CallError::Arguments {
                    tool: tool.to_owned(),
                    reason: e.to_string(),
                })?;
                arguments.insert(key.to_owned(), value);
                Ok(())
            }
        }
    });
    let structured = uses.structured.then(|| {
        quote! {
            /// Decode a result's `structuredContent` (from a server without it, the JSON in its first
            /// text block); with `unwrap`, the `result` member of it.
            fn structured<T: ::serde::de::DeserializeOwned>(
                tool: &str,
                result: ::mcpkit::types::schema::CallToolResult,
                unwrap: bool,
            ) -> CallResult<T> {
                if result.is_error() {
                    return Err(tool_error(tool, result));
                }
                let decode = |reason: ::std::string::String| CallError::Decode {
                    tool: tool.to_owned(),
                    reason,
                };
                let value = match result.structured_content {
                    Some(value) => value,
                    None => {
                        let text = content_text(&result.content);
                        ::serde_json::from_str(&text)
                            .map_err(|e| decode(format!("no structuredContent, and the text is not JSON: {e}")))?
                    }
                };
                let value = match value {
                    ::serde_json::Value::Object(mut members) if unwrap => members
                        .remove("result")
                        .ok_or_else(|| decode("structuredContent has no \"result\" member".to_owned()))?,
                    other => other,
                };
                ::serde_json::from_value(value).map_err(|e| decode(e.to_string()))
            }
        }
    });
    let text = uses.text.then(|| {
        quote! {
            /// The text of a result without an output schema.
            fn text(tool: &str, result: ::mcpkit::types::schema::CallToolResult) -> CallResult<::std::string::String> {
                if result.is_error() {
                    return Err(tool_error(tool, result));
                }
                Ok(content_text(&result.content))
            }
        }
    });
    let error_helpers = (uses.structured || uses.text).then(|| {
        quote! {
            /// The tool error a result with `isError: true` stands for.
            fn tool_error(tool: &str, result: ::mcpkit::types::schema::CallToolResult) -> CallError {
                CallError::Tool {
                    tool: tool.to_owned(),
                    message: content_text(&result.content),
                    content: result.content,
                }
            }

            /// The text blocks of a result, one per line.
            fn content_text(content: &[::mcpkit::types::schema::ContentBlock]) -> ::std::string::String {
                content
                    .iter()
                    .filter_map(|block| match block {
                        ::mcpkit::types::schema::ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect::<::std::vec::Vec<_>>()
                    .join("\n")
            }
        }
    });
    quote! {
        /// The fingerprint of the tools this file was generated from (SHA-256 of their canonical
        /// JSON); `mcpkit codegen --check` compares it with the server's tools.
        pub const FINGERPRINT: &str = #fingerprint;

        /// Why a call failed.
        #[derive(Debug)]
        pub enum CallError {
            /// The request failed: connection, timeout, or a JSON-RPC error from the server.
            Request(::mcpkit::Error),
            /// The tool ran and reported an error (`isError: true`).
            Tool {
                /// The tool's name.
                tool: ::std::string::String,
                /// The text of the error content.
                message: ::std::string::String,
                /// The error content as the server sent it.
                content: ::std::vec::Vec<::mcpkit::types::schema::ContentBlock>,
            },
            /// An argument could not be turned into JSON.
            Arguments {
                /// The tool's name.
                tool: ::std::string::String,
                /// What went wrong.
                reason: ::std::string::String,
            },
            /// The result does not decode as the generated type.
            Decode {
                /// The tool's name.
                tool: ::std::string::String,
                /// What went wrong.
                reason: ::std::string::String,
            },
        }

        impl ::std::fmt::Display for CallError {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self {
                    CallError::Request(e) => write!(f, "{e}"),
                    CallError::Tool { tool, message, .. } => write!(f, "tool {tool:?} failed: {message}"),
                    CallError::Arguments { tool, reason } => {
                        write!(f, "an argument of tool {tool:?} is not JSON: {reason}")
                    }
                    CallError::Decode { tool, reason } => {
                        write!(f, "the result of tool {tool:?} does not decode: {reason}")
                    }
                }
            }
        }

        impl ::std::error::Error for CallError {
            fn source(&self) -> ::std::option::Option<&(dyn ::std::error::Error + 'static)> {
                match self {
                    CallError::Request(e) => Some(e),
                    _ => None,
                }
            }
        }

        /// What a method returns.
        pub type CallResult<T> = ::std::result::Result<T, CallError>;

        #[doc = #client_doc]
        #[derive(Clone)]
        pub struct #client {
            client: ::mcpkit::Client,
        }

        impl ::std::fmt::Debug for #client {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!(#client)).finish_non_exhaustive()
            }
        }

        impl #client {
            /// Wrap a connected client.
            pub fn new(client: ::mcpkit::Client) -> Self {
                Self { client }
            }

            /// The connected client, for everything besides these tools.
            pub fn client(&self) -> &::mcpkit::Client {
                &self.client
            }

            /// The connected client back.
            pub fn into_inner(self) -> ::mcpkit::Client {
                self.client
            }

            #(#methods)*
        }

        #argument
        #structured
        #text
        #error_helpers

        #(#modules)*
    }
}
