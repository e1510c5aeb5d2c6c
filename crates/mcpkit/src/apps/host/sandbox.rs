//! The sandbox a host puts a view in, built from the view's metadata (SEP-1865, "Content
//! Security Policy Enforcement"): the iframe's CSP and its `allow` attribute, never looser
//! than declared; and the tools a host gives its model.

use mcpkit_types::schema::Tool;

use crate::apps::{visible_to_model, Permission, ViewMeta};

/// The Content-Security-Policy for a view with metadata `meta` (`None`: it declared none).
///
/// Nothing is allowed that the view did not declare: no connections, nested frames or outside
/// resources unless listed; `object-src 'none'` always. A declared origin that is not a
/// single CSP source (it holds whitespace, `;`, `,`, a quote, or is a bare `*`) is dropped, so
/// a view cannot add directives of its own.
pub fn content_security_policy(meta: Option<&ViewMeta>) -> String {
    let csp = meta.and_then(|m| m.csp.clone()).unwrap_or_default();
    let resources = sources(&csp.resource_domains);
    let with = |fixed: &str, extra: &str| match extra.is_empty() {
        true => fixed.to_owned(),
        false => format!("{fixed} {extra}"),
    };
    let or = |extra: String, fallback: &str| match extra.is_empty() {
        true => fallback.to_owned(),
        false => extra,
    };
    [
        "default-src 'none'".to_owned(),
        with("script-src 'self' 'unsafe-inline'", &resources),
        with("style-src 'self' 'unsafe-inline'", &resources),
        format!("connect-src {}", or(sources(&csp.connect_domains), "'none'")),
        with("img-src 'self' data:", &resources),
        with("font-src 'self'", &resources),
        with("media-src 'self' data:", &resources),
        format!("frame-src {}", or(sources(&csp.frame_domains), "'none'")),
        "object-src 'none'".to_owned(),
        format!("base-uri {}", or(sources(&csp.base_uri_domains), "'self'")),
    ]
    .join("; ")
}

/// The declared origins that are single CSP sources, space-separated.
fn sources(domains: &[String]) -> String {
    domains
        .iter()
        .map(String::as_str)
        .filter(|d| is_source(d))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `origin` is one CSP source expression a view may ask for.
fn is_source(origin: &str) -> bool {
    !origin.is_empty()
        && origin != "*"
        && !origin
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, ';' | ',' | '\'' | '"'))
}

/// The iframe's `allow` attribute for a view with metadata `meta`: the permissions it asked
/// for, as Permissions Policy features separated by `; ` (empty: none).
pub fn allow_attribute(meta: Option<&ViewMeta>) -> String {
    let Some(asked) = meta.and_then(|m| m.permissions.as_ref()) else {
        return String::new();
    };
    Permission::ALL
        .into_iter()
        .filter(|p| asked.asks(*p))
        .map(Permission::feature)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The tools a host gives its model: all but those whose visibility leaves out `model`
/// (SEP-1865, "Visibility": app-only tools stay out of the agent's tool list).
pub fn model_tools(tools: impl IntoIterator<Item = Tool>) -> Vec<Tool> {
    tools.into_iter().filter(visible_to_model).collect()
}
