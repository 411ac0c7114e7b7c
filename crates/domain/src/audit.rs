//! The audit chain: each account's log of every change to its loops and
//! requests, where each entry holds the SHA-256 of the one before it. An
//! entry changed, removed or inserted behind the service's back breaks the
//! chain at that entry, and [`verify`] names it.
//!
//! What a chain cannot show is a rewrite of everything from the forged
//! entry to the end by someone who knows the format; the hash of the last
//! entry (the head, which `reviewloop audit verify` prints) kept elsewhere
//! catches that.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::id::{LoopId, RequestId, UserId};
use crate::receipt::{canonical_json, sha256_hex};

/// The `prev_hash` of an account's first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One entry of an account's audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    /// The account whose log it is.
    pub account_id: UserId,
    /// Its place in the log: 1, 2, 3, ... with no gaps.
    pub seq: i64,
    /// When the change happened.
    pub at: DateTime<Utc>,
    /// What happened: an event type (`request.completed`) or a change that
    /// has no event (`request.changed`, `loop.created`, ...).
    pub action: String,
    /// The loop concerned.
    pub loop_id: Option<LoopId>,
    /// The request concerned.
    pub request_id: Option<RequestId>,
    /// The facts of the change worth keeping (status, answer, actor, ...).
    pub data: Value,
    /// The hash of the entry before (`GENESIS` for the first).
    pub prev_hash: String,
    /// The SHA-256 of this entry's canonical JSON, `prev_hash` included.
    pub hash: String,
}

/// A change about to be logged, before it has a place in the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    /// The account whose log gets it.
    pub account_id: UserId,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// What happened.
    pub action: String,
    /// The loop concerned.
    pub loop_id: Option<LoopId>,
    /// The request concerned.
    pub request_id: Option<RequestId>,
    /// Its facts.
    pub data: Value,
}

impl AuditRecord {
    /// The log entry of an event: its type is the action, and of its
    /// payload the facts that say what was decided and by whom are kept
    /// (the whole payload stays in the outbox while it is retained).
    pub fn of_event(event: &crate::Event) -> Self {
        let f = &event.facts;
        let mut data = serde_json::Map::new();
        let mut keep = |name: &str, value: Option<Value>| {
            if let Some(value) = value {
                data.insert(name.to_owned(), value);
            }
        };
        keep("status", f.status.map(|s| json!(s.as_str())));
        keep("response_data", f.response_data.clone());
        keep(
            "response_comment",
            f.response_comment.as_ref().map(|c| json!(c)),
        );
        keep("response_by", f.response_by.map(|id| json!(id)));
        keep("claimed_by", f.claimed_by.map(|id| json!(id)));
        keep(
            "decided_by_rule",
            f.decided_by_rule.as_ref().map(|r| json!(r)),
        );
        keep("escalated_at", f.escalated_at.map(|at| json!(at)));
        keep("reviewer", f.reviewer.map(|id| json!(id)));
        keep("member", f.member.map(|(id, _)| json!(id)));
        keep("member_status", f.member.map(|(_, s)| json!(s.as_str())));
        keep("review_status", f.review_status.map(|s| json!(s.as_str())));
        data.insert("event_id".into(), json!(event.id));
        Self {
            account_id: event.account_id,
            at: event.created_at,
            action: event.event_type.as_str().to_owned(),
            loop_id: event.loop_id,
            request_id: event.request_id,
            data: Value::Object(data),
        }
    }

    /// The log entry of a change to a request that emits no event (a
    /// release, an edit, feedback): its state after the change.
    pub fn of_request_change(request: &crate::ReviewRequest) -> Self {
        Self {
            account_id: request.creator_id,
            at: request.updated_at,
            action: "request.changed".into(),
            loop_id: Some(request.loop_id),
            request_id: Some(request.id),
            // What an edit may change that decides the outcome (the default
            // answer and when it stands), besides where the request is.
            data: json!({
                "status": request.status.as_str(),
                "claimed_by": request.claimed_by,
                "priority": request.priority.as_str(),
                "timeout_at": request.timeout_at,
                "default_response": request.default_response,
                "request_text_sha256": sha256_hex(request.request_text.as_bytes()),
                "feedback_rating": request.feedback.as_ref().and_then(|f| f.rating),
                "version": request.version + 1,
            }),
        }
    }

    /// The log entry of a change to a loop that emits no event.
    pub fn of_loop_change(
        account_id: UserId,
        loop_id: LoopId,
        action: &str,
        at: DateTime<Utc>,
        data: Value,
    ) -> Self {
        Self {
            account_id,
            at,
            action: action.to_owned(),
            loop_id: Some(loop_id),
            request_id: None,
            data,
        }
    }
}

