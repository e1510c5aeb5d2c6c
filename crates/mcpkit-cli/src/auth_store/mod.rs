//! Where `--oauth` remembers its logins between runs: the client registration per
//! authorization server and the tokens per server (resource), so that a second run reuses them
//! (and refreshes an expired access token with the refresh token) instead of logging in again.
//!
//! An index of what is stored lives in `oauth.json` under the user's configuration folder
//! (`$XDG_CONFIG_HOME/mcpkit/`, else `~/.config/mcpkit/`; `%APPDATA%\mcpkit\` on Windows),
//! created `0600` in a `0700` folder. The secrets (tokens, a registration's client secret) go
//! into the OS keyring where one answers ([`Keyring`]: the macOS Keychain, the Windows
//! Credential Manager, the Secret Service), one keyring entry per server and per authorization
//! server; where none does (a server or CI machine without a Secret Service), they are kept in
//! the index file itself. `MCPKIT_AUTH_STORE=file` (or `keyring`) forces one.
//!
//! The file is read again before every change and replaced atomically (temporary file, then
//! rename), so two runs at once lose at most each other's latest write, never the file.

mod os_keyring;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::SystemTime;

use mcpkit::auth::{AuthError, ClientRegistration, TokenSet, TokenStore};
use mcpkit::transport::http_client::AuthFuture;
use serde::{Deserialize, Serialize};

pub use os_keyring::Keyring;

/// The environment variable that picks the store: `file`, `keyring` or `auto` (the default).
pub const STORE_VAR: &str = "MCPKIT_AUTH_STORE";

/// The index file's name in the configuration folder.
const FILE_NAME: &str = "oauth.json";

/// The index file: what is stored, and the secrets too when no keyring holds them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Index {
    /// Client registrations, by issuer.
    #[serde(default)]
    pub clients: BTreeMap<String, Stored<ClientRegistration>>,
    /// Tokens, one entry per (issuer, resource).
    #[serde(default)]
    pub tokens: Vec<TokenEntry>,
}

/// A secret kept here or in the keyring.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "in", content = "value")]
pub enum Stored<T> {
    /// In the index file.
    File(T),
    /// In the keyring entry of this name.
    Keyring(String),
}

/// The tokens from one issuer for one server, and what `mcpkit auth list` shows of them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenEntry {
    /// The MCP server (the resource the tokens are for).
    pub resource: String,
    /// The authorization server that issued them.
    pub issuer: String,
    /// The granted scopes.
    pub scope: Option<String>,
    /// When the access token expires.
    pub expires_at: Option<SystemTime>,
    /// Whether a refresh token is kept.
    pub refreshable: bool,
    /// The tokens.
    pub secret: Stored<TokenSet>,
}

/// The `--oauth` token store of the CLI (see the module docs).
#[derive(Debug, Clone)]
pub struct CliTokenStore {
    path: PathBuf,
    keyring: Arc<OnceLock<Option<Keyring>>>,
    mode: Mode,
    /// Serializes this process's read-modify-write of the file.
    writing: Arc<Mutex<()>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    File,
    Keyring,
    Auto,
}

/// The user's configuration folder for mcpkit.
pub fn config_dir() -> Result<PathBuf, String> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        if let Some(appdata) = var("APPDATA") {
            return Ok(appdata.join("mcpkit"));
        }
    }
    if let Some(xdg) = var("XDG_CONFIG_HOME") {
        return Ok(xdg.join("mcpkit"));
    }
    match var("HOME").or_else(|| var("USERPROFILE")) {
        Some(home) => Ok(home.join(".config").join("mcpkit")),
        None => Err("cannot tell where to keep OAuth logins: HOME is not set".to_owned()),
    }
}

