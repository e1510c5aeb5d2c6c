//! `docs/deploy.md` shows, verbatim, the HAProxy configuration the cluster tests run: the
//! generator of mcpkit-test-support's `haproxy` module for the guide's example addresses. A
//! change to one without the other fails here.

use std::net::SocketAddr;
use std::path::Path;

use mcpkit_test_support::haproxy::haproxy_config;

#[test]
fn the_guide_shows_the_generated_config() {
    let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
    let backends: Vec<(String, SocketAddr)> = (1..=3)
        .map(|n| (format!("i{n}"), addr(&format!("10.0.0.1{n}:8080"))))
        .collect();
    let config = haproxy_config(addr("0.0.0.0:80"), Path::new("/run/haproxy/admin.sock"), &backends);
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deploy.md");
    let guide = std::fs::read_to_string(&guide).unwrap();
    let block = format!("```haproxy\n{config}```\n");
    assert!(
        guide.contains(&block),
        "docs/deploy.md must show the tested HAProxy configuration verbatim:\n{block}"
    );
}
