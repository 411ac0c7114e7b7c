//! What a decision receipt signs about a request.

use serde_json::json;

use super::{RequestStatus, ReviewRequest};
use crate::receipt::{canonical_json, sha256_hex};

impl ReviewRequest {
    /// The statement a receipt signs, as canonical JSON bytes, for a request
    /// that has ended with a decision (completed or timed out); `None` for any
    /// other state. The request text is represented by its SHA-256, so a
    /// receipt can be shown without the text and still be checked against it.
    pub fn receipt_statement(&self) -> Option<Vec<u8>> {
        if !matches!(
            self.status,
            RequestStatus::Completed | RequestStatus::Timeout
        ) {
            return None;
        }
        let mut value = json!({
            "request_id": self.id,
            "loop_id": self.loop_id,
            "status": self.status.as_str(),
            "response_data": self.response_data,
            "response_by": self.response_by,
            "response_at": self.response_at,
            "request_text_sha256": sha256_hex(self.request_text.as_bytes()),
        });
        // Named only when there is one, so receipts made before requests
        // could join or reuse others read as they were signed.
        if let Some(from) = self.reused_from {
            value["reused_from"] = json!(from);
        }
        if let Some(into) = self.coalesced_into {
            value["coalesced_into"] = json!(into);
        }
        Some(canonical_json(&value).into_bytes())
    }
}
