//! [`ProtectedResource`], the tower layer: metadata, challenges, token and scope checks, and the
//! verified caller handed on.

use super::*;

/// Protects an MCP endpoint with OAuth bearer tokens. See the [module docs](self).
#[derive(Clone)]
pub struct ProtectedResource {
    resource: String,
    metadata_url: String,
    metadata_path: String,
    metadata: ProtectedResourceMetadata,
    required: Vec<String>,
    per_method: HashMap<String, Vec<String>>,
    verifier: Arc<dyn TokenVerifier>,
    max_body: usize,
}

impl std::fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl ProtectedResource {
    /// Protect the MCP endpoint whose canonical URL (resource identifier) is `resource`, with
    /// tokens from `authorization_servers` (issuer identifiers), checked by `verifier`.
    pub fn new<I, S>(
        resource: &str,
        authorization_servers: I,
        verifier: Arc<dyn TokenVerifier>,
    ) -> Result<Self, AuthError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let url = Url::parse(resource).map_err(|e| AuthError::Config(format!("invalid resource {resource:?}: {e}")))?;
        if url.fragment().is_some() {
            return Err(AuthError::Config(
                "the resource identifier must not have a fragment".into(),
            ));
        }
        let path = url.path().trim_end_matches('/');
        let metadata_path = format!("/.well-known/oauth-protected-resource{path}");
        let mut metadata_url = url.clone();
        metadata_url.set_path(&metadata_path);
        metadata_url.set_query(None);
        Ok(ProtectedResource {
            resource: resource.to_owned(),
            metadata_url: metadata_url.to_string(),
            metadata_path,
            metadata: ProtectedResourceMetadata {
                resource: resource.to_owned(),
                authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
                scopes_supported: None,
                extra: Default::default(),
            },
            required: Vec::new(),
            per_method: HashMap::new(),
            verifier,
            max_body: 4 * 1024 * 1024,
        })
    }

    /// The scopes advertised in the metadata (`scopes_supported`).
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.metadata.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Scopes every request needs (named in the `401` challenge too).
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Extra scopes a JSON-RPC method needs (for example `tools/call`): a token without them
    /// gets `403 insufficient_scope`, and the client can step up.
    pub fn method_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, method: &str, scopes: I) -> Self {
        self.per_method
            .insert(method.to_owned(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The URL of the protected-resource metadata (what `resource_metadata` points to).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    fn challenge(&self, status: StatusCode, error: Option<(&str, &str)>, scopes: &[String]) -> Response {
        let mut value = format!("Bearer resource_metadata=\"{}\"", quote(&self.metadata_url));
        if !scopes.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", quote(&scopes.join(" "))));
        }
        if let Some((code, description)) = error {
            value.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                quote(description)
            ));
        }
        let body = serde_json::json!({
            "error": error.map(|e| e.0).unwrap_or("invalid_request"),
            "error_description": error.map(|e| e.1).unwrap_or("authorization required"),
        });
        let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

/// A quoted-string body: no quotes, backslashes or control characters.
fn quote(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .map(|c| if c == '"' || c == '\\' { '\'' } else { c })
        .collect()
}

#[derive(Deserialize)]
struct MethodOnly {
    method: Option<String>,
}

impl<S> tower_layer::Layer<S> for ProtectedResource {
    type Service = Protected<S>;

    fn layer(&self, inner: S) -> Protected<S> {
        Protected {
            metadata: Bytes::from(serde_json::to_vec(&self.metadata).unwrap_or_default()),
            resource: Arc::new(self.clone()),
            inner,
        }
    }
}

/// A service behind [`ProtectedResource`]: every request must carry a valid token, and the
/// metadata is served at its well-known path.
#[derive(Clone)]
pub struct Protected<S> {
    resource: Arc<ProtectedResource>,
    metadata: Bytes,
    inner: S,
}

impl<S> std::fmt::Debug for Protected<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protected")
            .field("resource", &self.resource.resource)
            .finish_non_exhaustive()
    }
}

impl<S> tower_service::Service<Request> for Protected<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service that was polled ready serves this request; a clone takes its place.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let rs = self.resource.clone();
        let metadata = self.metadata.clone();
        Box::pin(async move {
            if request.uri().path() == rs.metadata_path {
                return Ok(serve_metadata(request.method(), metadata));
            }
            match admit(&rs, request).await {
                Ok(request) => {
                    let mut response = inner.call(request).await?;
                    step_up(&rs, &mut response);
                    Ok(response)
                }
                Err(refused) => Ok(refused),
            }
        })
    }
}

