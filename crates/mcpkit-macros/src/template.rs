//! `#[resource("…")]` URIs: a concrete URI, or an RFC 6570 template checked here with the same
//! parser the server uses, so a bad template is a compile error rather than a failed start.

use syn::LitStr;

/// The template's variable names, in order; empty for a concrete URI.
pub(crate) fn variables(uri: &LitStr) -> syn::Result<Vec<String>> {
    let source = uri.value();
    if !source.contains('{') && !source.contains('}') {
        return Ok(Vec::new());
    }
    let bad = |reason: String| {
        syn::Error::new(
            uri.span(),
            format!("`{source}` is not a valid URI template ({reason}): write variables as `{{name}}`, e.g. `\"items://{{id}}\"`"),
        )
    };
    iri_string::template::UriTemplateStr::new(&source).map_err(|e| bad(e.to_string()))?;
    let mut vars = Vec::new();
    let mut rest = source.as_str();
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| bad("unclosed expression".into()))?
            + open;
        let body = &rest[open + 1..close];
        let list = body.strip_prefix(['+', '#', '/', '.', ';', '?', '&']).unwrap_or(body);
        let before = vars.len();
        vars.extend(
            list.split(',')
                .map(|v| v.split([':', '*']).next().unwrap_or(v).to_owned())
                .filter(|v| !v.is_empty()),
        );
        if vars.len() == before {
            return Err(bad("empty expression".into()));
        }
        rest = &rest[close + 1..];
    }
    Ok(vars)
}
