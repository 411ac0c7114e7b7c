//! What operators watch: counts the service keeps as it works (the meter)
//! and the state of its queues, read from the store when asked.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::StoreError;

/// How an attempt to hand something over ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptResult {
    /// Taken by the receiver.
    Succeeded,
    /// Failed; another attempt is scheduled.
    Retrying,
    /// Failed for good.
    GaveUp,
}

impl AttemptResult {
    /// The label value metrics show.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Retrying => "retrying",
            Self::GaveUp => "gave_up",
        }
    }
}

/// One queue's depth and how long its oldest item has waited.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Queue {
    /// Items waiting.
    pub waiting: u64,
    /// Seconds the oldest waiting item has been due (0 when none is).
    pub oldest_seconds: f64,
}

/// The store's state, as a scrape shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Backlog {
    /// Requests per status name, every status present.
    pub requests_by_status: Vec<(&'static str, u64)>,
    /// Outbox events not yet turned into deliveries and notices.
    pub outbox: Queue,
    /// Webhook and callback deliveries still to be made.
    pub deliveries: Queue,
    /// Emails and Slack messages still to be sent.
    pub notices: Queue,
}

/// Reads the state operators watch.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OperationsStore: Send + Sync {
    /// Answers when the database can be reached and used.
    async fn ping(&self) -> Result<(), StoreError>;
    /// Queue depths and ages at `now`.
    async fn backlog(&self, now: DateTime<Utc>) -> Result<Backlog, StoreError>;
}

/// Counts what happens, for `/metrics`. Calls must be cheap and never
/// fail: they run on every request and in every worker.
pub trait Meter: Send + Sync {
    /// One HTTP call answered: its route pattern, method, status, duration.
    fn http_request(&self, route: &str, method: &str, status: u16, seconds: f64);
    /// One webhook or callback delivery attempt.
    fn delivery_attempt(&self, result: AttemptResult);
    /// One email or Slack attempt, by channel name.
    fn notice_attempt(&self, channel: &str, result: AttemptResult);
    /// A request timed out this many seconds after its deadline.
    fn timeout_lag(&self, seconds: f64);
    /// A database connection was waited for this long.
    fn pool_wait(&self, seconds: f64);
    /// Everything counted so far, and `backlog`, in Prometheus' text format.
    fn render(&self, backlog: &Backlog) -> String;
}

/// A meter that counts nothing: for tests and tools that serve no metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMeter;

impl Meter for NoMeter {
    fn http_request(&self, _: &str, _: &str, _: u16, _: f64) {}
    fn delivery_attempt(&self, _: AttemptResult) {}
    fn notice_attempt(&self, _: &str, _: AttemptResult) {}
    fn timeout_lag(&self, _: f64) {}
    fn pool_wait(&self, _: f64) {}
    fn render(&self, _: &Backlog) -> String {
        String::new()
    }
}
