//! The HTTP client of webhooks and callbacks, and the guard that keeps both
//! off internal addresses (SSRF). Names are resolved by a resolver that
//! drops loopback, private, link-local, multicast and unspecified
//! addresses, so a name that changes to an internal address after it was
//! accepted still cannot be reached; redirects are not followed.

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

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_unspecified()
        || ip.is_broadcast()
        // "This network" 0.0.0.0/8, carrier-grade NAT 100.64.0.0/10, IETF
        // protocol assignments 192.0.0.0/24, benchmarking 198.18.0.0/15,
        // reserved 240.0.0.0/4.
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let embedded =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    // Addresses that carry an IPv4 address reach that address: check it.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_internal_v4(v4);
    }
    if s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return is_internal_v4(embedded(s[6], s[7])); // IPv4-compatible ::a.b.c.d
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_internal_v4(embedded(s[6], s[7])); // NAT64 64:ff9b::/96
    }
    if s[0] == 0x2002 {
        return is_internal_v4(embedded(s[1], s[2])); // 6to4 2002::/16
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64 64:ff9b:1::/48
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
}

/// True for addresses a webhook must not reach unless the operator allows it.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
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
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            // A proxy from the environment would resolve names itself and
            // bypass the resolver below.
            .no_proxy()
            .timeout(DELIVERY_TIMEOUT)
            .connect_timeout(DELIVERY_TIMEOUT)
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .user_agent(concat!("reviewloop-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            client,
            allow_private,
        })
    }

    /// Refuses URLs that are not http(s), and literal internal addresses
    /// (the resolver never sees those).
    fn check_literal(&self, url: &str) -> Result<Url, String> {
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
        if let Some(ip) = literal.filter(|ip| !self.allow_private && is_internal(*ip)) {
            return Err(format!("{ip} is an internal address"));
        }
        Ok(parsed)
    }
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
                        "{host} resolves to the internal address {}",
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
        ];
        for ip in public {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
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
