//! The HTTP client of webhooks and callbacks, and the guard that keeps both
//! off internal addresses (SSRF). An address may be reached only if it is
//! globally reachable by IANA's special-purpose registries and belongs to
//! none of this host's interfaces. Names are resolved by a resolver that
//! drops every other address, so a name that changes to an internal
//! address after it was accepted still cannot be reached; redirects are
//! not followed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;
use reqwest::Url;
use reviewloop_ports::{Outgoing, SendOutcome, TargetGuard, WebhookSender};

/// How long a receiver has to answer.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether an IPv4 address is globally reachable: not in a block of IANA's
/// special-purpose registry whose "globally reachable" is false or unset
/// (and no multicast, reserved or broadcast address either).
fn is_global_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = a == 0 // "this network"
        || a == 10 // private
        || a == 127 // loopback
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local
        || (a == 172 && (16..32).contains(&b)) // private
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation TEST-NET-1
        || (a == 192 && b == 88 && c == 99) // deprecated 6to4 relay anycast
        || (a == 192 && b == 168) // private
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // documentation TEST-NET-3
        || a >= 224; // multicast, reserved, limited broadcast
    !special
}

/// The IPv4 address an IPv6 address stands for, where reaching one reaches
/// the other: mapped and compatible forms, NAT64 and 6to4.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(v4(hi, lo)), // ::ffff:a.b.c.d
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4(hi, lo)), // NAT64 64:ff9b::/96
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),            // 6to4 2002::/16
        _ => None,
    }
}

/// Whether an IPv6 address is globally reachable. Only global unicast
/// (2000::/3) can be, less its special blocks; everything outside it
/// (loopback, unspecified, the other IPv4-embedding forms such as
/// `::ffff:0:a.b.c.d` and `::a.b.c.d`, discard-only 100::/64, unique
/// local, link-local, site-local, multicast) cannot.
fn is_global_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_global_v4(v4);
    }
    let s = ip.segments();
    let global_unicast = (s[0] & 0xe000) == 0x2000;
    // IETF protocol assignments 2001::/23 (Teredo, benchmarking, ORCHID)
    // and documentation 2001:db8::/32.
    let in_2001 = s[0] == 0x2001 && (s[1] < 0x0200 || s[1] == 0x0db8);
    let special = in_2001 || (s[0] & 0xfff0) == 0x3ff0; // documentation 3fff::/20
    global_unicast && !special
}

/// Whether an address is globally reachable, by IANA's special-purpose
/// address registries.
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

/// Whether `ip` is an address of one of this host's own interfaces (or
/// the IPv4 address an IPv6 form stands for is). Read afresh each time:
/// interfaces come and go, and the call is cheap next to a delivery.
fn is_own_address(ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => interfaces.iter().any(|i| i.ip() == ip),
        // Unknown interfaces: refuse rather than risk reaching ourselves.
        Err(_) => true,
    }
}

/// True for addresses a webhook must not reach unless the operator allows
/// it: every address that is not globally reachable, and every address of
/// this host.
pub fn is_internal(ip: IpAddr) -> bool {
    !is_global(ip) || is_own_address(ip)
}

/// Resolves names, keeping only addresses a webhook may reach.
struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| allow_private || !is_internal(a.ip()))
                .collect();
            if allowed.is_empty() {
                let error: Box<dyn std::error::Error + Send + Sync> =
                    format!("{host} resolves only to internal addresses").into();
                return Err(error);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Sends webhooks and callbacks, and checks their targets.
#[derive(Clone)]
pub struct HttpWebhookClient {
    client: reqwest::Client,
    allow_private: bool,
}

impl HttpWebhookClient {
    /// A client; `allow_private` lets targets be internal (tests, local use).
    pub fn new(allow_private: bool) -> Result<Self, reqwest::Error> {
        Ok(Self {
            client: guarded_client(
                allow_private,
                concat!("reviewloop-webhooks/", env!("CARGO_PKG_VERSION")),
            )?,
            allow_private,
        })
    }

    /// Refuses URLs that are not http(s), and literal internal addresses
    /// (the resolver never sees those).
    fn check_literal(&self, url: &str) -> Result<Url, String> {
        check_literal(url, self.allow_private)
    }
}

/// An HTTP client for targets users name (webhooks, callbacks, push
/// services): no redirects, ten seconds, and names resolved only to
/// addresses the guard allows.
pub(crate) fn guarded_client(
    allow_private: bool,
    user_agent: &'static str,
) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(Policy::none())
        // A proxy from the environment would resolve names itself and
        // bypass the resolver below.
        .no_proxy()
        .timeout(DELIVERY_TIMEOUT)
        .connect_timeout(DELIVERY_TIMEOUT)
        .dns_resolver(Arc::new(GuardedResolver { allow_private }))
        .user_agent(user_agent)
        .build()
}

/// Refuses URLs that are not http(s), and literal internal addresses
/// unless `allow_private` (the resolver never sees those).
/// The setting that lets targets be internal, named where one is refused.
const ALLOW_PRIVATE: &str = "REVIEWLOOP_ALLOW_PRIVATE_TARGETS=true";

