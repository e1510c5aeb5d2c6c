//! [`HttpClientBuilder`]: the settings of one HTTP client transport, checked once by `build`.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::Url;
use tokio_util::sync::CancellationToken;

use super::auth::{AuthSlot, HttpAuth};
use super::{HttpClientTransport, Inner, Mode, State};
use crate::transport::{channel, DEFAULT_MAX_FRAME};

/// Builds an [`HttpClientTransport`]: extra headers, timeouts, a shared `reqwest::Client`.
#[derive(Debug, Clone)]
pub struct HttpClientBuilder {
    url: String,
    sse_legacy: bool,
    headers: HeaderMap,
    header_error: Option<String>,
    client: Option<reqwest::Client>,
    unix_socket: Option<std::path::PathBuf>,
    connect_timeout: Option<Duration>,
    max_frame: usize,
    standalone_stream: bool,
    max_reconnects: u32,
    auth: AuthSlot,
}

impl HttpClientBuilder {
    pub(super) fn new(url: String) -> Self {
        HttpClientBuilder {
            url,
            sse_legacy: false,
            headers: HeaderMap::new(),
            header_error: None,
            client: None,
            unix_socket: None,
            connect_timeout: Some(Duration::from_secs(10)),
            max_frame: DEFAULT_MAX_FRAME,
            standalone_stream: true,
            max_reconnects: 5,
            auth: AuthSlot::default(),
        }
    }

    /// Authorize requests with `provider`: its header goes on every HTTP request, and it is
    /// asked to (re)authorize when the server answers `401` or `403` (see [`HttpAuth`]). The
    /// OAuth 2.1 client of the `auth` module is one such provider.
    pub fn auth(mut self, provider: Arc<dyn HttpAuth>) -> Self {
        self.auth = AuthSlot(Some(provider));
        self
    }

    /// Send this header with every HTTP request (for example an API key; it is marked
    /// sensitive). An invalid name or value is reported by [`HttpClientBuilder::build`].
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            (Ok(n), Ok(mut v)) => {
                // Extra headers often carry credentials: keep them out of Debug output.
                v.set_sensitive(true);
                self.headers.insert(n, v);
            }
            _ => {
                self.header_error
                    .get_or_insert_with(|| format!("invalid HTTP header {name:?}"));
            }
        }
        self
    }

    /// Send `Authorization: Bearer <token>` with every HTTP request (marked sensitive, so it is
    /// never logged).
    pub fn bearer_auth(mut self, token: impl AsRef<str>) -> Self {
        match HeaderValue::from_str(&format!("Bearer {}", token.as_ref())) {
            Ok(mut v) => {
                v.set_sensitive(true);
                self.headers.insert(header::AUTHORIZATION, v);
            }
            Err(_) => {
                self.header_error
                    .get_or_insert_with(|| "invalid bearer token (not a valid header value)".to_owned());
            }
        }
        self
    }

    /// Use this `reqwest::Client` (share its connection pool, TLS roots, proxy settings). The
    /// connect timeout of [`HttpClientBuilder::connect_timeout`] then does not apply.
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Connect over the Unix domain socket at `path` instead of TCP (Unix only; the server's
    /// `HttpServer::serve_unix`). The URL's host then only names the server in the `Host`
    /// header: use `http://localhost/mcp`. A URL of the form `unix:/path/to.sock` or
    /// `http+unix://%2Fpath%2Fto.sock/mcp` sets this for you. Not combined with
    /// [`HttpClientBuilder::client`], whose client connects as it was built.
    #[cfg(unix)]
    pub fn unix_socket(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.unix_socket = Some(path.into());
        self
    }

    /// Give up connecting to the server after this long (default 10 s; `None`: never). Replies
    /// themselves have no time limit here: long tool calls are bounded by the caller's request
    /// timeout instead.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The largest message accepted from the server (default 16 MiB). A larger response fails
    /// its request; a larger server request or notification is reported to the engine as
    /// oversized.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// Whether to open the standalone GET stream after initialization (default yes). Without it
    /// the server can reach the client only while answering one of its requests.
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
        self
    }

    /// How many reconnections in a row without receiving anything new are tried before a
    /// dropped SSE stream is given up (default 5).
    pub fn max_reconnects(mut self, attempts: u32) -> Self {
        self.max_reconnects = attempts;
        self
    }

    /// Speak the 2024-11-05 HTTP+SSE transport directly: the URL is the SSE endpoint.
    pub fn sse_legacy(mut self, on: bool) -> Self {
        self.sse_legacy = on;
        self
    }

    /// Build the transport. Fails on an invalid URL or header, or when the HTTP client cannot be
    /// created (for example, no TLS roots).
    pub fn build(self) -> io::Result<HttpClientTransport> {
        if let Some(e) = self.header_error {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, e));
        }
        let (url, unix_socket) = match unix_url(&self.url)? {
            Some((socket, url)) => (url, Some(socket)),
            None => (self.url.clone(), self.unix_socket),
        };
        let url = Url::parse(&url).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid MCP URL {:?}: {e}", self.url),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the MCP URL must be http or https, not {:?}", url.scheme()),
            ));
        }
        let http = match self.client {
            Some(c) => c,
            None => {
                let mut b = reqwest::Client::builder().user_agent(concat!("mcpkit/", env!("CARGO_PKG_VERSION")));
                if let Some(t) = self.connect_timeout {
                    b = b.connect_timeout(t);
                }
                if let Some(socket) = unix_socket {
                    b = with_unix_socket(b, socket)?;
                }
                b.build().map_err(io::Error::other)?
            }
        };
        let (tx, rx) = channel::channel();
        let state = Arc::new(Mutex::new(State {
            mode: if self.sse_legacy {
                Mode::LegacyPending
            } else {
                Mode::Streamable
            },
            ..State::default()
        }));
        let inner = Arc::new(Inner {
            http,
            url,
            headers: self.headers,
            max_frame: self.max_frame,
            standalone_stream: self.standalone_stream,
            max_reconnects: self.max_reconnects,
            auth: self.auth.0,
            tx,
            state,
            session_gate: tokio::sync::RwLock::new(()),
            shutdown: CancellationToken::new(),
            notes: tokio_util::task::TaskTracker::new(),
        });
        Ok(HttpClientTransport { inner, rx })
    }
}

