//! Touches to the generator's output so it passes the workspace lints: doc comments for the
//! fields and variants the schema gave no description (the name they have on the wire, for
//! `missing_docs`), and an allowance on the `Default` impls of enums that clippy would rather
//! see derived (`derivable_impls`; the generator writes them by hand).

use syn::{Attribute, Fields, Item, LitStr};

/// Add a doc comment to every struct field and enum variant in `items` that lacks one, and
/// the allowance to hand-written `Default` impls.
pub(crate) fn fill(items: &mut [Item]) {
    for item in items {
        match item {
            Item::Struct(s) => fill_fields(&mut s.fields),
            Item::Enum(e) => {
                for v in &mut e.variants {
                    if !has_doc(&v.attrs) {
                        let wire = renamed(&v.attrs).unwrap_or_else(|| v.ident.to_string());
                        v.attrs
                            .insert(0, doc(&format!("The value {}.", crate::docs::code(&wire))));
                    }
                    fill_fields(&mut v.fields);
                }
            }
            Item::Impl(i) => {
                let is_default = i
                    .trait_
                    .as_ref()
                    .and_then(|(path, _)| path.segments.last())
                    .is_some_and(|s| s.ident == "Default");
                if is_default {
                    i.attrs.push(syn::parse_quote!(#[allow(clippy::derivable_impls)]));
                }
            }
            Item::Mod(m) => {
                if let Some((_, inner)) = &mut m.content {
                    fill(inner);
                }
            }
            _ => {}
        }
    }
}

fn fill_fields(fields: &mut Fields) {
    if let Fields::Named(named) = fields {
        for f in &mut named.named {
            if has_doc(&f.attrs) {
                continue;
            }
            let wire = renamed(&f.attrs).unwrap_or_else(|| f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default());
            f.attrs
                .insert(0, doc(&format!("The {} member.", crate::docs::code(&wire))));
        }
    }
}

fn has_doc(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("doc"))
}

/// The `rename = "…"` of a `#[serde(…)]` attribute.
fn renamed(attrs: &[Attribute]) -> Option<String> {
    let mut found = None;
    for a in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let s: LitStr = meta.value()?.parse()?;
                found = Some(s.value());
            } else if meta.input.peek(syn::Token![=]) {
                // Skip the value of any other `key = value`.
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    found
}

fn doc(text: &str) -> Attribute {
    let text = format!(" {text}");
    syn::parse_quote!(#[doc = #text])
}
