//! Safe retries of create calls: the same `Idempotency-Key` with the same
//! body answers the first outcome again; with another body, 422; while the
//! first call still runs, 409. Records live in the store for 24 hours, so
//! they hold across restarts and instances.

use chrono::{DateTime, Duration, Utc};
use reviewloop_domain::{ApiKeyId, ObjectId};
use reviewloop_ports::{IdempotencyBegin, StoreError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{use_case_error, IdempotencyRule};

use_case_error! {
    /// Why an `Idempotency-Key` could not be taken up
    /// ([`IdempotencyService::begin`]).
    pub enum IdempotencyError {
        Rule(IdempotencyRule),
        Store(StoreError),
    }
}
use crate::ports::IdempotencyPorts;
use crate::principal::Principal;

/// How long an outcome is replayed.
const KEEP_HOURS: i64 = 24;
/// A call still "running" after this long died with its process (a
/// create takes milliseconds; the store gives up on a statement within
/// seconds), so a retry after a crash takes over this soon. Taking over
/// from a call that is in fact still running creates nothing twice: both
/// make the resource under the same id.
pub const STALE_SECONDS: i64 = 10;
/// When a retry of a call still running should come back (`Retry-After`).
pub const IN_PROGRESS_RETRY_AFTER: i64 = 2;
const MAX_KEY_LEN: usize = 255;

/// What the caller should do with an idempotent call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idempotent {
    /// Run the call, then report its outcome with the ticket.
    Run(IdempotencyTicket),
    /// Answer this first outcome again, without running anything.
    Replay {
        /// HTTP status of the first answer.
        status: u16,
        /// Body of the first answer.
        body: String,
    },
}

/// A claimed idempotency key, to finish or abandon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyTicket {
    api_key: ApiKeyId,
    key: String,
    since: DateTime<Utc>,
}

impl IdempotencyTicket {
    /// The id the resource created under this key takes. It is the same
    /// for every attempt with the key, so an attempt that takes over from
    /// one that died after creating the resource finds it (the insert
    /// collides) instead of creating a second one.
    pub fn resource_id(&self) -> ObjectId {
        let digest = Sha256::new()
            .chain_update(self.api_key.to_string().as_bytes())
            .chain_update([0])
            .chain_update(self.key.as_bytes())
            .finalize();
        let mut random = [0u8; 8];
        random.copy_from_slice(&digest[..8]);
        ObjectId::from_parts(self.since.timestamp(), random)
    }
}

/// Idempotency of create calls.
#[derive(Clone)]
pub struct IdempotencyService {
    ports: IdempotencyPorts,
}

/// Hex SHA-256 of the operation and the body in canonical form (object
/// keys sorted, no white space), so formatting does not make a body "different".
fn fingerprint(operation: &str, body: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(operation.as_bytes());
    hasher.update([0]);
    hasher.update(body.to_string().as_bytes());
    hex::encode(hasher.finalize())
}

impl IdempotencyService {
    /// A service over `ports`.
    pub fn new(ports: IdempotencyPorts) -> Self {
        Self { ports }
    }

