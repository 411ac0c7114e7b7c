//! What operators ask of a running instance: is it ready to serve, and the
//! figures behind `/metrics`.

use reviewloop_ports::StoreError;

use crate::error::NotReady;
use crate::ports::OperationsPorts;

/// Readiness and metrics.
#[derive(Clone)]
pub struct OperationsService {
    ports: OperationsPorts,
}

impl OperationsService {
    /// A service over `ports`.
    pub fn new(ports: OperationsPorts) -> Self {
        Self { ports }
    }

    /// Whether the instance is stopping (after SIGTERM).
    pub fn is_stopping(&self) -> bool {
        self.ports.changes.is_stopping()
    }

    /// Ready when the database answers (migrations ran before the server
    /// started listening); `Unavailable` otherwise.
    pub async fn ready(&self) -> Result<(), NotReady> {
        // Stopping: say so at once, so a proxy sends the next calls to
        // another instance while this one finishes what it has.
        if self.ports.changes.is_stopping() {
            return Err(NotReady::Stopping);
        }
        self.ports
            .operations
            .ping()
            .await
            .map_err(|e| NotReady::Store(e.to_string()))
    }

    /// Every metric, with the queues as they stand now, in Prometheus'
    /// text format.
    pub async fn metrics(&self) -> Result<String, StoreError> {
        let backlog = self
            .ports
            .operations
            .backlog(self.ports.clock.now())
            .await?;
        Ok(self.ports.meter.render(&backlog))
    }

    /// Counts one answered HTTP call.
    pub fn http_request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.ports
            .meter
            .http_request(route, method, status, seconds);
    }
}

#[cfg(test)]
mod tests {
    use reviewloop_ports::{Backlog, StoreError};

    use super::*;
    use crate::testkit::Kit;

    #[tokio::test]
    async fn ready_only_while_the_database_answers() {
        let mut kit = Kit::new();
        kit.operations()
            .expect_ping()
            .times(1)
            .returning(|| Err(StoreError::Unavailable("connection refused".into())));
        match OperationsService::new(kit.ports()).ready().await {
            Err(e) => {
                assert_eq!(
                    e,
                    NotReady::Store("store unavailable: connection refused".into())
                );
                assert!(matches!(
                    crate::ServiceError::from(e),
                    crate::ServiceError::Unavailable(m) if m == "not ready: store unavailable: connection refused"
                ));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn metrics_read_the_backlog_at_the_scrape() {
        let mut kit = Kit::new();
        let now = kit.now;
        kit.operations()
            .expect_backlog()
            .withf(move |at| *at == now)
            .times(1)
            .returning(|_| Ok(Backlog::default()));
        let text = OperationsService::new(kit.ports()).metrics().await.unwrap();
        assert_eq!(text, "", "the test kit's meter renders nothing");
    }
}
