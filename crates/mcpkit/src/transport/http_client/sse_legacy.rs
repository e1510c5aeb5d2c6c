//! The deprecated HTTP+SSE transport of 2024-11-05 (spec: `2024-11-05/basic/transports` "HTTP
//! with SSE"): a GET opens an SSE stream whose first event, `endpoint`, names the URL to POST
//! messages to; every server message arrives as a `message` event on that stream. The stream is
//! the connection: when it ends, so does the connection (the old transport cannot resume).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use mcpkit_types::RequestId;
use reqwest::{header, Url};
use sse_stream::SseByteStream;

use super::classify::Kind;
use super::post::media_type;
use super::sse::{is_message_event, is_sse, SseEvents, ACCEPT_SSE};
use super::{other, Inner, ACCEPT_POST};
use crate::sync::lock;

/// How long the server may take to send the `endpoint` event.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(30);

impl Inner {
    /// GET the URL as an HTTP+SSE stream, wait for its `endpoint` event, and keep reading the
    /// stream in the background. The endpoint must be on the same origin as the stream: the
    /// transport's headers (credentials, perhaps) are sent there.
    pub(super) async fn connect_legacy(self: &Arc<Self>) -> io::Result<Url> {
        // Through the auth provider, like Streamable HTTP: a protected HTTP+SSE server
        // challenges the GET (and each POST) the same way.
        let response = super::auth::send(self.auth.as_ref(), &self.url, || {
            self.http
                .get(self.url.clone())
                .headers(self.headers.clone())
                .header(header::ACCEPT, ACCEPT_SSE)
        })
        .await
        .map_err(|e| other(format!("could not open the HTTP+SSE stream at {}: {e}", self.url)))?;
        let status = response.status();
        if !status.is_success() || !is_sse(&response) {
            return Err(other(format!(
                "GET {} answered HTTP {status} with Content-Type {:?}, not an HTTP+SSE stream",
                self.url,
                media_type(&response)
            )));
        }
        let mut events = Box::pin(SseByteStream::new(response.bytes_stream()));
        let first = tokio::time::timeout(ENDPOINT_TIMEOUT, async {
            loop {
                match events.next().await {
                    // Blocks without data (a bare `retry`, a comment) come before the endpoint.
                    Some(Ok(e)) if e.data.is_none() => continue,
                    other => break other,
                }
            }
        })
        .await;
        let event = match first {
            Ok(Some(Ok(e))) => e,
            Ok(Some(Err(e))) => return Err(other(format!("reading the HTTP+SSE stream failed: {e}"))),
            Ok(None) => return Err(other("the HTTP+SSE stream ended before its endpoint event")),
            Err(_) => return Err(other(format!("no endpoint event within {ENDPOINT_TIMEOUT:?}"))),
        };
        if event.event.as_deref() != Some("endpoint") {
            return Err(other(format!(
                "the first event of the HTTP+SSE stream was {:?}, not \"endpoint\"",
                event.event.as_deref().unwrap_or("message")
            )));
        }
        let data = event.data.unwrap_or_default();
        let endpoint = self
            .url
            .join(data.trim())
            .map_err(|e| other(format!("invalid endpoint {data:?} in the HTTP+SSE stream: {e}")))?;
        if endpoint.origin() != self.url.origin() {
            return Err(other(format!(
                "the HTTP+SSE endpoint {endpoint} is not on the stream's origin; refusing to send messages there"
            )));
        }
        let this = self.clone();
        self.spawn(self.shutdown.clone(), async move { this.legacy_stream(events).await });
        Ok(endpoint)
    }

    /// Forward every `message` event; the end of the stream ends the connection.
    async fn legacy_stream(self: Arc<Self>, mut events: impl SseEvents) {
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => {
                    let Some(data) = event.data else { continue };
                    if !is_message_event(event.event.as_deref()) || data.trim().is_empty() {
                        continue;
                    }
                    let frame = data.into_bytes();
                    self.inspect(&frame, None);
                    self.forward(frame, None);
                }
                Err(e) => {
                    return self.fatal(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!("the HTTP+SSE stream failed: {e}"),
                    ));
                }
            }
        }
        if !self.shutdown.is_cancelled() {
            self.fatal(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the HTTP+SSE stream",
            ));
        }
    }

    /// Route one outgoing message over HTTP+SSE: handshake messages in order, the rest
    /// concurrently.
    pub(super) async fn send_legacy(self: Arc<Self>, endpoint: Url, frame: Bytes, kind: Kind) {
        match kind {
            Kind::Request { id, initialize: true } => {
                {
                    let mut s = lock(&self.state);
                    s.initialize = Some((id.clone(), frame.clone()));
                    s.awaiting_init = Some(id.clone());
                }
                self.legacy_post(&endpoint, frame, Some(&id)).await;
            }
            Kind::Initialized => self.legacy_post(&endpoint, frame, None).await,
            Kind::Request { id, .. } | Kind::Stateless { id, .. } => {
                let this = self.clone();
                self.spawn(self.shutdown.clone(), async move {
                    this.legacy_post(&endpoint, frame, Some(&id)).await;
                });
            }
            Kind::Cancelled(_) | Kind::Other => {
                let this = self.clone();
                self.spawn(self.shutdown.clone(), async move {
                    this.legacy_post(&endpoint, frame, None).await;
                });
            }
        }
    }

    /// POST one message to the endpoint; replies arrive on the SSE stream.
    pub(super) async fn legacy_post(&self, endpoint: &Url, frame: Bytes, id: Option<&RequestId>) {
        let trace = super::headers::trace_context(&frame);
        let sent = super::auth::send(self.auth.as_ref(), &self.url, || {
            let mut req = self
                .http
                .post(endpoint.clone())
                .headers(self.headers.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCEPT, ACCEPT_POST)
                .body(frame.clone());
            for (name, value) in &trace {
                req = req.header(name.clone(), value.clone());
            }
            req
        })
        .await;
        match sent {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => self.http_error(r, id).await,
            Err(e) => self.fail_request(id, &e),
        }
    }
}
