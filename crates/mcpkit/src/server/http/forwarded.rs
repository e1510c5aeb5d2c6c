//! The client's address behind trusted reverse proxies ([`HttpConfig::trusted_proxies`]): a
//! request whose TCP peer is in a trusted network is attributed to the address its proxies
//! name in `X-Forwarded-For` (or RFC 7239 `Forwarded: for=`). Anyone can send those headers,
//! so they are read only from a trusted peer, and only from the right: each proxy appends the
//! address it saw, so the entries right of the first untrusted one were written by trusted
//! proxies, and everything left of it by the client (who may write anything).
//!
//! [`HttpConfig::trusted_proxies`]: super::HttpConfig::trusted_proxies

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::http::HeaderMap;
pub use ipnet::IpNet;

/// The header a trusted proxy names the client in ([`super::HttpConfig::forwarded_header`]).
/// Only one is read: a proxy that appends to one does not clean the other, so a client could
/// write its own address into the header the proxy leaves alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (HAProxy's `option forwardfor`, nginx's
    /// `$proxy_add_x_forwarded_for`).
    #[default]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1` (RFC 7239).
    Forwarded,
}

/// The address that identifies the client of a request whose TCP peer is `peer`: `peer`
/// itself unless it is in `trusted`; then the first address, walking the proxies' header from
/// the right, that is not itself trusted (or the leftmost, when all are). No header, or one
/// that cannot be read where the walk needs it (not an address, `for=unknown`, an obfuscated
/// node), leaves the peer: mcpkit never guesses a client.
pub(super) fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet], header: ForwardedHeader) -> IpAddr {
    if !is_trusted(peer.to_canonical(), trusted) {
        return peer;
    }
    let found = match header {
        ForwardedHeader::XForwardedFor => first_untrusted(hops(headers, "x-forwarded-for", x_forwarded_for), trusted),
        ForwardedHeader::Forwarded => first_untrusted(hops(headers, "forwarded", forwarded), trusted),
    };
    found.unwrap_or(peer)
}

fn is_trusted(ip: IpAddr, trusted: &[IpNet]) -> bool {
    trusted.iter().any(|net| net.contains(&ip))
}

/// The addresses of `name`'s header lines, right to left (the last line is the nearest proxy's),
/// each `None` where an entry is not an address. Lazy: entries left of the client are never read.
fn hops<'a>(
    headers: &'a HeaderMap,
    name: &'static str,
    entries: fn(&str) -> Vec<Option<IpAddr>>,
) -> impl Iterator<Item = Option<IpAddr>> + 'a {
    headers
        .get_all(name)
        .iter()
        .rev()
        .flat_map(move |line| match line.to_str() {
            Ok(text) => entries(text).into_iter().rev().collect(),
            Err(_) => vec![None],
        })
}

/// The walk from the right: skip trusted addresses; the first untrusted one is the client.
fn first_untrusted(hops: impl Iterator<Item = Option<IpAddr>>, trusted: &[IpNet]) -> Option<IpAddr> {
    let mut leftmost = None;
    for hop in hops {
        let ip = hop?.to_canonical();
        if !is_trusted(ip, trusted) {
            return Some(ip);
        }
        leftmost = Some(ip);
    }
    leftmost
}

/// One `X-Forwarded-For` line's entries, left to right: `addr` (or `addr:port`, `[v6]:port`,
/// `[v6]`, which some proxies write).
fn x_forwarded_for(line: &str) -> Vec<Option<IpAddr>> {
    line.split(',')
        .map(|entry| {
            let entry = entry.trim_matches([' ', '\t']);
            entry
                .parse::<IpAddr>()
                .ok()
                .or_else(|| entry.parse::<SocketAddr>().ok().map(|a| a.ip()))
                .or_else(|| bracketed_v6(entry, true))
        })
        .collect()
}

/// One `Forwarded` line's elements, left to right: each element's `for=` node, when it is an
/// address. `for=unknown`, obfuscated nodes (`_hidden`), a missing or repeated `for`: `None`.
fn forwarded(line: &str) -> Vec<Option<IpAddr>> {
    split_unquoted(line, ',')
        .into_iter()
        .map(|element| {
            let mut nodes = split_unquoted(element, ';').into_iter().filter_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                name.trim_matches([' ', '\t'])
                    .eq_ignore_ascii_case("for")
                    .then_some(value.trim_matches([' ', '\t']))
            });
            let node = nodes.next()?;
            if nodes.next().is_some() {
                return None;
            }
            let unquoted = node.strip_prefix('"').and_then(|n| n.strip_suffix('"'));
            forwarded_node(unquoted.unwrap_or(node))
        })
        .collect()
}

