//! An audit entry as the API and the JSONL export show it.

use reviewloop_domain::AuditEntry;
use serde_json::{json, Value};

/// `entry` with every part its hash covers, so a reader can recompute it.
pub fn audit_entry_json(entry: &AuditEntry) -> Value {
    json!({
        "account_id": entry.account_id,
        "seq": entry.seq,
        "at": entry.at,
        "action": entry.action,
        "loop_id": entry.loop_id,
        "request_id": entry.request_id,
        "data": entry.data,
        "prev_hash": entry.prev_hash,
        "hash": entry.hash,
    })
}
