//! `mcpkit redis rotate-keys`: the operations of a deployment whose instances share one Redis
//! (`mcpkit serve --http --redis URL`). `rotate-keys` rotates the `requestState` key ring: a new
//! key seals from then on, on every running instance at once, and the previous keys still open
//! what they sealed, so requests in flight are not broken. It prints the new key's id, never a
//! key. Built with the `redis` feature (in `full`), as is `--redis` of `serve` and `gateway`.

use super::Globals;
#[cfg(feature = "redis")]
use crate::target::one_line;
use crate::target::Failure;

/// The Redis connection the stateful middleware (rate limit, cache) keeps its state in.
#[cfg(feature = "redis")]
pub(crate) type LayerStore = mcpkit_redis::Redis;
/// Built without the `redis` feature there is none.
#[cfg(not(feature = "redis"))]
pub(crate) enum LayerStore {}

/// The Redis URL when nothing is given on the command line.
pub(crate) const REDIS_URL_ENV: &str = "MCPKIT_REDIS_URL";

/// What to do.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Rotate the requestState key ring: print the id of the key that seals from now on.
    RotateKeys,
}

/// Operate the Redis state of a deployment: `mcpkit redis rotate-keys --redis URL`.
#[derive(clap::Args, Debug)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub struct Args {
    /// `rotate-keys`.
    #[arg(value_enum)]
    action: Action,
    /// The deployment's Redis (redis://HOST:PORT/DB). Also read from MCPKIT_REDIS_URL.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// The deployment's key prefix in Redis, as given to `serve --redis-prefix`.
    #[arg(long, value_name = "PREFIX", default_value = "mcpkit")]
    redis_prefix: String,
    /// How many of the previous keys still open states they sealed (0: only the new key opens,
    /// so every state in flight is refused).
    #[arg(long, value_name = "N", default_value_t = 1)]
    keep_previous: usize,
}

impl Args {
    /// Rotate, print the new key id on stdout.
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        let url = self
            .redis
            .clone()
            .or_else(|| std::env::var(REDIS_URL_ENV).ok().filter(|u| !u.trim().is_empty()))
            .ok_or_else(|| Failure::usage(format!("needs --redis URL (or {REDIS_URL_ENV})")))?;
        self.act(&url).await
    }

    #[cfg(not(feature = "redis"))]
    async fn act(&self, _url: &str) -> Result<u8, Failure> {
        Err(Failure::not_built("this command", "redis"))
    }

    #[cfg(feature = "redis")]
    async fn act(&self, url: &str) -> Result<u8, Failure> {
        match self.action {
            Action::RotateKeys => {
                let ids = mcpkit_redis::rotate_key_ring(url, &self.redis_prefix, self.keep_previous)
                    .await
                    .map_err(|e| Failure::usage(format!("rotate-keys: {}", one_line(&e.to_string()))))?;
                let Some(current) = ids.first() else {
                    return Err(Failure::usage("rotate-keys: Redis returned an empty key ring"));
                };
                println!("{current}");
                eprintln!(
                    "mcpkit redis: key {current} seals the requestState of {:?} from now on; {} previous key(s) still open",
                    self.redis_prefix,
                    ids.len() - 1
                );
                Ok(0)
            }
        }
    }
}
