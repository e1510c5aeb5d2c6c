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
///
/// Every owned thing (sessions, sealed `requestState`, tasks) is bound to the whole identity,
/// issuer included ([`VerifiedCaller::binding`]); per-client quotas count by
/// [`VerifiedCaller::principal`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct VerifiedCaller {
    /// The issuer (`iss`) that vouches for the other two: the same `sub` from two issuers
    /// is two users.
    pub issuer: Option<String>,
    /// The subject (`sub`): the user the token speaks for.
    pub subject: Option<String>,
    /// The client the token was issued to (`client_id` / `azp`).
    pub client_id: Option<String>,
}

/// One part of an identity string: `-` when absent, else `=<length>:<text>`, so that no two
/// different sequences of parts spell the same string.
fn part(p: Option<&str>) -> String {
    p.map_or_else(|| "-".to_owned(), |s| format!("={}:{s}", s.len()))
}

impl VerifiedCaller {
    /// The caller with this issuer, subject and client id.
    pub fn new(issuer: Option<String>, subject: Option<String>, client_id: Option<String>) -> VerifiedCaller {
        VerifiedCaller {
            issuer,
            subject,
            client_id,
        }
    }

    /// The three parts in one string, unambiguous (`None` and an empty string differ): the
    /// `<user_id>` of the spec's `<user_id>:<session_id>` binding, and the owner of a task.
    pub fn binding(&self) -> String {
        let [i, s, c] = [&self.issuer, &self.subject, &self.client_id].map(|p| part(p.as_deref()));
        format!("{i}{s}{c}")
    }

    /// Who the caller counts as for per-client quotas: the user (`sub`) when the token names
    /// one — a user's clients share a quota — else the client; each with its issuer, and users
    /// and clients in separate namespaces (`user…`, `client…`), so a client id can never count
    /// as a user of the same name. `None` when the token names neither.
    pub fn principal(&self) -> Option<String> {
        let issuer = part(self.issuer.as_deref());
        match (&self.subject, &self.client_id) {
            (Some(subject), _) => Some(format!("user{issuer}{}", part(Some(subject)))),
            (None, Some(client)) => Some(format!("client{issuer}{}", part(Some(client)))),
            (None, None) => None,
        }
    }
}

/// The scopes a request lacked: put on the HTTP response (its extensions) by the MCP endpoint
/// when it refuses a use of an item for want of them (403, JSON-RPC error -32003), so that the
/// authorization layer in front (`auth::resource::ProtectedResource`) adds the step-up
/// `WWW-Authenticate` challenge naming them; it knows the resource metadata, the endpoint
/// does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeRefusal {
    /// The scopes the item requires.
    pub scopes: Vec<String>,
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
            VerifiedCaller::new(None, None, None),
            VerifiedCaller::new(None, some(""), None),
            VerifiedCaller::new(None, None, some("")),
            VerifiedCaller::new(None, some("a"), some("b")),
            VerifiedCaller::new(None, some("a:b"), None),
            VerifiedCaller::new(None, some("a"), some("b:")),
            VerifiedCaller::new(some("https://one"), some("a"), some("b")),
            VerifiedCaller::new(some("https://two"), some("a"), some("b")),
            VerifiedCaller::new(some(""), some("a"), some("b")),
        ];
        for (i, a) in callers.iter().enumerate() {
            for (j, b) in callers.iter().enumerate() {
                assert_eq!(a.binding() == b.binding(), i == j, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_client_id_never_counts_as_the_user_of_the_same_name() {
        let some = |s: &str| Some(s.to_owned());
        let user = VerifiedCaller::new(some("iss"), some("alice"), None);
        let client = VerifiedCaller::new(some("iss"), None, some("alice"));
        assert_ne!(user.principal(), client.principal());
        assert_ne!(user.binding(), client.binding());
        // A user's clients share the user's quota; the same user at another issuer does not.
        let same_user = VerifiedCaller::new(some("iss"), some("alice"), some("app"));
        assert_eq!(user.principal(), same_user.principal());
        let elsewhere = VerifiedCaller::new(some("other"), some("alice"), None);
        assert_ne!(user.principal(), elsewhere.principal());
        assert_eq!(VerifiedCaller::default().principal(), None);
    }
}
