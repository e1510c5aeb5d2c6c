//! The client program the official MCP conformance suite runs in its client leg:
//! `mcpkit-conformance-client <server URL>`, with the scenario in `MCP_CONFORMANCE_SCENARIO`,
//! the protocol revision in `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for some scenarios, JSON
//! context (credentials, ...) in `MCP_CONFORMANCE_CONTEXT`.
//!
//! Every scenario goes through the public mcpkit client API: the scenario only chooses what to
//! call and how the client is configured (the OAuth client for `auth/*`, an elicitation handler
//! that fills in schema defaults, the Skills extension for `sep-2640-client-*`). A handshake-era revision connects with `initialize`; a
//! stateless-era one (2026-07-28) pins the client to that revision (`ConnectMode::Pinned`), so
//! the per-request `_meta`, the mirrored headers and the input rounds are the SDK's. Exit status
//! 0 when the scenario's calls succeeded.

use std::process::ExitCode;
use std::sync::Arc;

use mcpkit::auth::{ClientCredentials, HeadlessAuthorizer, OAuthClient};
use mcpkit::client::ConnectMode;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ext::skills::SkillResources;
use mcpkit::types::schema::Root;
use mcpkit::types::schema::{ElicitParams, ElicitResult};
use mcpkit::types::{Era, ProtocolVersion};
use mcpkit::Client;
use serde_json::{json, Map, Value};

