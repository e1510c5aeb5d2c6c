//! Reading the macros' own attributes: `#[tool(..)]`, `#[prompt(..)]`, `#[resource(..)]` on a
//! function and `#[arg(..)]` on a parameter, plus doc comments (the descriptions).

use proc_macro2::Span;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Lit, LitBool, LitStr, Token};

/// Which catalogue item a function serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// The attribute's name, as users write it.
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    /// The kind an attribute path names (`tool`, `mcpkit::tool`), if any.
    pub(crate) fn of(attr: &Attribute) -> Option<Kind> {
        let path = attr.path();
        let last = path.segments.last()?.ident.to_string();
        let prefixed_ok = path.segments.len() == 1 || path.segments.first().is_some_and(|s| s.ident == "mcpkit");
        if !prefixed_ok {
            return None;
        }
        match last.as_str() {
            "tool" => Some(Kind::Tool),
            "prompt" => Some(Kind::Prompt),
            "resource" => Some(Kind::Resource),
            _ => None,
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "title",
                "description",
                "read_only",
                "destructive",
                "idempotent",
                "open_world",
                "icon",
                "meta",
                "ui",
                "scopes",
                "tags",
                "hidden",
            ],
            Kind::Prompt => &["name", "title", "description", "meta", "scopes", "tags", "hidden"],
            Kind::Resource => &[
                "uri",
                "name",
                "title",
                "description",
                "mime_type",
                "meta",
                "scopes",
                "tags",
                "hidden",
            ],
        }
    }
}

/// One entry of an attribute's list: `"text"`, `flag`, or `key = value`.
enum Entry {
    Literal(LitStr),
    Key(Ident, Option<Expr>),
}

impl Parse for Entry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(LitStr) {
            return Ok(Entry::Literal(input.parse()?));
        }
        let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if input.peek(syn::token::Brace) {
                // A JSON object (`meta = {"key": …}`), which is no Rust expression: kept as tokens.
                let group: proc_macro2::Group = input.parse()?;
                return Ok(Entry::Key(key, Some(Expr::Verbatim(group.into_token_stream()))));
            }
            Ok(Entry::Key(key, Some(input.parse()?)))
        } else {
            Ok(Entry::Key(key, None))
        }
    }
}

fn entries(tokens: proc_macro2::TokenStream) -> syn::Result<Vec<Entry>> {
    let list = Punctuated::<Entry, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(list.into_iter().collect())
}

/// What `#[tool(..)]`, `#[prompt(..)]` or `#[resource(..)]` said.
#[derive(Default)]
pub(crate) struct ItemAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: Option<LitBool>,
    pub(crate) destructive: Option<LitBool>,
    pub(crate) idempotent: Option<LitBool>,
    pub(crate) open_world: Option<LitBool>,
    pub(crate) icons: Vec<LitStr>,
    pub(crate) uri: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    /// `meta = {"key": …}` (a JSON object, as `serde_json::json!` reads it) or `meta = EXPR`
    /// (an expression of type `mcpkit::types::schema::Meta`).
    pub(crate) meta: Option<Expr>,
    /// `ui = "ui://…"`: the MCP App view the tool links to (`ToolDef::ui`).
    pub(crate) ui: Option<LitStr>,
    /// `scopes = ["a", "b"]`: what `require_scopes` gets.
    pub(crate) scopes: Option<Expr>,
    /// `tags = ["a", "b"]`: what `tags` gets.
    pub(crate) tags: Option<Expr>,
    /// `hidden`: hidden until a session shows it.
    pub(crate) hidden: Option<LitBool>,
}

impl ItemAttrs {
    /// Parse the arguments of one item attribute (`tokens` is what is inside the parentheses).
    pub(crate) fn parse(kind: Kind, tokens: proc_macro2::TokenStream) -> syn::Result<Self> {
        let mut attrs = ItemAttrs::default();
        for entry in entries(tokens)? {
            match entry {
                Entry::Literal(lit) if kind == Kind::Resource && attrs.uri.is_none() => attrs.uri = Some(lit),
                Entry::Literal(lit) => {
                    let hint = match kind {
                        Kind::Resource => {
                            "the URI is given once: write `#[resource(\"uri\")]` or `#[resource(uri = \"uri\")]`"
                        }
                        Kind::Tool => "write `#[tool(name = \"...\")]` to name the tool",
                        Kind::Prompt => "write `#[prompt(name = \"...\")]` to name the prompt",
                    };
                    return Err(syn::Error::new(lit.span(), format!("unexpected string here; {hint}")));
                }
                Entry::Key(key, value) => attrs.set(kind, &key, value)?,
            }
        }
        Ok(attrs)
    }

