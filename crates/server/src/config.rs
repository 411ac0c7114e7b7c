//! Configuration, read once from the command line and environment and
//! passed by value from here on.

use std::net::SocketAddr;

use anyhow::{bail, Context};

use reviewloop_adapters::PoolOptions;
use reviewloop_domain::{parse_retry_schedule, DEFAULT_RETRY_SCHEDULE};
use reviewloop_http_actix::TrustedProxies;
use reviewloop_service::SignupPolicy;

use crate::cli::Cli;

/// Everything the service is configured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `sqlite://PATH`.
    pub database_url: String,
    /// Address to listen on.
    pub bind: SocketAddr,
    /// Base URL for links; `None` means http:// and the bound address.
    pub public_url: Option<String>,
    /// Whether webhooks and callbacks may reach private addresses.
    pub allow_private_targets: bool,
    /// Pauses between delivery attempts, in seconds.
    pub retry_schedule: Vec<i64>,
    /// Proxies whose forwarding headers are believed.
    pub trusted_proxies: TrustedProxies,
    /// Size and wait of the database connection pool.
    pub pool: PoolOptions,
    /// How long history (finished deliveries, dispatched events) is kept.
    pub retention_days: u32,
    /// How long `serve` waits at start for PostgreSQL to answer.
    pub db_wait: std::time::Duration,
    /// How long, after SIGTERM, the listener stays open while /ready says
    /// 503, so that a proxy moves its traffic elsewhere first.
    pub shutdown_drain: std::time::Duration,
    /// Who may sign up in the web application.
    pub signup: SignupPolicy,
    /// The mail server, when email is configured.
    pub smtp: Option<Smtp>,
    /// Pauses between attempts to send a notice, in seconds.
    pub notify_retry_schedule: Vec<i64>,
    /// Slack's Web API, without a trailing slash.
    pub slack_api_url: String,
    /// The VAPID `sub` of Web Push, when the operator named one.
    pub vapid_subject: Option<String>,
    /// How log lines look.
    pub log_format: crate::cli::LogFormat,
}

/// Where email goes out.
#[derive(Clone, PartialEq, Eq)]
pub struct Smtp {
    /// `smtp://` or `smtps://`, perhaps with a login.
    pub url: String,
    /// The sender's address.
    pub from: String,
}

