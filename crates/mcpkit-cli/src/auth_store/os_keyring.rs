//! The OS keyring through the `keyring` crate: one entry per secret, all under the service name
//! `mcpkit`. Every call blocks (a Secret Service is reached over D-Bus): callers run it off the
//! async runtime. Built with the `keyring` feature (in `full`); without it no keyring answers
//! and the logins are kept in the 0600 file.

/// The service name of mcpkit's keyring entries.
const SERVICE: &str = "mcpkit";

/// The entry read to tell whether a keyring answers.
const PROBE: &str = "oauth-probe";

/// mcpkit's entries in the OS keyring.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keyring;

impl Keyring {
    /// The keyring.
    pub fn new() -> Keyring {
        Keyring
    }

    /// Whether a keyring answers here: reading an entry that does not exist gives "no entry"
    /// rather than an error about the platform (no Secret Service, no D-Bus session, …).
    pub fn available(&self) -> bool {
        match self.get(PROBE) {
            Ok(_) => true,
            Err(e) => {
                tracing::debug!("no OS keyring, OAuth logins are kept in a file: {e}");
                false
            }
        }
    }

    #[cfg(feature = "keyring")]
    fn entry(name: &str) -> Result<::keyring::Entry, String> {
        ::keyring::Entry::new(SERVICE, name).map_err(|e| format!("keyring entry {name:?}: {e}"))
    }

    /// Without the feature every call fails, saying why (so `available` is false).
    #[cfg(not(feature = "keyring"))]
    fn entry(name: &str) -> Result<std::convert::Infallible, String> {
        Err(format!(
            "keyring entry {name:?} of {SERVICE:?}: this mcpkit was built without the `keyring` feature"
        ))
    }

    /// The secret named `name`, `None` when there is none.
    #[cfg(feature = "keyring")]
    pub fn get(&self, name: &str) -> Result<Option<String>, String> {
        match Self::entry(name)?.get_password() {
            Ok(s) => Ok(Some(s)),
            Err(::keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(format!("keyring: {e}")),
        }
    }

    /// The secret named `name`, `None` when there is none.
    #[cfg(not(feature = "keyring"))]
    pub fn get(&self, name: &str) -> Result<Option<String>, String> {
        match Self::entry(name)? {}
    }

    /// Keep `secret` as `name` (replacing any).
    #[cfg(not(feature = "keyring"))]
    pub fn set(&self, name: &str, _secret: &str) -> Result<(), String> {
        match Self::entry(name)? {}
    }

    /// Forget `name` (nothing to do when it is not there).
    #[cfg(not(feature = "keyring"))]
    pub fn delete(&self, name: &str) -> Result<(), String> {
        match Self::entry(name)? {}
    }

    /// Keep `secret` as `name` (replacing any).
    #[cfg(feature = "keyring")]
    pub fn set(&self, name: &str, secret: &str) -> Result<(), String> {
        Self::entry(name)?
            .set_password(secret)
            .map_err(|e| format!("keyring: {e}"))
    }

    /// Forget `name` (nothing to do when it is not there).
    #[cfg(feature = "keyring")]
    pub fn delete(&self, name: &str) -> Result<(), String> {
        match Self::entry(name)?.delete_credential() {
            Ok(()) | Err(::keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(format!("keyring: {e}")),
        }
    }
}
