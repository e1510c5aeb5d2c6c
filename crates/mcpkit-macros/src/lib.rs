//! The attribute macros of [mcpkit](https://docs.rs/mcpkit): `#[tools]`, `#[tool]`,
//! `#[prompt]` and `#[resource]`. Use them through the `mcpkit` crate (`mcpkit::tools`, …);
//! they are optional sugar over its explicit API (`ToolDef`, `PromptDef`, `ResourceDef`,
//! `ResourceTemplateDef`), and expand to exactly those calls.
//!
//! - [`macro@tools`] on an `impl` block serves its `#[tool]`, `#[prompt]` and `#[resource(..)]`
//!   methods; register the value with `ServerBuilder::tools`.
//! - [`macro@tool`], [`macro@prompt`] and [`macro@resource`] on a free `async fn` add a function
//!   `NAME_tool()` (`NAME_prompt()`, `NAME_resource()`) returning its definition.
//!
//! Plain parameters are the arguments (the input schema, the prompt's argument list, the
//! template's variables); `#[arg(description = "…", default = …)]` describes one. Parameters
//! of mcpkit's extractor types (`RequestContext`, `State<S>`, `CancellationToken`, `Uri`,
//! `Args<T>`, `RawArgs`) are passed through and left out of the schema. The doc comment is the
//! description. The return type decides the result exactly as for a hand-written handler: a
//! tool returning `Json<T>` gets `structuredContent` and an `outputSchema`.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, ToTokens};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemFn, ItemImpl};

mod attrs;
mod expand;
mod signature;
mod template;

use attrs::{attr_tokens, doc_text, ItemAttrs, Kind};
use expand::{Callee, Item};
use signature::Place;

/// Serve the `#[tool]`, `#[prompt]` and `#[resource("uri")]` methods of an impl block.
///
/// The type gets an implementation of `mcpkit::server::ToolBox`; pass a value of it to
/// `ServerBuilder::tools`. Its methods take `&self` (the value is shared behind an `Arc`, so the
/// type must be `Send + Sync + 'static`) or no receiver at all.
///
/// ```
/// use mcpkit::server::{Json, RequestContext};
/// use mcpkit::Server;
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum {
///     total: i64,
/// }
///
/// struct Calc {
///     offset: i64,
/// }
///
/// #[mcpkit::tools]
/// impl Calc {
///     /// Adds two numbers.
///     #[tool]
///     async fn add(&self, a: i64, #[arg(description = "The second term.", default = 1)] b: i64) -> i64 {
///         a + b + self.offset
///     }
///
///     /// Adds two numbers, as structured output.
///     #[tool(name = "sum", title = "Sum", read_only, idempotent)]
///     async fn sum(&self, a: i64, b: i64, cx: RequestContext) -> Json<Sum> {
///         cx.progress(1.0, Some(1.0), None);
///         Json(Sum { total: a + b })
///     }
///
///     /// Reviews a piece of code.
///     #[prompt]
///     async fn review(&self, code: String, focus: Option<String>) -> String {
///         format!("Review this for {}:\n{code}", focus.as_deref().unwrap_or("bugs"))
///     }
///
///     /// One note.
///     #[resource("notes://{id}", mime_type = "text/plain")]
///     async fn note(&self, id: String) -> String {
///         format!("note {id}")
///     }
/// }
///
/// let server = Server::builder().name("calc", "1.0.0").tools(Calc { offset: 0 }).build();
/// # let _ = server;
/// ```
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = TokenStream2::from(attr);
    if !attr.is_empty() {
        return error_with(
            syn::Error::new(
                attr.span(),
                "`#[mcpkit::tools]` takes no arguments: give names and hints on each method's `#[tool(..)]`",
            ),
            item.into(),
        )
        .into();
    }
    let imp: ItemImpl = match syn::parse(item.clone()) {
        Ok(imp) => imp,
        Err(_) => {
            let item = TokenStream2::from(item);
            return error_with(
                syn::Error::new_spanned(
                    &item,
                    "`#[mcpkit::tools]` goes on an impl block: `#[mcpkit::tools] impl MyServer { … }`; \
                     on a single function write `#[mcpkit::tool]`",
                ),
                item,
            )
            .into();
        }
    };
    expand_impl(imp).into()
}