impl CliTokenStore {
    /// The store in the user's configuration folder, its keyring use as [`STORE_VAR`] says.
    pub fn open() -> Result<CliTokenStore, String> {
        let mode = match std::env::var(STORE_VAR).ok().as_deref() {
            None | Some("" | "auto") => Mode::Auto,
            Some("file") => Mode::File,
            Some("keyring") => Mode::Keyring,
            Some(other) => return Err(format!("{STORE_VAR}={other:?}: expected file, keyring or auto")),
        };
        Ok(CliTokenStore {
            path: config_dir()?.join(FILE_NAME),
            keyring: Arc::new(OnceLock::new()),
            mode,
            writing: Arc::new(Mutex::new(())),
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The keyring to put new secrets in, if one answers (asked once per process). Blocking.
    fn keyring(&self) -> Option<&Keyring> {
        self.keyring
            .get_or_init(|| match self.mode {
                Mode::File => None,
                Mode::Keyring => Some(Keyring::new()),
                Mode::Auto => Keyring::new().available().then(Keyring::new),
            })
            .as_ref()
    }

    /// Read the index (empty when there is no file). Blocking.
    pub fn load(&self) -> Result<Index, String> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{} is not valid: {e}", self.path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
            Err(e) => Err(format!("cannot read {}: {e}", self.path.display())),
        }
    }

    /// Change the index under this process's lock and write it back (`0600`); an index left
    /// empty removes the file. Blocking.
    pub fn update<R>(&self, change: impl FnOnce(&mut Index) -> Result<R, String>) -> Result<R, String> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let mut index = self.load()?;
        let out = change(&mut index)?;
        if index.clients.is_empty() && index.tokens.is_empty() {
            match std::fs::remove_file(&self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove {}: {e}", self.path.display())),
            }
        } else {
            let text = serde_json::to_string_pretty(&index).map_err(|e| e.to_string())?;
            write_private(&self.path, &text).map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        }
        Ok(out)
    }

    /// A secret to keep: in the keyring under `name` when one answers, else in the file.
    fn stash<T: Serialize>(&self, name: String, value: T) -> Result<Stored<T>, String> {
        match self.keyring() {
            Some(k) => {
                let text = serde_json::to_string(&value).map_err(|e| e.to_string())?;
                k.set(&name, &text)?;
                Ok(Stored::Keyring(name))
            }
            None => Ok(Stored::File(value)),
        }
    }

    /// A kept secret; `None` when its keyring entry is gone or the keyring does not answer
    /// (then the login is simply made again).
    fn fetch<T: for<'de> Deserialize<'de> + Clone>(&self, stored: &Stored<T>) -> Option<T> {
        match stored {
            Stored::File(v) => Some(v.clone()),
            Stored::Keyring(name) => {
                let text = Keyring::new().get(name).ok().flatten()?;
                serde_json::from_str(&text).ok()
            }
        }
    }

    /// Forget a secret's keyring entry (nothing to do for one in the file). Blocking.
    pub fn drop_secret<T>(&self, stored: &Stored<T>) {
        if let Stored::Keyring(name) = stored {
            if let Err(e) = Keyring::new().delete(name) {
                tracing::debug!("cannot delete the keyring entry {name:?}: {e}");
            }
        }
    }

    /// Run blocking store work off the async runtime.
    fn blocking<'a, R: Send + 'static>(
        &'a self,
        work: impl FnOnce(&CliTokenStore) -> Result<R, String> + Send + 'static,
    ) -> AuthFuture<'a, Result<R, AuthError>> {
        let store = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || work(&store))
                .await
                .map_err(|e| AuthError::Store(e.to_string()))?
                .map_err(AuthError::Store)
        })
    }
}

impl TokenStore for CliTokenStore {
    fn client<'a>(&'a self, issuer: &'a str) -> AuthFuture<'a, Result<Option<ClientRegistration>, AuthError>> {
        let issuer = issuer.to_owned();
        self.blocking(move |s| Ok(s.load()?.clients.get(&issuer).and_then(|c| s.fetch(c))))
    }

