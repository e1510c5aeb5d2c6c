//! Behind a load balancer every client has the balancer's address. With the balancer's network
//! in `HttpConfig::trusted_proxies`, the client of a request from it is the address it names in
//! `X-Forwarded-For` (the first untrusted one from the right), so the per-client session cap
//! counts clients, not the balancer; from any other peer the header is ignored, and a header
//! that cannot be read leaves the balancer's own address. Through the router with `oneshot`,
//! the peer address given as `ConnectInfo`.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::assert_error;
use common::http::*;
use mcpkit::server::http::{ForwardedHeader, HttpConfig};
use reqwest::StatusCode;
use serde_json::json;

/// The balancer's address (in the trusted network) and a port of it.
const BALANCER: &str = "10.1.0.5:40000";
/// A peer that is no proxy of ours.
const STRANGER: &str = "198.51.100.7:40000";

/// One session per client; the balancers are `10.1.0.0/24`.
fn behind_balancer() -> Mcp {
    in_process(
        test_server(),
        HttpConfig {
            max_sessions_per_client: 1,
            trusted_proxies: vec!["10.1.0.0/24".parse().unwrap()],
            ..config()
        },
    )
}

/// An `initialize` from `peer` with these headers: the status, and the body of a refusal.
async fn initialize(mcp: &Mcp, peer: &str, headers: &[(&str, &str)]) -> (StatusCode, Option<serde_json::Value>) {
    let mut req = mcp.post(None, initialize_body(7)).sent_from(peer);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    let r = send(req).await;
    let status = r.status();
    if status == StatusCode::OK {
        assert!(header(&r, "mcp-session-id").is_some(), "a session id");
        (status, None)
    } else {
        (status, Some(json_body(r).await))
    }
}

fn xff(value: &str) -> [(&'static str, &str); 1] {
    [("x-forwarded-for", value)]
}

fn assert_admitted(got: (StatusCode, Option<serde_json::Value>), what: &str) {
    assert_eq!(got.0, StatusCode::OK, "{what}: {:?}", got.1);
}

fn assert_refused_for_this_client(got: (StatusCode, Option<serde_json::Value>), what: &str) {
    assert_eq!(got.0, StatusCode::SERVICE_UNAVAILABLE, "{what}");
    let body = got.1.expect("a JSON-RPC error body");
    assert_error(&body, -32603, &json!(7));
    assert_eq!(
        body["error"]["message"], "Too many sessions for this client",
        "{what}: {body}"
    );
}

#[tokio::test]
async fn clients_named_by_a_trusted_balancer_have_a_cap_each() {
    let mcp = behind_balancer();
    assert_admitted(
        initialize(&mcp, BALANCER, &xff("203.0.113.1")).await,
        "the first client",
    );
    assert_admitted(
        initialize(&mcp, BALANCER, &xff("203.0.113.2")).await,
        "another client through the same balancer",
    );
    assert_refused_for_this_client(
        initialize(&mcp, "10.1.0.6:41000", &xff("203.0.113.1")).await,
        "the first client again (through another balancer of the network)",
    );
    // The balancer's own requests (no header) are its own client.
    assert_admitted(initialize(&mcp, BALANCER, &[]).await, "the balancer itself");
    assert_refused_for_this_client(initialize(&mcp, BALANCER, &[]).await, "the balancer again");
}

#[tokio::test]
async fn from_an_untrusted_peer_the_header_is_ignored() {
    let mcp = behind_balancer();
    assert_admitted(initialize(&mcp, STRANGER, &xff("203.0.113.1")).await, "the first");
    assert_refused_for_this_client(
        initialize(&mcp, STRANGER, &xff("203.0.113.2")).await,
        "the same peer naming another client",
    );
    // Nor did the stranger use up the client it named.
    assert_admitted(
        initialize(&mcp, BALANCER, &xff("203.0.113.1")).await,
        "the named client through the balancer",
    );
}

#[tokio::test]
async fn a_malformed_header_from_a_trusted_peer_counts_as_the_peer() {
    let mcp = behind_balancer();
    assert_admitted(initialize(&mcp, BALANCER, &xff("not-an-address")).await, "the first");
    assert_refused_for_this_client(initialize(&mcp, BALANCER, &[]).await, "the balancer itself");
    assert_refused_for_this_client(
        initialize(&mcp, BALANCER, &xff("203.0.113.1, ")).await,
        "an empty last entry",
    );
    assert_admitted(initialize(&mcp, BALANCER, &xff("203.0.113.1")).await, "a real client");
}

#[tokio::test]
async fn a_chain_through_trusted_proxies_resolves_to_the_client() {
    let mcp = behind_balancer();
    // The client, then a trusted proxy that passed it on to the balancer.
    assert_admitted(
        initialize(&mcp, BALANCER, &xff("203.0.113.1, 10.1.0.9")).await,
        "the client behind two proxies",
    );
    assert_refused_for_this_client(
        initialize(&mcp, BALANCER, &xff("203.0.113.1")).await,
        "the same client behind one",
    );
    // What the client wrote left of itself is not believed: it is still 203.0.113.1.
    assert_refused_for_this_client(
        initialize(&mcp, BALANCER, &xff("192.0.2.99, 203.0.113.1, 10.1.0.9")).await,
        "the client claiming another address",
    );
    // A proxy adding its own header line: one list, in order.
    let two_lines = [("x-forwarded-for", "203.0.113.1"), ("x-forwarded-for", "10.1.0.9")];
    assert_refused_for_this_client(initialize(&mcp, BALANCER, &two_lines).await, "two lines");
}

#[tokio::test]
async fn the_rfc_7239_header_when_configured_and_only_then() {
    let mcp = in_process(
        test_server(),
        HttpConfig {
            max_sessions_per_client: 1,
            trusted_proxies: vec!["10.1.0.0/24".parse().unwrap()],
            forwarded_header: ForwardedHeader::Forwarded,
            ..config()
        },
    );
    let forwarded = |v| [("forwarded", v)];
    assert_admitted(
        initialize(
            &mcp,
            BALANCER,
            &forwarded("for=\"[2001:db8::1]:4711\";proto=http, for=10.1.0.9"),
        )
        .await,
        "an IPv6 client",
    );
    assert_admitted(
        initialize(&mcp, BALANCER, &forwarded("for=203.0.113.1")).await,
        "another",
    );
    assert_admitted(
        initialize(&mcp, BALANCER, &forwarded("For=2001:db8::1")).await,
        "unbracketed IPv6 is malformed: the balancer's own first session",
    );
    // X-Forwarded-For is not read when Forwarded is the configured header.
    assert_refused_for_this_client(
        initialize(&mcp, BALANCER, &xff("203.0.113.50")).await,
        "X-Forwarded-For ignored: the balancer again",
    );
}
