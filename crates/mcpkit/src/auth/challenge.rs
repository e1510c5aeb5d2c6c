//! `WWW-Authenticate` parsing (RFC 9110 section 11.6.1, RFC 6750 section 3, RFC 9728 section 5.1).

/// The parameters of a `Bearer` challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected-resource metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs (space-separated).
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The first `Bearer` challenge in these `WWW-Authenticate` header values, if any.
    pub fn parse<S: AsRef<str>>(headers: &[S]) -> Option<BearerChallenge> {
        headers.iter().find_map(|h| parse_one(h.as_ref()))
    }

    /// The scopes of `scope`, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref())
    }
}

/// Split a space-separated scope string.
pub(crate) fn split_scopes(s: Option<&str>) -> Vec<String> {
    s.map(|s| s.split_ascii_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// One header value may hold several challenges: `Basic realm="x", Bearer scope="a"`.
fn parse_one(header: &str) -> Option<BearerChallenge> {
    let mut p = Parser {
        s: header.as_bytes(),
        i: 0,
    };
    let mut in_bearer = false;
    let mut found: Option<BearerChallenge> = None;
    loop {
        p.skip_ws_commas();
        if p.at_end() {
            break;
        }
        let token = p.token()?;
        p.skip_ws();
        if p.peek() == Some(b'=') {
            // An auth-param of the current challenge.
            p.i += 1;
            p.skip_ws();
            let value = if p.peek() == Some(b'"') {
                p.quoted()?
            } else {
                p.token().unwrap_or_default()
            };
            if in_bearer {
                if let Some(c) = found.as_mut() {
                    let slot = match token.to_ascii_lowercase().as_str() {
                        "resource_metadata" => &mut c.resource_metadata,
                        "scope" => &mut c.scope,
                        "error" => &mut c.error,
                        "error_description" => &mut c.error_description,
                        _ => continue,
                    };
                    slot.get_or_insert(value);
                }
            }
        } else {
            // A new challenge (auth-scheme), maybe followed by a token68 we ignore.
            if found.is_some() && in_bearer {
                break;
            }
            // DPoP (RFC 9449) challenges carry the same parameters.
            in_bearer = token.eq_ignore_ascii_case("bearer") || token.eq_ignore_ascii_case("dpop");
            if in_bearer {
                found = Some(BearerChallenge::default());
            }
        }
    }
    found
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }
    fn skip_ws_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }
    /// A token (RFC 9110 tchar, plus token68's `/` `=`-free characters).
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/:".contains(&c) {
                self.i += 1;
            } else {
                break;
            }
        }
        if self.i == start {
            // Skip one unexpected byte so the caller makes progress.
            self.i += 1;
            return if self.at_end() { None } else { Some(String::new()) };
        }
        Some(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }
    fn quoted(&mut self) -> Option<String> {
        self.i += 1; // opening quote
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                _ => out.push(c),
            }
        }
        // Unterminated: take what there is.
        Some(String::from_utf8_lossy(&out).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bearer_parameters() {
        let c = BearerChallenge::parse(&[
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#,
        ])
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scopes(), vec!["files:read", "files:write"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
    }

    #[test]
    fn finds_bearer_among_other_schemes_and_tolerates_junk() {
        let c = BearerChallenge::parse(&[r#"Basic realm="x", Bearer scope=a, realm="y""#]).unwrap();
        assert_eq!(c.scope.as_deref(), Some("a"));
        assert!(BearerChallenge::parse(&[r#"Basic realm="x""#]).is_none());
        for junk in [
            "",
            "Bearer",
            "Bearer ,,,",
            "Bearer scope=\"unterminated",
            "=====",
            "Bearer a=\"\\",
        ] {
            let _ = BearerChallenge::parse(&[junk]);
        }
        assert_eq!(BearerChallenge::parse(&["bearer"]), Some(BearerChallenge::default()));
    }
}