    /// Claims `key` for `operation` (method and path) with `body`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn begin(
        &self,
        caller: &Principal,
        key: &str,
        operation: &str,
        body: &Value,
    ) -> Result<Idempotent, IdempotencyError> {
        if key.is_empty() || key.chars().count() > MAX_KEY_LEN {
            return Err(IdempotencyRule::BadKey { max: MAX_KEY_LEN }.into());
        }
        // Only programs retry with keys; a person's session has no API key
        // to file the record under.
        let api_key = caller.api_key_id.ok_or(IdempotencyRule::NeedsApiKey)?;
        let now = self.ports.clock.now();
        let fingerprint = fingerprint(operation, body);
        let begin = |fp: String| {
            let store = self.ports.idempotency.clone();
            let key = key.to_owned();
            async move {
                store
                    .begin(
                        &api_key,
                        &key,
                        &fp,
                        now,
                        now - Duration::hours(KEEP_HOURS),
                        now - Duration::seconds(STALE_SECONDS),
                    )
                    .await
            }
        };
        let outcome = match begin(fingerprint.clone()).await {
            // Two first calls raced to insert the record: the other one won.
            Err(StoreError::Conflict(_)) => begin(fingerprint).await?,
            other => other?,
        };
        match outcome {
            IdempotencyBegin::Started { since } => Ok(Idempotent::Run(IdempotencyTicket {
                api_key,
                key: key.to_owned(),
                since,
            })),
            IdempotencyBegin::Replay { status, body } => Ok(Idempotent::Replay { status, body }),
            IdempotencyBegin::Mismatch => Err(IdempotencyRule::Reused.into()),
            IdempotencyBegin::InProgress => Err(IdempotencyRule::InProgress.into()),
        }
    }

    /// Records the outcome of the call; server errors are not kept, so
    /// that a retry runs the call again.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn finish(
        &self,
        ticket: IdempotencyTicket,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        if status >= 500 {
            self.ports
                .idempotency
                .abandon(&ticket.api_key, &ticket.key)
                .await?;
        } else {
            self.ports
                .idempotency
                .finish(&ticket.api_key, &ticket.key, status, body)
                .await?;
        }
        Ok(())
    }

    /// Deletes records older than they are kept; returns how many.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn purge_expired(&self) -> Result<u64, StoreError> {
        let before = self.ports.clock.now() - Duration::hours(KEEP_HOURS);
        self.ports.idempotency.purge(before).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Kit;
    use serde_json::json;

    #[test]
    fn the_fingerprint_ignores_formatting_but_not_content() {
        let a: Value = serde_json::from_str(r#"{"name": "x",  "icon": "y"}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"icon":"y","name":"x"}"#).unwrap();
        assert_eq!(
            fingerprint("POST /v1/loops", &a),
            fingerprint("POST /v1/loops", &b)
        );
        assert_ne!(
            fingerprint("POST /v1/loops", &a),
            fingerprint("POST /v1/loops", &json!({"name": "z"}))
        );
        assert_ne!(
            fingerprint("POST /v1/loops", &a),
            fingerprint("POST /v1/requests", &a)
        );
    }

    #[tokio::test]
    async fn outcomes_map_to_run_replay_422_and_409() {
        let mut kit = Kit::new();
        let mut answers = vec![
            IdempotencyBegin::InProgress,
            IdempotencyBegin::Mismatch,
            IdempotencyBegin::Replay {
                status: 201,
                body: "{}".into(),
            },
            IdempotencyBegin::Started { since: kit.now },
        ];
        kit.idempotency()
            .expect_begin()
            .times(4)
            .returning(move |_, _, _, _, _, _| {
                Ok(answers.pop().unwrap_or(IdempotencyBegin::InProgress))
            });
        let caller = kit.principal(1);
        let service = IdempotencyService::new(kit.ports());
        let body = json!({});
        assert!(matches!(
            service.begin(&caller, "k", "op", &body).await,
            Ok(Idempotent::Run(_))
        ));
        assert_eq!(
            service.begin(&caller, "k", "op", &body).await.unwrap(),
            Idempotent::Replay {
                status: 201,
                body: "{}".into()
            }
        );
        assert!(matches!(
            service.begin(&caller, "k", "op", &body).await,
            Err(IdempotencyError::Rule(IdempotencyRule::Reused))
        ));
        assert!(matches!(
            service.begin(&caller, "k", "op", &body).await,
            Err(IdempotencyError::Rule(IdempotencyRule::InProgress))
        ));
    }

    #[test]
    fn resource_ids_are_the_same_for_every_attempt_with_a_key() {
        let kit = Kit::new();
        let ticket = |api_key: u8, key: &str| IdempotencyTicket {
            api_key: reviewloop_domain::ApiKeyId::new(kit.oid(api_key)),
            key: key.into(),
            since: kit.now,
        };
        assert_eq!(ticket(1, "k").resource_id(), ticket(1, "k").resource_id());
        assert_ne!(ticket(1, "k").resource_id(), ticket(1, "j").resource_id());
        assert_ne!(ticket(1, "k").resource_id(), ticket(2, "k").resource_id());
        assert_eq!(
            i64::from(ticket(1, "k").resource_id().unix_seconds()),
            kit.now.timestamp()
        );
    }

    #[tokio::test]
    async fn keys_longer_than_255_are_refused() {
        let kit = Kit::new();
        let caller = kit.principal(1);
        let service = IdempotencyService::new(kit.ports());
        for key in [String::new(), "k".repeat(256)] {
            assert!(matches!(
                service.begin(&caller, &key, "op", &json!({})).await,
                Err(IdempotencyError::Rule(IdempotencyRule::BadKey { .. }))
            ));
        }
    }

    #[tokio::test]
    async fn server_errors_are_forgotten_other_outcomes_kept() {
        let mut kit = Kit::new();
        kit.idempotency()
            .expect_abandon()
            .times(1)
            .returning(|_, _| Ok(()));
        kit.idempotency()
            .expect_finish()
            .withf(|_, k, status, body| k == "k" && *status == 404 && body == "{}")
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        let ticket = IdempotencyTicket {
            api_key: reviewloop_domain::ApiKeyId::new(kit.oid(1)),
            key: "k".into(),
            since: kit.now,
        };
        let service = IdempotencyService::new(kit.ports());
        service.finish(ticket.clone(), 503, "{}").await.unwrap();
        service.finish(ticket, 404, "{}").await.unwrap();
    }
}