fn expand_impl(mut imp: ItemImpl) -> TokenStream2 {
    let mut errors: Option<syn::Error> = None;
    let fail = |errors: &mut Option<syn::Error>, e: syn::Error| match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    };
    if let Some((_, path, _)) = &imp.trait_ {
        fail(
            &mut errors,
            syn::Error::new(
                path.span(),
                "`#[mcpkit::tools]` goes on an inherent impl (`impl MyServer { … }`), not on a trait impl",
            ),
        );
    }
    if !imp.generics.params.is_empty() {
        fail(
            &mut errors,
            syn::Error::new(
                imp.generics.span(),
                "`#[mcpkit::tools]` cannot serve a generic impl: write it for a concrete type (`impl MyServer { … }`)",
            ),
        );
    }

    let mut items: Vec<Item> = Vec::new();
    for member in imp.items.iter_mut() {
        let ImplItem::Fn(f) = member else { continue };
        let mut marks = Vec::new();
        f.attrs.retain(|a| match Kind::of(a) {
            Some(kind) => {
                marks.push((kind, a.clone()));
                false
            }
            None => true,
        });
        // The #[arg] attributes go whether or not the method is served.
        for input in f.sig.inputs.iter_mut() {
            if let syn::FnArg::Typed(pt) = input {
                if marks.is_empty() {
                    if let Err(e) = attrs::ArgAttrs::take(&mut pt.attrs) {
                        fail(&mut errors, e);
                    }
                }
            }
        }
        let Some((kind, mark)) = marks.first().cloned() else {
            continue;
        };
        if let Some((other, extra)) = marks.get(1) {
            fail(
                &mut errors,
                syn::Error::new(
                    extra.span(),
                    format!(
                    "`{}` is already a `#[{}]`; one function serves one item: write a second method for the `#[{}]`",
                    f.sig.ident,
                    kind.attr(),
                    other.attr()
                ),
                ),
            );
            continue;
        }
        // The macro requires `async` (handlers are futures), so a body without `.await` is fine.
        f.attrs.push(syn::parse_quote!(#[allow(clippy::unused_async)]));
        match read_item(kind, &mark, Place::Impl, &f.attrs, &mut f.sig) {
            Ok(item) => items.push(item),
            Err(e) => fail(&mut errors, e),
        }
    }

    // One name per tool, per prompt, one URI per resource.
    for (i, item) in items.iter().enumerate() {
        if let Some(first) = items[..i].iter().find(|o| o.kind == item.kind && o.key() == item.key()) {
            let what = match item.kind {
                Kind::Resource => "URI",
                _ => "name",
            };
            let mut e = syn::Error::new(
                item.name_span(),
                format!(
                    "two {}s have the {what} `{}`; give this one another with `#[{}({} = \"...\")]`",
                    item.kind.attr(),
                    item.key(),
                    item.kind.attr(),
                    if item.kind == Kind::Resource { "uri" } else { "name" },
                ),
            );
            e.combine(syn::Error::new(
                first.name_span(),
                format!("the first `{}` is here", first.key()),
            ));
            fail(&mut errors, e);
        }
    }

    if items.is_empty() && errors.is_none() {
        let (impl_token, self_ty) = (&imp.impl_token, &imp.self_ty);
        fail(&mut errors, syn::Error::new_spanned(
            quote!(#impl_token #self_ty),
            "this impl has no `#[tool]`, `#[prompt]` or `#[resource(\"uri\")]` method: mark the methods to serve, or remove `#[mcpkit::tools]`",
        ));
    }

    let self_ty = imp.self_ty.clone();
    let mut registrations = Vec::new();
    for item in &items {
        match item.definition(&Callee::Method(&self_ty)) {
            Ok((def, how)) => {
                let method = how.builder_method();
                registrations.push(quote!(let builder = builder.#method(#def);));
            }
            Err(e) => fail(&mut errors, e),
        }
    }
    if let Some(e) = errors {
        for member in imp.items.iter_mut() {
            if let ImplItem::Fn(f) = member {
                strip_arg_attrs(&mut f.sig);
            }
        }
        return error_with(e, imp.into_token_stream());
    }
    quote! {
        #imp

        #[automatically_derived]
        impl ::mcpkit::server::ToolBox for #self_ty {
            #[allow(unused_variables, clippy::redundant_clone)]
            fn register(self, builder: ::mcpkit::server::ServerBuilder) -> ::mcpkit::server::ServerBuilder {
                let __mcpkit_this = ::std::sync::Arc::new(self);
                #(#registrations)*
                builder
            }
        }
    }
}

fn read_item(
    kind: Kind,
    mark: &syn::Attribute,
    place: Place,
    fn_attrs: &[syn::Attribute],
    sig: &mut syn::Signature,
) -> syn::Result<Item> {
    let attrs = ItemAttrs::parse(kind, attr_tokens(mark)?)?;
    let handler = signature::read(kind, place, sig)?;
    Ok(Item {
        kind,
        attrs,
        doc: doc_text(fn_attrs),
        fn_ident: sig.ident.clone(),
        handler,
        mark: mark.clone(),
    })
}

/// A tool: on a method of a `#[mcpkit::tools]` impl (as `#[tool]`), or on a free `async fn`.
///
/// On a free function it adds `NAME_tool()`, returning the function's `ToolDef`; the function
/// itself stays as it is.
///
/// Keys: `name = "…"` (default: the function's name), `title = "…"`, `description = "…"`
/// (default: the doc comment), the hints `read_only`, `destructive`, `idempotent`, `open_world`
/// (each a flag, or `= false`), `icon = "https://…"` (repeatable), and `meta = {"key": …}`
/// (the definition's `_meta`, a JSON object; or `meta = EXPR` of type `Meta`).
///
/// ```
/// use mcpkit::server::CancellationToken;
/// use mcpkit::Server;
///
/// /// Says it back, loudly.
/// #[mcpkit::tool(title = "Shout", read_only, icon = "https://example.com/shout.png")]
/// async fn shout(
///     #[arg(description = "What to shout.")] text: String,
///     #[arg(default = 1)] times: usize,
///     cancel: CancellationToken,
/// ) -> Result<String, String> {
///     if cancel.is_cancelled() {
///         return Err("cancelled".into());
///     }
///     Ok(text.to_uppercase().repeat(times))
/// }
///
/// let def = shout_tool();
/// assert_eq!(def.tool().name, "shout");
/// assert_eq!(def.tool().input_schema["required"], serde_json::json!(["text"]));
/// let server = Server::builder().tool(shout_tool()).build();
/// # let _ = server;
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    free(Kind::Tool, attr.into(), item.into()).into()
}

/// A prompt: on a method of a `#[mcpkit::tools]` impl (as `#[prompt]`), or on a free `async fn`
/// (adding `NAME_prompt()`, returning its `PromptDef`).
///
/// Its plain parameters are the prompt's arguments, which are strings on the wire: `String`
/// (required) or `Option<String>` (optional). Keys: `name`, `title`, `description`, `meta`.
///
/// ```
/// use mcpkit::types::schema::PromptMessage;
///
/// /// Asks for a code review.
/// #[mcpkit::prompt(name = "code_review")]
/// async fn review(#[arg(description = "The code.")] code: String, focus: Option<String>) -> Vec<PromptMessage> {
///     vec![PromptMessage::user_text(format!("Review for {}:\n{code}", focus.unwrap_or_default()))]
/// }
///
/// let def = review_prompt();
/// let arguments = def.prompt().arguments.clone().unwrap_or_default();
/// assert_eq!(arguments[0].description.as_deref(), Some("The code."));
/// assert_eq!(arguments[1].required, Some(false));
/// ```
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    free(Kind::Prompt, attr.into(), item.into()).into()
}

/// A resource or resource template: `#[resource("uri")]` on a method of a `#[mcpkit::tools]`
/// impl, or `#[mcpkit::resource("uri")]` on a free `async fn` (adding `NAME_resource()`,
/// returning its `ResourceDef`, or `ResourceTemplateDef` when the URI is an RFC 6570 template).
///
/// A template's variables are the plain parameters (`String`, an integer or float type or
/// `bool`, parsed from the variable's text, or an `Option` of one), checked against the template
/// at compile time; a value that does not parse (`id: i64` read as `notes://abc`) is an
/// invalid-params error naming the variable and its type; a `Uri` parameter gets the URI read. Keys: the URI
/// (first, or `uri = "…"`), `name` (default: the function's name), `title`, `description`,
/// `mime_type`, `meta`.
///
/// ```
/// use mcpkit::server::Uri;
///
/// /// The server's readme.
/// #[mcpkit::resource("file:///readme.md", mime_type = "text/markdown")]
/// async fn readme() -> String {
///     "# Hello".to_owned()
/// }
///
/// /// A user's profile.
/// #[mcpkit::resource("users://{id}/profile")]
/// async fn profile(id: String, Uri(uri): Uri) -> String {
///     format!("{uri}: the profile of {id}")
/// }
///
/// let server = mcpkit::Server::builder()
///     .resource(readme_resource())
///     .resource_template(profile_resource())
///     .build();
/// # let _ = server;
/// ```
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    free(Kind::Resource, attr.into(), item.into()).into()
}

