//! The expansion of one handler function into its definition (`ToolDef`, `PromptDef`,
//! `ResourceDef` or `ResourceTemplateDef`): the explicit API, written out.
//!
//! Plain parameters become the fields of an arguments struct defined next to the definition
//! (deriving `Deserialize` and `JsonSchema`, so it is the input schema exactly as a hand-written
//! `Args<T>` would give); extractors are passed through. Each parameter and the return type get
//! a check spanned on the user's code, so a type that does not fit is reported there with the
//! trait's own note on what to write instead.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitBool, Type};

use crate::attrs::{ItemAttrs, Kind};
use crate::signature::{Handler, Param};
use crate::template;

/// One function to serve, read and checked.
pub(crate) struct Item {
    pub(crate) kind: Kind,
    pub(crate) attrs: ItemAttrs,
    pub(crate) doc: Option<String>,
    pub(crate) fn_ident: Ident,
    pub(crate) handler: Handler,
    /// The attribute, for errors about the item as a whole.
    pub(crate) mark: syn::Attribute,
}

/// How the generated handler reaches the user's function.
pub(crate) enum Callee<'a> {
    /// A free function, called by name.
    Free,
    /// A function of `impl Ty`; with `&self`, through the `Arc` named `__mcpkit_this`.
    Method(&'a Type),
}

/// What a definition is registered with on the builder.
pub(crate) enum Registration {
    Tool,
    Prompt,
    Resource,
    Template,
}

impl Registration {
    /// The `ServerBuilder` method that takes the definition.
    pub(crate) fn builder_method(&self) -> Ident {
        let name = match self {
            Registration::Tool => "tool",
            Registration::Prompt => "prompt",
            Registration::Resource => "resource",
            Registration::Template => "resource_template",
        };
        Ident::new(name, Span::call_site())
    }

    /// The definition's type.
    pub(crate) fn def_type(&self) -> TokenStream {
        match self {
            Registration::Tool => quote!(::mcpkit::server::ToolDef),
            Registration::Prompt => quote!(::mcpkit::server::PromptDef),
            Registration::Resource => quote!(::mcpkit::server::ResourceDef),
            Registration::Template => quote!(::mcpkit::server::ResourceTemplateDef),
        }
    }
}

impl Item {
    /// The name on the wire: a tool's or prompt's name, a resource's URI.
    pub(crate) fn key(&self) -> String {
        match self.kind {
            Kind::Resource => self.attrs.uri.as_ref().map(|u| u.value()).unwrap_or_default(),
            _ => self.name(),
        }
    }

    /// The `name`: given, or the function's.
    pub(crate) fn name(&self) -> String {
        self.attrs
            .name
            .as_ref()
            .map_or_else(|| self.fn_ident.unraw().to_string(), |n| n.value())
    }

    /// The span to blame for a duplicate name.
    pub(crate) fn name_span(&self) -> Span {
        match self.kind {
            Kind::Resource => self.attrs.uri.as_ref().map_or(self.mark.span(), |u| u.span()),
            _ => self.attrs.name.as_ref().map_or(self.fn_ident.span(), |n| n.span()),
        }
    }

