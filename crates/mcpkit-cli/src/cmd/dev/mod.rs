//! `mcpkit dev`: a local web host for developing an MCP server. The page (embedded, see
//! [`page`]) shows what the server offers, calls its tools through forms generated from their
//! schemas, renders their MCP Apps views ([`app`]: a sandboxed iframe on a second listener,
//! bridged by `mcpkit::apps::host::AppBridge`), answers its sampling and elicitation requests
//! in dialogs, completes arguments, offers roots, shows log messages, tasks and skills, and
//! every JSON-RPC message; this process holds the MCP client ([`session`]) and serves the
//! page's API ([`http`]) on loopback behind a random token. With `--watch` (the default for
//! `-- cargo run …`), a change rebuilds and restarts the server and the page reconnects
//! ([`watch`]).

mod app;
mod http;
mod hub;
pub mod page;
mod session;
mod watch;

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use super::Globals;
use crate::target::{Failure, TargetArgs};
use hub::Hub;

/// Develop an MCP server in the browser: `mcpkit dev -- cargo run`. Serves a page on loopback
/// (its URL, with the access token, is the first line on stdout) that lists the server's
/// tools, resources and prompts, calls tools through forms generated from their schemas,
/// renders their MCP Apps views, answers sampling and elicitation in dialogs and shows every
/// JSON-RPC message and log message.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Serve the page on this address (default: 127.0.0.1 on a free port).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Do not open the browser.
    #[arg(long)]
    no_open: bool,
    /// Restart the server when a file under PATH changes (repeatable); a `-- cargo run …`
    /// server is rebuilt first (`cargo build`, errors shown in the page) and its `src/` is
    /// watched by default.
    #[arg(long, value_name = "PATH")]
    watch: Vec<PathBuf>,
    /// Watch nothing, not even a Cargo project's `src/`.
    #[arg(long, conflicts_with = "watch")]
    no_watch: bool,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Serve the page, connect, and run until Ctrl-C.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let target = self.target.resolve()?;
        let options = globals.connect_options(&self.target);
        let plan = if self.no_watch {
            None
        } else {
            watch::plan(&target, &self.watch)?
        };
        let addr = self
            .listen
            .unwrap_or(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
        // The views' origin: another port on the same address, so a view shares no origin
        // with the page.
        let views_listener = tokio::net::TcpListener::bind(SocketAddr::new(bound.ip(), 0))
            .await
            .map_err(|e| Failure::usage(format!("cannot listen for the App views on {}: {e}", bound.ip())))?;
        let views_bound = views_listener
            .local_addr()
            .map_err(|e| Failure::usage(format!("cannot listen for the App views: {e}")))?;
        let token = random_hex(32)?;
        let hub = Hub::new(options);
        hub.set_roots(default_roots());
        let shown = match bound.ip() {
            ip if ip.is_unspecified() => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), bound.port()),
            _ => bound,
        };
        let views_shown = SocketAddr::new(shown.ip(), views_bound.port());
        // CSP host sources have no IPv6 literals: `[::1]` is left out.
        let page_origins = hosts_of(bound)
            .iter()
            .filter(|h| !h.starts_with('['))
            .map(|h| format!("http://{h}"))
            .collect::<Vec<_>>()
            .join(" ");
        let views = app::Views {
            hub: hub.clone(),
            hosts: hosts_of(views_bound).into(),
            page_origins: Arc::from(page_origins.as_str()),
        };
        let dev = http::Dev {
            hub: hub.clone(),
            token: Arc::from(token.as_str()),
            hosts: hosts_of(bound).into(),
            nonce: Arc::from(random_hex(16)?.as_str()),
            label: Arc::from(target.label.as_str()),
            target: Arc::new(target.clone()),
            stop: tokio_util::sync::CancellationToken::new(),
            views_base: Arc::from(format!("http://{views_shown}").as_str()),
        };
        let url = format!("http://{shown}/?token={token}");
        // The first line on stdout, and the only one: what a script or a test reads.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{url}");
        let _ = out.flush();
        drop(out);
        eprintln!(
            "mcpkit dev: the page for {} ({} bytes of embedded page); Ctrl-C stops",
            crate::terminal::err(&target.label),
            page::WEIGHT
        );
        if !self.no_open {
            open_browser(&url);
        }
        let stop = dev.stop.clone();
        let views_stop = dev.stop.clone();
        let app = http::router(dev);
        let first = (target.clone(), hub.clone());
        let connecting = tokio::spawn(async move { session::restart(&first.0, &first.1).await });
        let watching = plan.map(|plan| tokio::spawn(watch::run(plan, target.clone(), hub.clone())));
        let stopping = async move {
            super::shutdown_signal().await;
            connecting.abort();
            if let Some(w) = watching {
                w.abort();
            }
            // The open event streams end, and the running calls (their requests still open)
            // are cancelled: graceful shutdown waits for both.
            stop.cancel();
            if let Some(client) = hub.disconnected("mcpkit dev stopped".to_owned()) {
                let _ = client.close().await;
            }
        };
        let serving_views = tokio::spawn(async move {
            let app = app::router(views);
            axum::serve(views_listener, app)
                .with_graceful_shutdown(views_stop.cancelled_owned())
                .await
        });
        let outcome = axum::serve(listener, app).with_graceful_shutdown(stopping).await;
        serving_views.abort();
        match outcome {
            Ok(()) => Ok(0),
            Err(e) => Err(Failure::usage(format!("serving the page: {e}"))),
        }
    }
}

/// The `Host` values of `addr`: its own, and the loopback names when it is a loopback (or
/// every) address.
fn hosts_of(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.to_string()];
    if addr.ip().is_loopback() || addr.ip().is_unspecified() {
        hosts.extend([
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ]);
    }
    hosts.dedup();
    hosts
}

/// The roots offered at first: the working folder, as a `file://` URI.
fn default_roots() -> Vec<mcpkit::types::schema::Root> {
    let Ok(dir) = std::env::current_dir() else {
        return Vec::new();
    };
    let mut root = mcpkit::types::schema::Root::new(file_uri(&dir));
    root.name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    vec![root]
}

/// `path` (absolute) as a `file://` URI: bytes outside the unreserved set and `/` are
/// percent-encoded, `\` becomes `/`.
fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'.' | b'_' | b'~' | b'-' => uri.push(char::from(b)),
            b'\\' => uri.push('/'),
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

/// `bytes` random bytes, hex.
fn random_hex(bytes: usize) -> Result<String, Failure> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| Failure::usage(format!("no randomness for the token: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Open `url` in the user's browser; say so when that fails (the URL is on stdout).
fn open_browser(url: &str) {
    let mut cmd = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    cmd.arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match cmd.spawn() {
        // Reaped off the async threads (the opener exits once it has handed the URL over).
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("mcpkit dev: cannot open a browser ({e}): open the URL above"),
    }
}

#[cfg(test)]
mod tests {
    use super::file_uri;

    #[test]
    fn a_folder_is_a_percent_encoded_file_uri() {
        assert_eq!(
            file_uri(std::path::Path::new("/home/me/my server")),
            "file:///home/me/my%20server"
        );
        assert_eq!(file_uri(std::path::Path::new("/tmp/é#?")), "file:///tmp/%C3%A9%23%3F");
    }
}