    fn set(&mut self, kind: Kind, key: &Ident, value: Option<Expr>) -> syn::Result<()> {
        let k = key.to_string();
        if !kind.keys().contains(&k.as_str()) {
            return Err(unknown_key(kind, key));
        }
        match k.as_str() {
            "name" => self.name = Some(string(key, value)?),
            "title" => self.title = Some(string(key, value)?),
            "description" => self.description = Some(string(key, value)?),
            "uri" => self.uri = Some(string(key, value)?),
            "mime_type" => self.mime_type = Some(string(key, value)?),
            "ui" => self.ui = Some(string(key, value)?),
            "icon" => self.icons.push(string(key, value)?),
            "meta" => {
                self.meta = Some(value.ok_or_else(|| {
                    syn::Error::new(key.span(), "`meta` needs a value: write `meta = {\"key\": \"value\"}`")
                })?)
            }
            "scopes" => self.scopes = Some(list(key, value)?),
            "tags" => self.tags = Some(list(key, value)?),
            "hidden" => self.hidden = Some(flag(key, value)?),
            "read_only" => self.read_only = Some(flag(key, value)?),
            "destructive" => self.destructive = Some(flag(key, value)?),
            "idempotent" => self.idempotent = Some(flag(key, value)?),
            "open_world" => self.open_world = Some(flag(key, value)?),
            _ => return Err(unknown_key(kind, key)),
        }
        Ok(())
    }
}

fn unknown_key(kind: Kind, key: &Ident) -> syn::Error {
    let known = kind.keys();
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let guess = closest(&key.to_string(), known)
        .map(|k| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    syn::Error::new(
        key.span(),
        format!("`#[{}]` has no key `{key}`; {guess}the keys are {list}", kind.attr()),
    )
}

/// The known key nearest to a misspelt one (edit distance 2 at most).
fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (distance(word, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn string(key: &Ident, value: Option<Expr>) -> syn::Result<LitStr> {
    match value {
        Some(Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. })) => Ok(s),
        Some(other) => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes a string literal: write `{key} = \"...\"`"),
        )),
        None => Err(syn::Error::new(
            key.span(),
            format!("`{key}` needs a value: write `{key} = \"...\"`"),
        )),
    }
}

/// A list of strings: `key = ["a", "b"]`.
fn list(key: &Ident, value: Option<Expr>) -> syn::Result<Expr> {
    match value {
        Some(Expr::Array(a))
            if a.elems
                .iter()
                .all(|e| matches!(e, Expr::Lit(syn::ExprLit { lit: Lit::Str(_), .. }))) =>
        {
            Ok(Expr::Array(a))
        }
        Some(other) => Err(syn::Error::new(
            other.span(),
            format!("`{key}` is a list of strings: write `{key} = [\"a\", \"b\"]`"),
        )),
        None => Err(syn::Error::new(
            key.span(),
            format!("`{key}` needs a value: write `{key} = [\"a\", \"b\"]`"),
        )),
    }
}

fn flag(key: &Ident, value: Option<Expr>) -> syn::Result<LitBool> {
    match value {
        None => Ok(LitBool::new(true, key.span())),
        Some(Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. })) => Ok(b),
        Some(other) => Err(syn::Error::new(
            other.span(),
            format!("`{key}` is a flag: write `{key}` (or `{key} = false`)"),
        )),
    }
}

/// What `#[arg(..)]` on a parameter said.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    /// The attribute itself, for errors about where it is.
    pub(crate) span: Option<Span>,
    pub(crate) description: Option<LitStr>,
    /// `Some(None)`: `default` (the type's `Default`); `Some(Some(e))`: `default = e`.
    pub(crate) default: Option<Option<Expr>>,
}

impl ArgAttrs {
    /// Take the `#[arg(..)]` attributes off a parameter and read them.
    pub(crate) fn take(attrs: &mut Vec<Attribute>) -> syn::Result<Self> {
        let mut out = ArgAttrs::default();
        let mut rest = Vec::new();
        for attr in attrs.drain(..) {
            if !attr.path().is_ident("arg") {
                rest.push(attr);
                continue;
            }
            out.span = Some(attr.span());
            let tokens = match &attr.meta {
                syn::Meta::List(list) => list.tokens.clone(),
                _ => {
                    return Err(syn::Error::new(
                        attr.span(),
                        "write `#[arg(description = \"...\")]` or `#[arg(default = ...)]`",
                    ))
                }
            };
            for entry in entries(tokens)? {
                match entry {
                    Entry::Key(key, value) if key == "description" => out.description = Some(string(&key, value)?),
                    Entry::Key(key, value) if key == "default" => out.default = Some(value),
                    Entry::Key(key, _) => {
                        let guess = closest(&key.to_string(), &["description", "default"])
                            .map(|k| format!("did you mean `{k}`? "))
                            .unwrap_or_default();
                        return Err(syn::Error::new(
                            key.span(),
                            format!("`#[arg]` has no key `{key}`; {guess}the keys are `description` and `default`"),
                        ));
                    }
                    Entry::Literal(lit) => {
                        return Err(syn::Error::new(
                            lit.span(),
                            "write `#[arg(description = \"...\")]` to describe the argument",
                        ))
                    }
                }
            }
        }
        *attrs = rest;
        Ok(out)
    }
}

/// The doc comment of an item, one paragraph per blank line, trimmed; `None` without one.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').map(str::to_owned).unwrap_or(line))
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The arguments of an item attribute: what is inside its parentheses (empty for `#[tool]`).
pub(crate) fn attr_tokens(attr: &Attribute) -> syn::Result<proc_macro2::TokenStream> {
    match &attr.meta {
        syn::Meta::Path(_) => Ok(proc_macro2::TokenStream::new()),
        syn::Meta::List(list) => Ok(list.tokens.clone()),
        syn::Meta::NameValue(nv) => Err(syn::Error::new(
            nv.span(),
            "write the attribute with parentheses, e.g. `#[tool(name = \"...\")]`",
        )),
    }
}
