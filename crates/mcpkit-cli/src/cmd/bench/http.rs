//! The HTTP load: after the client has connected (session id, negotiated revision, auth), each
//! caller drives its own HTTP/1.1 keep-alive connection with hyper's connection API, POSTing
//! the prebuilt `tools/call` frame (only the id changes) with the headers the client's
//! transport would send ([`HttpClientInfo::post_headers`]), and reads the reply — JSON or an
//! SSE stream — with a borrowed parse. Anything else the server sends on a reply stream (a
//! request such as `sampling/createMessage`, a notification) is handed to the client, which
//! answers it over its own transport.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use mcpkit::transport::http_client::HttpClientInfo;
use mcpkit::transport::{Frame, FrameReader, Transport, DEFAULT_MAX_FRAME};
use tokio::sync::mpsc;

use super::reply::{classify, Message, Outcome, SseReader, Template, ID_BASE};
use super::{new_histogram, Phase, PhaseResult};
use crate::target::{one_line, Failure};

/// How long a reply stream may stay open after its response before the connection is dropped
/// (and a new one opened) instead of being reused.
const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// Wraps the client's transport so the bench can hand it messages found on reply streams.
pub(super) struct Shared<T> {
    inner: T,
    tx: mpsc::UnboundedSender<io::Result<Option<Frame>>>,
    rx: mpsc::UnboundedReceiver<io::Result<Option<Frame>>>,
}

/// Hands messages to the client as if its own transport had read them.
#[derive(Debug, Clone)]
pub(super) struct Injector(mpsc::UnboundedSender<io::Result<Option<Frame>>>);

impl<T: Transport> Shared<T> {
    pub(super) fn new(inner: T) -> (Shared<T>, Injector) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Shared {
                inner,
                tx: tx.clone(),
                rx,
            },
            Injector(tx),
        )
    }
}

/// The client's reading half: its transport's messages, plus the injected ones.
pub(super) struct SharedReader(mpsc::UnboundedReceiver<io::Result<Option<Frame>>>);

impl<T: Transport> Transport for Shared<T> {
    type Reader = SharedReader;
    type Writer = T::Writer;
    fn split(self) -> (SharedReader, T::Writer) {
        let (mut reader, writer) = self.inner.split();
        let tx = self.tx;
        tokio::spawn(async move {
            loop {
                let frame = reader.read_frame().await;
                let last = !matches!(frame, Ok(Some(_)));
                if tx.send(frame).is_err() || last {
                    return;
                }
            }
        });
        (SharedReader(self.rx), writer)
    }
}

impl FrameReader for SharedReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        match self.0.recv().await {
            Some(r) => r,
            None => Ok(None),
        }
    }
}

/// Where and how to POST.
#[derive(Debug, Clone)]
pub(super) struct HttpDriver {
    info: HttpClientInfo,
    injector: Injector,
}

/// Everything a caller needs, computed once per phase.
struct Endpoint {
    addr: SocketAddr,
    path: Uri,
    headers: HeaderMap,
    template: Arc<Template>,
    timeout: Duration,
    injector: Injector,
}

impl HttpDriver {
    pub(super) fn new(info: HttpClientInfo, injector: Injector) -> HttpDriver {
        HttpDriver { info, injector }
    }

    /// Whether the bench can drive this connection itself: Streamable HTTP over plain http.
    pub(super) fn usable(info: &HttpClientInfo) -> bool {
        !info.is_sse_legacy() && info.url().is_some_and(|u| u.scheme() == "http")
    }

    async fn endpoint(&self, template: &Arc<Template>, timeout: Duration) -> Result<Endpoint, Failure> {
        let gone = || Failure::usage("the HTTP connection is closed");
        let url = self.info.url().ok_or_else(gone)?;
        let host = url
            .host_str()
            .ok_or_else(|| Failure::usage(format!("{url} has no host")))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let addr = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| Failure::usage(format!("cannot resolve {host}: {e}")))?
            .next()
            .ok_or_else(|| Failure::usage(format!("{host} has no address")))?;
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let path: Uri = path.parse().map_err(|e| Failure::usage(format!("{url}: {e}")))?;
        let mut headers = self.info.post_headers(&template.frame(ID_BASE)).ok_or_else(gone)?;
        let authority = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or(host)),
            None => url.host_str().unwrap_or(host).to_owned(),
        };
        headers.insert(
            header::HOST,
            HeaderValue::from_str(&authority).map_err(|e| Failure::usage(format!("{url}: {e}")))?,
        );
        Ok(Endpoint {
            addr,
            path,
            headers,
            template: template.clone(),
            timeout,
            injector: self.injector.clone(),
        })
    }

    /// Run one phase: `concurrency` callers, each on its own connection.
    pub(super) async fn run(
        &self,
        template: &Arc<Template>,
        concurrency: usize,
        timeout: Duration,
        phase: &Arc<Phase>,
    ) -> Result<PhaseResult, Failure> {
        let endpoint = Arc::new(self.endpoint(template, timeout).await?);
        let mut tasks = Vec::with_capacity(concurrency);
        for slot in 0..concurrency {
            let hist = new_histogram()?;
            let caller = Caller {
                endpoint: endpoint.clone(),
                phase: phase.clone(),
                slot: slot as u64,
                concurrency: concurrency as u64,
                hist,
                first_error: None,
                conn: None,
            };
            tasks.push(tokio::spawn(caller.run()));
        }
        super::merge(tasks).await
    }
}

