//! The caller's own key and account, the audit log, the receipt keys and
//! the test clock.

use chrono::{DateTime, Utc};
use reviewloop_domain::{ApiKeyId, AuditEntry, LoopId, RequestId, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::schema;

/// Where a key stands against its hourly limit.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RateLimit)]
pub struct RateLimitOut {
    pub limit: u32,
    pub remaining: u32,
    pub reset_at: DateTime<Utc>,
}

/// The alternate surface's allowance.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PlanLimit)]
pub struct PlanLimitOut {
    pub per_minute: u32,
}

/// Who the key belongs to and what it may do.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = KeyCheck)]
pub struct KeyCheckOut<'a> {
    #[schema(value_type = Option<schema::Id>)]
    pub api_key_id: Option<ApiKeyId>,
    #[schema(value_type = schema::Id)]
    pub user_id: UserId,
    pub email: &'a str,
    pub account_status: &'static str,
    #[schema(value_type = Vec<schema::Permission>)]
    pub permissions: Vec<&'static str>,
    pub rate_limit: RateLimitOut,
    #[schema(value_type = schema::Plan)]
    pub plan: &'static str,
    /// A test-mode key: it makes and sees test data only.
    pub test: bool,
    pub plan_rate_limit: PlanLimitOut,
}

/// The secret that signs the account's callbacks.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SigningSecret)]
pub struct SigningSecretOut<'a> {
    /// `whsec_` and the base64 key, as Standard Webhooks write it.
    pub signing_secret: &'a str,
}

/// A plain status.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Status)]
pub struct StatusOut {
    pub status: &'static str,
}

/// One entry of an account's audit log, with every part its hash covers,
/// so a reader can recompute it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AuditEntry)]
pub struct AuditEntryOut<'a> {
    #[schema(value_type = schema::Id)]
    pub account_id: UserId,
    #[schema(minimum = 1)]
    pub seq: i64,
    pub at: DateTime<Utc>,
    /// An event type (`request.completed`) or a change without one
    /// (`request.changed`, `loop.created`, `loop.updated`,
    /// `loop.invite_code_changed`, `loop.member_changed`).
    pub action: &'a str,
    #[schema(value_type = Option<schema::Id>)]
    pub loop_id: Option<LoopId>,
    #[schema(value_type = Option<schema::Id>)]
    pub request_id: Option<RequestId>,
    #[schema(value_type = Object)]
    pub data: &'a Value,
    /// The `hash` of the entry before; 64 zeros for the first.
    pub prev_hash: &'a str,
    /// Lowercase hex SHA-256 of the entry's canonical JSON (keys sorted, no
    /// spaces, as serde_json writes it) without `hash`.
    pub hash: &'a str,
}

impl<'a> AuditEntryOut<'a> {
    /// `entry` as shown.
    pub fn of(entry: &'a AuditEntry) -> Self {
        Self {
            account_id: entry.account_id,
            seq: entry.seq,
            at: entry.at,
            action: &entry.action,
            loop_id: entry.loop_id,
            request_id: entry.request_id,
            data: &entry.data,
            prev_hash: &entry.prev_hash,
            hash: &entry.hash,
        }
    }
}

/// A page of the audit log.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AuditLog)]
pub struct AuditLogOut<'a> {
    pub entries: Vec<AuditEntryOut<'a>>,
    pub total: i64,
    pub limit: u32,
    pub offset: u32,
}

/// A key that signs (or signed) decision receipts.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ReceiptKey)]
pub struct ReceiptKeyOut {
    pub key_id: String,
    /// Always `Ed25519`.
    pub alg: &'static str,
    /// base64url (no padding) of the 32-byte Ed25519 public key.
    pub public_key: String,
    pub created_at: DateTime<Utc>,
    pub retired_at: Option<DateTime<Utc>>,
}

/// Every key that ever signed a receipt.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ReceiptKeys)]
pub struct ReceiptKeysOut {
    pub keys: Vec<ReceiptKeyOut>,
}

/// An account's test clock.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = TestClock)]
pub struct TestClockOut {
    pub now: DateTime<Utc>,
    pub offset_seconds: i64,
    /// Test requests the move answered.
    pub answered: usize,
    /// Test requests the move timed out.
    pub timed_out: usize,
}

/// How far to move a test clock.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ClockAdvance, example = json!({"advance_seconds": 3600}))]
pub struct ClockAdvanceIn {
    #[schema(value_type = i64, minimum = 1, maximum = 31_536_000)]
    pub advance_seconds: Option<Value>,
}
