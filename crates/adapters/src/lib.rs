//! reviewloop's adapters: the Diesel store behind every storage port, the
//! SMTP mailer, the system clock and randomness, the in-process rate limiter and the QR
//! code renderer.

pub mod clock;
pub mod db;
pub mod http_client;
pub mod ids;
pub mod mailer;
pub mod metrics;
pub mod passwords;
pub mod qr;
pub mod rate_limit;
pub mod slack_api;
pub mod web_push;

pub use clock::SystemClock;
pub use db::{
    backup, claim_sole_instance, redacted_url, restore, BackupError, Change, ChangeListener,
    Database, DatabaseError, PoolOptions, Restored, SharedRateLimiter, SoleInstance, SqlStore,
    RATE_LIMIT_FLUSH_EVERY,
};
pub use http_client::HttpWebhookClient;
pub use ids::RandomIds;
pub use mailer::SmtpMailer;
pub use metrics::PrometheusMeter;
pub use passwords::Argon2Passwords;
pub use qr::PngQrRenderer;
pub use rate_limit::InMemoryRateLimiter;
pub use slack_api::{HttpSlackApi, DEFAULT_SLACK_API_URL};
pub use web_push::HttpPushGateway;
