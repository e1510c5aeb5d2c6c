//! The two loops of a connection on a stream transport: the reader (read, dispatch, and at the
//! end of input the drain) and the writer (write what is queued, flush when the queue is empty).

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Dispatcher, Outgoing};
use crate::error::Error;
use crate::sync::lock;
use crate::transport::{Frame, FrameReader, FrameWriter};
use mcpkit_types::ErrorObject;

pub(super) async fn write_loop<W: FrameWriter>(
    mut w: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    closed: CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            biased;
            f = rx.recv() => f,
            _ = closed.cancelled() => {
                // Drain what is already queued before closing.
                while let Ok(out) = rx.try_recv() {
                    if write(&mut w, out).await.is_err() { break; }
                }
                break;
            }
        };
        let Some(out) = frame else { break };
        if let Err(e) = write(&mut w, out).await {
            tracing::debug!("transport write failed: {e}");
            return;
        }
        // Write everything that is already queued, then flush once.
        while let Ok(out) = rx.try_recv() {
            if let Err(e) = write(&mut w, out).await {
                tracing::debug!("transport write failed: {e}");
                return;
            }
        }
        if let Err(e) = w.flush().await {
            tracing::debug!("transport flush failed: {e}");
            return;
        }
    }
    let _ = w.close().await;
}

/// Write one frame; a stream transport has no per-request streams to end.
async fn write<W: FrameWriter>(w: &mut W, out: Outgoing) -> std::io::Result<()> {
    match out {
        Outgoing::Frame(frame, route) => w.write_routed(&frame, &route).await,
        #[cfg(feature = "http-server")]
        Outgoing::End(_) => Ok(()),
    }
}

/// How many buffered frames the reader handles before it lets the writer run.
const FRAMES_PER_TURN: usize = 16;

pub(super) async fn read_loop<R: FrameReader>(mut reader: R, dispatcher: &Dispatcher) {
    let peer = dispatcher.peer();
    let mut read: usize = 0;
    let end = loop {
        let frame = tokio::select! {
            // Buffered input first: the close signal is looked at only when reading waits.
            biased;
            f = reader.read_frame() => f,
            _ = peer.shared.closed.cancelled() => break None,
        };
        match frame {
            Ok(Some(Frame::Message(b))) => dispatcher.on_frame(&b, reader.take_extensions()),
            Ok(Some(Frame::Oversized(n))) => {
                tracing::warn!("discarded a {n}-byte frame over the size limit");
                peer.send_error(
                    None,
                    &ErrorObject::invalid_request(format!("message of {n} bytes exceeds the size limit")),
                );
            }
            Ok(None) => break None,
            Err(e) => break Some(Error::from(e)),
        }
        // A long run of buffered input (a pipelining client) lets the writer in every few
        // frames: the first replies leave while the rest are handled, so the client refills
        // its window instead of waiting for the whole batch.
        read = read.wrapping_add(1);
        if read % FRAMES_PER_TURN == 0 {
            tokio::task::yield_now().await;
        }
    };
    if let Some(e) = end {
        *lock(&peer.shared.close_reason) = Some(Box::new(e));
    }
    // Nothing more will come in: fail every waiting caller (no answer can arrive).
    dispatcher.end_notes().await;
    peer.fail_pending();
    // At a clean end of input the writer may still be open (a client closes our stdin and
    // waits for the answers): let requests already read finish, within the drain limit.
    if !peer.shared.closed.is_cancelled() {
        let deadline = tokio::time::sleep(peer.shared.options.drain_timeout);
        tokio::pin!(deadline);
        loop {
            if lock(&peer.shared.inflight).is_empty() {
                break;
            }
            // The last request to finish notifies (a permit is kept when nobody waits yet, so
            // one finishing between the check and this wait still wakes it).
            tokio::select! {
                () = peer.shared.drained.notified() => {}
                () = peer.shared.closed.cancelled() => break,
                () = &mut deadline => break,
            }
        }
    }
    peer.cancel_inflight();
}