struct Caller {
    endpoint: Arc<Endpoint>,
    phase: Arc<Phase>,
    slot: u64,
    concurrency: u64,
    hist: Histogram,
    first_error: Option<String>,
    conn: Option<SendRequest<Full<Bytes>>>,
}

type Histogram = hdrhistogram::Histogram<u64>;

/// What one call came to.
enum Call {
    Done(Result<(), String>),
    /// The connection cannot be reused.
    DoneDropConnection(Result<(), String>),
}

impl Caller {
    async fn run(mut self) -> (Histogram, Option<String>) {
        let mut seq = 0u64;
        let mut body = Vec::with_capacity(256);
        while self.phase.take(Instant::now()) {
            let id = ID_BASE + seq * self.concurrency + self.slot;
            seq += 1;
            body.clear();
            self.endpoint.template.write(id, &mut body);
            let t0 = Instant::now();
            let call = tokio::time::timeout(self.endpoint.timeout, self.call(id, Bytes::copy_from_slice(&body))).await;
            let (outcome, keep) = match call {
                Ok(Call::Done(o)) => (o, true),
                Ok(Call::DoneDropConnection(o)) => (o, false),
                Err(_) => (Err(format!("no reply within {:?}", self.endpoint.timeout)), false),
            };
            self.hist.saturating_record(t0.elapsed().as_micros().max(1) as u64);
            self.phase.done.fetch_add(1, Ordering::Relaxed);
            if !keep {
                self.conn = None;
            }
            if let Err(e) = outcome {
                self.phase.errors.fetch_add(1, Ordering::Relaxed);
                self.first_error.get_or_insert(e);
            }
        }
        (self.hist, self.first_error)
    }

    async fn connection(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, String> {
        if self.conn.as_ref().is_none_or(|c| c.is_closed()) {
            self.conn = None;
            let addr = self.endpoint.addr;
            let tcp = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
            let _ = tcp.set_nodelay(true);
            let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .map_err(|e| format!("HTTP handshake with {addr}: {e}"))?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!("bench connection: {e}");
                }
            });
            self.conn = Some(sender);
        }
        self.conn.as_mut().ok_or_else(|| "no connection".to_owned())
    }

    async fn call(&mut self, id: u64, body: Bytes) -> Call {
        let endpoint = self.endpoint.clone();
        let sender = match self.connection().await {
            Ok(s) => s,
            Err(e) => return Call::DoneDropConnection(Err(e)),
        };
        if let Err(e) = sender.ready().await {
            return Call::DoneDropConnection(Err(format!("the connection closed: {e}")));
        }
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = endpoint.path.clone();
        *req.headers_mut() = endpoint.headers.clone();
        let response = match sender.send_request(req).await {
            Ok(r) => r,
            Err(e) => return Call::DoneDropConnection(Err(format!("the HTTP request failed: {e}"))),
        };
        read_reply(&endpoint, response, id).await
    }
}

fn media_type(headers: &HeaderMap) -> &str {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or("")
}

/// Read the whole body (at most `limit` bytes); a body of one chunk is not copied.
async fn read_body(body: &mut Incoming, limit: usize) -> Result<Bytes, String> {
    let mut single: Option<Bytes> = None;
    let mut joined = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("reading the reply failed: {e}"))?;
        let Ok(data) = frame.into_data() else { continue };
        if single.is_none() && joined.is_empty() {
            single = Some(data);
        } else {
            if let Some(first) = single.take() {
                joined.extend_from_slice(&first);
            }
            joined.extend_from_slice(&data);
        }
        if single.as_ref().map_or(joined.len(), Bytes::len) > limit {
            return Err(format!("the reply exceeds the {limit}-byte limit"));
        }
    }
    Ok(single.unwrap_or_else(|| joined.freeze()))
}

