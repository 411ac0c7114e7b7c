//! Test mode: an account's own clock, and the test requests it settles.

use chrono::{DateTime, Utc};
use reviewloop_domain::{EventType, Permission, RequestId, RequestStatus};
use reviewloop_ports::StoreError;
use serde_json::Value;

use super::RequestService;
use super::TestClockError;
use crate::error::Denied;
use crate::loops::LoopCache;
use crate::ports::event_id;
use crate::principal::Principal;
use reviewloop_wire::events as wire;

/// The longest single move of a test clock: a year.
const MAX_CLOCK_ADVANCE: i64 = 365 * 24 * 60 * 60;
/// How far a test clock may run ahead in all: ten years.
const MAX_CLOCK_OFFSET: i64 = 10 * 365 * 24 * 60 * 60;
/// Test requests settled per account and pass.
const TEST_BATCH: u32 = 500;

/// An account's test clock: its time, how far it runs ahead of the real
/// one, and what the last move settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestClock {
    /// The account's test time.
    pub now: DateTime<Utc>,
    /// Seconds ahead of the real clock.
    pub offset_seconds: i64,
    /// Test requests answered by the move.
    pub answered: usize,
    /// Test requests timed out by the move.
    pub timed_out: usize,
}

impl RequestService {
    /// The caller's test clock. Test-mode keys only.
    pub async fn test_clock(&self, caller: &Principal) -> Result<TestClock, TestClockError> {
        caller.require(Permission::RequestsRead)?;
        Self::require_test(caller)?;
        let offset = self
            .ports
            .requests
            .test_clock_offset(&caller.user_id)
            .await?;
        Ok(TestClock {
            now: self.ports.clock.now() + chrono::Duration::seconds(offset),
            offset_seconds: offset,
            answered: 0,
            timed_out: 0,
        })
    }

    /// Moves the caller's test clock `advance_seconds` ahead, then settles
    /// at once what fell due: test requests answered or timed out, with
    /// their events, before this returns. Test-mode keys only.
    pub async fn advance_test_clock(
        &self,
        caller: &Principal,
        advance_seconds: Option<Value>,
    ) -> Result<TestClock, TestClockError> {
        caller.require(Permission::RequestsWrite)?;
        Self::require_test(caller)?;
        let seconds = advance_seconds
            .as_ref()
            .and_then(Value::as_i64)
            .filter(|s| (1..=MAX_CLOCK_ADVANCE).contains(s))
            .ok_or_else(|| {
                reviewloop_domain::ValidationError::field(
                    "advance_seconds",
                    format!(
                        "advance_seconds must be a whole number of seconds from 1 to {MAX_CLOCK_ADVANCE}"
                    ),
                )
            })?;
        let before = self
            .ports
            .requests
            .test_clock_offset(&caller.user_id)
            .await?;
        if before.saturating_add(seconds) > MAX_CLOCK_OFFSET {
            return Err(reviewloop_domain::ValidationError::field(
                "advance_seconds",
                format!(
                    "advance_seconds would move the test clock more than {} years ahead of the real one",
                    MAX_CLOCK_OFFSET / (365 * 24 * 60 * 60)
                ),
            )
            .into());
        }
        let now = self.ports.clock.now();
        // What this move will bring due, read before the clock moves: the
        // timeout worker settles test requests too, and one it ends between
        // the move and the settling below was still ended by this move.
        // (Two moves of one account at once may both count one request;
        // beyond the first batch, only what this call settles is counted.)
        let coming_due = self
            .ports
            .requests
            .due_test_requests(
                &caller.user_id,
                now + chrono::Duration::seconds(before.saturating_add(seconds)),
                TEST_BATCH,
            )
            .await?;
        let offset = match self
            .ports
            .requests
            .advance_test_clock(&caller.user_id, seconds, now)
            .await
        {
            // Two first advances raced to make the clock: add to it now.
            Err(StoreError::Conflict(_)) => {
                self.ports
                    .requests
                    .advance_test_clock(&caller.user_id, seconds, now)
                    .await?
            }
            other => other?,
        };
        let mut settled = std::collections::HashMap::new();
        loop {
            let (ended, full) = self.settle_account(&caller.user_id, TEST_BATCH).await?;
            settled.extend(ended);
            if !full {
                break;
            }
        }
        for request in coming_due {
            if settled.contains_key(&request.id) {
                continue;
            }
            if let Some(now) = self.ports.requests.request_by_id(&request.id).await? {
                if matches!(
                    now.status,
                    RequestStatus::Completed | RequestStatus::Timeout
                ) {
                    settled.insert(now.id, now.status);
                }
            }
        }
        let answered = settled
            .values()
            .filter(|s| **s == RequestStatus::Completed)
            .count();
        let timed_out = settled.len() - answered;
        Ok(TestClock {
            now: now + chrono::Duration::seconds(offset),
            offset_seconds: offset,
            answered,
            timed_out,
        })
    }

    fn require_test(caller: &Principal) -> Result<(), Denied> {
        if caller.test {
            Ok(())
        } else {
            Err(Denied::LiveKey)
        }
    }

    /// Answers or times out the open test requests of every account that
    /// fell due on its test clock, up to `batch` per account; returns how
    /// many it ended.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn settle_test_requests(&self, batch: u32) -> Result<usize, StoreError> {
        let mut ended = 0;
        for account in self.ports.requests.accounts_with_open_tests().await? {
            ended += self.settle_account(&account, batch).await?.0.len();
        }
        Ok(ended)
    }

    /// One pass over `account`'s due test requests: the ones it ended, with
    /// how each ended, and whether the pass was full.
    async fn settle_account(
        &self,
        account: &reviewloop_domain::UserId,
        batch: u32,
    ) -> Result<(Vec<(RequestId, RequestStatus)>, bool), StoreError> {
        let now = self.now_for(account, true).await?;
        let due = self
            .ports
            .requests
            .due_test_requests(account, now, batch)
            .await?;
        let full = due.len() >= batch as usize;
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        for mut request in due {
            let kind = if request.answer_as_test(now).is_ok() {
                EventType::RequestCompleted
            } else if request.time_out(now).is_ok() {
                EventType::RequestTimeout
            } else {
                continue;
            };
            loops.load(&*self.ports.loops, request.loop_id).await?;
            let Some(lp) = loops.get(&request.loop_id) else {
                continue;
            };
            let real = self.ports.clock.now();
            let event = wire::request_event(
                event_id(&*self.ports.ids, real),
                kind,
                &request,
                lp,
                None,
                real,
            );
            changes.push((request, vec![event]));
        }
        if changes.is_empty() {
            return Ok((Vec::new(), false));
        }
        let landed = self.ports.requests.update_requests(&changes).await?;
        let ended = self.announce(&changes, &landed);
        for request in &ended {
            self.after_end(request).await;
        }
        Ok((ended.iter().map(|r| (r.id, r.status)).collect(), full))
    }
}