    /// The definition, as an expression, and how to register it.
    pub(crate) fn definition(&self, callee: &Callee<'_>) -> syn::Result<(TokenStream, Registration)> {
        let registration = self.registration()?;
        let arguments: Vec<_> = self.handler.arguments().collect();

        // The arguments struct and the defaults its fields name.
        let mut fields = Vec::new();
        let mut defaults = Vec::new();
        for (ident, ty, attrs) in &arguments {
            let doc = attrs.description.as_ref().map(|d| quote!(#[doc = #d]));
            let default = match &attrs.default {
                None => None,
                Some(None) => Some(quote!(#[serde(default)])),
                Some(Some(expr)) => {
                    let f = format_ident!("mcpkit_default_{}", ident.unraw());
                    let value = match expr {
                        Expr::Lit(l) if matches!(l.lit, Lit::Str(_)) => quote!(::core::convert::Into::into(#expr)),
                        _ => quote!(#expr),
                    };
                    defaults.push(quote_spanned! {expr.span()=> fn #f() -> #ty { #value } });
                    let path = f.to_string();
                    Some(quote!(#[serde(default = #path)]))
                }
            };
            fields.push(quote!(#doc #default #ident: #ty));
        }
        let derive = match self.kind {
            Kind::Resource => quote! {
                #[derive(::mcpkit::__private::serde::Deserialize)]
                #[serde(crate = "::mcpkit::__private::serde")]
            },
            _ => quote! {
                #[derive(::mcpkit::__private::serde::Deserialize, ::mcpkit::schemars::JsonSchema)]
                #[serde(crate = "::mcpkit::__private::serde")]
                #[schemars(crate = "::mcpkit::schemars")]
            },
        };
        let arguments_struct = (!arguments.is_empty()).then(|| {
            quote! {
                #derive
                struct McpkitArguments { #(#fields,)* }
                #(#defaults)*
            }
        });

        // The checks, each spanned on the user's type.
        let (argument_check, extractor_check, result_check) = match self.kind {
            Kind::Tool => ("tool_argument", "tool_extractor", "tool_result"),
            Kind::Prompt => ("prompt_argument", "prompt_extractor", "prompt_result"),
            Kind::Resource => ("template_variable", "resource_extractor", "resource_result"),
        };
        let (argument_check, extractor_check, result_check) = (
            Ident::new(argument_check, Span::call_site()),
            Ident::new(extractor_check, Span::call_site()),
            Ident::new(result_check, Span::call_site()),
        );
        let mut checks = Vec::new();
        for param in &self.handler.params {
            checks.push(match param {
                // A tool argument held in a container is checked where it is written: the
                // container's own check would blame `Vec<Tag>` with the raw trait error.
                Param::Argument { ty, .. } if matches!(self.kind, Kind::Tool) && held_types(ty).is_some() => {
                    let parts = held_leaves(ty).into_iter().map(|part| {
                        quote_spanned! {part.span()=> ::mcpkit::__private::tool_argument_part::<#part>(); }
                    });
                    quote!(#(#parts)*)
                }
                Param::Argument { ty, .. } => {
                    quote_spanned! {ty.span()=> ::mcpkit::__private::#argument_check::<#ty>(); }
                }
                Param::Extractor { ty } => {
                    quote_spanned! {ty.span()=> ::mcpkit::__private::#extractor_check::<#ty>(); }
                }
            });
        }
        let output = &self.handler.output;
        checks.push(quote_spanned! {output.span()=> ::mcpkit::__private::#result_check::<#output>(); });

        // The handler: a closure over extractors that calls the function.
        let mut closure_params = Vec::new();
        if !arguments.is_empty() {
            closure_params.push(quote! {
                ::mcpkit::server::Args(__mcpkit_args): ::mcpkit::server::Args<McpkitArguments>
            });
        }
        let mut call_args = Vec::new();
        for (i, param) in self.handler.params.iter().enumerate() {
            match param {
                Param::Argument { ident, .. } => call_args.push(quote!(__mcpkit_args.#ident)),
                Param::Extractor { ty } => {
                    let e = format_ident!("__mcpkit_extractor_{i}");
                    closure_params.push(quote!(#e: #ty));
                    call_args.push(quote!(#e));
                }
            }
        }
        let f = &self.fn_ident;
        let (outer, inner, call) = match callee {
            Callee::Free => (quote!(), quote!(), quote!(#f(#(#call_args),*))),
            Callee::Method(ty) if self.handler.takes_self => (
                quote!(let __mcpkit_this = ::std::sync::Arc::clone(&__mcpkit_this);),
                quote!(let __mcpkit_this = ::std::sync::Arc::clone(&__mcpkit_this);),
                quote!(<#ty>::#f(&*__mcpkit_this, #(#call_args),*)),
            ),
            Callee::Method(ty) => (quote!(), quote!(), quote!(<#ty>::#f(#(#call_args),*))),
        };
        let handler = quote! {
            move |#(#closure_params),*| {
                #inner
                async move { #call.await }
            }
        };

        let name = self.name();
        let constructor = match registration {
            Registration::Tool => quote!(::mcpkit::server::ToolDef::new(#name, #handler)),
            Registration::Prompt => quote!(::mcpkit::server::PromptDef::new(#name, #handler)),
            Registration::Resource => {
                let uri = &self.attrs.uri;
                quote!(::mcpkit::server::ResourceDef::new(#uri, #name, #handler))
            }
            Registration::Template => {
                let uri = &self.attrs.uri;
                quote!(::mcpkit::__private::template(#uri, #name, #handler))
            }
        };
        let settings = self.settings();
        let expr = quote! {{
            #arguments_struct
            #(#checks)*
            #outer
            #constructor #(#settings)*
        }};
        Ok((expr, registration))
    }

    /// Concrete resource or template; for a template, every argument must be one of its variables.
    fn registration(&self) -> syn::Result<Registration> {
        match self.kind {
            Kind::Tool => Ok(Registration::Tool),
            Kind::Prompt => Ok(Registration::Prompt),
            Kind::Resource => {
                let Some(uri) = &self.attrs.uri else {
                    return Err(syn::Error::new_spanned(
                        &self.mark,
                        "a `#[resource]` needs its URI: write `#[resource(\"file:///notes.txt\")]`, or a template such as `#[resource(\"notes://{id}\")]`",
                    ));
                };
                let variables = template::variables(uri)?;
                for (ident, _, _) in self.handler.arguments() {
                    let name = ident.unraw().to_string();
                    if !variables.contains(&name) {
                        let hint = if variables.is_empty() {
                            format!(
                                "`{}` has no variables; put `{{{name}}}` in it, or take `{name}` out of the parameters",
                                uri.value()
                            )
                        } else {
                            format!(
                                "its variables are {}; rename the parameter, or add `{{{name}}}` to the template",
                                variables
                                    .iter()
                                    .map(|v| format!("`{v}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        };
                        return Err(syn::Error::new(
                            ident.span(),
                            format!("`{name}` is not a variable of the URI template: {hint}"),
                        ));
                    }
                }
                Ok(if variables.is_empty() {
                    Registration::Resource
                } else {
                    Registration::Template
                })
            }
        }
    }

    /// The builder calls after the constructor: description, title, hints, icons, MIME type.
    fn settings(&self) -> Vec<TokenStream> {
        let a = &self.attrs;
        let mut out = Vec::new();
        let description = a.description.as_ref().map(|d| d.value()).or_else(|| self.doc.clone());
        if let Some(d) = description {
            out.push(quote!(.description(#d)));
        }
        if let Some(t) = &a.title {
            out.push(quote!(.title(#t)));
        }
        if let Some(m) = &a.mime_type {
            out.push(quote!(.mime_type(#m)));
        }
        let hints: Vec<TokenStream> = [
            (&a.read_only, "read_only"),
            (&a.destructive, "destructive"),
            (&a.idempotent, "idempotent"),
            (&a.open_world, "open_world"),
        ]
        .into_iter()
        .filter_map(|(flag, method)| {
            let flag = flag.as_ref()?;
            let method = Ident::new(method, Span::call_site());
            Some(quote!(.#method(#flag)))
        })
        .collect();
        if !hints.is_empty() {
            out.push(quote!(.annotations(::mcpkit::types::schema::ToolAnnotations::default() #(#hints)*)));
        }
        if !a.icons.is_empty() {
            let icons = &a.icons;
            out.push(quote!(.icons(::std::vec![#(::mcpkit::types::schema::Icon::new(#icons)),*])));
        }
        match &a.meta {
            Some(Expr::Verbatim(object)) => out.push(quote!(.meta(::mcpkit::__private::meta(
                ::mcpkit::__private::json!(#object)
            )))),
            Some(expr) => out.push(quote!(.meta(#expr))),
            None => {}
        }
        // After `meta`, which replaces the whole `_meta`.
        if let Some(view) = &a.ui {
            out.push(quote!(.ui(#view)));
        }
        if let Some(scopes) = &a.scopes {
            out.push(quote!(.require_scopes(#scopes)));
        }
        if let Some(tags) = &a.tags {
            out.push(quote!(.tags(#tags)));
        }
        if a.hidden.as_ref().is_some_and(LitBool::value) {
            out.push(quote!(.hidden()));
        }
        out
    }
}

/// The types a container argument holds (`Vec<T>`, `Option<T>`, maps' keys and values, arrays,
/// tuples, …), or `None` for a type that is no container serde and schemars both know. Not
/// `Box`: `Box<str>` holds an unsized type, which the check cannot name.
fn held_types(ty: &Type) -> Option<Vec<&Type>> {
    match ty {
        Type::Array(a) => Some(vec![&*a.elem]),
        Type::Paren(p) => Some(vec![&*p.elem]),
        Type::Group(g) => Some(vec![&*g.elem]),
        Type::Tuple(t) if !t.elems.is_empty() => Some(t.elems.iter().collect()),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            const CONTAINERS: &[&str] = &[
                "Vec",
                "VecDeque",
                "LinkedList",
                "Option",
                "HashMap",
                "BTreeMap",
                "HashSet",
                "BTreeSet",
                "IndexMap",
                "IndexSet",
            ];
            if !CONTAINERS.iter().any(|c| last.ident == c) {
                return None;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            let held: Vec<&Type> = args
                .args
                .iter()
                .filter_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            (!held.is_empty()).then_some(held)
        }
        _ => None,
    }
}

/// The innermost types a container argument holds: `Vec<Option<Tag>>` gives `Tag`.
fn held_leaves(ty: &Type) -> Vec<&Type> {
    match held_types(ty) {
        Some(held) => held.into_iter().flat_map(held_leaves).collect(),
        None => vec![ty],
    }
}
