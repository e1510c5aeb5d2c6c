//! `mcpkit gateway --config FILE`: the TOML file, read and checked before anything starts.
//! `${NAME}` in an upstream's command, arguments, environment, URL and headers is the
//! environment variable NAME (unset: an error naming it, never an empty secret).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcpkit::server::backend::Rate;
use serde::Deserialize;

use mcpkit::client::ConnectMode;

use crate::target::{parse_duration, parse_mode, Endpoint};

/// The whole file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Config {
    /// Where Streamable HTTP is served (`--http` overrides it) [default: 127.0.0.1:8080].
    pub(super) listen: Option<SocketAddr>,
    /// Instances sharing this Redis act as one gateway (`--redis` overrides it).
    pub(super) redis: Option<String>,
    /// The servers behind the gateway, by name: their tools and prompts appear as
    /// `NAME_<name>`.
    #[serde(default)]
    pub(super) upstreams: BTreeMap<String, UpstreamConfig>,
    /// Request rates (beside any `--rate-limit`).
    #[serde(default)]
    pub(super) rate_limit: RateLimitConfig,
    /// The OAuth 2.1 resource-server options of `serve --auth-*` (flags override them).
    #[serde(default)]
    pub(super) auth: AuthConfig,
}

/// One upstream: a stdio command or an HTTP URL.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UpstreamConfig {
    /// A stdio server: the program…
    pub(super) command: Option<String>,
    /// …its arguments…
    #[serde(default)]
    pub(super) args: Vec<String>,
    /// …its extra environment…
    #[serde(default)]
    pub(super) env: BTreeMap<String, String>,
    /// …and its working directory.
    pub(super) cwd: Option<PathBuf>,
    /// An HTTP server: its MCP endpoint.
    pub(super) url: Option<String>,
    /// Headers sent with every request to `url` (e.g. `Authorization`).
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    /// Speak the legacy HTTP+SSE transport to `url`.
    #[serde(default)]
    pub(super) sse: bool,
    /// Log in to `url` with OAuth 2.1 (the login `mcpkit call --oauth` remembers).
    #[serde(default)]
    pub(super) oauth: bool,
    /// Only these tools (named as the upstream names them).
    pub(super) tools: Option<Vec<String>>,
    /// Scopes a caller's token needs to see and call this upstream's items.
    #[serde(default)]
    pub(super) scopes: Vec<String>,
    /// How to connect: `auto` (the default: the stateless era when the server speaks it),
    /// `handshake`, or a stateless-era revision (`2026-07-28`).
    pub(super) protocol: Option<String>,
    /// How long a connect or a request may take [default: 30s].
    #[serde(default, deserialize_with = "duration")]
    pub(super) timeout: Option<Duration>,
}

/// `[rate_limit]`: token buckets per client, per tool and client, and for everyone.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RateLimitConfig {
    /// Per client (its verified user, else its address): `N/s`, `N/m` or `N/h`.
    pub(super) per_client: Option<String>,
    /// Requests a client may make at once before the rate applies [default: N of the rate].
    pub(super) burst: Option<u32>,
    /// All clients together.
    pub(super) global: Option<String>,
    /// Per client for one tool, by its gateway name (`files_read`).
    #[serde(default)]
    pub(super) tools: BTreeMap<String, String>,
}

/// `[auth]`: the options of `serve --auth-*`, without the prefix.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthConfig {
    pub(super) issuer: Option<String>,
    pub(super) audience: Option<String>,
    pub(super) jwks: Option<String>,
    pub(super) introspect: Option<String>,
    pub(super) client_id: Option<String>,
    pub(super) client_secret: Option<String>,
    #[serde(default)]
    pub(super) scopes: Vec<String>,
    #[serde(default)]
    pub(super) method_scopes: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(super) scopes_supported: Vec<String>,
}

/// An upstream as the gateway connects it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Upstream {
    pub(super) name: String,
    pub(super) endpoint: Endpoint,
    pub(super) oauth: bool,
    pub(super) tools: Option<Vec<String>>,
    pub(super) scopes: Vec<String>,
    pub(super) timeout: Duration,
    pub(super) mode: ConnectMode,
}

/// The rates of `[rate_limit]`, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Rates {
    pub(super) per_client: Option<Rate>,
    pub(super) global: Option<Rate>,
    pub(super) tools: Vec<(String, Rate)>,
}

