//! The one OAuth back-channel exchange: POST a JSON or form body, read the capped reply, check
//! the status, decode the JSON. Registration, the token and token-exchange endpoints (client
//! side) and introspection (resource side) all go through [`oauth_post`].

use reqwest::header::{self, HeaderValue};
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use url::form_urlencoded;

use super::metadata::MAX_DOCUMENT;
use super::AuthError;
use crate::transport::http_client::read_response;

/// Why an OAuth POST did not produce its JSON result.
#[derive(Debug)]
pub(crate) enum PostError {
    /// The request could not be sent.
    Send(String),
    /// The reply could not be read (too large, connection lost).
    Read(String),
    /// A failure status; the body's OAuth error, if it has one.
    Status {
        status: StatusCode,
        /// The OAuth `error` code.
        code: Option<String>,
        /// The error for messages: `error (error_description)`, else the start of the body.
        description: String,
        /// The reply's `DPoP-Nonce` (RFC 9449 section 8).
        dpop_nonce: Option<String>,
    },
    /// A success status, but not the expected JSON.
    Decode(String),
}

impl PostError {
    /// What went wrong, for a message that starts with `what` (say, "token request to URL").
    pub(crate) fn describe(&self, what: &str) -> String {
        match self {
            PostError::Send(e) | PostError::Read(e) => format!("{what}: {e}"),
            PostError::Status {
                status, description, ..
            } => format!("{what} answered HTTP {status}: {description}"),
            PostError::Decode(e) => format!("{what}: invalid response: {e}"),
        }
    }

    /// As an [`AuthError`]: a failure to send is [`AuthError::Http`], anything else `kind`.
    pub(crate) fn into_auth(self, what: &str, kind: fn(String) -> AuthError) -> AuthError {
        match &self {
            PostError::Send(_) => AuthError::Http(self.describe(what)),
            _ => kind(self.describe(what)),
        }
    }
}

/// The body of an OAuth POST.
pub(crate) enum Body<'a> {
    /// `application/json` (dynamic registration).
    Json(&'a serde_json::Value),
    /// `application/x-www-form-urlencoded` (token, token exchange, introspection).
    Form(&'a [(&'a str, String)]),
}

/// POST `body` with `request` (which carries the URL and any credentials), and decode the
/// successful JSON reply as `T`.
pub(crate) async fn oauth_post<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    body: Body<'_>,
) -> Result<T, PostError> {
    let request = request.header(header::ACCEPT, HeaderValue::from_static("application/json"));
    let request = match body {
        Body::Json(v) => request.json(v),
        Body::Form(pairs) => request
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form_encode(pairs)),
    };
    let response = request.send().await.map_err(|e| PostError::Send(e.to_string()))?;
    let status = response.status();
    let dpop_nonce = response
        .headers()
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = read_response(response, MAX_DOCUMENT).await.map_err(PostError::Read)?;
    if !status.is_success() {
        return Err(PostError::Status {
            status,
            code: oauth_error_code(&bytes),
            description: oauth_error(&bytes),
            dpop_nonce,
        });
    }
    serde_json::from_slice(&bytes).map_err(|e| PostError::Decode(e.to_string()))
}

/// `application/x-www-form-urlencoded` encoding of one component.
pub(crate) fn form_component(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// `application/x-www-form-urlencoded` encoding of a form.
pub(crate) fn form_encode(form: &[(&str, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
}

/// The `error` code of an OAuth error response body.
fn oauth_error_code(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()?
        .get("error")?
        .as_str()
        .map(str::to_owned)
}

/// The OAuth error of an error response body, for messages.
fn oauth_error(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct E {
        error: String,
        error_description: Option<String>,
    }
    match serde_json::from_slice::<E>(body) {
        Ok(e) => match e.error_description {
            Some(d) => format!("{} ({d})", e.error),
            None => e.error,
        },
        Err(_) => String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
    }
}
