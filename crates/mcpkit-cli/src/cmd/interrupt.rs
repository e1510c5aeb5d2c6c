//! Ctrl-C while a command talks to a server: the request in flight is cancelled (dropping its
//! future sends `notifications/cancelled` with its id), the client is closed (over HTTP that
//! sends `DELETE` for the session; a stdio server's stdin is closed), and the command exits
//! with 130, the shell's code for a process ended by SIGINT. What the request started that
//! outlives it (a task, `mcpkit call --task`) is stopped first, while the client is still open
//! (`tasks/cancel`). A second Ctrl-C stops waiting for either.

use std::future::Future;

use mcpkit::Client;

use crate::target::Failure;

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT).
pub const INTERRUPTED: u8 = 130;

/// Ctrl-C, listened for from the moment this is made (so one pressed while connecting counts).
pub struct Interrupt {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Interrupt {
    /// Start listening for SIGINT (inside the runtime). Without a signal handler (it could not
    /// be installed) it never fires and Ctrl-C ends the process as usual.
    pub fn listen() -> Interrupt {
        #[cfg(unix)]
        {
            let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
            Interrupt { signal }
        }
        #[cfg(not(unix))]
        Interrupt {}
    }

    /// Resolves at the next Ctrl-C.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        {
            let fired = match &mut self.signal {
                Some(s) => s.recv().await.is_some(),
                None => false,
            };
            if !fired {
                std::future::pending::<()>().await;
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Connect with `connecting`, unless Ctrl-C comes first (then `Err(None)`: exit with
/// [`INTERRUPTED`]).
pub async fn connect_or_interrupt(
    interrupt: &mut Interrupt,
    connecting: impl Future<Output = Result<Client, Failure>>,
) -> Result<Client, Option<Failure>> {
    tokio::select! {
        c = connecting => c.map_err(Some),
        () = interrupt.recv() => Err(None),
    }
}

/// Run `work` against `client`, then close the client. On Ctrl-C `work` is dropped (cancelling
/// its request in flight), the client is closed, and the outcome is [`INTERRUPTED`].
pub async fn run_then_close(
    command: &str,
    client: &Client,
    interrupt: &mut Interrupt,
    work: impl Future<Output = Result<u8, Failure>>,
) -> Result<u8, Failure> {
    run_stop_then_close(command, client, interrupt, work, || None::<std::future::Ready<()>>).await
}

/// How long stopping what an interrupted request left running may take before the close.
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// [`run_then_close`], where Ctrl-C also runs what `stop` returns (if anything) before the
/// close, with the client still open: it stops what the dropped request left running on the
/// server (a task).
pub async fn run_stop_then_close<S: Future<Output = ()>>(
    command: &str,
    client: &Client,
    interrupt: &mut Interrupt,
    work: impl Future<Output = Result<u8, Failure>>,
    stop: impl FnOnce() -> Option<S>,
) -> Result<u8, Failure> {
    let outcome = tokio::select! {
        o = work => o,
        () = interrupt.recv() => {
            eprintln!("mcpkit {command}: interrupted; the request in flight was cancelled");
            if let Some(stopping) = stop() {
                tokio::select! {
                    _ = tokio::time::timeout(STOP_TIMEOUT, stopping) => {}
                    () = interrupt.recv() => {}
                }
            }
            Ok(INTERRUPTED)
        }
    };
    tokio::select! {
        _ = client.close() => {}
        () = interrupt.recv() => {}
    }
    outcome
}