const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl Config {
    /// Read and check `path`; every problem names the file and the key.
    pub(super) fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// [`Config::load`] of text.
    pub(super) fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        for name in config.upstreams.keys() {
            if !valid_name(name) {
                return Err(format!(
                    "upstream {name:?}: a name is 1 to 32 of [A-Za-z0-9-] (it prefixes its tools: {name}_<tool>)"
                ));
            }
        }
        config.rates()?;
        config.upstreams_with(|name| std::env::var(name).ok())?;
        Ok(config)
    }

    /// Where to listen.
    pub(super) fn listen(&self) -> SocketAddr {
        self.listen.unwrap_or_else(|| {
            DEFAULT_LISTEN
                .parse()
                .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)))
        })
    }

    /// The upstreams with `${NAME}` replaced from the environment.
    pub(super) fn upstreams(&self) -> Result<Vec<Upstream>, String> {
        self.upstreams_with(|name| std::env::var(name).ok())
    }

    fn upstreams_with(&self, env: impl Fn(&str) -> Option<String>) -> Result<Vec<Upstream>, String> {
        self.upstreams
            .iter()
            .map(|(name, u)| {
                let at = |key: &str| format!("upstream {name:?}, {key}");
                let x = |key: &str, s: &str| expand(s, &env).map_err(|e| format!("{}: {e}", at(key)));
                let endpoint = match (&u.command, &u.url) {
                    (Some(program), None) => {
                        if !u.headers.is_empty() || u.sse || u.oauth {
                            return Err(format!(
                                "upstream {name:?}: headers, sse and oauth are for a url, not a command"
                            ));
                        }
                        Endpoint::Command {
                            program: x("command", program)?,
                            args: u.args.iter().map(|a| x("args", a)).collect::<Result<_, _>>()?,
                            env: u
                                .env
                                .iter()
                                .map(|(k, v)| Ok((k.clone(), x(&format!("env.{k}"), v)?)))
                                .collect::<Result<_, String>>()?,
                            cwd: u.cwd.clone(),
                        }
                    }
                    (None, Some(url)) => {
                        if !u.args.is_empty() || !u.env.is_empty() || u.cwd.is_some() {
                            return Err(format!(
                                "upstream {name:?}: args, env and cwd are for a command, not a url"
                            ));
                        }
                        let url = x("url", url)?;
                        if !(url.starts_with("http://") || url.starts_with("https://")) {
                            return Err(format!("{}: {url:?} is not an http(s) URL", at("url")));
                        }
                        Endpoint::Url {
                            url,
                            headers: u
                                .headers
                                .iter()
                                .map(|(k, v)| Ok((k.clone(), x(&format!("headers.{k}"), v)?)))
                                .collect::<Result<_, String>>()?,
                            legacy: u.sse,
                        }
                    }
                    _ => return Err(format!("upstream {name:?}: give either command or url")),
                };
                let mode = match &u.protocol {
                    Some(p) => parse_mode(p).map_err(|e| format!("{}: {e}", at("protocol")))?,
                    // The stateless wire where the upstream speaks it: a question it asks
                    // mid-call then travels as an input round, run once, whatever era the
                    // downstream client speaks.
                    None => ConnectMode::Auto,
                };
                Ok(Upstream {
                    name: name.clone(),
                    mode,
                    endpoint,
                    oauth: u.oauth,
                    tools: u.tools.clone(),
                    scopes: u.scopes.clone(),
                    timeout: u.timeout.unwrap_or(DEFAULT_TIMEOUT),
                })
            })
            .collect()
    }

    /// `[rate_limit]`, parsed.
    pub(super) fn rates(&self) -> Result<Rates, String> {
        let r = &self.rate_limit;
        let parse = |key: &str, s: &str| s.parse::<Rate>().map_err(|e| format!("rate_limit.{key}: {e}"));
        let per_client = match &r.per_client {
            Some(s) => {
                let rate = parse("per_client", s)?;
                Some(match r.burst {
                    Some(0) => return Err("rate_limit.burst: at least 1".to_owned()),
                    // The same spacing between requests, `burst` of them at once.
                    Some(b) => Rate::new(b, rate.per * b / rate.burst),
                    None => rate,
                })
            }
            None if r.burst.is_some() => return Err("rate_limit.burst needs rate_limit.per_client".to_owned()),
            None => None,
        };
        Ok(Rates {
            per_client,
            global: r.global.as_deref().map(|s| parse("global", s)).transpose()?,
            tools: r
                .tools
                .iter()
                .map(|(t, s)| Ok((t.clone(), parse(&format!("tools.{t}"), s)?)))
                .collect::<Result<_, String>>()?,
        })
    }
}

