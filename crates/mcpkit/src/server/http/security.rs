//! DNS-rebinding protection (spec: `basic/transports` "Security Warning",
//! `basic/security_best_practices`): `Host` and `Origin` must name an allowed host.

use axum::http::HeaderMap;

/// The host names allowed by default: this machine's loopback names.
pub(crate) const LOCALHOST_NAMES: [&str; 4] = ["localhost", "127.0.0.1", "[::1]", "::1"];

/// The host part of `host[:port]` (IPv6 literals keep their brackets).
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.find(']') {
            Some(i) => &authority[..i + 2],
            None => authority,
        };
    }
    authority.rsplit_once(':').map_or(authority, |(h, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            authority
        }
    })
}

fn allowed(host: &str, list: &[String]) -> bool {
    list.iter().any(|a| a == "*" || a.eq_ignore_ascii_case(host))
}

/// Whether `origin` (`scheme://authority`) is allowed: an entry with a scheme must equal the
/// whole origin, a bare entry names its host (any scheme and port).
fn origin_allowed(origin: &str, authority: &str, list: &[String]) -> bool {
    let host = host_of(authority);
    list.iter().any(|a| {
        if a.contains("://") {
            a.trim_end_matches('/').eq_ignore_ascii_case(origin)
        } else {
            a == "*" || a.eq_ignore_ascii_case(host)
        }
    })
}

/// Why a request was refused.
pub(crate) enum Refusal {
    /// `Host` is missing or not allowed: 421 Misdirected Request.
    Host,
    /// `Origin` is present and not allowed: 403 Forbidden.
    Origin,
}

/// Check `Host` (required) and `Origin` (when present) against their own allowlists: one
/// never widens the other.
pub(crate) fn check(headers: &HeaderMap, hosts: &[String], origins: &[String]) -> Result<(), Refusal> {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or(Refusal::Host)?;
    if !allowed(host_of(host), hosts) {
        return Err(Refusal::Host);
    }
    if let Some(origin) = headers.get(axum::http::header::ORIGIN) {
        let origin = origin.to_str().map_err(|_| Refusal::Origin)?;
        // `null` and malformed origins are refused; `scheme://authority` is checked by host.
        let (scheme, rest) = origin.split_once("://").ok_or(Refusal::Origin)?;
        let authority = rest.split('/').next().unwrap_or(rest);
        let origin = &origin[..scheme.len() + 3 + authority.len()];
        if !origin_allowed(origin, authority, origins) {
            return Err(Refusal::Origin);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = host {
            h.insert("host", v.parse().unwrap());
        }
        if let Some(v) = origin {
            h.insert("origin", v.parse().unwrap());
        }
        h
    }

    #[test]
    fn localhost_names_pass_and_others_are_refused() {
        let list: Vec<String> = LOCALHOST_NAMES.iter().map(|s| s.to_string()).collect();
        for host in ["localhost", "localhost:3000", "127.0.0.1:8080", "[::1]:9", "[::1]"] {
            assert!(check(&headers(Some(host), None), &list, &list).is_ok(), "{host}");
        }
        for origin in ["http://localhost:5173", "https://127.0.0.1", "http://[::1]:3000"] {
            assert!(
                check(&headers(Some("localhost"), Some(origin)), &list, &list).is_ok(),
                "{origin}"
            );
        }
        assert!(matches!(
            check(&headers(Some("evil.example.com"), None), &list, &list),
            Err(Refusal::Host)
        ));
        assert!(matches!(check(&headers(None, None), &list, &list), Err(Refusal::Host)));
        assert!(matches!(
            check(
                &headers(Some("localhost"), Some("http://evil.example.com")),
                &list,
                &list
            ),
            Err(Refusal::Origin)
        ));
        assert!(matches!(
            check(&headers(Some("localhost"), Some("null")), &list, &list),
            Err(Refusal::Origin)
        ));
        let exact = vec!["https://app.example.com".to_string()];
        let h = |o: &str| headers(Some("localhost"), Some(o));
        assert!(check(&h("https://app.example.com"), &list, &exact).is_ok());
        assert!(check(&h("HTTPS://App.Example.com"), &list, &exact).is_ok());
        assert!(matches!(
            check(&h("http://app.example.com"), &list, &exact),
            Err(Refusal::Origin)
        ));
        assert!(matches!(
            check(&h("https://app.example.com:8443"), &list, &exact),
            Err(Refusal::Origin)
        ));
        let any = vec!["*".to_string()];
        assert!(check(&headers(Some("example.com:80"), Some("https://x.org")), &any, &any).is_ok());
    }
}