impl AuditEntry {
    /// `record` as the entry after `previous` (the account's last entry,
    /// `None` when its log is empty).
    pub fn after(previous: Option<&AuditEntry>, record: AuditRecord) -> Self {
        let mut entry = Self {
            account_id: record.account_id,
            seq: previous.map_or(1, |p| p.seq + 1),
            at: record.at,
            action: record.action,
            loop_id: record.loop_id,
            request_id: record.request_id,
            data: record.data,
            prev_hash: previous.map_or_else(|| GENESIS.to_owned(), |p| p.hash.clone()),
            hash: String::new(),
        };
        entry.hash = entry.computed_hash();
        entry
    }

    /// The hash this entry's content gives: what `hash` must be.
    pub(crate) fn computed_hash(&self) -> String {
        let content = json!({
            "account_id": self.account_id,
            "seq": self.seq,
            "at": self.at,
            "action": self.action,
            "loop_id": self.loop_id,
            "request_id": self.request_id,
            "data": self.data,
            "prev_hash": self.prev_hash,
        });
        sha256_hex(canonical_json(&content).as_bytes())
    }
}

/// Where a chain stops fitting together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainBreak {
    /// The entry's content does not give its hash: it was changed.
    #[error("entry {seq} was changed: its content does not match its hash")]
    Changed {
        /// The entry.
        seq: i64,
    },
    /// The entry is intact, but the one before it is not the one it was
    /// written after: that one was changed and its hash made to fit.
    #[error("entry {seq} was changed: entry {next} was written after a different entry {seq}")]
    Replaced {
        /// The replaced entry.
        seq: i64,
        /// The entry that names the original.
        next: i64,
    },
    /// An entry is gone: the numbers jump, or the entries after it were
    /// renumbered to close the gap.
    #[error("entry {seq} was removed")]
    Removed {
        /// The removed entry's number.
        seq: i64,
    },
    /// An entry the service never wrote: a number that appears twice, or
    /// an entry put in the middle with the ones after it renumbered.
    #[error("entry {seq} was inserted")]
    Inserted {
        /// The inserted entry's number.
        seq: i64,
    },
}

impl ChainBreak {
    /// The number of the entry at fault.
    pub fn seq(&self) -> i64 {
        match self {
            Self::Changed { seq }
            | Self::Replaced { seq, .. }
            | Self::Removed { seq }
            | Self::Inserted { seq } => *seq,
        }
    }
}

/// Whether `entry` would be intact had it number `seq`.
fn intact_as(entry: &AuditEntry, seq: i64) -> bool {
    let mut moved = entry.clone();
    moved.seq = seq;
    moved.computed_hash() == entry.hash
}

/// Checks a log given in order (by `seq`); returns how many entries fit,
/// or the first place the chain breaks.
pub fn verify_chain(entries: &[AuditEntry]) -> Result<u64, ChainBreak> {
    let mut previous: Option<&AuditEntry> = None;
    let mut count = 0;
    for (i, entry) in entries.iter().enumerate() {
        let expected_seq = previous.map_or(1, |p| p.seq + 1);
        let expected_link = previous.map_or(GENESIS, |p| p.hash.as_str());
        if entry.seq < expected_seq {
            return Err(ChainBreak::Inserted { seq: entry.seq });
        }
        if entry.seq > expected_seq {
            return Err(ChainBreak::Removed { seq: expected_seq });
        }
        if entry.computed_hash() != entry.hash {
            // Entries renumbered to make room for, or to close the gap of,
            // another are intact under their old number.
            let next_moved_up = entries.get(i + 1).is_some_and(|next| {
                intact_as(next, next.seq - 1) && next.prev_hash == expected_link
            });
            return Err(if next_moved_up {
                ChainBreak::Inserted { seq: entry.seq }
            } else if intact_as(entry, entry.seq + 1) {
                ChainBreak::Removed { seq: entry.seq }
            } else if intact_as(entry, entry.seq - 1) {
                ChainBreak::Inserted { seq: entry.seq - 1 }
            } else {
                ChainBreak::Changed { seq: entry.seq }
            });
        }
        if entry.prev_hash != expected_link {
            // This entry is as written, so its link is the original one:
            // the entry before it is what changed.
            return Err(match previous {
                Some(p) => ChainBreak::Replaced {
                    seq: p.seq,
                    next: entry.seq,
                },
                None => ChainBreak::Changed { seq: entry.seq },
            });
        }
        previous = Some(entry);
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests;