/// An upstream's name: it prefixes tool names, which the spec limits to [A-Za-z0-9_.-].
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 32 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// `s` with each `${NAME}` replaced by `env(NAME)`.
fn expand(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("{s:?}: `${{` without its `}}`"));
        };
        let name = &after[..end];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("{s:?}: ${{{name}}} is not an environment variable name"));
        }
        out.push_str(&env(name).ok_or_else(|| format!("the environment variable {name} is not set"))?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A duration written as `30s`, `500ms`, `2m`.
fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let s = String::deserialize(d)?;
    parse_duration(&s).map(Some).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
listen = "127.0.0.1:8080"
redis = "redis://127.0.0.1:6379/0"
[upstreams.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
env = { }
[upstreams.search]
url = "https://search.internal/mcp"
headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }
tools = ["query", "suggest"]
[rate_limit]
per_client = "20/s"
[auth]
issuer = "https://auth.example.com"
jwks = "https://auth.example.com/jwks"
"#;

    fn env(name: &str) -> Option<String> {
        (name == "SEARCH_TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn the_example_of_the_guide_reads() {
        let config: Config = toml::from_str(EXAMPLE).unwrap();
        let ups = config.upstreams_with(env).unwrap();
        assert_eq!(ups.len(), 2);
        assert_eq!(ups[0].name, "files");
        assert!(matches!(&ups[0].endpoint, Endpoint::Command { program, args, .. }
            if program == "npx" && args.len() == 3));
        assert_eq!(
            ups[1].endpoint,
            Endpoint::Url {
                url: "https://search.internal/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer s3cret".to_owned())].into(),
                legacy: false,
            }
        );
        assert_eq!(
            ups[1].tools.as_deref(),
            Some(&["query".to_owned(), "suggest".to_owned()][..])
        );
        assert_eq!(config.rates().unwrap().per_client, Some(Rate::per_second(20)));
        assert_eq!(config.listen(), "127.0.0.1:8080".parse().unwrap());
    }

    #[test]
    fn an_unset_variable_is_an_error_naming_it() {
        let config: Config = toml::from_str(EXAMPLE).unwrap();
        let err = config.upstreams_with(|_| None).unwrap_err();
        assert!(err.contains("SEARCH_TOKEN is not set"), "{err}");
        assert!(err.contains("\"search\", headers.Authorization"), "{err}");
    }

    #[test]
    fn burst_keeps_the_spacing_of_the_rate() {
        let config: Config = toml::from_str("[rate_limit]\nper_client = \"20/s\"\nburst = 5").unwrap();
        let rate = config.rates().unwrap().per_client.unwrap();
        assert_eq!((rate.burst, rate.per), (5, Duration::from_millis(250)));
        let config: Config = toml::from_str("[rate_limit]\nburst = 5").unwrap();
        assert!(config.rates().is_err());
    }

    #[test]
    fn bad_upstreams_are_refused_with_their_name() {
        for (text, says) in [
            ("[upstreams.a]\n", "give either command or url"),
            (
                "[upstreams.a]\ncommand = \"x\"\nurl = \"http://h/mcp\"",
                "give either command or url",
            ),
            ("[upstreams.a]\nurl = \"ftp://h\"", "not an http(s) URL"),
            (
                "[upstreams.a]\ncommand = \"x\"\nheaders = { A = \"b\" }",
                "are for a url",
            ),
            ("[upstreams.\"a_b\"]\ncommand = \"x\"", "a name is 1 to 32"),
            ("[upstreams.a]\ncomand = \"x\"", "unknown field `comand`"),
            ("[upstreams.a]\nurl = \"http://h/${X\"", "without its"),
        ] {
            let err = Config::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
        assert!(expand("a${B}c", |_| Some("-".into())).is_ok_and(|s| s == "a-c"));
    }
}