    fn save_client(&self, registration: ClientRegistration) -> AuthFuture<'_, Result<(), AuthError>> {
        self.blocking(move |s| {
            let issuer = registration.issuer.clone();
            let stored = s.stash(format!("oauth-client {issuer}"), registration)?;
            let old = s.update(|index| Ok(index.clients.insert(issuer, stored.clone())))?;
            // A secret that moved from the keyring to the file leaves no entry behind.
            if let Some(old @ Stored::Keyring(_)) = old {
                if !matches!(&stored, Stored::Keyring(_)) {
                    s.drop_secret(&old);
                }
            }
            Ok(())
        })
    }

    fn tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Result<Option<TokenSet>, AuthError>> {
        let (issuer, resource) = (issuer.to_owned(), resource.to_owned());
        self.blocking(move |s| {
            let index = s.load()?;
            Ok(index
                .tokens
                .iter()
                .find(|e| e.issuer == issuer && e.resource == resource)
                .and_then(|e| s.fetch(&e.secret)))
        })
    }

    fn save_tokens<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
        tokens: TokenSet,
    ) -> AuthFuture<'a, Result<(), AuthError>> {
        let (issuer, resource) = (issuer.to_owned(), resource.to_owned());
        self.blocking(move |s| {
            let entry = TokenEntry {
                resource: resource.clone(),
                issuer: issuer.clone(),
                scope: tokens.scope.clone(),
                expires_at: tokens.expires_at,
                refreshable: tokens.refresh_token.is_some(),
                secret: s.stash(format!("oauth-tokens {resource} {issuer}"), tokens)?,
            };
            let moved = matches!(entry.secret, Stored::File(_));
            let old = s.update(|index| {
                let old = index
                    .tokens
                    .iter()
                    .position(|e| e.issuer == issuer && e.resource == resource)
                    .map(|i| index.tokens.remove(i));
                index.tokens.push(entry);
                Ok(old)
            })?;
            if let Some(old) = old.filter(|_| moved) {
                s.drop_secret(&old.secret);
            }
            Ok(())
        })
    }

    fn remove_tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Result<(), AuthError>> {
        let (issuer, resource) = (issuer.to_owned(), resource.to_owned());
        self.blocking(move |s| {
            let removed = s.update(|index| {
                let (gone, kept) = std::mem::take(&mut index.tokens)
                    .into_iter()
                    .partition(|e| e.issuer == issuer && e.resource == resource);
                index.tokens = kept;
                Ok::<Vec<TokenEntry>, String>(gone)
            })?;
            for e in &removed {
                s.drop_secret(&e.secret);
            }
            Ok(())
        })
    }
}

/// Replace `path` with `text`, readable and writable by the user only (`0600`, in a `0700`
/// folder on Unix), through a temporary file renamed over it.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let temp = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temp).and_then(|mut f| {
        // A temporary file left by a killed run may have other bits: set them again.
        #[cfg(unix)]
        f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(e)
        }
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_in(dir: &Path) -> CliTokenStore {
        CliTokenStore {
            path: dir.join("mcpkit").join(FILE_NAME),
            keyring: Arc::new(OnceLock::new()),
            mode: Mode::File,
            writing: Arc::new(Mutex::new(())),
        }
    }

    #[tokio::test]
    async fn tokens_and_registrations_round_trip_through_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let reg = ClientRegistration::new("https://as", "client-1", None);
        store.save_client(reg.clone()).await.unwrap();
        let mut tokens = TokenSet::new("access");
        tokens.refresh_token = Some("refresh".into());
        store
            .save_tokens("https://as", "https://mcp/mcp", tokens.clone())
            .await
            .unwrap();
        assert_eq!(store.client("https://as").await.unwrap(), Some(reg));
        assert_eq!(
            store.tokens("https://as", "https://mcp/mcp").await.unwrap(),
            Some(tokens)
        );
        assert_eq!(store.tokens("https://as", "https://other/mcp").await.unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(store.path()), 0o600);
            assert_eq!(mode(store.path().parent().unwrap()), 0o700);
        }
        store.remove_tokens("https://as", "https://mcp/mcp").await.unwrap();
        assert_eq!(store.tokens("https://as", "https://mcp/mcp").await.unwrap(), None);
        assert_eq!(store.load().unwrap().clients.len(), 1);
    }
}