/// The Client ID Metadata Document URL this client presents (the suite's `auth/basic-cimd`
/// expects exactly this one).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI of the (headless) authorization code flow.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MCPKIT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcpkit-conformance-client <server URL>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into());
    let context: Map<String, Value> = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    eprintln!("scenario {scenario:?} at {url} (protocol {version})");
    let version = match version.parse::<ProtocolVersion>() {
        Ok(v) => v,
        Err(_) => {
            eprintln!("unknown protocol revision {version:?}");
            return ExitCode::from(2);
        }
    };
    match run(&scenario, &url, version, &context).await {
        Ok(()) => {
            eprintln!("scenario {scenario:?} done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scenario {scenario:?} failed: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    scenario: &str,
    url: &str,
    version: ProtocolVersion,
    context: &Map<String, Value>,
) -> Result<(), BoxError> {
    let mut transport = HttpClientTransport::builder(url);
    if scenario.starts_with("auth/") {
        transport = transport.auth(Arc::new(oauth_client(scenario, url, context)?));
    }
    let mut builder = Client::builder().name("mcpkit-conformance-client", env!("CARGO_PKG_VERSION"));
    let stateless = version.era() == Era::Stateless;
    builder = if stateless {
        // The stateless wire, pinned to the revision under test: no initialize, the protocol
        // `_meta` and headers on every request, input rounds answered by the handlers below.
        builder.mode(ConnectMode::Pinned(version)).roots(Vec::<Root>::new())
    } else {
        builder.protocol_version(version)
    };
    if scenario.starts_with("sep-2640-client-") {
        builder = builder.extension(mcpkit::types::ext::skills::ID, Default::default());
    }
    if stateless || scenario.starts_with("elicitation") {
        builder = builder.on_elicitation(|params| async move { Ok(accept_with_defaults(&params)) });
    }
    let client = builder.connect(transport.build()?).await?;
    let outcome = exercise(scenario, &client, context).await;
    let closed = client.close().await;
    outcome?;
    closed?;
    Ok(())
}

/// What each scenario calls after connecting.
async fn exercise(scenario: &str, client: &Client, context: &Map<String, Value>) -> Result<(), BoxError> {
    let tools = client.list_all_tools().await?;
    match scenario {
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => {}
        "sep-2322-client-request-state" => {
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                client.call_tool(name, json!({})).await?;
            }
        }
        "http-standard-headers" => {
            // Every kind of request that carries a name: a tool, a resource, a prompt.
            if let Some(tool) = tools.first() {
                client.call_tool(&tool.name, json!({})).await?;
            }
            if let Some(resource) = client.list_all_resources().await?.first() {
                client.read_resource(&resource.uri).await?;
            }
            if let Some(prompt) = client.list_all_prompts().await?.first() {
                client.get_prompt(&prompt.name, Vec::<(String, String)>::new()).await?;
            }
        }
        "http-custom-headers" => {
            // The calls the context lists, arguments as given.
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .ok_or("context has no toolCalls")?;
            for call in calls {
                let name = call
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a toolCall without a name")?;
                client
                    .call_tool(name, call.get("arguments").cloned().unwrap_or(Value::Null))
                    .await?;
            }
        }
        "http-invalid-tool-headers" => {
            // Every tool the client kept (those with invalid annotations are left out).
            for tool in &tools {
                client.call_tool(&tool.name, json!({})).await?;
            }
        }
        "tools_call" => {
            client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
        }
        "elicitation-sep1034-client-defaults" => {
            client.call_tool("test_client_elicitation_defaults", json!({})).await?;
        }
        "sse-retry" => {
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "json-schema-2020-12-preservation" => {
            let tool = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("the server lists no json_schema_2020_12_tool")?;
            client
                .call_tool("json_schema_echo", json!({"schema": tool.input_schema}))
                .await?;
        }
        // The Skills extension as a host uses it: list the skills (reading no file), then load
        // one skill, verified against its entry, and read its other files only if it verified.
        "sep-2640-client-no-prefetch" => {
            client.list_all_skills().await?;
        }
        s if s.starts_with("sep-2640-client-") => {
            let skills = client.list_all_skills().await?;
            let entry = skills.first().ok_or("the server lists no skill")?;
            let skill = client.load_skill(entry).await?;
            if let SkillResources::Files(files) = &skill.entry.resources {
                for file in files.iter().filter(|f| f.uri != skill.entry.uri) {
                    client.read_skill_file(&skill, &file.uri).await?;
                }
            }
        }
        s if s.starts_with("auth/") => {
            // An authorized session: list (done above), then call the first tool.
            if let Some(tool) = tools.first() {
                client.call_tool(&tool.name, json!({})).await?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The OAuth client for an `auth/*` scenario, configured from the scenario's context.
fn oauth_client(scenario: &str, url: &str, context: &Map<String, Value>) -> Result<OAuthClient, BoxError> {
    let text = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut b = OAuthClient::builder(url)
        .client_name("mcpkit-conformance-client")
        .redirect_uri(REDIRECT_URI)
        .client_metadata_url(CLIENT_METADATA_URL)
        .authorizer(Arc::new(HeadlessAuthorizer::new()?));
    match scenario {
        "auth/client-credentials-basic" => {
            b = b.client_credentials(ClientCredentials::Secret {
                client_id: text("client_id").ok_or("context has no client_id")?,
                client_secret: text("client_secret").ok_or("context has no client_secret")?,
            });
        }
        "auth/client-credentials-jwt" => {
            b = b.client_credentials(ClientCredentials::PrivateKeyJwt {
                client_id: text("client_id").ok_or("context has no client_id")?,
                private_key_pem: text("private_key_pem").ok_or("context has no private_key_pem")?,
                algorithm: text("signing_algorithm").unwrap_or_else(|| "ES256".into()),
            });
        }
        "auth/enterprise-managed-authorization" => {
            b = b.client_credentials(ClientCredentials::EnterpriseManaged {
                client_id: text("client_id").ok_or("context has no client_id")?,
                client_secret: text("client_secret").ok_or("context has no client_secret")?,
                idp_token_endpoint: text("idp_token_endpoint").ok_or("context has no idp_token_endpoint")?,
                idp_client_id: text("idp_client_id").ok_or("context has no idp_client_id")?,
                id_token: text("idp_id_token").ok_or("context has no idp_id_token")?,
            });
        }
        "auth/wif-jwt-bearer" => {
            b = b.client_credentials(ClientCredentials::JwtBearer {
                client_id: text("client_id").ok_or("context has no client_id")?,
                assertion: text("valid_jwt").ok_or("context has no valid_jwt")?,
            });
        }
        _ => {
            if let Some(id) = text("client_id") {
                b = b.preregistered(text("issuer"), id, text("client_secret"));
            }
        }
    }
    Ok(b.build()?)
}

/// Accept a form elicitation with every property's schema `default` filled in.
fn accept_with_defaults(params: &ElicitParams) -> ElicitResult {
    let ElicitParams::Form(form) = params else {
        return ElicitResult::accept_empty();
    };
    let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
    let mut content = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if let Some(default) = prop.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    ElicitResult::accept(content)
}
