//! The meter behind `/metrics`: counters and histograms kept in memory with
//! prometheus-client, and the store's backlog set as gauges at each scrape.

use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use reviewloop_ports::{AttemptResult, Backlog, Meter};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChannelLabels {
    channel: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: &'static str,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// Latency buckets from 1 ms to about 16 s.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Counts of one process, rendered in Prometheus' text format.
pub struct PrometheusMeter {
    registry: Mutex<Registry>,
    http_requests: Family<HttpLabels, Counter>,
    http_seconds: Family<RouteLabels, Histogram, fn() -> Histogram>,
    deliveries: Family<OutcomeLabels, Counter>,
    notices: Family<ChannelLabels, Counter>,
    timeout_lag: Histogram,
    pool_wait: Histogram,
    requests: Family<StatusLabels, Gauge>,
    waiting: Family<QueueLabels, Gauge>,
    oldest: Family<QueueLabels, FloatGauge>,
}

impl Default for PrometheusMeter {
    fn default() -> Self {
        Self::new()
    }
}

impl PrometheusMeter {
    /// A meter with every metric registered and at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("reviewloop");
        let http_requests = Family::<HttpLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP calls answered, by route pattern, method and status",
            http_requests.clone(),
        );
        let http_seconds =
            Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency);
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP call, by route pattern and method",
            http_seconds.clone(),
        );
        let deliveries = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "delivery_attempts",
            "Webhook and callback delivery attempts, by outcome",
            deliveries.clone(),
        );
        let notices = Family::<ChannelLabels, Counter>::default();
        registry.register(
            "notification_attempts",
            "Email and Slack sends, by channel and outcome",
            notices.clone(),
        );
        let timeout_lag = Histogram::new(exponential_buckets(0.05, 2.0, 12));
        registry.register(
            "timeout_lag_seconds",
            "How long after its deadline a request was timed out",
            timeout_lag.clone(),
        );
        let pool_wait = latency();
        registry.register(
            "db_pool_wait_seconds",
            "Time spent waiting for a database connection",
            pool_wait.clone(),
        );
        let requests = Family::<StatusLabels, Gauge>::default();
        registry.register(
            "requests",
            "Review requests stored, by status",
            requests.clone(),
        );
        let waiting = Family::<QueueLabels, Gauge>::default();
        registry.register(
            "queue_waiting",
            "Items waiting in the outbox, delivery and notice queues",
            waiting.clone(),
        );
        let oldest = Family::<QueueLabels, FloatGauge>::default();
        registry.register(
            "queue_oldest_seconds",
            "How long the oldest waiting item of each queue has been due",
            oldest.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            http_requests,
            http_seconds,
            deliveries,
            notices,
            timeout_lag,
            pool_wait,
            requests,
            waiting,
            oldest,
        }
    }
}

impl Meter for PrometheusMeter {
    fn http_request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.http_requests
            .get_or_create(&HttpLabels {
                route: route.to_owned(),
                method: method.to_owned(),
                status,
            })
            .inc();
        self.http_seconds
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
                method: method.to_owned(),
            })
            .observe(seconds);
    }

    fn delivery_attempt(&self, result: AttemptResult) {
        self.deliveries
            .get_or_create(&OutcomeLabels {
                outcome: result.as_str(),
            })
            .inc();
    }

    fn notice_attempt(&self, channel: &str, result: AttemptResult) {
        self.notices
            .get_or_create(&ChannelLabels {
                channel: channel.to_owned(),
                outcome: result.as_str(),
            })
            .inc();
    }

    fn timeout_lag(&self, seconds: f64) {
        self.timeout_lag.observe(seconds.max(0.0));
    }

    fn pool_wait(&self, seconds: f64) {
        self.pool_wait.observe(seconds);
    }

    fn render(&self, backlog: &Backlog) -> String {
        for (status, count) in &backlog.requests_by_status {
            self.requests
                .get_or_create(&StatusLabels { status })
                .set(i64::try_from(*count).unwrap_or(i64::MAX));
        }
        for (queue, state) in [
            ("outbox", backlog.outbox),
            ("deliveries", backlog.deliveries),
            ("notices", backlog.notices),
        ] {
            let labels = QueueLabels { queue };
            self.waiting
                .get_or_create(&labels)
                .set(i64::try_from(state.waiting).unwrap_or(i64::MAX));
            self.oldest.get_or_create(&labels).set(state.oldest_seconds);
        }
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reviewloop_ports::Queue;

    #[test]
    fn what_was_counted_is_rendered_with_the_backlog() {
        let meter = PrometheusMeter::new();
        meter.http_request("/v1/requests/{id}", "GET", 200, 0.003);
        meter.http_request("/v1/requests/{id}", "GET", 200, 0.004);
        meter.http_request("/v1/requests/{id}", "GET", 404, 0.002);
        meter.delivery_attempt(AttemptResult::Retrying);
        meter.notice_attempt("email", AttemptResult::Succeeded);
        meter.timeout_lag(0.3);
        let text = meter.render(&Backlog {
            requests_by_status: vec![("pending", 3), ("completed", 1)],
            outbox: Queue {
                waiting: 2,
                oldest_seconds: 1.5,
            },
            ..Backlog::default()
        });
        for line in [
            r#"reviewloop_http_requests_total{route="/v1/requests/{id}",method="GET",status="200"} 2"#,
            r#"reviewloop_http_requests_total{route="/v1/requests/{id}",method="GET",status="404"} 1"#,
            r#"reviewloop_http_request_duration_seconds_count{route="/v1/requests/{id}",method="GET"} 3"#,
            r#"reviewloop_delivery_attempts_total{outcome="retrying"} 1"#,
            r#"reviewloop_notification_attempts_total{channel="email",outcome="succeeded"} 1"#,
            "reviewloop_timeout_lag_seconds_count 1",
            r#"reviewloop_requests{status="pending"} 3"#,
            r#"reviewloop_queue_waiting{queue="outbox"} 2"#,
            r#"reviewloop_queue_oldest_seconds{queue="outbox"} 1.5"#,
            r#"reviewloop_queue_waiting{queue="notices"} 0"#,
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }
}