/// The outcome of the reply to `id` found in `frame`, or why there is none.
fn answer(frame: &[u8], id: u64) -> Option<Result<(), String>> {
    match classify(frame) {
        Message::Response { id: got, outcome } => (got.parse::<u64>().ok() == Some(id)).then(|| match outcome {
            Outcome::Ok => Ok(()),
            o => Err(o.describe()),
        }),
        Message::Other => None,
    }
}

async fn read_reply(endpoint: &Endpoint, response: Response<Incoming>, id: u64) -> Call {
    let status = response.status();
    let (parts, mut body) = response.into_parts();
    if !status.is_success() {
        let text = read_body(&mut body, 64 * 1024).await.unwrap_or_default();
        let keep = !parts
            .headers
            .get(header::CONNECTION)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
        let why = match answer(&text, id).or_else(|| rpc_error_any_id(&text)) {
            Some(Err(e)) => format!("HTTP {status}: {e}"),
            _ => {
                let snippet: String = String::from_utf8_lossy(&text).chars().take(200).collect();
                one_line(&format!("HTTP {status} {snippet}"))
            }
        };
        return if keep {
            Call::Done(Err(why))
        } else {
            Call::DoneDropConnection(Err(why))
        };
    }
    if status == StatusCode::ACCEPTED {
        return Call::Done(Err(
            "HTTP 202 without a reply (the server would answer on another stream)".to_owned(),
        ));
    }
    match media_type(&parts.headers) {
        "application/json" => {
            let text = match read_body(&mut body, DEFAULT_MAX_FRAME).await {
                Ok(t) => t,
                Err(e) => return Call::DoneDropConnection(Err(e)),
            };
            match answer(&text, id) {
                Some(outcome) => Call::Done(outcome),
                None => match rpc_error_any_id(&text) {
                    Some(e) => Call::Done(e),
                    None => {
                        deliver(&endpoint.injector, &text);
                        Call::Done(Err(format!("the JSON reply did not answer request {id}")))
                    }
                },
            }
        }
        "text/event-stream" => read_stream(endpoint, body, id).await,
        other => Call::DoneDropConnection(Err(format!("unexpected Content-Type {other:?}"))),
    }
}

/// An error response whatever its id (a server that could not read the request's id).
fn rpc_error_any_id(text: &[u8]) -> Option<Result<(), String>> {
    #[derive(serde::Deserialize)]
    struct ErrorOnly {
        error: mcpkit::types::ErrorObject,
    }
    let e: ErrorOnly = serde_json::from_slice(text).ok()?;
    Some(Err(format!("JSON-RPC error {}: {}", e.error.code.0, e.error.message)))
}

/// Hand a message that is not the awaited reply to the client.
fn deliver(injector: &Injector, frame: &[u8]) {
    if !frame.iter().all(u8::is_ascii_whitespace) {
        let _ = injector.0.send(Ok(Some(Frame::Message(frame.to_vec()))));
    }
}

/// Follow an SSE reply until the response to `id`; then let the stream end (or drop the
/// connection when it stays open).
async fn read_stream(endpoint: &Endpoint, mut body: Incoming, id: u64) -> Call {
    let mut sse = SseReader::default();
    let mut outcome = None;
    while outcome.is_none() {
        let Some(frame) = body.frame().await else { break };
        let frame = match frame {
            Ok(f) => f,
            Err(e) => return Call::DoneDropConnection(Err(format!("reading the reply stream failed: {e}"))),
        };
        let Ok(data) = frame.into_data() else { continue };
        sse.push(&data);
        while let Some(event) = sse.next_event() {
            match answer(&event, id) {
                Some(o) => {
                    outcome = Some(o);
                    break;
                }
                None => deliver(&endpoint.injector, &event),
            }
        }
    }
    let Some(outcome) = outcome else {
        return Call::DoneDropConnection(Err(format!(
            "the reply stream ended before the response to request {id}"
        )));
    };
    // Whatever follows the response goes to the client too.
    while let Some(event) = sse.next_event() {
        deliver(&endpoint.injector, &event);
    }
    if hyper::body::Body::is_end_stream(&body) {
        return Call::Done(outcome);
    }
    let drained = tokio::time::timeout(DRAIN_GRACE, async {
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            if let Ok(data) = frame.into_data() {
                sse.push(&data);
                while let Some(event) = sse.next_event() {
                    deliver(&endpoint.injector, &event);
                }
            }
        }
        true
    })
    .await;
    match drained {
        Ok(true) => Call::Done(outcome),
        _ => Call::DoneDropConnection(outcome),
    }
}
