//! The hook through which an authorization provider (for example the OAuth 2.1 client of the
//! `auth` module) supplies the `Authorization` header of the HTTP client transport and is asked
//! to (re)authorize when the server answers `401` or `403`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use reqwest::header::{self, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};

/// A boxed future, as the object-safe [`HttpAuth`] methods return.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the server said when it refused a request (spec: `basic/authorization`, "Authorization
/// Server Location" and "Scope Challenge Handling").
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthChallenge {
    /// The MCP endpoint that refused the request.
    pub url: Url,
    /// `401 Unauthorized` or `403 Forbidden`.
    pub status: StatusCode,
    /// Every `WWW-Authenticate` header of the response, as sent.
    pub www_authenticate: Vec<String>,
    /// The `Authorization` header the refused request carried (`None`: it carried none). A
    /// provider compares it with its current credentials: when they differ, another request
    /// already renewed them and a plain retry is enough.
    pub sent: Option<HeaderValue>,
    /// The response's `DPoP-Nonce` header (RFC 9449 section 9), if any.
    pub dpop_nonce: Option<String>,
}

/// Supplies credentials to the HTTP client transport. Set it with
/// [`HttpClientBuilder::auth`](super::HttpClientBuilder::auth).
///
/// The transport puts [`HttpAuth::authorization`] on every HTTP request. When the server answers
/// `401` or `403` it calls [`HttpAuth::challenge`]; on `Ok(())` it sends the request again with
/// the new header, at most [`MAX_AUTH_RETRIES`] times per message. On `Err` the request fails
/// with that message.
pub trait HttpAuth: Send + Sync + 'static {
    /// The `Authorization` header value for the next request, if there are credentials.
    fn authorization(&self) -> Option<HeaderValue>;

    /// Every credential header for a `method` request to `url`: by default just
    /// [`HttpAuth::authorization`]. A provider of sender-constrained tokens (DPoP, RFC 9449)
    /// adds its per-request proof here.
    fn headers(&self, method: &Method, url: &Url) -> Vec<(HeaderName, HeaderValue)> {
        let _ = (method, url);
        self.authorization()
            .map(|v| vec![(header::AUTHORIZATION, v)])
            .unwrap_or_default()
    }

    /// The server refused a request: obtain (new) credentials, or say why not.
    fn challenge<'a>(&'a self, challenge: &'a AuthChallenge) -> AuthFuture<'a, Result<(), String>>;
}

/// How many times one message is re-sent after a `401`/`403` and a successful
/// [`HttpAuth::challenge`].
pub const MAX_AUTH_RETRIES: u32 = 3;

/// Send the request `build` makes, with the provider's credentials, re-authorizing on
/// `401`/`403`. Returns the final response, or the provider's reason for giving up.
pub(super) async fn send(
    auth: Option<&Arc<dyn HttpAuth>>,
    url: &Url,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, String> {
    let Some(auth) = auth else {
        return build()
            .send()
            .await
            .map_err(|e| format!("the HTTP request failed: {e}"));
    };
    let mut retries = 0;
    loop {
        let (client, request) = build().build_split();
        let mut request = request.map_err(|e| format!("the HTTP request failed: {e}"))?;
        for (name, value) in auth.headers(request.method(), request.url()) {
            request.headers_mut().insert(name, value);
        }
        let sent = request.headers().get(header::AUTHORIZATION).cloned();
        let response = client
            .execute(request)
            .await
            .map_err(|e| format!("the HTTP request failed: {e}"))?;
        let status = response.status();
        if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) || retries >= MAX_AUTH_RETRIES {
            return Ok(response);
        }
        let challenge = AuthChallenge {
            url: url.clone(),
            status,
            www_authenticate: response
                .headers()
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .map(str::to_owned)
                .collect(),
            sent,
            dpop_nonce: response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        };
        if challenge.www_authenticate.is_empty() && status == StatusCode::FORBIDDEN {
            // A plain 403 is not an authorization challenge.
            return Ok(response);
        }
        auth.challenge(&challenge)
            .await
            .map_err(|e| format!("the MCP server answered HTTP {status} and authorization failed: {e}"))?;
        retries += 1;
    }
}

/// The builder's optional provider (Debug without showing credentials).
#[derive(Clone, Default)]
pub(super) struct AuthSlot(pub(super) Option<Arc<dyn HttpAuth>>);

impl std::fmt::Debug for AuthSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(HttpAuth)" } else { "None" })
    }
}