impl std::fmt::Debug for Smtp {
    // The URL may carry a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Smtp")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

/// The default pauses between attempts to send a notice: quick at first,
/// then spread over about eight hours (7 attempts).
pub const DEFAULT_NOTIFY_SCHEDULE: [i64; 6] = [10, 60, 300, 1800, 7200, 21_600];

fn smtp(cli: &Cli) -> anyhow::Result<Option<Smtp>> {
    let Some(url) = cli
        .smtp_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
    else {
        return Ok(None);
    };
    if !(url.starts_with("smtp://") || url.starts_with("smtps://")) {
        bail!("REVIEWLOOP_SMTP_URL must start with smtp:// or smtps://");
    }
    let from = cli
        .smtp_from
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .unwrap_or("reviewloop@localhost");
    Ok(Some(Smtp {
        url: url.to_owned(),
        from: from.to_owned(),
    }))
}

/// The pool settings, checked: at least one connection, at most 1,000;
/// a wait of 1 to 600 seconds.
fn pool_options(cli: &Cli) -> anyhow::Result<PoolOptions> {
    let mut options = PoolOptions::default();
    if let Some(size) = cli.db_pool_size {
        if !(1..=1000).contains(&size) {
            bail!("REVIEWLOOP_DB_POOL_SIZE must be from 1 to 1000, not {size}");
        }
        options.max_size = Some(size);
    }
    if let Some(seconds) = cli.db_pool_timeout {
        if !(1..=600).contains(&seconds) {
            bail!("REVIEWLOOP_DB_POOL_TIMEOUT must be from 1 to 600 seconds, not {seconds}");
        }
        options.connection_timeout = std::time::Duration::from_secs(seconds);
    }
    Ok(options)
}

impl Config {
    /// Validates the command line's settings.
    pub fn from_cli(cli: &Cli) -> anyhow::Result<Self> {
        let bind: SocketAddr = cli.bind.parse().with_context(|| {
            format!(
                "--bind / REVIEWLOOP_BIND must be an address like 127.0.0.1:8080, not '{}'",
                cli.bind
            )
        })?;
        let public_url = match cli
            .public_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
        {
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                Some(url.trim_end_matches('/').to_owned())
            }
            Some(url) => {
                bail!("REVIEWLOOP_PUBLIC_URL must start with http:// or https://, not '{url}'")
            }
            None => None,
        };
        Ok(Self {
            database_url: cli.database_url.clone(),
            bind,
            public_url,
            allow_private_targets: cli.allow_private_targets,
            retry_schedule: match cli.webhook_retry_schedule.as_deref() {
                Some(raw) => parse_retry_schedule(raw)
                    .map_err(|why| anyhow::anyhow!("REVIEWLOOP_WEBHOOK_RETRY_SCHEDULE: {why}"))?,
                None => DEFAULT_RETRY_SCHEDULE.to_vec(),
            },
            trusted_proxies: TrustedProxies::parse(cli.trusted_proxies.as_deref().unwrap_or(""))
                .map_err(|why| anyhow::anyhow!("REVIEWLOOP_TRUSTED_PROXIES: {why}"))?,
            pool: pool_options(cli)?,
            signup: match cli.signup.as_deref().map(str::trim) {
                None | Some("") | Some("invite") => SignupPolicy::InviteOnly,
                Some("open") => SignupPolicy::Open,
                Some(other) => bail!("REVIEWLOOP_SIGNUP must be 'invite' or 'open', not '{other}'"),
            },
            smtp: smtp(cli)?,
            slack_api_url: match cli.slack_api_url.as_deref().map(str::trim) {
                None | Some("") => reviewloop_adapters::DEFAULT_SLACK_API_URL.to_owned(),
                Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
                    url.trim_end_matches('/').to_owned()
                }
                Some(other) => {
                    bail!("REVIEWLOOP_SLACK_API_URL must be an http(s) URL, not '{other}'")
                }
            },
            vapid_subject: match cli.vapid_subject.as_deref().map(str::trim) {
                None | Some("") => None,
                Some(subject)
                    if (subject.starts_with("mailto:") && subject.len() > 7)
                        || subject.starts_with("https://") =>
                {
                    Some(subject.to_owned())
                }
                Some(other) => bail!(
                    "REVIEWLOOP_VAPID_SUBJECT must be a mailto: address or an https URL, not '{other}'"
                ),
            },
            log_format: cli.log_format,
            notify_retry_schedule: match cli.notify_retry_schedule.as_deref() {
                Some(raw) => parse_retry_schedule(raw)
                    .map_err(|why| anyhow::anyhow!("REVIEWLOOP_NOTIFY_RETRY_SCHEDULE: {why}"))?,
                None => DEFAULT_NOTIFY_SCHEDULE.to_vec(),
            },
            db_wait: match cli.db_wait {
                None => std::time::Duration::from_secs(60),
                Some(seconds @ 0..=3600) => std::time::Duration::from_secs(seconds),
                Some(seconds) => {
                    bail!("REVIEWLOOP_DB_WAIT must be from 0 to 3600 seconds, not {seconds}")
                }
            },
            shutdown_drain: match cli.shutdown_drain {
                None => std::time::Duration::from_secs(5),
                Some(seconds @ 0..=300) => std::time::Duration::from_secs(seconds),
                Some(seconds) => {
                    bail!("REVIEWLOOP_SHUTDOWN_DRAIN must be from 0 to 300 seconds, not {seconds}")
                }
            },
            retention_days: match cli.retention_days {
                None => 30,
                Some(days @ 1..=3650) => days,
                Some(days) => {
                    bail!("REVIEWLOOP_RETENTION_DAYS must be from 1 to 3650, not {days}")
                }
            },
        })
    }

    /// Who push services are told to contact (the VAPID `sub`): the one
    /// configured, else the public URL when it is https, else the email
    /// sender's address. Apple's push service refuses `localhost` ones.
    pub fn vapid_subject(&self) -> String {
        if let Some(subject) = &self.vapid_subject {
            return subject.clone();
        }
        match &self.public_url {
            Some(url) if url.starts_with("https://") => url.trim_end_matches('/').to_owned(),
            _ => format!(
                "mailto:{}",
                self.smtp
                    .as_ref()
                    .map_or("reviewloop@localhost", |smtp| smtp.from.as_str())
            ),
        }
    }

    /// The public URL, given the address actually bound.
    pub fn public_url_for(&self, bound: SocketAddr) -> String {
        self.public_url
            .clone()
            .unwrap_or_else(|| format!("http://{bound}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Config> {
        let mut full = vec!["reviewloop"];
        full.extend_from_slice(args);
        Config::from_cli(&Cli::try_parse_words(full)?)
    }

    #[test]
    fn defaults_follow_the_design() {
        let config = parse(&["serve"]).unwrap();
        assert_eq!(config.database_url, "sqlite://reviewloop.db");
        assert_eq!(config.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(config.public_url_for(config.bind), "http://127.0.0.1:8080");
        assert!(!config.allow_private_targets);
        assert_eq!(config.retry_schedule.len(), 11);
        assert!(parse(&["--webhook-retry-schedule", "1,x"]).is_err());
        assert_eq!(
            parse(&["--webhook-retry-schedule", "1,2"])
                .unwrap()
                .retry_schedule,
            vec![1, 2]
        );
    }

    #[test]
    fn the_vapid_subject_is_a_contact_push_services_accept() {
        assert_eq!(
            parse(&[]).unwrap().vapid_subject(),
            "mailto:reviewloop@localhost"
        );
        let https = parse(&["--public-url", "https://r.example.com/"]).unwrap();
        assert_eq!(https.vapid_subject(), "https://r.example.com");
        let mail = parse(&[
            "--smtp-url",
            "smtp://mail:25",
            "--smtp-from",
            "ops@example.com",
        ])
        .unwrap();
        assert_eq!(mail.vapid_subject(), "mailto:ops@example.com");
        let named = parse(&["--vapid-subject", "mailto:push@example.com"]).unwrap();
        assert_eq!(named.vapid_subject(), "mailto:push@example.com");
        for bad in ["push@example.com", "mailto:", "http://r.example.com"] {
            assert!(parse(&["--vapid-subject", bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn flags_are_read_and_checked() {
        let config = parse(&[
            "--bind",
            "0.0.0.0:9000",
            "--public-url",
            "https://r.example.com/",
            "migrate",
        ])
        .unwrap();
        assert_eq!(config.public_url_for(config.bind), "https://r.example.com");
        // Server flags stay accepted after any command, nested ones too.
        let nested = parse(&[
            "key",
            "list",
            "--email",
            "a@example.com",
            "--bind",
            "0.0.0.0:9001",
        ]);
        assert_eq!(nested.unwrap().bind.to_string(), "0.0.0.0:9001");
        assert_eq!(
            parse(&["serve", "--bind", "0.0.0.0:9002"])
                .unwrap()
                .bind
                .to_string(),
            "0.0.0.0:9002"
        );
        assert!(parse(&["--bind", "localhost"]).is_err());
        assert!(parse(&["--public-url", "r.example.com"]).is_err());
        assert!(parse(&["--trusted-proxies", "nginx"]).is_err());
        let pool = parse(&["--db-pool-size", "3", "--db-pool-timeout", "2"])
            .unwrap()
            .pool;
        assert_eq!(pool.max_size, Some(3));
        assert_eq!(pool.connection_timeout, std::time::Duration::from_secs(2));
        assert_eq!(parse(&[]).unwrap().pool, PoolOptions::default());
        assert_eq!(parse(&[]).unwrap().shutdown_drain.as_secs(), 5);
        assert_eq!(parse(&[]).unwrap().db_wait.as_secs(), 60);
        assert!(parse(&["--db-wait", "3601"]).is_err());
        assert_eq!(
            parse(&["--shutdown-drain", "0"])
                .unwrap()
                .shutdown_drain
                .as_secs(),
            0
        );
        assert!(parse(&["--shutdown-drain", "301"]).is_err());
        assert_eq!(parse(&[]).unwrap().retention_days, 30);
        assert_eq!(parse(&["--retention-days", "7"]).unwrap().retention_days, 7);
        assert!(parse(&["--retention-days", "0"]).is_err());
        for bad in [
            ["--db-pool-size", "0"],
            ["--db-pool-timeout", "0"],
            ["--db-pool-size", "x"],
        ] {
            assert!(parse(&bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse(&["--trusted-proxies", "127.0.0.1, ::1"])
                .unwrap()
                .trusted_proxies,
            TrustedProxies::parse("127.0.0.1,::1").unwrap()
        );
    }
}
