//! Who sent a request, as an authorization layer verified it: what sessions and `requestState`
//! are bound to (spec: security best practices, "Session Hijacking" and "State Handle
//! Hijacking").

/// The verified identity behind a request: the token's subject and the client it was issued
/// to. The OAuth resource layer (`auth::resource::ProtectedResource`) attaches one to every
/// request it lets through, both to the HTTP request's extensions and to its [`super::Extensions`];
/// a custom authorization layer may attach its own the same way.
///
/// With one present, the HTTP endpoint binds a new session to it (a request naming the session
/// with another caller gets 404, as if it did not exist), seals it into `requestState` (another
/// caller's retry is rejected), and counts sessions per caller. Without one, nothing is bound.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct VerifiedCaller {
    /// The subject (`sub`): the user the token speaks for.
    pub subject: Option<String>,
    /// The client the token was issued to (`client_id` / `azp`).
    pub client_id: Option<String>,
}

impl VerifiedCaller {
    /// The caller with this subject and client id.
    pub fn new(subject: Option<String>, client_id: Option<String>) -> VerifiedCaller {
        VerifiedCaller { subject, client_id }
    }

    /// Both parts in one string, unambiguous (`None` and an empty string differ): the
    /// `<user_id>` of the spec's `<user_id>:<session_id>` binding.
    pub fn binding(&self) -> String {
        fn part(p: &Option<String>) -> String {
            p.as_ref()
                .map_or_else(|| "-".to_owned(), |s| format!("={}:{s}", s.len()))
        }
        format!("{}{}", part(&self.subject), part(&self.client_id))
    }
}

/// Who a verified token speaks for: what the OAuth resource layer
/// (`auth::resource::ProtectedResource`) hands the application, as an HTTP request extension
/// and in the handler's [`super::Extensions`] (`RequestContext::auth`). The bearer token itself
/// is never kept. It sits here, beside [`VerifiedCaller`], because the server core and the
/// Tasks extension read it and the OAuth layer sits above them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct AuthInfo {
    /// `sub`: the resource owner.
    pub subject: Option<String>,
    /// The client the token was issued to (`client_id` / `azp`).
    pub client_id: Option<String>,
    /// The issuer.
    pub issuer: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The audiences (`aud`): the resources the token is for.
    pub audience: Vec<String>,
    /// Expiry, seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// Every claim, as the verifier saw them.
    pub claims: serde_json::Map<String, serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_differ_for_different_callers() {
        let some = |s: &str| Some(s.to_owned());
        let callers = [
            VerifiedCaller::new(None, None),
            VerifiedCaller::new(some(""), None),
            VerifiedCaller::new(None, some("")),
            VerifiedCaller::new(some("a"), some("b")),
            VerifiedCaller::new(some("a:b"), None),
            VerifiedCaller::new(some("a"), some("b:")),
        ];
        for (i, a) in callers.iter().enumerate() {
            for (j, b) in callers.iter().enumerate() {
                assert_eq!(a.binding() == b.binding(), i == j, "{a:?} {b:?}");
            }
        }
    }
}