fn free(kind: Kind, attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let mut f: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let message = format!(
                "`#[mcpkit::{0}]` goes on an `async fn`; to serve the methods of an impl block, put \
                 `#[mcpkit::tools]` on the impl and `#[{0}]` on each method",
                kind.attr()
            );
            return error_with(syn::Error::new_spanned(&item, message), item);
        }
    };
    let mark: syn::Attribute = syn::parse_quote!(#[mcpkit::placeholder(#attr)]);
    let item = match read_item(kind, &mark, Place::Free, &f.attrs, &mut f.sig) {
        Ok(item) => item,
        Err(e) => {
            strip_arg_attrs(&mut f.sig);
            return error_with(e, f.into_token_stream());
        }
    };
    let (def, how) = match item.definition(&Callee::Free) {
        Ok(d) => d,
        Err(e) => return error_with(e, f.into_token_stream()),
    };
    f.attrs.push(syn::parse_quote!(#[allow(clippy::unused_async)]));
    let vis = &f.vis;
    let maker = format_ident!("{}_{}", f.sig.ident, kind.attr());
    let def_type = how.def_type();
    let doc = format!(
        "The definition of the {} `{}` (made by `#[mcpkit::{}]`): register it with `ServerBuilder::{}`.",
        kind.attr(),
        item.key(),
        kind.attr(),
        how.builder_method()
    );
    quote! {
        #f

        #[doc = #doc]
        #vis fn #maker() -> #def_type #def
    }
}

/// Take the `#[arg]` attributes off every parameter (they mean nothing to the compiler).
fn strip_arg_attrs(sig: &mut syn::Signature) {
    for input in sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !a.path().is_ident("arg"));
        }
    }
}

/// The error, and the item as written (so uses of it do not fail too).
fn error_with(e: syn::Error, item: TokenStream2) -> TokenStream2 {
    let errors = e.to_compile_error();
    quote!(#errors #item)
}
