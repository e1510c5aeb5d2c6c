//! The middleware flags of `mcpkit serve` (`--rate-limit`, `--cache-ttl`, `--tool-timeout`,
//! `--tool-concurrency`, `--max-response-bytes`): the library's built-in layers, in the order
//! the guide gives (`guide/middleware.md`).

use std::sync::Arc;
use std::time::Duration;

use mcpkit::server::backend::Rate;
use mcpkit::server::middleware::{Middleware, RateLimit, ResponseCache, ResponseLimit, ToolConcurrency, ToolTimeout};

use crate::cmd::redis::LayerStore;
use crate::target::parse_duration;

/// Middleware of the reference server; none by default.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct LayerArgs {
    /// Limit the rate of requests (repeatable): RATE per client (its verified user with
    /// --auth-issuer, else its address), `tool:NAME=RATE` per client for one tool, or
    /// `global=RATE` for all clients together. RATE is N/s, N/m or N/h. Refused requests get
    /// HTTP 429 with Retry-After (JSON-RPC error -32029). With --redis, counted over every
    /// instance.
    #[arg(long, value_name = "SPEC", value_parser = parse_rate_spec)]
    rate_limit: Vec<RateSpec>,
    /// Answer tools/list, resources/read and prompts/get (and calls of --cache-tool tools)
    /// from a cache for this long (30s, 5m); forgotten on any catalogue change. With --redis,
    /// shared by every instance.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    cache_ttl: Option<Duration>,
    /// Also cache calls of this tool (its result depends only on its arguments and caller;
    /// repeatable). Needs --cache-ttl.
    #[arg(long, value_name = "NAME", requires = "cache_ttl")]
    cache_tool: Vec<String>,
    /// End a tools/call that runs longer (repeatable): DURATION for every tool, or
    /// NAME=DURATION for one (30s, 500ms, 2m).
    #[arg(long, value_name = "[NAME=]DURATION", value_parser = parse_named::<Duration>)]
    tool_timeout: Vec<(Option<String>, Duration)>,
    /// At most N calls of a tool at once; more are refused with HTTP 429 (repeatable): N for
    /// every tool, or NAME=N for one.
    #[arg(long, value_name = "[NAME=]N", value_parser = parse_named::<usize>)]
    tool_concurrency: Vec<(Option<String>, usize)>,
    /// Refuse results larger than this many bytes (a tools/call gets a tool error saying so).
    #[arg(long, value_name = "BYTES")]
    max_response_bytes: Option<usize>,
}

/// One `--rate-limit`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RateSpec {
    Client(Rate),
    Tool(String, Rate),
    Global(Rate),
}

fn parse_rate_spec(s: &str) -> Result<RateSpec, String> {
    if let Some(rate) = s.strip_prefix("global=") {
        return Ok(RateSpec::Global(rate.parse()?));
    }
    if let Some(rest) = s.strip_prefix("tool:") {
        let (name, rate) = rest
            .split_once('=')
            .ok_or_else(|| format!("{s:?}: write tool:NAME=RATE (for example tool:search=5/m)"))?;
        return Ok(RateSpec::Tool(name.to_owned(), rate.parse()?));
    }
    Ok(RateSpec::Client(s.parse()?))
}

/// A value, or `NAME=value`.
trait Setting: Sized {
    fn parse_setting(s: &str) -> Result<Self, String>;
}

impl Setting for Duration {
    fn parse_setting(s: &str) -> Result<Self, String> {
        parse_duration(s)
    }
}

impl Setting for usize {
    fn parse_setting(s: &str) -> Result<Self, String> {
        match s.trim().parse() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{s:?} is not a positive whole number")),
        }
    }
}

fn parse_named<T: Setting>(s: &str) -> Result<(Option<String>, T), String> {
    match s.split_once('=') {
        Some((name, value)) => Ok((Some(name.to_owned()), T::parse_setting(value)?)),
        None => Ok((None, T::parse_setting(s)?)),
    }
}

