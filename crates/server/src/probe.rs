//! `reviewloop health`: asks a running instance, over HTTP, whether it
//! is alive or ready, as a container's health check does.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Context};

use crate::config::Config;

/// How long the instance has to answer: a health check that hangs is a
/// failed one.
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// Exits with success if the instance answers 200, else says what it
/// answered (or why it could not be asked) and fails.
pub async fn health(config: &Config, ready: bool, url: Option<&str>) -> anyhow::Result<()> {
    let base = match url {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            url.trim_end_matches('/').to_owned()
        }
        Some(other) => bail!("--url must be an http(s) URL, not '{other}'"),
        None => format!("http://{}", reachable(config.bind)),
    };
    let url = format!("{base}/{}", if ready { "ready" } else { "health" });
    let client = reqwest::Client::builder()
        .timeout(ANSWER_WITHIN)
        // An HTTP_PROXY set for outgoing webhooks is not for this call.
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("cannot make an HTTP client")?;
    let reply = client
        .get(&url)
        .send()
        .await
        .with_context(|| format!("{url} did not answer"))?;
    let status = reply.status();
    if status == reqwest::StatusCode::OK {
        println!("reviewloop: {url} answered {status}");
        return Ok(());
    }
    let said = reply
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|body| body["msg"].as_str().map(str::to_owned))
        .unwrap_or_default();
    bail!("{url} answered {status}: {said}")
}

/// Where a client on this host reaches an instance bound to `bind`: the
/// unspecified address is not one to connect to. `[::]` listens on IPv4
/// too (Linux's default), and a container may have no IPv6 loopback, so
/// both are asked at 127.0.0.1.
fn reachable(bind: SocketAddr) -> SocketAddr {
    if bind.ip().is_unspecified() {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), bind.port())
    } else {
        bind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_bind_is_asked_on_loopback() {
        let at = |s: &str| reachable(s.parse().unwrap()).to_string();
        assert_eq!(at("0.0.0.0:8080"), "127.0.0.1:8080");
        assert_eq!(at("[::]:8080"), "127.0.0.1:8080");
        assert_eq!(at("[::1]:8080"), "[::1]:8080");
        assert_eq!(at("10.0.0.5:9000"), "10.0.0.5:9000");
    }
}