/// A response refusing an item for want of scopes ([`ScopeRefusal`], 403 from the MCP endpoint)
/// gets the step-up challenge: `insufficient_scope`, naming the scopes every request needs and
/// the item's, so the client can ask for them and retry. Its body (the JSON-RPC error, id kept)
/// stays.
fn step_up(rs: &ProtectedResource, response: &mut Response) {
    let Some(refusal) = response.extensions_mut().remove::<ScopeRefusal>() else {
        return;
    };
    let mut needed = rs.required.clone();
    for s in refusal.scopes {
        if !needed.contains(&s) {
            needed.push(s);
        }
    }
    let challenge = rs.challenge(
        StatusCode::FORBIDDEN,
        Some(("insufficient_scope", "the token lacks a scope this item needs")),
        &needed,
    );
    if let Some(v) = challenge.headers().get(header::WWW_AUTHENTICATE) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, v.clone());
    }
}

/// The protected-resource metadata document, public (GET and HEAD only).
fn serve_metadata(method: &Method, metadata: Bytes) -> Response {
    if method == Method::GET || method == Method::HEAD {
        return ([(header::CONTENT_TYPE, "application/json")], metadata).into_response();
    }
    let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
    r
}

/// Let `request` through (without its `Authorization` header, with the verified [`AuthInfo`]
/// attached) or refuse it with the response to send.
async fn admit(rs: &ProtectedResource, request: Request) -> Result<Request, Response> {
    let (mut parts, body) = request.into_parts();
    let token = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(|t| t.trim().to_owned());
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return Err(rs.challenge(StatusCode::UNAUTHORIZED, None, &rs.required));
    };
    let info = match rs.verifier.verify(&token).await {
        Ok(info) => info,
        Err(VerifyError::Invalid(why)) => {
            tracing::debug!("bearer token refused: {why}");
            return Err(rs.challenge(StatusCode::UNAUTHORIZED, Some(("invalid_token", &why)), &rs.required));
        }
        Err(VerifyError::Unavailable(why)) => {
            tracing::warn!("bearer token could not be verified: {why}");
            return Err((StatusCode::SERVICE_UNAVAILABLE, "token verification is unavailable").into_response());
        }
    };
    if !info.audience.iter().any(|a| a == &rs.resource) {
        return Err(rs.challenge(
            StatusCode::UNAUTHORIZED,
            Some(("invalid_token", "the token was not issued for this resource")),
            &rs.required,
        ));
    }
    // The scopes this request needs: the global ones, plus the JSON-RPC method's.
    let mut needed = rs.required.clone();
    let body = if rs.per_method.is_empty() || parts.method != axum::http::Method::POST {
        body
    } else {
        let bytes = match read_capped(&parts.headers, body, rs.max_body).await {
            Ok(b) => b,
            Err(BodyError::TooLarge) => {
                return Err((StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response())
            }
            Err(BodyError::Broken(why)) => {
                return Err((StatusCode::BAD_REQUEST, format!("malformed request body: {why}")).into_response())
            }
            Err(e @ BodyError::TimedOut(_)) => return Err(e.reply(rs.max_body)),
        };
        if let Ok(MethodOnly { method: Some(m) }) = serde_json::from_slice::<MethodOnly>(&bytes) {
            if let Some(extra) = rs.per_method.get(&m) {
                for s in extra {
                    if !needed.contains(s) {
                        needed.push(s.clone());
                    }
                }
            }
        }
        Body::from(bytes)
    };
    if !needed.iter().all(|s| info.scopes.contains(s)) {
        return Err(rs.challenge(
            StatusCode::FORBIDDEN,
            Some(("insufficient_scope", "the token lacks a scope this request needs")),
            &needed,
        ));
    }
    // Never pass the client's token on.
    parts.headers.remove(header::AUTHORIZATION);
    // For the MCP handler (the HTTP endpoint hands these to the engine) and for axum handlers.
    // The verified caller, too: what the endpoint binds sessions and `requestState` to.
    let caller = VerifiedCaller::new(info.issuer.clone(), info.subject.clone(), info.client_id.clone());
    let mut extensions = parts.extensions.get::<Extensions>().cloned().unwrap_or_default();
    extensions.insert(info.clone());
    extensions.insert(caller.clone());
    parts.extensions.insert(extensions);
    parts.extensions.insert(info);
    parts.extensions.insert(caller);
    Ok(Request::from_parts(parts, body))
}
