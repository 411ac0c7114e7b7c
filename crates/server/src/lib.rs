//! The composition root: configuration, the command line, wiring of
//! adapters into services, the HTTP server and the background workers.

pub mod admin;
pub mod cli;
pub mod config;
mod probe;
pub mod serve;
mod workers;

use std::sync::Arc;

use anyhow::Context;
use reviewloop_adapters::{
    redacted_url, Argon2Passwords, Database, HttpPushGateway, HttpSlackApi, HttpWebhookClient,
    InMemoryRateLimiter, PngQrRenderer, RandomIds, SharedRateLimiter, SmtpMailer, SqlStore,
    SystemClock,
};
use reviewloop_ports::{Meter, NoMeter, RateLimiter};
use reviewloop_service::{ChangeHub, Ports, ReceiptKeys};

use crate::cli::{Cli, Command};
use crate::config::Config;

/// Opens the database named by the configuration, running pending
/// migrations first, as every command does.
pub(crate) async fn open_database(
    config: &Config,
    meter: Arc<dyn Meter>,
) -> anyhow::Result<(Database, Vec<String>)> {
    let (url, pool) = (config.database_url.clone(), config.pool);
    tokio::task::spawn_blocking(move || Database::open_measured(&url, pool, meter))
        .await
        .context("database task failed")?
        .with_context(|| format!("cannot use database {}", redacted_url(&config.database_url)))
}

/// Every port, backed by the real adapters, and the shared rate limiter
/// (PostgreSQL only), which a worker must flush.
pub(crate) fn ports(
    db: Database,
    config: &Config,
    meter: Arc<dyn Meter>,
) -> anyhow::Result<(Ports, Option<Arc<SharedRateLimiter>>)> {
    let postgres = db.is_postgres();
    let store = Arc::new(SqlStore::new(db));
    // One instance on SQLite counts in memory (no write per call); several
    // instances on PostgreSQL share one count in the database.
    let shared = postgres.then(|| Arc::new(SharedRateLimiter::new(store.as_ref().clone())));
    let limiter: Arc<dyn RateLimiter> = match &shared {
        Some(shared) => shared.clone(),
        None => Arc::new(InMemoryRateLimiter::new()),
    };
    let http = Arc::new(
        HttpWebhookClient::new(config.allow_private_targets)
            .context("cannot build the HTTP client")?,
    );
    let clock: Arc<dyn reviewloop_ports::Clock> = Arc::new(SystemClock);
    let ids: Arc<dyn reviewloop_ports::IdSource> = Arc::new(RandomIds);
    let ports = Ports {
        receipts: Arc::new(ReceiptKeys::new(store.clone(), clock.clone(), ids.clone())),
        audit: store.clone(),
        accounts: store.clone(),
        loops: store.clone(),
        requests: store.clone(),
        idempotency: store.clone(),
        webhooks: store.clone(),
        templates: store.clone(),
        reviews: store.clone(),
        feed: store.clone(),
        people: store.clone(),
        notices: store.clone(),
        answer_links: store.clone(),
        slack_posts: store.clone(),
        push: store.clone(),
        push_gateway: Arc::new(
            HttpPushGateway::new(config.allow_private_targets, &config.vapid_subject())
                .context("cannot build the push client")?,
        ),
        slack: Arc::new(HttpSlackApi::new(&config.slack_api_url).map_err(anyhow::Error::msg)?),
        operations: store.clone(),
        deliveries: store,
        mailer: match &config.smtp {
            Some(smtp) => Some(Arc::new(
                SmtpMailer::new(&smtp.url, &smtp.from).map_err(anyhow::Error::msg)?,
            )),
            None => None,
        },
        passwords: Arc::new(Argon2Passwords),
        sender: http.clone(),
        guard: http,
        clock,
        ids,
        qr: Arc::new(PngQrRenderer),
        limiter,
        changes: ChangeHub::new(),
        meter,
    };
    Ok((ports, shared))
}

/// Runs one command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::from_cli(&cli)?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve::serve(config).await,
        Command::Migrate => {
            let (_, applied) = open_database(&config, Arc::new(NoMeter)).await?;
            if applied.is_empty() {
                println!("reviewloop: database is up to date");
            } else {
                for version in applied {
                    println!("reviewloop: applied migration {version}");
                }
            }
            Ok(())
        }
        Command::User(command) => admin::user(&config, command).await,
        Command::Key(command) => admin::key(&config, command).await,
        Command::Account(command) => admin::account(&config, command).await,
        Command::ReceiptKey(command) => admin::receipt_key(&config, command).await,
        Command::VapidKey(command) => admin::vapid_key(&config, command).await,
        Command::Audit(command) => admin::audit(&config, command).await,
        Command::Health { ready, url } => probe::health(&config, ready, url.as_deref()).await,
        Command::Backup { to } => admin::backup(&config, &to),
        Command::Restore { from, force } => admin::restore(&config, &from, force).await,
    }
}