pub(crate) fn check_literal(url: &str, allow_private: bool) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("URL must be http or https".into());
    }
    let literal = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(url::Host::Domain(_)) => None,
        None => return Err("URL must name a host".into()),
    };
    if let Some(ip) = literal.filter(|ip| !allow_private && is_internal(*ip)) {
        return Err(format!(
            "{ip} is an internal address (a server that may call such addresses sets {ALLOW_PRIVATE})"
        ));
    }
    Ok(parsed)
}

#[async_trait]
impl TargetGuard for HttpWebhookClient {
    async fn check(&self, url: &str) -> Result<(), String> {
        let parsed = self.check_literal(url)?;
        if self.allow_private {
            return Ok(());
        }
        if let Some(url::Host::Domain(host)) = parsed.host() {
            let port = parsed.port_or_known_default().unwrap_or(443);
            // A name that does not resolve now may later; delivery checks again.
            if let Ok(addrs) = tokio::net::lookup_host((host, port)).await {
                if let Some(addr) = addrs.into_iter().find(|a| is_internal(a.ip())) {
                    return Err(format!(
                        "{host} resolves to the internal address {} (a server that may call such addresses sets {ALLOW_PRIVATE})",
                        addr.ip()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[async_trait]
impl WebhookSender for HttpWebhookClient {
    async fn send(&self, outgoing: &Outgoing) -> SendOutcome {
        let started = Instant::now();
        let elapsed =
            |started: Instant| u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Err(error) = self.check_literal(&outgoing.url) {
            return SendOutcome {
                status: None,
                latency_ms: 0,
                error: Some(format!("target refused: {error}")),
            };
        }
        let mut request = self.client.post(&outgoing.url).body(outgoing.body.clone());
        for (name, value) in &outgoing.headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                let ok = response.status().is_success();
                SendOutcome {
                    status: Some(status),
                    latency_ms: elapsed(started),
                    error: (!ok).then(|| format!("receiver answered HTTP {status}")),
                }
            }
            Err(error) => {
                let why = if error.is_timeout() {
                    format!("no answer within {} s", DELIVERY_TIMEOUT.as_secs())
                } else {
                    // The chain holds the useful part ("resolves only to internal addresses").
                    let mut text = error.to_string();
                    let mut source = std::error::Error::source(&error);
                    while let Some(inner) = source {
                        text = format!("{text}: {inner}");
                        source = inner.source();
                    }
                    text
                };
                SendOutcome {
                    status: None,
                    latency_ms: elapsed(started),
                    error: Some(why),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_recognised() {
        let internal = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "100.64.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:c0a8:101::1",
            "192.0.2.2",
            "198.51.100.7",
            "203.0.113.9",
            "192.88.99.1",
            "2001:db8::1",
            "100::1",
            "::ffff:0:7f00:1",
            "::ffff:0:808:808",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",
            "3fff::1",
            "5f00::1",
            "::808:808",
        ];
        for ip in internal {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        let public = [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "172.32.0.1",
            "100.128.0.1",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2a00:1450:4001:81b::200e",
            "::ffff:8.8.8.8",
        ];
        for ip in public {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn every_address_of_this_host_is_refused() {
        let strict = HttpWebhookClient::new(false).unwrap();
        let interfaces = if_addrs::get_if_addrs().unwrap();
        assert!(!interfaces.is_empty());
        for interface in interfaces {
            let ip = interface.ip();
            assert!(is_internal(ip), "{ip}");
            let host = match ip {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            };
            let url = format!("http://{host}:9/hook");
            assert!(strict.check(&url).await.is_err(), "{url}");
        }
    }

    #[tokio::test]
    async fn the_guard_refuses_internal_targets_unless_allowed() {
        let strict = HttpWebhookClient::new(false).unwrap();
        for url in [
            "http://127.0.0.1:8080/x",
            "http://[::1]/x",
            "https://169.254.169.254/latest",
            "http://localhost:9/x",
            "ftp://example.com/x",
            "not a url",
        ] {
            assert!(strict.check(url).await.is_err(), "{url}");
        }
        let relaxed = HttpWebhookClient::new(true).unwrap();
        assert!(relaxed.check("http://127.0.0.1:8080/x").await.is_ok());
        assert!(relaxed.check("ftp://example.com/x").await.is_err());
    }

    #[tokio::test]
    async fn sending_to_an_internal_address_is_refused_without_a_request() {
        let strict = HttpWebhookClient::new(false).unwrap();
        let outgoing = Outgoing {
            url: "http://127.0.0.1:9/hook".into(),
            headers: vec![],
            body: "{}".into(),
        };
        let outcome = strict.send(&outgoing).await;
        assert_eq!(outcome.status, None);
        assert!(outcome.error.unwrap().contains("internal address"));
        let by_name = Outgoing {
            url: "http://localhost:9/hook".into(),
            headers: vec![],
            body: "{}".into(),
        };
        let outcome = strict.send(&by_name).await;
        assert!(outcome.error.unwrap().contains("internal addresses"));
    }
}
