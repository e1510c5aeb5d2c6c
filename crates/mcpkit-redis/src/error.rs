//! The one error type of this crate.

/// Why a Redis backend could not do what it was asked.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The Redis URL does not parse.
    #[error("invalid Redis URL: {0}")]
    InvalidUrl(String),
    /// The key prefix is not a plain name.
    #[error("{0}")]
    InvalidPrefix(String),
    /// The instance id is not 1 to 64 of `[A-Za-z0-9_.-]`.
    #[error("the instance id {0:?} must be 1 to 64 letters, digits, '_', '.' or '-'")]
    InvalidInstanceId(String),
    /// Redis did not answer (down, unreachable, timed out) or refused the command. The
    /// connection reconnects by itself; the HTTP layer answers 503 meanwhile.
    #[error("Redis at {addr} is unavailable: {reason}")]
    Unreachable {
        /// `host:port`.
        addr: String,
        /// What the client saw.
        reason: String,
    },
    /// Redis holds data this crate cannot read (written by another version, or by hand).
    #[error("unreadable data in Redis key {key}: {reason}")]
    Corrupt {
        /// The key.
        key: String,
        /// What was wrong with it.
        reason: String,
    },
}
