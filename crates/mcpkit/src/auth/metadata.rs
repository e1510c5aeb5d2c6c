//! Protected-resource metadata (RFC 9728) and authorization-server metadata (RFC 8414, OpenID
//! Connect Discovery 1.0) discovery, in the order the MCP specification gives
//! (spec: `basic/authorization`, "Authorization Server Discovery").

use reqwest::header::{self, HeaderValue};
use reqwest::Url;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::AuthError;
use crate::transport::http_client::read_response;

/// The largest metadata document (or token / registration response) read, in bytes.
pub const MAX_DOCUMENT: usize = 256 * 1024;
/// How many same-origin redirects a metadata fetch follows.
const MAX_REDIRECTS: usize = 3;

/// RFC 9728 protected-resource metadata (the fields MCP uses; others are kept in `extra`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier (required).
    pub resource: String,
    /// Issuer identifiers of the authorization servers that protect the resource.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Every other field.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// RFC 8414 authorization-server metadata (the fields MCP uses; others are kept in `extra`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the one the metadata was fetched for.
    pub issuer: String,
    /// The authorization endpoint (absent on servers that only do client credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    pub token_endpoint: String,
    /// RFC 7591 dynamic client registration endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types; RFC 8414 default `["authorization_code", "implicit"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Token endpoint client authentication methods; RFC 8414 default `client_secret_basic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// RFC 9207: the server sends `iss` in authorization responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// The server accepts URL client ids (Client ID Metadata Documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// RFC 7662 token introspection endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// The server's JSON Web Key Set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Every other field.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl AuthorizationServerMetadata {
    /// Whether the server lists `method` for token endpoint authentication (RFC 8414 default:
    /// `client_secret_basic` only).
    pub fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    /// Whether the server issues DPoP-bound tokens for ES256 proofs
    /// (`dpop_signing_alg_values_supported`, RFC 9449 section 5.1).
    pub fn supports_dpop_es256(&self) -> bool {
        self.extra
            .get("dpop_signing_alg_values_supported")
            .and_then(|v| v.as_array())
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some("ES256")))
    }

    /// Whether the server lists `grant` (RFC 8414 default: authorization_code and implicit).
    pub fn supports_grant(&self, grant: &str) -> bool {
        match &self.grant_types_supported {
            Some(list) => list.iter().any(|g| g == grant),
            None => matches!(grant, "authorization_code" | "implicit"),
        }
    }
}

/// The protected-resource metadata URLs to try for the MCP endpoint `server`, in order
/// (RFC 9728 section 3.1; spec: "Protected Resource Metadata Discovery Requirements"): the one
/// from `WWW-Authenticate`, then the path-suffixed well-known URL, then the root one.
pub fn protected_resource_metadata_urls(server: &Url, from_header: Option<&str>) -> Result<Vec<Url>, AuthError> {
    let mut out = Vec::new();
    if let Some(h) = from_header {
        let url = server
            .join(h)
            .map_err(|e| AuthError::Metadata(format!("invalid resource_metadata URL {h:?}: {e}")))?;
        check_scheme(&url)?;
        out.push(url);
    }
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        out.push(well_known(server, "oauth-protected-resource", path)?);
    }
    out.push(well_known(server, "oauth-protected-resource", "")?);
    out.dedup();
    Ok(out)
}

/// The authorization-server metadata URLs to try for `issuer`, in the order the spec gives:
/// with a path, RFC 8414 path insertion, OpenID path insertion, OpenID path appending; without
/// one, RFC 8414 then OpenID.
pub fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<Url>, AuthError> {
    let url = Url::parse(issuer).map_err(|e| AuthError::Metadata(format!("invalid issuer {issuer:?}: {e}")))?;
    check_scheme(&url)?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(AuthError::Metadata(format!(
            "issuer {issuer:?} has a query or fragment (RFC 8414 section 2)"
        )));
    }
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        Ok(vec![
            well_known(&url, "oauth-authorization-server", "")?,
            well_known(&url, "openid-configuration", "")?,
        ])
    } else {
        let mut appended = url.clone();
        appended.set_path(&format!("{path}/.well-known/openid-configuration"));
        Ok(vec![
            well_known(&url, "oauth-authorization-server", path)?,
            well_known(&url, "openid-configuration", path)?,
            appended,
        ])
    }
}

