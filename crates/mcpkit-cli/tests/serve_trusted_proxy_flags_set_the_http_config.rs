//! `mcpkit serve --trusted-proxy CIDR` (repeatable; one address means all its bits) fills
//! `HttpConfig::trusted_proxies`, and `--forwarded-header` picks the header they are believed
//! in; without them nothing is trusted and no forwarding header is read. The flags are parsed as
//! the command line does.

use clap::Parser;
use mcpkit::server::http::{ForwardedHeader, HttpConfig, IpNet};
use mcpkit_cli::cmd::serve;

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: serve::Args,
}

fn parse(flags: &[&str]) -> Result<HttpConfig, clap::Error> {
    Serve::try_parse_from(["serve", "--http", "127.0.0.1:0"].iter().chain(flags)).map(|cli| cli.args.http_config())
}

fn nets(list: &[&str]) -> Vec<IpNet> {
    list.iter().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn each_trusted_proxy_is_a_network() {
    let c = parse(&[
        "--trusted-proxy",
        "127.0.0.1/32",
        "--trusted-proxy",
        "10.0.0.7",
        "--trusted-proxy",
        "fd00:1::/64",
        "--trusted-proxy",
        "192.168.4.9/24",
    ])
    .unwrap();
    assert_eq!(
        c.trusted_proxies,
        nets(&["127.0.0.1/32", "10.0.0.7/32", "fd00:1::/64", "192.168.4.0/24"])
    );
    assert_eq!(c.forwarded_header, ForwardedHeader::XForwardedFor);
    let c = parse(&["--trusted-proxy", "10.0.0.0/8", "--forwarded-header", "forwarded"]).unwrap();
    assert_eq!(c.forwarded_header, ForwardedHeader::Forwarded);
    let c = parse(&["--trusted-proxy", "10.0.0.0/8", "--forwarded-header", "x-forwarded-for"]).unwrap();
    assert_eq!(c.forwarded_header, ForwardedHeader::XForwardedFor);
}

#[test]
fn without_the_flag_nothing_is_trusted() {
    let c = parse(&[]).unwrap();
    assert!(c.trusted_proxies.is_empty());
    assert_eq!(c.forwarded_header, HttpConfig::default().forwarded_header);
    assert!(HttpConfig::default().trusted_proxies.is_empty());
}

#[test]
fn bad_networks_and_orphan_flags_are_refused() {
    for bad in ["10.0.0.0/33", "10.0.0", "example.com", "", "10.0.0.0/8,10.1.0.0/16"] {
        let e = parse(&["--trusted-proxy", bad]).err();
        assert!(e.is_some(), "{bad:?} accepted");
    }
    assert!(
        parse(&["--forwarded-header", "forwarded"]).is_err(),
        "a header without proxies"
    );
    assert!(
        Serve::try_parse_from(["serve", "--trusted-proxy", "127.0.0.1"]).is_err(),
        "needs --http"
    );
}