/// The socket path and the `http://localhost…` URL of a Unix domain socket URL:
/// `unix:/path/to.sock` (the endpoint at `/mcp`) or `http+unix://%2Fpath%2Fto.sock/path` (the
/// socket path percent-encoded as the host); `None` for any other URL.
pub(crate) fn unix_url(url: &str) -> io::Result<Option<(std::path::PathBuf, String)>> {
    let invalid = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("invalid MCP URL {url:?}: {why}"));
    if let Some(path) = url.strip_prefix("unix:") {
        if path.is_empty() || path.starts_with("//") {
            return Err(invalid("write unix:/path/to.sock (a socket path after `unix:`)"));
        }
        return Ok(Some((path.into(), "http://localhost/mcp".to_owned())));
    }
    let Some(rest) = url.strip_prefix("http+unix://") else {
        return Ok(None);
    };
    let (host, tail) = rest.find(['/', '?']).map_or((rest, ""), |at| rest.split_at(at));
    let socket = percent_decode(host).ok_or_else(|| invalid("the socket path is not valid percent-encoded UTF-8"))?;
    if socket.is_empty() {
        return Err(invalid("no socket path (write http+unix://%2Fpath%2Fto.sock/mcp)"));
    }
    let tail = if tail.is_empty() { "/" } else { tail };
    Ok(Some((socket.into(), format!("http://localhost{tail}"))))
}

/// `%XX` escapes decoded; `None` on a broken escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(unix)]
fn with_unix_socket(b: reqwest::ClientBuilder, socket: std::path::PathBuf) -> io::Result<reqwest::ClientBuilder> {
    Ok(b.unix_socket(socket))
}

#[cfg(not(unix))]
fn with_unix_socket(_: reqwest::ClientBuilder, socket: std::path::PathBuf) -> io::Result<reqwest::ClientBuilder> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "Unix domain sockets ({}) are not supported on this OS",
            socket.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::unix_url;

    #[test]
    fn unix_urls_name_the_socket_and_the_path() {
        let (socket, url) = unix_url("unix:/tmp/s.sock").unwrap().unwrap();
        assert_eq!(
            (socket.to_str(), url.as_str()),
            (Some("/tmp/s.sock"), "http://localhost/mcp")
        );
        let (socket, url) = unix_url("http+unix://%2Ftmp%2Fmy%20s.sock/api/mcp?x=1")
            .unwrap()
            .unwrap();
        assert_eq!(
            (socket.to_str(), url.as_str()),
            (Some("/tmp/my s.sock"), "http://localhost/api/mcp?x=1")
        );
        let (_, url) = unix_url("http+unix://%2Fs.sock").unwrap().unwrap();
        assert_eq!(url, "http://localhost/");
        assert!(unix_url("http://127.0.0.1:1/mcp").unwrap().is_none());
        for bad in [
            "unix:",
            "unix://x",
            "http+unix://%2/mcp",
            "http+unix:///mcp",
            "http+unix://%FF/mcp",
        ] {
            assert!(unix_url(bad).is_err(), "{bad}");
        }
    }
}