/// An RFC 7239 node: `192.0.2.60`, `192.0.2.60:4711`, `[2001:db8::17]`, `[2001:db8::17]:4711`
/// (the port, obfuscated or not, is ignored).
fn forwarded_node(node: &str) -> Option<IpAddr> {
    if node.starts_with('[') {
        return bracketed_v6(node, false);
    }
    let host = node.split_once(':').map_or(node, |(host, _port)| host);
    host.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// `[v6]` or `[v6]:port`; with `numeric_port`, a port must be a number.
fn bracketed_v6(node: &str, numeric_port: bool) -> Option<IpAddr> {
    let (v6, rest) = node.strip_prefix('[')?.split_once(']')?;
    let port_ok = match rest.strip_prefix(':') {
        None => rest.is_empty(),
        Some(port) => !port.is_empty() && (!numeric_port || port.parse::<u16>().is_ok()),
    };
    if !port_ok {
        return None;
    }
    v6.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
}

/// `text` split at each `sep` outside a quoted string (`"…"`, with `\` escapes).
fn split_unquoted(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn headers(name: &str, lines: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for line in lines {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                axum::http::HeaderValue::from_bytes(line.as_bytes()).unwrap(),
            );
        }
        map
    }

    fn xff(peer: &str, trusted: &[&str], lines: &[&str]) -> IpAddr {
        client_address(
            ip(peer),
            &headers("x-forwarded-for", lines),
            &nets(trusted),
            ForwardedHeader::XForwardedFor,
        )
    }

    fn fwd(peer: &str, trusted: &[&str], lines: &[&str]) -> IpAddr {
        client_address(
            ip(peer),
            &headers("forwarded", lines),
            &nets(trusted),
            ForwardedHeader::Forwarded,
        )
    }

    const LB: &str = "10.0.0.1";
    const TRUST: &[&str] = &["10.0.0.0/24"];

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        assert_eq!(xff("198.51.100.7", TRUST, &["203.0.113.5"]), ip("198.51.100.7"));
        assert_eq!(fwd("198.51.100.7", TRUST, &["for=203.0.113.5"]), ip("198.51.100.7"));
        // Nothing trusted (the default): the header is never read.
        assert_eq!(xff(LB, &[], &["203.0.113.5"]), ip(LB));
    }

    #[test]
    fn the_walk_goes_from_the_right_past_trusted_hops() {
        assert_eq!(xff(LB, TRUST, &["203.0.113.5"]), ip("203.0.113.5"));
        assert_eq!(xff(LB, TRUST, &["203.0.113.5, 10.0.0.2"]), ip("203.0.113.5"));
        // What the client wrote left of itself is never believed (nor even read).
        assert_eq!(xff(LB, TRUST, &["192.0.2.1, 203.0.113.5, 10.0.0.2"]), ip("203.0.113.5"));
        assert_eq!(xff(LB, TRUST, &["garbage, 203.0.113.5"]), ip("203.0.113.5"));
        // Several lines are one list, in order (a proxy may add a line of its own).
        assert_eq!(
            xff(LB, TRUST, &["not an address", "203.0.113.5", "10.0.0.3"]),
            ip("203.0.113.5")
        );
        // Every hop trusted: the leftmost is the client.
        assert_eq!(xff(LB, TRUST, &["10.0.0.9, 10.0.0.2"]), ip("10.0.0.9"));
        // Ports and brackets some proxies write.
        assert_eq!(xff(LB, TRUST, &["203.0.113.5:4711"]), ip("203.0.113.5"));
        assert_eq!(xff(LB, TRUST, &["[2001:db8::17]:4711"]), ip("2001:db8::17"));
        assert_eq!(xff(LB, TRUST, &["2001:db8::17"]), ip("2001:db8::17"));
    }

    #[test]
    fn an_unreadable_header_from_a_trusted_peer_leaves_the_peer() {
        for bad in [
            "",
            "not-an-address",
            "203.0.113.5, ",
            "203.0.113.5;x",
            "999.1.1.1",
            "[::1]:port",
        ] {
            assert_eq!(xff(LB, TRUST, &[bad]), ip(LB), "{bad:?}");
        }
        assert_eq!(xff(LB, TRUST, &[]), ip(LB));
        // Not visible ASCII.
        assert_eq!(xff(LB, TRUST, &["203.0.113.5\u{e9}"]), ip(LB));
        assert_eq!(fwd(LB, TRUST, &["for=unknown"]), ip(LB));
        assert_eq!(fwd(LB, TRUST, &["for=_hidden"]), ip(LB));
        assert_eq!(fwd(LB, TRUST, &["proto=https"]), ip(LB));
        assert_eq!(fwd(LB, TRUST, &["for=203.0.113.5;for=192.0.2.1"]), ip(LB));
        assert_eq!(fwd(LB, TRUST, &["for=2001:db8::17"]), ip(LB), "IPv6 must be bracketed");
    }

    #[test]
    fn forwarded_for_is_read_as_rfc_7239_writes_it() {
        assert_eq!(fwd(LB, TRUST, &["for=203.0.113.5"]), ip("203.0.113.5"));
        assert_eq!(
            fwd(
                LB,
                TRUST,
                &["for=192.0.2.43, For=\"[2001:db8:cafe::17]:4711\";proto=https, for=10.0.0.2"]
            ),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(
            fwd(LB, TRUST, &["for=203.0.113.5:_port;by=10.0.0.1;host=\"a,b;c\""]),
            ip("203.0.113.5")
        );
        assert_eq!(
            fwd(LB, TRUST, &["for=\"203.0.113.5\"", "for=10.0.0.2"]),
            ip("203.0.113.5")
        );
    }

    #[test]
    fn v4_mapped_addresses_match_v4_networks() {
        assert_eq!(xff("::ffff:10.0.0.1", TRUST, &["203.0.113.5"]), ip("203.0.113.5"));
        assert_eq!(xff(LB, TRUST, &["203.0.113.5, ::ffff:10.0.0.2"]), ip("203.0.113.5"));
        assert_eq!(xff(LB, TRUST, &["::ffff:203.0.113.5"]), ip("203.0.113.5"));
    }
}
