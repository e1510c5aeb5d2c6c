//! Interop of the Skills extension with the official TypeScript SDK v2 (tests-interop/ts2,
//! `@modelcontextprotocol/{client,server}` 2.4 with their `/ext/skills` entry points): the v2
//! host (`SkillsClient`) lists, gets and reads, verified, the skills of `mcpkit serve` over
//! stdio and Streamable HTTP at 2026-07-28; the mcpkit client lists, loads and reads, verified,
//! the skills of a v2 server (`SkillsExtension`) in both eras.
//!
//! Needs the SDK installed (scripts/setup-interop-ts.sh; scripts/test.sh does) and Node >= 20
//! (`node` on the PATH, or `MCPKIT_NODE`); without them these tests fail, never skip.

use mcpkit::client::ConnectMode;
use mcpkit::types::ext::skills::SkillResources;
use mcpkit::types::ProtocolVersion;
use support::peers::{connect_stdio, node_20 as node, ts2_dir};
use support::HttpServer;

use crate::support;

fn run_checks(args: &[&str]) {
    support::run_client_checks("TypeScript v2", &node(), &ts2_dir().join("skills_checks_v2.mjs"), args);
}

#[test]
fn typescript_sdk_v2_host_reads_mcpkit_skills_over_stdio() {
    run_checks(&["stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
}

#[test]
fn typescript_sdk_v2_host_reads_mcpkit_skills_over_streamable_http() {
    let server = HttpServer::start();
    run_checks(&["http", &format!("{}/mcp", server.base)]);
}

async fn mcpkit_reads_typescript_skills(mode: ConnectMode) {
    let server = ts2_dir().join("skills_server.mjs");
    let client = connect_stdio(mode, node(), &[server.to_str().unwrap(), "stdio"]).await;
    assert!(client.serves_skills());
    let skills = client.list_all_skills().await.unwrap();
    let mut uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
    uris.sort_unstable();
    assert_eq!(uris, ["skill://acme/notes/SKILL.md", "skill://tidy/SKILL.md"]);
    let tidy = client.get_skill("skill://tidy/SKILL.md").await.unwrap();
    let loaded = client.load_skill(&tidy).await.unwrap();
    assert!(loaded.text.contains("Read references/RULES.md."), "{}", loaded.text);
    let SkillResources::Files(files) = &tidy.resources else {
        panic!("a manifest")
    };
    let rules = files.iter().find(|f| f.uri.ends_with("RULES.md")).unwrap();
    let bytes = client.read_skill_file(&loaded, &rules.uri).await.unwrap();
    assert_eq!(bytes, b"# Rules\n\nPut things back.\n");
    let _ = client.close().await;
}

#[tokio::test]
async fn mcpkit_client_reads_typescript_sdk_v2_skills_at_2026_07_28() {
    mcpkit_reads_typescript_skills(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)).await;
}

#[tokio::test]
async fn mcpkit_client_reads_typescript_sdk_v2_skills_through_the_handshake() {
    mcpkit_reads_typescript_skills(ConnectMode::Handshake).await;
}