fn well_known(base: &Url, name: &str, suffix: &str) -> Result<Url, AuthError> {
    let mut url = base.clone();
    url.set_path(&format!("/.well-known/{name}{suffix}"));
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

/// Only `https`, or `http` to a loopback host, may carry credentials or be trusted for metadata.
pub(crate) fn check_scheme(url: &Url) -> Result<(), AuthError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(AuthError::Metadata(format!(
            "{url} is plain http to a non-loopback host; authorization endpoints must use https"
        ))),
        other => Err(AuthError::Metadata(format!("{url} has unsupported scheme {other:?}"))),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether the protected-resource metadata `resource` covers the MCP endpoint `server`: same
/// scheme, host and port, and the resource's path is the server's path or a parent of it.
pub fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else { return false };
    if r.scheme() != server.scheme()
        || r.host_str().map(str::to_ascii_lowercase) != server.host_str().map(str::to_ascii_lowercase)
        || r.port_or_known_default() != server.port_or_known_default()
        || r.fragment().is_some()
    {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path().trim_end_matches('/');
    sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// GET a JSON document. `Ok(None)`: not there (a 4xx); errors: an unreachable server, a
/// redirect to another origin, a document over [`MAX_DOCUMENT`] bytes, or invalid JSON.
pub(crate) async fn fetch_json<T: DeserializeOwned>(
    http: &reqwest::Client,
    url: &Url,
    what: &str,
) -> Result<Option<T>, AuthError> {
    let mut current = url.clone();
    for _ in 0..=MAX_REDIRECTS {
        let response = http
            .get(current.clone())
            .header(header::ACCEPT, HeaderValue::from_static("application/json"))
            .send()
            .await
            .map_err(|e| AuthError::Http(format!("fetching {what} from {current}: {e}")))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| AuthError::Metadata(format!("{what} at {current}: redirect without a Location")))?;
            let next = current
                .join(location)
                .map_err(|e| AuthError::Metadata(format!("{what} at {current}: bad redirect {location:?}: {e}")))?;
            if next.origin() != current.origin() {
                return Err(AuthError::Metadata(format!(
                    "{what} at {current} redirects to another host ({next}); refused"
                )));
            }
            current = next;
            continue;
        }
        if status.is_client_error() {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(AuthError::Metadata(format!("{what} at {current}: HTTP {status}")));
        }
        let body = read_response(response, MAX_DOCUMENT)
            .await
            .map_err(|e| AuthError::Metadata(format!("{what} at {current}: {e}")))?;
        return serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| AuthError::Metadata(format!("{what} at {current} is not valid: {e}")));
    }
    Err(AuthError::Metadata(format!("{what} at {url}: too many redirects")))
}

/// Discover and check the protected-resource metadata of `server`.
pub async fn discover_protected_resource(
    http: &reqwest::Client,
    server: &Url,
    from_header: Option<&str>,
) -> Result<ProtectedResourceMetadata, AuthError> {
    let mut tried = Vec::new();
    for url in protected_resource_metadata_urls(server, from_header)? {
        if let Some(prm) = fetch_json::<ProtectedResourceMetadata>(http, &url, "protected-resource metadata").await? {
            if !resource_matches(&prm.resource, server) {
                return Err(AuthError::ResourceMismatch {
                    expected: server.to_string(),
                    found: prm.resource,
                });
            }
            if prm.authorization_servers.is_empty() {
                return Err(AuthError::Metadata(format!(
                    "the protected-resource metadata at {url} lists no authorization_servers"
                )));
            }
            return Ok(prm);
        }
        tried.push(url.to_string());
    }
    Err(AuthError::Metadata(format!(
        "no protected-resource metadata found for {server} (tried {})",
        tried.join(", ")
    )))
}

/// Discover and check the metadata of the authorization server `issuer`.
pub async fn discover_authorization_server(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthError> {
    let mut tried = Vec::new();
    for url in authorization_server_metadata_urls(issuer)? {
        if let Some(meta) =
            fetch_json::<AuthorizationServerMetadata>(http, &url, "authorization server metadata").await?
        {
            if meta.issuer != issuer {
                return Err(AuthError::IssuerMismatch {
                    expected: issuer.to_owned(),
                    found: meta.issuer,
                });
            }
            for endpoint in [
                Some(&meta.token_endpoint),
                meta.authorization_endpoint.as_ref(),
                meta.registration_endpoint.as_ref(),
            ]
            .into_iter()
            .flatten()
            {
                let u = Url::parse(endpoint)
                    .map_err(|e| AuthError::Metadata(format!("{url}: invalid endpoint {endpoint:?}: {e}")))?;
                check_scheme(&u)?;
            }
            return Ok(meta);
        }
        tried.push(url.to_string());
    }
    Err(AuthError::Metadata(format!(
        "no authorization server metadata found for issuer {issuer} (tried {})",
        tried.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prm_urls_in_spec_order() {
        let server = Url::parse("https://mcp.example.com/public/mcp").unwrap();
        let urls: Vec<String> = protected_resource_metadata_urls(&server, Some("https://mcp.example.com/custom.json"))
            .unwrap()
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            urls,
            [
                "https://mcp.example.com/custom.json",
                "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
    }

    #[test]
    fn as_urls_in_spec_order() {
        let with_path: Vec<String> = authorization_server_metadata_urls("https://auth.example.com/tenant1")
            .unwrap()
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            with_path,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let root: Vec<String> = authorization_server_metadata_urls("https://auth.example.com")
            .unwrap()
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            root,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert!(authorization_server_metadata_urls("http://auth.example.com").is_err());
    }

    #[test]
    fn resource_matching() {
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        assert!(resource_matches("https://mcp.example.com/mcp", &server));
        assert!(resource_matches("https://mcp.example.com", &server));
        assert!(resource_matches("https://MCP.example.com:443/", &server));
        assert!(!resource_matches("https://evil.example.com/mcp", &server));
        assert!(!resource_matches("https://mcp.example.com/mcp2", &server));
        assert!(!resource_matches("https://mcp.example.com/other", &server));
        assert!(!resource_matches("http://mcp.example.com/mcp", &server));
        assert!(!resource_matches("not a url", &server));
    }
}
