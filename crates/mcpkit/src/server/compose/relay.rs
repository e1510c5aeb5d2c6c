//! What flows back from an upstream while a downstream request runs through it: its
//! sampling, elicitation and roots requests, asked of the downstream client on that request's
//! context (a server→client request on a handshake-era session, an input round on the
//! stateless wire), and its log messages.
//!
//! An upstream spoken to on the stateless wire asks within the call it belongs to (an input
//! round the client answers in the caller's task), so its request goes to that call's
//! downstream request. Otherwise the upstream's request names no downstream request, so it
//! goes to the request running through the upstream: the only one, or, when several are, the
//! newest of them if all belong to one handshake-era session (where any of them reaches the
//! same client). Otherwise it is refused (an upstream's log message is dropped): it cannot be
//! told whose it is.

use std::sync::Mutex;

use mcpkit_types::schema::{InputRequest, InputResponse, LoggingMessageParams};
use mcpkit_types::ErrorObject;
use tokio_util::sync::CancellationToken;

use super::super::RequestContext;
use crate::error::Error;

tokio::task_local! {
    /// The upstream request being made for a downstream request, in its task: the
    /// [`InFlight`] (by address) and the entry.
    static RUNNING: (usize, u64);
}

/// The downstream requests running through one upstream.
#[derive(Default)]
pub(super) struct InFlight {
    calls: Mutex<Vec<Running>>,
    next: std::sync::atomic::AtomicU64,
}

struct Running {
    id: u64,
    cx: RequestContext,
    /// Fires when the downstream request must end to ask for input (stateless era).
    interrupt: CancellationToken,
}

/// One downstream request running through the upstream, until dropped.
pub(super) struct Entered<'a> {
    set: &'a InFlight,
    id: u64,
    /// Fires when the request must end now and answer `input_required`.
    pub(super) interrupt: CancellationToken,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        crate::sync::lock(&self.set.calls).retain(|r| r.id != self.id);
    }
}

impl InFlight {
    /// Record a downstream request served through the upstream.
    pub(super) fn enter(&self, cx: &RequestContext) -> Entered<'_> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let interrupt = CancellationToken::new();
        crate::sync::lock(&self.calls).push(Running {
            id,
            cx: cx.clone(),
            interrupt: interrupt.clone(),
        });
        Entered {
            set: self,
            id,
            interrupt,
        }
    }

    /// How many are running.
    pub(super) fn len(&self) -> usize {
        crate::sync::lock(&self.calls).len()
    }

    /// Who this set is, for [`RUNNING`].
    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Run `upstream`, the upstream request made for `entered`, knowing so in its task.
    pub(super) fn scope<F: std::future::Future>(
        &self,
        entered: &Entered<'_>,
        upstream: F,
    ) -> impl std::future::Future<Output = F::Output> {
        RUNNING.scope((self.key(), entered.id), upstream)
    }

    /// The request an upstream's message belongs to (see the module's rule), or how many are
    /// running when it cannot be told.
    fn pick(&self) -> Result<(u64, RequestContext, CancellationToken), usize> {
        let calls = crate::sync::lock(&self.calls);
        if let Ok((key, id)) = RUNNING.try_with(|running| *running) {
            if key == self.key() {
                if let Some(r) = calls.iter().find(|r| r.id == id) {
                    return Ok((r.id, r.cx.clone(), r.interrupt.clone()));
                }
            }
        }
        let Some(newest) = calls.last() else {
            return Err(0);
        };
        let one_session = calls.iter().all(|r| {
            r.cx.input.is_none()
                && r.cx.protocol_version().era() == mcpkit_types::Era::Handshake
                && std::sync::Arc::ptr_eq(&r.cx.session, &newest.cx.session)
        });
        if calls.len() == 1 || one_session {
            Ok((newest.id, newest.cx.clone(), newest.interrupt.clone()))
        } else {
            Err(calls.len())
        }
    }

    /// Ask the downstream client what upstream `name` asked us, on the request it belongs to.
    pub(super) async fn ask(&self, name: &str, request: InputRequest) -> Result<InputResponse, ErrorObject> {
        let method = request.method();
        let (_, cx, interrupt) = self.pick().map_err(|running| {
            ErrorObject::internal(format!(
                "upstream {name:?} sent {method}, but {running} downstream requests run through it and the request it \
                 belongs to cannot be told"
            ))
        })?;
        match cx.input(None, request).await {
            Ok(answer) => Ok(answer),
            Err(Error::InputRequired) => {
                // Stateless era: the downstream request ends now with `input_required`; its
                // retry runs the upstream call again, and this request then finds its answer.
                interrupt.cancel();
                Err(ErrorObject::internal(format!(
                    "{method} is being asked of the downstream client in an input round"
                )))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Send upstream `name`'s log message, heard while request `heard_by` ran through it, to
    /// the downstream request it belongs to if that is `heard_by` (every request running
    /// through the upstream hears it; one passes it on), else nothing.
    pub(super) fn log(&self, name: &str, message: LoggingMessageParams, heard_by: &Entered<'_>) {
        match self.pick() {
            Ok((id, _, _)) if id != heard_by.id => {}
            Ok((_, cx, _)) => {
                let logger = message
                    .logger
                    .map_or_else(|| name.to_owned(), |l| format!("{name}/{l}"));
                if let Err(e) = cx.log(message.level, Some(&logger), message.data) {
                    tracing::debug!("upstream {name:?}: log message not relayed: {e}");
                }
            }
            Err(running) => {
                tracing::debug!("upstream {name:?}: log message dropped ({running} downstream requests running)");
            }
        }
    }
}
