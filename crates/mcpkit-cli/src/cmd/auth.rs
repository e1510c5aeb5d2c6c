//! `mcpkit auth list` and `mcpkit auth logout [SERVER]`: the OAuth logins `--oauth` remembers
//! ([`crate::auth_store`]). `list` shows each server's login (issuer, scopes, expiry, whether it
//! can be refreshed, where its secret is kept), never a token; `logout SERVER` forgets the
//! server's tokens, `logout` alone every login and client registration.

use std::time::SystemTime;

use super::Globals;
use crate::auth_store::{CliTokenStore, Stored, TokenEntry};
use crate::target::Failure;

/// What to do.
#[derive(clap::Subcommand, Debug)]
pub enum Action {
    /// The servers mcpkit holds a login for.
    List {
        /// One JSON array of {server, issuer, scope, expires_in_s, refreshable, kept_in}.
        #[arg(long)]
        json: bool,
    },
    /// Forget the login for SERVER (its URL, as given to --server), or every login and client
    /// registration when no SERVER is given.
    Logout {
        /// The server's URL.
        server: Option<String>,
    },
}

/// The logins `--oauth` remembers: `mcpkit auth list`, `mcpkit auth logout [SERVER]`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

impl Args {
    /// List or forget.
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        let store = CliTokenStore::open().map_err(Failure::usage)?;
        // The store blocks (file, keyring): off the runtime.
        tokio::task::spawn_blocking(move || match self.action {
            Action::List { json } => list(&store, json),
            Action::Logout { server } => logout(&store, server.as_deref()),
        })
        .await
        .map_err(|e| Failure::usage(e.to_string()))?
    }
}

fn kept_in<T>(s: &Stored<T>) -> &'static str {
    match s {
        Stored::File(_) => "file",
        Stored::Keyring(_) => "keyring",
    }
}

/// Seconds until `t` (negative once past).
fn seconds_until(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::now()) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

fn expiry(e: &TokenEntry) -> String {
    match e.expires_at.map(seconds_until) {
        None => "no expiry given".to_owned(),
        Some(s) if s < 0 => format!("expired {}m ago", (-s) / 60),
        Some(s) => format!("expires in {}m", s / 60),
    }
}

fn list(store: &CliTokenStore, json: bool) -> Result<u8, Failure> {
    let index = store.load().map_err(Failure::usage)?;
    if json {
        let rows: Vec<serde_json::Value> = index
            .tokens
            .iter()
            .map(|e| {
                serde_json::json!({
                    "server": e.resource,
                    "issuer": e.issuer,
                    "scope": e.scope,
                    "expires_in_s": e.expires_at.map(seconds_until),
                    "refreshable": e.refreshable,
                    "kept_in": kept_in(&e.secret),
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&rows).map_err(|e| Failure::usage(e.to_string()))?;
        println!("{text}");
        return Ok(0);
    }
    if index.tokens.is_empty() {
        println!("no OAuth logins are kept (in {})", store.path().display());
        return Ok(0);
    }
    println!("OAuth logins kept in {}:", store.path().display());
    for e in &index.tokens {
        // The URLs and scopes came from servers: shown escaped on a terminal.
        let shown = |s: &str| crate::terminal::out(s).into_owned();
        println!(
            "  {}  issuer {}; scope {}; {}; {}; secret in the {}",
            shown(&e.resource),
            shown(&e.issuer),
            shown(e.scope.as_deref().unwrap_or("(none given)")),
            expiry(e),
            if e.refreshable {
                "refreshable"
            } else {
                "no refresh token"
            },
            kept_in(&e.secret),
        );
    }
    Ok(0)
}

/// Two spellings of one server URL: with or without the final `/`.
fn same_server(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

fn logout(store: &CliTokenStore, server: Option<&str>) -> Result<u8, Failure> {
    let (tokens, clients) = store
        .update(|index| {
            let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut index.tokens)
                .into_iter()
                .partition(|e| server.is_none_or(|s| same_server(&e.resource, s)));
            index.tokens = kept;
            // A registration no kept login uses goes too (all of them on a full logout).
            let (unused, used): (Vec<_>, Vec<_>) = std::mem::take(&mut index.clients)
                .into_iter()
                .partition(|(issuer, _)| !index.tokens.iter().any(|e| &e.issuer == issuer));
            index.clients = used.into_iter().collect();
            Ok((gone, unused))
        })
        .map_err(Failure::usage)?;
    for e in &tokens {
        store.drop_secret(&e.secret);
    }
    for (_, c) in &clients {
        store.drop_secret(c);
    }
    match (server, tokens.len()) {
        (Some(s), 0) => println!("no OAuth login is kept for {s}; nothing changed"),
        (Some(s), _) => println!("logged out of {s}"),
        (None, n) => println!("forgot {n} OAuth login(s) and {} client registration(s)", clients.len()),
    }
    Ok(0)
}
