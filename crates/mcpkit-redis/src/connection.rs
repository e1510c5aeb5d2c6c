//! The connection to Redis shared by every backend of one instance: one multiplexed
//! [`ConnectionManager`] (commands of all requests are pipelined on one socket; it reconnects by
//! itself after an I/O error), plus the deployment's key names.

use std::fmt;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, ConnectionAddr, RedisError};

use crate::error::Error;
use crate::keys::{check_prefix, Keys};

/// How long a command may wait for its reply before it fails (and the request gets 503).
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Attempts per reconnect before the commands waiting on it fail. Kept low so that a Redis
/// outage is an error at once, not a hang; the next command starts the next reconnect.
const RETRIES: usize = 1;

/// One deployment's Redis: the connection, its address (for messages) and the key prefix.
/// Cheap to clone (the connection is shared). Make the backends from it
/// ([`Redis::task_store`], …) or all at once with
/// [`RedisBackends::connect`](crate::RedisBackends::connect).
#[derive(Clone)]
pub struct Redis {
    pub(crate) client: Client,
    pub(crate) conn: ConnectionManager,
    pub(crate) keys: Keys,
    addr: String,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may carry a password: show the address only.
        f.debug_struct("Redis")
            .field("addr", &self.addr)
            .field("prefix", &self.keys.prefix())
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Connect to the Redis at `url` (`redis://[user:password@]host[:port][/db]`, or
    /// `redis+unix:///path`) for the deployment whose keys start with `prefix:` (1 to 64
    /// letters, digits, `.`, `_`, `-`; deployments sharing one Redis differ by prefix). Fails
    /// when the URL or prefix is invalid or Redis does not answer now; once connected, it
    /// reconnects by itself whenever the connection breaks.
    pub async fn connect(url: &str, prefix: &str) -> Result<Redis, Error> {
        check_prefix(prefix).map_err(Error::InvalidPrefix)?;
        let client = Client::open(url).map_err(|e| Error::InvalidUrl(e.to_string()))?;
        let addr = match client.get_connection_info().addr() {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
            other => other.to_string(),
        };
        let conn = ConnectionManager::new_with_config(client.clone(), manager_config())
            .await
            .map_err(|e| Error::Unreachable {
                addr: addr.clone(),
                reason: e.to_string(),
            })?;
        Ok(Redis {
            client,
            conn,
            keys: Keys::new(prefix),
            addr,
        })
    }

    /// The same connection, for the deployment whose keys start with `prefix:` instead.
    pub fn with_prefix(&self, prefix: &str) -> Result<Redis, Error> {
        check_prefix(prefix).map_err(Error::InvalidPrefix)?;
        Ok(Redis {
            keys: Keys::new(prefix),
            ..self.clone()
        })
    }

    /// The Redis address (`host:port`), for messages.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The deployment's key prefix.
    pub fn prefix(&self) -> &str {
        self.keys.prefix()
    }

    /// Whether Redis answers PING now (for a readiness check).
    pub async fn ping(&self) -> Result<(), Error> {
        let mut conn = self.conn.clone();
        redis::cmd("PING")
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| self.unreachable(&e))
    }

    /// The error a backend returns for a failed command.
    pub(crate) fn unreachable(&self, e: &RedisError) -> Error {
        Error::Unreachable {
            addr: self.addr.clone(),
            reason: e.to_string(),
        }
    }
}

/// The reconnect policy of every connection manager of this crate.
pub(crate) fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_number_of_retries(RETRIES)
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_millis(500))
}
