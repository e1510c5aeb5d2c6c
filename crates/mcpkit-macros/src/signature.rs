//! Reading a handler's signature: its receiver, which parameters are arguments (they make the
//! schema) and which are extractors (left out of it), and its return type. Every shape the
//! expansion cannot serve is refused here, on the offending span, saying what to write.

use syn::{FnArg, Ident, Pat, ReturnType, Signature, Type};

use crate::attrs::{ArgAttrs, Kind};

/// Extractor types by the last segment of their path: the ones mcpkit defines.
const EXTRACTORS: &[&str] = &["RequestContext", "State", "CancellationToken", "Uri", "Args", "RawArgs"];

/// Where the function is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A method of an impl block under `#[tools]`.
    Impl,
    /// A free function.
    Free,
}

/// One parameter.
pub(crate) enum Param {
    /// An argument: a field of the generated arguments struct, so a property of the schema.
    Argument {
        ident: Ident,
        ty: Type,
        attrs: Box<ArgAttrs>,
    },
    /// An extractor, passed through as it is.
    Extractor { ty: Type },
}

/// A handler's signature, checked.
pub(crate) struct Handler {
    /// `&self`.
    pub(crate) takes_self: bool,
    pub(crate) params: Vec<Param>,
    /// The declared return type.
    pub(crate) output: Type,
}

impl Handler {
    /// The argument parameters, in order.
    pub(crate) fn arguments(&self) -> impl Iterator<Item = (&Ident, &Type, &ArgAttrs)> {
        self.params.iter().filter_map(|p| match p {
            Param::Argument { ident, ty, attrs } => Some((ident, ty, &**attrs)),
            Param::Extractor { .. } => None,
        })
    }
}

/// An error over all of `tokens` (a whole type or receiver, not only its first token).
fn err<T>(tokens: impl quote::ToTokens, message: impl Into<String>) -> syn::Result<T> {
    Err(syn::Error::new_spanned(tokens, message.into()))
}

/// Check `sig` and sort its parameters; takes the `#[arg]` attributes off them.
pub(crate) fn read(kind: Kind, place: Place, sig: &mut Signature) -> syn::Result<Handler> {
    let what = kind.attr();
    let name = sig.ident.to_string();
    if sig.asyncness.is_none() {
        return err(
            sig.fn_token,
            format!("a `#[{what}]` function must be async: write `async fn {name}(…)`"),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return err(
            &sig.generics,
            format!(
                "a `#[{what}]` function cannot be generic: its schema is built from concrete types; \
                 write the concrete types in place of the type parameters"
            ),
        );
    }
    if let Some(v) = &sig.variadic {
        return err(v, format!("a `#[{what}]` function cannot be variadic"));
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            let hint = match kind {
                Kind::Tool => "`-> String`, `-> Json<T>` (structured output) or `-> Result<String, E>`",
                Kind::Prompt => "`-> String` (one user message) or `-> Vec<PromptMessage>`",
                Kind::Resource => "`-> String` (the text at the URI) or `-> ResourceContents`",
            };
            return err(
                &sig.ident,
                format!(
                    "`{name}` returns nothing, but a {what} answers with a result: add a return type such as {hint}"
                ),
            );
        }
    };
    if let Type::ImplTrait(t) = &output {
        return err(
            t,
            format!("a `#[{what}]` function must name its return type (the schema and the conversion come from it): write the concrete type instead of `impl …`"),
        );
    }

    let mut takes_self = false;
    let mut params = Vec::new();
    let mut extractor_count = 0;
    let mut uses_args_extractor = None;
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                if place == Place::Free {
                    return err(
                        &*r,
                        format!(
                            "`#[{what}]` on a method needs `#[mcpkit::tools]` on its impl block: write \
                             `#[mcpkit::tools]` above the `impl`, and `#[{what}]` on each method it serves"
                        ),
                    );
                }
                if r.colon_token.is_some() {
                    return err(
                        &*r,
                        format!("write `&self`: a `#[{what}]` method borrows the shared value"),
                    );
                }
                if r.reference.is_none() {
                    return err(
                        &*r,
                        format!("`{name}` takes `self` by value, but the methods of one `#[tools]` impl share one value (behind an `Arc`): write `&self`"),
                    );
                }
                if r.mutability.is_some() {
                    return err(
                        &*r,
                        format!("`{name}` takes `&mut self`, but requests run concurrently: write `&self` and keep what changes behind a lock or an atomic"),
                    );
                }
                takes_self = true;
            }
            FnArg::Typed(pt) => {
                let attrs = ArgAttrs::take(&mut pt.attrs)?;
                let ty = (*pt.ty).clone();
                if is_extractor(&ty) {
                    if let Some(span) = attrs.span {
                        return Err(syn::Error::new(
                            span,
                            "`#[arg]` describes an argument of the schema, but this parameter is an extractor (not in the schema): remove the `#[arg]`",
                        ));
                    }
                    if is_named(&ty, &["Args", "RawArgs"]) {
                        uses_args_extractor = Some(ty.clone());
                    }
                    extractor_count += 1;
                    params.push(Param::Extractor { ty });
                    continue;
                }
                let ident = match &*pt.pat {
                    Pat::Ident(p) if p.subpat.is_none() => p.ident.clone(),
                    other => {
                        return err(
                            other,
                            format!(
                            "name this parameter (`value: T`): the name of a {what} argument is its name on the wire"
                        ),
                        )
                    }
                };
                check_argument_type(kind, &ty)?;
                params.push(Param::Argument {
                    ident,
                    ty,
                    attrs: Box::new(attrs),
                });
            }
        }
    }
    let arguments = params.iter().filter(|p| matches!(p, Param::Argument { .. })).count();
    if let (Some(ty), true) = (uses_args_extractor, arguments > 0) {
        return err(
            ty,
            format!(
                "`{name}` takes its arguments both as an `Args`/`RawArgs` parameter and as plain parameters: \
                 move the plain ones into that struct, or drop it and list every argument as a parameter"
            ),
        );
    }
    let slots = extractor_count + usize::from(arguments > 0);
    if slots > 6 {
        return err(
            &sig.inputs,
            format!("a `#[{what}]` function takes at most six extractors (the plain arguments count as one): group some into a `State<S>`"),
        );
    }
    Ok(Handler {
        takes_self,
        params,
        output,
    })
}

fn check_argument_type(kind: Kind, ty: &Type) -> syn::Result<()> {
    let what = kind.attr();
    match ty {
        Type::Reference(r) => {
            let owned = match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => "String".to_owned(),
                Type::Slice(s) => format!("Vec<{}>", quote::ToTokens::to_token_stream(&s.elem)),
                other => quote::ToTokens::to_token_stream(other).to_string(),
            };
            err(
                r,
                format!("{what} arguments are decoded into owned values: write `{owned}` instead of a reference"),
            )
        }
        Type::ImplTrait(t) => err(
            t,
            format!("a {what} argument needs a concrete type (its schema comes from it): write the type instead of `impl …`"),
        ),
        _ => Ok(()),
    }
}

/// Whether the type's path ends in one of mcpkit's extractor names.
fn is_extractor(ty: &Type) -> bool {
    is_named(ty, EXTRACTORS)
}

fn is_named(ty: &Type, names: &[&str]) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| names.iter().any(|n| s.ident == n)),
        Type::Paren(p) => is_named(&p.elem, names),
        Type::Group(g) => is_named(&g.elem, names),
        _ => false,
    }
}
