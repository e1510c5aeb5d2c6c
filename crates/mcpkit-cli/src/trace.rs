//! `--trace-wire`: every JSON-RPC message, in and out, printed to stderr with a UTC timestamp,
//! through [`mcpkit::transport::inspect`](mod@mcpkit::transport::inspect) (a client, or a server on stdio) or
//! [`HttpServer::inspect`](mcpkit::server::http::HttpServer::inspect) (`serve --http`).
//!
//! ```text
//! 21:30:01.123 -> server {"jsonrpc":"2.0","id":1,"method":"initialize",…}
//! 21:30:01.130 <- server {"jsonrpc":"2.0","id":1,"result":{…}}
//! ```

use std::io::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use mcpkit::transport::inspect::{inspect, Direction, Inspect, Observed};
use mcpkit::transport::Transport;

/// `transport`, printing its traffic to stderr; `peer` names the other side in each line.
pub fn traced<T: Transport>(
    transport: T,
    peer: &'static str,
) -> Inspect<T, impl Fn(Direction, Observed<'_>) + Send + Sync + 'static> {
    inspect(transport, printer(peer))
}

/// The callback that prints each observed frame; `peer` names the other side in each line.
pub fn printer(peer: &'static str) -> impl Fn(Direction, Observed<'_>) + Send + Sync + 'static {
    move |direction, observed| {
        let arrow = match direction {
            Direction::Outgoing => "->",
            Direction::Incoming => "<-",
        };
        match observed {
            Observed::Message(m) => print_frame(arrow, peer, m),
            Observed::Oversized(n) => print_frame(
                arrow,
                peer,
                format!("(a frame of {n} bytes, over the limit, dropped)").as_bytes(),
            ),
        }
    }
}

/// `HH:MM:SS.mmm` in UTC.
fn timestamp() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        now.subsec_millis()
    )
}

/// Print one traced frame: `arrow` is `->` (sent) or `<-` (received).
fn print_frame(arrow: &str, peer: &str, frame: &[u8]) {
    let text = String::from_utf8_lossy(frame);
    let mut err = io::stderr().lock();
    // A frame is the peer's bytes: shown escaped on a terminal.
    let _ = writeln!(
        err,
        "{} {arrow} {peer} {}",
        timestamp(),
        crate::terminal::err(text.trim_end())
    );
}