impl LayerArgs {
    /// Also limit rates as `per_client`, `tools` and `global` say (beside the flags).
    pub(crate) fn add_rates(&mut self, per_client: Option<Rate>, tools: &[(String, Rate)], global: Option<Rate>) {
        self.rate_limit.extend(per_client.map(RateSpec::Client));
        self.rate_limit
            .extend(tools.iter().map(|(name, rate)| RateSpec::Tool(name.clone(), *rate)));
        self.rate_limit.extend(global.map(RateSpec::Global));
    }

    /// Whether a layer keeps state that instances share with --redis.
    pub(crate) fn shares_state(&self) -> bool {
        !self.rate_limit.is_empty() || self.cache_ttl.is_some()
    }

    /// The layers these flags describe, outermost first: the rate limit (a refused request
    /// costs nothing more), the cache, then concurrency, the timeout, and the response size.
    /// With `redis`, the rate limit and the cache keep their state there.
    pub(crate) fn layers(&self, redis: Option<&LayerStore>) -> Vec<Arc<dyn Middleware>> {
        #[cfg(not(feature = "redis"))]
        let _ = redis;
        let mut layers: Vec<Arc<dyn Middleware>> = Vec::new();
        if !self.rate_limit.is_empty() {
            let mut limit = RateLimit::new();
            #[cfg(feature = "redis")]
            if let Some(redis) = redis {
                limit = limit.store(Arc::new(redis.rate_store()));
            }
            for spec in &self.rate_limit {
                limit = match spec {
                    RateSpec::Client(rate) => limit.per_client(*rate),
                    RateSpec::Tool(name, rate) => limit.tool(name.clone(), *rate),
                    RateSpec::Global(rate) => limit.global(*rate),
                };
            }
            layers.push(Arc::new(limit));
        }
        if let Some(ttl) = self.cache_ttl {
            let mut cache = ResponseCache::new(ttl);
            #[cfg(feature = "redis")]
            if let Some(redis) = redis {
                cache = cache.store(Arc::new(redis.cache_store()));
            }
            for name in &self.cache_tool {
                cache = cache.tool(name.clone());
            }
            layers.push(Arc::new(cache));
        }
        if !self.tool_concurrency.is_empty() {
            let default = self
                .tool_concurrency
                .iter()
                .find_map(|(n, v)| n.is_none().then_some(*v));
            let mut layer = default.map_or_else(ToolConcurrency::named, ToolConcurrency::new);
            for (name, n) in &self.tool_concurrency {
                if let Some(name) = name {
                    layer = layer.tool(name.clone(), *n);
                }
            }
            layers.push(Arc::new(layer));
        }
        if !self.tool_timeout.is_empty() {
            let default = self.tool_timeout.iter().find_map(|(n, v)| n.is_none().then_some(*v));
            let mut layer = default.map_or_else(ToolTimeout::named, ToolTimeout::new);
            for (name, d) in &self.tool_timeout {
                if let Some(name) = name {
                    layer = layer.tool(name.clone(), *d);
                }
            }
            layers.push(Arc::new(layer));
        }
        if let Some(max) = self.max_response_bytes {
            layers.push(Arc::new(ResponseLimit::new(max)));
        }
        layers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_specs_name_their_bucket() {
        assert_eq!(parse_rate_spec("10/s"), Ok(RateSpec::Client(Rate::per_second(10))));
        assert_eq!(
            parse_rate_spec("tool:echo=2/m"),
            Ok(RateSpec::Tool("echo".into(), Rate::per_minute(2)))
        );
        assert_eq!(
            parse_rate_spec("global=100/s"),
            Ok(RateSpec::Global(Rate::per_second(100)))
        );
        assert!(parse_rate_spec("tool:echo").is_err());
        assert!(parse_rate_spec("fast").is_err());
    }

    #[test]
    fn named_settings_and_defaults() {
        assert_eq!(parse_named::<usize>("4"), Ok((None, 4)));
        assert_eq!(parse_named::<usize>("echo=2"), Ok((Some("echo".into()), 2)));
        assert!(parse_named::<usize>("echo=0").is_err());
        assert_eq!(
            parse_named::<Duration>("slow=500ms"),
            Ok((Some("slow".into()), Duration::from_millis(500)))
        );
    }
}
