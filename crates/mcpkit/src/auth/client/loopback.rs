//! An [`Authorizer`] for desktop and command-line clients: the user's browser is sent to the
//! authorization URL, and the redirect comes back to a listener on the loopback redirect URI
//! (RFC 8252 section 7.3).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::Uri;
use axum::response::{Html, IntoResponse, Response};
use reqwest::Url;
use tokio::sync::{mpsc, Mutex};

use super::Authorizer;
use crate::auth::AuthError;
use crate::transport::http_client::AuthFuture;

type Opener = dyn Fn(&Url) -> Result<(), String> + Send + Sync;

/// Listens on the loopback redirect URI (for example `http://127.0.0.1:33418/callback`), asks
/// `open` to send the user to the authorization URL (print it, or launch a browser), and returns
/// the redirect the browser brings back.
#[derive(Clone)]
pub struct LoopbackAuthorizer {
    open: Arc<Opener>,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackAuthorizer {
    /// An authorizer that calls `open` with the authorization URL.
    pub fn new(open: impl Fn(&Url) -> Result<(), String> + Send + Sync + 'static) -> Self {
        LoopbackAuthorizer {
            open: Arc::new(open),
            timeout: Duration::from_secs(300),
        }
    }

    /// How long to wait for the user (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// The redirect listener's state: where the first matching request goes.
struct Catch {
    path: String,
    tx: Mutex<Option<mpsc::Sender<String>>>,
}

async fn catch(State(c): State<Arc<Catch>>, uri: Uri) -> Response {
    if uri.path() != c.path {
        return StatusCode::NOT_FOUND.into_response();
    }
    if let Some(tx) = c.tx.lock().await.take() {
        let _ = tx.send(uri.query().unwrap_or_default().to_owned()).await;
    }
    Html("<!doctype html><title>mcpkit</title><p>Authorization finished. You can close this window.</p>")
        .into_response()
}

impl Authorizer for LoopbackAuthorizer {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a Url,
        redirect_uri: &'a str,
    ) -> AuthFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            let redirect = Url::parse(redirect_uri)
                .map_err(|e| AuthError::Config(format!("invalid redirect URI {redirect_uri:?}: {e}")))?;
            let host = match redirect.host_str() {
                Some(h @ ("127.0.0.1" | "localhost" | "[::1]")) if redirect.scheme() == "http" => h,
                _ => {
                    return Err(AuthError::Config(format!(
                        "the loopback authorizer needs an http://127.0.0.1, localhost or [::1] redirect URI, not {redirect_uri}"
                    )))
                }
            };
            let port = redirect
                .port()
                .ok_or_else(|| AuthError::Config(format!("the redirect URI {redirect_uri} has no port")))?;
            let bind = format!("{}:{port}", host.trim_start_matches('[').trim_end_matches(']'));
            let bind = if host == "[::1]" { format!("[::1]:{port}") } else { bind };
            let listener = tokio::net::TcpListener::bind(&bind)
                .await
                .map_err(|e| AuthError::Config(format!("cannot listen on {bind} for the redirect: {e}")))?;
            let (tx, mut rx) = mpsc::channel(1);
            let state = Arc::new(Catch {
                path: redirect.path().to_owned(),
                tx: Mutex::new(Some(tx)),
            });
            let app = axum::Router::new().fallback(catch).with_state(state);
            let stop = tokio_util::sync::CancellationToken::new();
            let stopped = stop.clone();
            let server = tokio::spawn(async move {
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move { stopped.cancelled().await })
                    .await;
            });
            let outcome = async {
                (self.open)(authorization_url).map_err(AuthError::Authorization)?;
                match tokio::time::timeout(self.timeout, rx.recv()).await {
                    Ok(Some(query)) => {
                        let mut back = redirect.clone();
                        back.set_query((!query.is_empty()).then_some(query.as_str()));
                        Ok(back)
                    }
                    Ok(None) => Err(AuthError::Authorization("the redirect listener stopped".into())),
                    Err(_) => Err(AuthError::Authorization(format!(
                        "no authorization redirect within {:?}",
                        self.timeout
                    ))),
                }
            }
            .await;
            stop.cancel();
            let _ = server.await;
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_redirect_the_browser_brings_back() {
        // Find a free port, then let the authorizer listen on it.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        // The "browser": approves at once and follows the redirect to the listener.
        let authorizer = LoopbackAuthorizer::new(|url: &Url| {
            let pairs: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
            let back = format!("{}?code=abc&state={}", pairs["redirect_uri"], pairs["state"]);
            tokio::spawn(async move {
                let _ = reqwest::get(format!("{}/favicon.ico", back.split("/callback").next().unwrap())).await;
                let _ = reqwest::get(back).await;
            });
            Ok(())
        })
        .timeout(Duration::from_secs(10));
        let mut auth_url = Url::parse("https://auth.example.com/authorize").unwrap();
        auth_url
            .query_pairs_mut()
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("state", "s1");
        let back = authorizer.authorize(&auth_url, &redirect_uri).await.unwrap();
        assert_eq!(back.as_str(), format!("{redirect_uri}?code=abc&state=s1"));
    }

    #[tokio::test]
    async fn refuses_a_non_loopback_redirect_uri() {
        let authorizer = LoopbackAuthorizer::new(|_| Ok(()));
        let url = Url::parse("https://auth.example.com/authorize").unwrap();
        let err = authorizer
            .authorize(&url, "https://app.example.com/callback")
            .await
            .unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
    }
}
