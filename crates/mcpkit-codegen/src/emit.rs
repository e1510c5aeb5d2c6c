//! The Rust code of a generated module: the client wrapper with one method per tool and each
//! tool's types module. What the methods share (the call, its error, the result decoding, the
//! types' conversion error) is `mcpkit::client::generated`, which they call.

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

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

fn doc_attrs(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|l| format!(" {l}").trim_end().to_owned());
    quote!(#(#[doc = #lines])*)
}

/// The path of the support module (absolute, so that no generated name can shadow it).
fn support() -> TokenStream {
    quote!(::mcpkit::client::generated)
}

/// The method of one tool: a `CallBuilder` with its arguments, sent by the decoder its output
/// needs.
pub(crate) fn method(tool: &ToolCode<'_>) -> TokenStream {
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
                    quote!(.optional_argument(#key, &#i)?)
                } else {
                    quote!(.argument(#key, &#i)?)
                }
            });
            (quote!(#(, #decls)*), quote!(#(#puts)*))
        }
        Args::Whole(ty) => (quote!(, args: #ty), quote!(.arguments(&args)?)),
    };
    let support = support();
    let (ret, finish) = match &tool.types.output {
        Output::Text => (quote!(::std::string::String), quote!(text)),
        Output::Structured { ty, unwrap: true } => (quote!(#ty), quote!(structured_result_member)),
        Output::Structured { ty, unwrap: false } => (quote!(#ty), quote!(structured)),
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
            #support::CallBuilder::new(&self.client, #name)
                #build
                .#finish()
                .await
        }
    }
}

/// The generator writes the same `error` module (its `ConversionError`) into every types
/// module: use the support module's one instead, under the same name.
fn share_conversion_error(items: &mut [syn::Item]) {
    let support = support();
    for item in items {
        if matches!(item, syn::Item::Mod(m) if m.ident == "error") {
            *item = syn::parse_quote!(pub use #support::error;);
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
            share_conversion_error(&mut file.items);
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
) -> TokenStream {
    let client = format_ident!("{}", client);
    let client_doc = format!(" A typed client for {about}: one method per tool.");
    let support = support();
    quote! {
        /// The fingerprint of the tools this file was generated from (SHA-256 of their canonical
        /// JSON); `mcpkit codegen --check` compares it with the server's tools.
        pub const FINGERPRINT: &str = #fingerprint;

        pub use #support::{CallError, CallResult};

        #[doc = #client_doc]
        #[derive(Clone, Debug)]
        pub struct #client {
            client: ::mcpkit::Client,
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

        #(#modules)*
    }
}
