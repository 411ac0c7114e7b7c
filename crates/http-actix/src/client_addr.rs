//! Who the client is behind reverse proxies. `X-Forwarded-For` is believed
//! only when the connection comes from a proxy the operator trusts
//! (`REVIEWLOOP_TRUSTED_PROXIES`); from anyone else it is ignored, so a
//! client cannot pick the address its per-address limits are counted under.
//! `Forwarded` is not read at all: proxies such as nginx pass a client's own
//! `Forwarded` through untouched while they set `X-Forwarded-For`, so
//! preferring it would let the client choose again.

use std::net::{IpAddr, SocketAddr};

use actix_web::http::header::HeaderMap;
use ipnet::IpNet;

/// The proxies whose forwarding headers are believed: addresses and
/// networks (`127.0.0.1`, `10.0.0.0/8`, `::1`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma-separated list of addresses and CIDR networks; an
    /// empty list trusts nobody.
    pub fn parse(raw: &str) -> Result<Self, String> {
        raw.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                item.parse::<IpNet>()
                    .or_else(|_| item.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| format!("'{item}' is not an IP address or CIDR network"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// `ip` must be canonical: a listener on [::] sees IPv4 peers as
    /// `::ffff:a.b.c.d`, which must match `a.b.c.d`.
    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client's address: the peer's, unless the peer is a trusted
    /// proxy; then the nearest address in the forwarding chain that is not
    /// a trusted proxy. A hop that cannot be read ends the walk at the last
    /// trusted hop before it.
    pub fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer?.to_canonical();
        if !self.trusts(peer) {
            return Some(peer);
        }
        let mut client = peer;
        for hop in forwarded_chain(headers).iter().rev() {
            match hop {
                Some(ip) if self.trusts(*ip) => client = *ip,
                Some(ip) => return Some(*ip),
                None => break,
            }
        }
        Some(client)
    }
}

/// The addresses a request passed through, client first, from every
/// `X-Forwarded-For` header. `None` stands for a hop that names no
/// readable address (`unknown`, obfuscated names).
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_node)
        .collect()
}

/// An address as proxies write it: `1.2.3.4`, `1.2.3.4:80`, `2001:db8::1`
/// or `[2001:db8::1]:80`; canonical.
fn parse_node(raw: &str) -> Option<IpAddr> {
    raw.parse::<IpAddr>()
        .ok()
        .or_else(|| raw.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            raw.strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|r| r.parse().ok())
        })
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn headers_from_an_untrusted_peer_are_ignored() {
        let nobody = TrustedProxies::default();
        let forged = headers(&[("x-forwarded-for", "1.1.1.1"), ("forwarded", "for=2.2.2.2")]);
        assert_eq!(nobody.client(ip("9.9.9.9"), &forged), ip("9.9.9.9"));
        let local = TrustedProxies::parse("127.0.0.1").unwrap();
        assert_eq!(local.client(ip("9.9.9.9"), &forged), ip("9.9.9.9"));
    }

    #[test]
    fn a_trusted_proxy_names_the_client_and_forged_hops_before_it_do_not_count() {
        let proxies = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").unwrap();
        // The client put 6.6.6.6 in itself; nginx appended the real peer.
        let chain = headers(&[("x-forwarded-for", "6.6.6.6, 203.0.113.7, 10.1.2.3")]);
        assert_eq!(proxies.client(ip("127.0.0.1"), &chain), ip("203.0.113.7"));
        let ports = headers(&[("x-forwarded-for", "6.6.6.6, [2001:db8::7]:4711, 10.0.0.2")]);
        assert_eq!(proxies.client(ip("127.0.0.1"), &ports), ip("2001:db8::7"));
        // A client's own Forwarded header is not believed, whoever passes it on.
        let forged = headers(&[
            ("forwarded", "for=6.6.6.6"),
            ("x-forwarded-for", "198.51.100.4"),
        ]);
        assert_eq!(proxies.client(ip("127.0.0.1"), &forged), ip("198.51.100.4"));
        // A listener on [::] sees the proxy as an IPv4-mapped address.
        assert_eq!(
            proxies.client(ip("::ffff:127.0.0.1"), &forged),
            ip("198.51.100.4")
        );
        let unknown = headers(&[("x-forwarded-for", "unknown, 10.0.0.9")]);
        assert_eq!(proxies.client(ip("127.0.0.1"), &unknown), ip("10.0.0.9"));
        assert_eq!(
            proxies.client(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn the_list_is_checked() {
        assert_eq!(
            TrustedProxies::parse("").unwrap(),
            TrustedProxies::default()
        );
        assert!(TrustedProxies::parse("127.0.0.1,::1,192.168.0.0/16").is_ok());
        assert!(TrustedProxies::parse("nginx").is_err());
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
    }
}
