//! `#[resource("…")]` URIs: a concrete URI, or an RFC 6570 template checked here with the same
//! parser the server uses, so a bad template is a compile error rather than a failed start.

use syn::LitStr;

/// The template's variable names, in order; empty for a concrete URI.
pub(crate) fn variables(uri: &LitStr) -> syn::Result<Vec<String>> {
    let source = uri.value();
    let bad = |reason: String| {
        syn::Error::new(
            uri.span(),
            format!("`{source}` is not a valid URI template ({reason}): write variables as `{{name}}`, e.g. `\"items://{{id}}\"`"),
        )
    };
    // As the server's parser does first: `%` only as `%XX` (iri-string 0.7 panics on `%X`
    // followed by a multi-byte character, which here would be a panic inside the compiler).
    let bytes = source.as_bytes();
    for (i, _) in source.match_indices('%') {
        if !bytes
            .get(i + 1..i + 3)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        {
            return Err(bad("`%` must start a percent-encoding: `%` and two hex digits".into()));
        }
    }
    iri_string::template::UriTemplateStr::new(&source).map_err(|e| bad(e.to_string()))?;
    if !source.contains('{') && !source.contains('}') {
        return Ok(Vec::new());
    }
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
