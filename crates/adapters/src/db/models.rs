//! Rows as Diesel reads and writes them, and their conversion to and from
//! the domain's entities.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use reviewloop_domain::{
    AccountStatus, Answer, ApiKey, ApiKeyRecord, AppliedRule, BroadcastEntry, ContentType, Email,
    Escalation, Feedback, Member, MemberRecord, MemberStatus, NotifyLevel, Permission, Plan,
    Platform, Priority, ProcessingType, QuestionKey, Quorum, Receipt, RequestConfig, RequestRecord,
    RequestStatus, ResponseType, ReviewRequest, TestAnswer, User, UserRecord,
};
use serde_json::{json, Value};

use super::convert::{
    corrupt, from_db_time, from_json_opt, from_json_text, parse, parse_opt, to_db_time,
    to_json_text,
};
use super::schema::{api_keys, loop_members, loops, request_broadcasts, requests, users};
use super::DbError;

fn email(value: &str) -> Result<Email, DbError> {
    Email::parse(value).map_err(|_| corrupt("email", value))
}

fn opt_time(t: Option<NaiveDateTime>) -> Option<chrono::DateTime<chrono::Utc>> {
    t.map(from_db_time)
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = users, treat_none_as_default_value = false)]
pub(crate) struct UserRow {
    pub id: String,
    pub email: String,
    pub status: String,
    pub signing_secret: String,
    pub created_at: NaiveDateTime,
}

impl UserRow {
    pub fn from_domain(user: &User) -> Self {
        Self {
            id: user.id.to_string(),
            email: user.email.to_string(),
            status: user.status.as_str().to_owned(),
            signing_secret: user.signing_secret.clone(),
            created_at: to_db_time(user.created_at),
        }
    }

    pub fn into_domain(self) -> Result<User, DbError> {
        Ok(User::restore(UserRecord {
            id: parse("user id", &self.id)?,
            email: email(&self.email)?,
            status: AccountStatus::parse(&self.status)
                .ok_or_else(|| corrupt("account status", &self.status))?,
            signing_secret: self.signing_secret,
            created_at: from_db_time(self.created_at),
        }))
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, treat_none_as_default_value = false)]
pub(crate) struct ApiKeyRow {
    pub id: String,
    pub user_id: String,
    pub name: Option<String>,
    pub key_hash: String,
    pub prefix: String,
    pub permissions: String,
    pub rate_limit: i64,
    pub created_at: NaiveDateTime,
    pub revoked_at: Option<NaiveDateTime>,
    pub plan: String,
    pub test: bool,
}

impl ApiKeyRow {
    pub fn from_domain(key: &ApiKey) -> Self {
        Self {
            id: key.id.to_string(),
            user_id: key.user_id.to_string(),
            name: key.name.clone(),
            key_hash: key.key_hash.clone(),
            prefix: key.prefix.clone(),
            permissions: Permission::join(&key.permissions),
            rate_limit: i64::from(key.rate_limit),
            created_at: to_db_time(key.created_at),
            revoked_at: key.revoked_at.map(to_db_time),
            plan: key.plan.as_str().to_owned(),
            test: key.test,
        }
    }

    pub fn into_domain(self) -> Result<ApiKey, DbError> {
        Ok(ApiKey::restore(ApiKeyRecord {
            id: parse("api key id", &self.id)?,
            user_id: parse("user id", &self.user_id)?,
            name: self.name,
            permissions: Permission::parse_list(&self.permissions)
                .map_err(|_| corrupt("permissions", &self.permissions))?,
            rate_limit: u32::try_from(self.rate_limit)
                .map_err(|_| corrupt("rate limit", &self.rate_limit.to_string()))?,
            plan: Plan::parse(&self.plan).map_err(|_| corrupt("plan", &self.plan))?,
            test: self.test,
            key_hash: self.key_hash,
            prefix: self.prefix,
            created_at: from_db_time(self.created_at),
            revoked_at: opt_time(self.revoked_at),
        }))
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = loops, treat_none_as_default_value = false)]
pub(crate) struct LoopRow {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub icon: String,
    pub creator_id: String,
    pub invite_code: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub slack_webhook_url: Option<String>,
    pub reminders: bool,
    /// `{"quorum": {...}}`: what decides the loop's new requests; NULL for
    /// the first answer.
    pub policy: Option<String>,
    /// `{"bot_token", "signing_secret", "channel"}`; NULL for none.
    pub slack_app: Option<String>,
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = loop_members,
    treat_none_as_null = true,
    treat_none_as_default_value = false
)]
pub(crate) struct MemberRow {
    pub loop_id: String,
    pub user_id: String,
    pub email: String,
    pub status: String,
    pub invited_at: NaiveDateTime,
    pub joined_at: Option<NaiveDateTime>,
    pub removed_at: Option<NaiveDateTime>,
    pub notify: String,
}

impl MemberRow {
    pub fn from_domain(m: &Member) -> Self {
        Self {
            loop_id: m.loop_id.to_string(),
            user_id: m.user_id.to_string(),
            email: m.email.to_string(),
            status: m.status.as_str().to_owned(),
            invited_at: to_db_time(m.invited_at),
            joined_at: m.joined_at.map(to_db_time),
            removed_at: m.removed_at.map(to_db_time),
            notify: m.notify.as_str().to_owned(),
        }
    }

    pub fn into_domain(self) -> Result<Member, DbError> {
        Ok(Member::restore(MemberRecord {
            loop_id: parse("loop id", &self.loop_id)?,
            user_id: parse("user id", &self.user_id)?,
            email: email(&self.email)?,
            status: MemberStatus::parse(&self.status)
                .ok_or_else(|| corrupt("member status", &self.status))?,
            invited_at: from_db_time(self.invited_at),
            joined_at: opt_time(self.joined_at),
            removed_at: opt_time(self.removed_at),
            notify: NotifyLevel::parse(&self.notify)
                .map_err(|_| corrupt("notification preference", &self.notify))?,
        }))
    }
}

/// Also read as JSON, where a request is read in one statement with its
/// entries aggregated (PostgreSQL's `json_agg` of the rows).
#[derive(Queryable, Selectable, Insertable, serde::Deserialize)]
#[diesel(table_name = request_broadcasts, treat_none_as_default_value = false)]
pub(crate) struct BroadcastRow {
    pub request_id: String,
    pub user_id: String,
    pub position: i32,
    pub email: String,
    pub role: String,
    pub notification_sent: bool,
    pub notification_error: Option<String>,
    /// The reviewer's answer to a quorum request, as JSON.
    pub answer: Option<String>,
    pub answered_at: Option<NaiveDateTime>,
    /// What the reviewer wrote with that answer.
    pub comment: Option<String>,
}

impl BroadcastRow {
    pub fn from_domain(request: &ReviewRequest) -> Vec<Self> {
        request
            .broadcasted_to
            .iter()
            .enumerate()
            .map(|(i, b)| Self {
                request_id: request.id.to_string(),
                user_id: b.user_id.to_string(),
                position: i32::try_from(i).unwrap_or(i32::MAX),
                email: b.email.to_string(),
                role: b.role.clone(),
                notification_sent: b.notification_sent,
                notification_error: b.notification_error.clone(),
                answer: b.answer.as_ref().map(|a| to_json_text(&a.response_data)),
                answered_at: b.answer.as_ref().map(|a| to_db_time(a.response_at)),
                comment: b.answer.as_ref().and_then(|a| a.comment.clone()),
            })
            .collect()
    }

    pub fn into_domain(self) -> Result<BroadcastEntry, DbError> {
        Ok(BroadcastEntry {
            user_id: parse("user id", &self.user_id)?,
            email: email(&self.email)?,
            role: self.role,
            notification_sent: self.notification_sent,
            notification_error: self.notification_error,
            answer: match (self.answer, self.answered_at) {
                (Some(answer), Some(at)) => Some(Answer {
                    response_data: from_json_text("answer", &answer)?,
                    response_at: from_db_time(at),
                    comment: self.comment,
                }),
                _ => None,
            },
        })
    }
}

/// A request's row. A change writes only the columns it changed
/// ([`RequestDiff`]).
#[derive(Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = requests, treat_none_as_default_value = false)]
pub(crate) struct RequestRow {
    pub id: String,
    pub loop_id: String,
    pub creator_id: String,
    pub api_key_id: Option<String>,
    pub processing_type: String,
    pub content_type: String,
    pub priority: String,
    pub priority_rank: i32,
    pub request_text: String,
    pub image_url: Option<String>,
    pub context: Option<String>,
    pub platform: String,
    pub platform_version: Option<String>,
    pub response_type: String,
    pub response_config: String,
    pub default_response: Option<String>,
    pub timeout_at: NaiveDateTime,
    pub callback_url: Option<String>,
    pub metadata: Option<String>,
    pub broadcasted_at: Option<NaiveDateTime>,
    pub status: String,
    pub claimed_by: Option<String>,
    pub claimed_at: Option<NaiveDateTime>,
    pub response_by: Option<String>,
    pub response_at: Option<NaiveDateTime>,
    pub response_data: Option<String>,
    pub response_time_seconds: Option<f64>,
    pub cancelled_at: Option<NaiveDateTime>,
    pub feedback: Option<String>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// Set by the store from the version a change was read at.
    pub version: i64,
    /// Written from the domain's rule, so the reminder pass finds due
    /// requests by index.
    pub remind_at: Option<NaiveDateTime>,
    /// Set only by the reminder pass, which never rewrites the request.
    pub reminded_at: Option<NaiveDateTime>,
    /// A JSON array of texts; NULL for none.
    pub tags: Option<String>,
    /// `{"key_id", "signed", "signature"}`; NULL until there is a decision.
    pub receipt: Option<String>,
    /// `{"count", "rule", "exclude_requester"}`; NULL when one answer decides.
    pub quorum: Option<String>,
    /// `{"after_seconds", "to_loop_id", "raise_priority"}`; NULL for none.
    pub escalation: Option<String>,
    /// Written from the domain's rule (NULL once escalated or ended), so
    /// the escalation pass finds due requests by index.
    pub escalate_at: Option<NaiveDateTime>,
    pub escalated_at: Option<NaiveDateTime>,
    /// The loop whose active members it reached by escalation.
    pub escalated_to: Option<String>,
    /// A JSON list of `{"loop_id", "rule_id", "then"}`; NULL for none.
    pub applied_rules: Option<String>,
    pub test: bool,
    /// `{"response", "at"}`: a test request's automatic answer.
    pub test_answer: Option<String>,
    /// Written from the domain's rule (NULL for live requests and once a
    /// test request ended), so the test sweep finds due ones by index.
    pub test_due_at: Option<NaiveDateTime>,
    /// What the reviewer who decided it wrote with the answer.
    pub response_comment: Option<String>,
    /// What makes another request the same question.
    pub coalesce_key: Option<String>,
    /// The key while the request takes others in, else NULL: the unique
    /// index on it keeps one such request per key, account and loop.
    pub coalesce_slot: Option<String>,
    /// The request it joined.
    pub coalesced_into: Option<String>,
    /// The request whose answer it took.
    pub reused_from: Option<String>,
    pub reassign_after_seconds: Option<i64>,
    pub offered_at: Option<NaiveDateTime>,
    /// Written from the domain's rule, so the reassignment pass finds due
    /// requests by index.
    pub reassign_at: Option<NaiveDateTime>,
}

/// `RequestDiff`: the columns of a request's row that may change after
/// it is created, each `None` (left as it is) unless a change set it
/// differently. SQLite updates an index whenever an `UPDATE` assigns one of
/// its columns, even to the value it had: writing the whole row rewrote
/// every index of `requests` (and checked its loop's foreign key) on every
/// claim, answer and timeout.
macro_rules! request_diff {
    ($($column:ident: $type:ty,)*) => {
        /// The columns a change set differently; see `request_diff!`.
        #[derive(AsChangeset)]
        #[diesel(table_name = requests)]
        pub(crate) struct RequestDiff {
            $($column: Option<$type>,)*
        }

        impl RequestDiff {
            /// What `new` sets differently from `stored`.
            pub fn between(stored: &RequestRow, new: &RequestRow) -> Self {
                // Names every field of the row: a column added to
                // `RequestRow` but not here stops the build instead of
                // going unwritten.
                let RequestRow { id: _, version: _, reminded_at: _, $($column: _,)* } = new;
                Self {
                    $($column: (stored.$column != new.$column).then(|| new.$column.clone()),)*
                }
            }

            /// The columns a change may write, by name.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($column)),*];

            /// `new`'s id, the version it was read at and every column a
            /// change may write, as one JSON object of a set-based write.
            pub fn json_of(new: &RequestRow) -> Value {
                use super::convert::JsonColumn;
                let mut object = serde_json::Map::new();
                object.insert("id".into(), new.id.to_json_column());
                object.insert("version".into(), new.version.to_json_column());
                $(object.insert(stringify!($column).into(), new.$column.to_json_column());)*
                Value::Object(object)
            }
        }
    };
}

// Every column but the id, the version (set by the store) and
// `reminded_at` (the reminder pass's own).
request_diff! {
    loop_id: String,
    creator_id: String,
    api_key_id: Option<String>,
    processing_type: String,
    content_type: String,
    priority: String,
    priority_rank: i32,
    request_text: String,
    image_url: Option<String>,
    context: Option<String>,
    platform: String,
    platform_version: Option<String>,
    response_type: String,
    response_config: String,
    default_response: Option<String>,
    timeout_at: NaiveDateTime,
    callback_url: Option<String>,
    metadata: Option<String>,
    broadcasted_at: Option<NaiveDateTime>,
    status: String,
    claimed_by: Option<String>,
    claimed_at: Option<NaiveDateTime>,
    response_by: Option<String>,
    response_at: Option<NaiveDateTime>,
    response_data: Option<String>,
    response_comment: Option<String>,
    response_time_seconds: Option<f64>,
    cancelled_at: Option<NaiveDateTime>,
    feedback: Option<String>,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
    remind_at: Option<NaiveDateTime>,
    tags: Option<String>,
    receipt: Option<String>,
    quorum: Option<String>,
    escalation: Option<String>,
    escalate_at: Option<NaiveDateTime>,
    escalated_at: Option<NaiveDateTime>,
    escalated_to: Option<String>,
    applied_rules: Option<String>,
    test: bool,
    test_answer: Option<String>,
    test_due_at: Option<NaiveDateTime>,
    coalesce_key: Option<String>,
    coalesce_slot: Option<String>,
    coalesced_into: Option<String>,
    reused_from: Option<String>,
    reassign_after_seconds: Option<i64>,
    offered_at: Option<NaiveDateTime>,
    reassign_at: Option<NaiveDateTime>,
}

fn enum_value<T>(
    what: &str,
    value: &str,
    parse: impl Fn(&str) -> Result<T, reviewloop_domain::ValidationError>,
) -> Result<T, DbError> {
    parse(value).map_err(|_| corrupt(what, value))
}

impl RequestRow {
    pub fn from_domain(r: &ReviewRequest) -> Self {
        Self {
            id: r.id.to_string(),
            loop_id: r.loop_id.to_string(),
            creator_id: r.creator_id.to_string(),
            api_key_id: r.api_key_id.map(|k| k.to_string()),
            processing_type: r.processing_type.as_str().to_owned(),
            content_type: r.content_type.as_str().to_owned(),
            priority: r.priority.as_str().to_owned(),
            priority_rank: r.priority.rank(),
            request_text: r.request_text.clone(),
            image_url: r.image_url.clone(),
            context: r.context.as_ref().map(to_json_text),
            platform: r.platform.as_str().to_owned(),
            platform_version: r.platform_version.clone(),
            response_type: r.response_type.as_str().to_owned(),
            response_config: to_json_text(r.response_config.as_value()),
            default_response: r.default_response.as_ref().map(to_json_text),
            timeout_at: to_db_time(r.timeout_at),
            callback_url: r.callback_url.clone(),
            metadata: r.metadata.as_ref().map(to_json_text),
            broadcasted_at: r.broadcasted_at.map(to_db_time),
            status: r.status.as_str().to_owned(),
            claimed_by: r.claimed_by.map(|u| u.to_string()),
            claimed_at: r.claimed_at.map(to_db_time),
            response_by: r.response_by.map(|u| u.to_string()),
            response_at: r.response_at.map(to_db_time),
            response_data: r.response_data.as_ref().map(to_json_text),
            response_comment: r.response_comment.clone(),
            response_time_seconds: r.response_time_seconds,
            cancelled_at: r.cancelled_at.map(to_db_time),
            feedback: r.feedback.as_ref().map(|f| {
                to_json_text(&json!({
                    "rating": f.rating,
                    "comment": f.comment,
                    "accuracy": f.accuracy,
                    "timeliness": f.timeliness,
                    "helpfulness": f.helpfulness,
                    "would_recommend": f.would_recommend,
                    "follow_up_needed": f.follow_up_needed,
                    "tags": f.tags,
                    "category": f.category,
                    "created_at": f.created_at,
                }))
            }),
            created_at: to_db_time(r.created_at),
            updated_at: to_db_time(r.updated_at),
            version: r.version,
            remind_at: Some(to_db_time(r.remind_at())),
            reminded_at: None,
            tags: (!r.tags.is_empty()).then(|| to_json_text(&json!(r.tags))),
            receipt: r.receipt.as_ref().map(|receipt| {
                to_json_text(&json!({
                    "key_id": receipt.key_id,
                    "signed": receipt.signed,
                    "signature": receipt.signature,
                }))
            }),
            quorum: r.quorum.map(|q| to_json_text(&q.to_value())),
            escalation: r.escalation.map(|e| to_json_text(&e.to_value())),
            escalate_at: r.escalate_at().map(to_db_time),
            escalated_at: r.escalated_at.map(to_db_time),
            escalated_to: r.escalated_to().map(|l| l.to_string()),
            applied_rules: (!r.applied_rules.is_empty()).then(|| {
                to_json_text(&Value::Array(
                    r.applied_rules.iter().map(|a| a.to_value()).collect(),
                ))
            }),
            test: r.test,
            test_answer: r
                .test_answer
                .as_ref()
                .map(|a| to_json_text(&json!({"response": a.response, "at": a.at}))),
            test_due_at: r.test_due_at().map(to_db_time),
            coalesce_key: r.coalesce_key.as_ref().map(|k| k.as_str().to_owned()),
            coalesce_slot: r
                .accepts_followers()
                .then(|| r.coalesce_key.as_ref().map(|k| k.as_str().to_owned()))
                .flatten(),
            coalesced_into: r.coalesced_into.map(|id| id.to_string()),
            reused_from: r.reused_from.map(|id| id.to_string()),
            reassign_after_seconds: r.reassign_after_seconds,
            offered_at: r.offered_at.map(to_db_time),
            reassign_at: r.reassign_at().map(to_db_time),
        }
    }

    pub fn into_domain(
        self,
        broadcasted_to: Vec<BroadcastEntry>,
    ) -> Result<ReviewRequest, DbError> {
        let created_at = from_db_time(self.created_at);
        let timeout_at = from_db_time(self.timeout_at);
        let feedback = match from_json_opt("feedback", self.feedback.as_deref())? {
            // Feedback stored before the longer form lacks its new parts.
            Some(value) => Some(Feedback {
                rating: value["rating"].as_f64(),
                comment: value["comment"].as_str().map(str::to_owned),
                accuracy: value["accuracy"].as_f64(),
                timeliness: value["timeliness"].as_f64(),
                helpfulness: value["helpfulness"].as_f64(),
                would_recommend: value["would_recommend"].as_bool(),
                follow_up_needed: value["follow_up_needed"].as_bool(),
                tags: value["tags"]
                    .as_array()
                    .map(|tags| {
                        tags.iter()
                            .filter_map(|t| t.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                category: value["category"].as_str().map(str::to_owned),
                created_at: serde_json::from_value(value["created_at"].clone())
                    .map_err(|_| corrupt("feedback time", &value.to_string()))?,
            }),
            None => None,
        };
        let response_type = enum_value("response type", &self.response_type, ResponseType::parse)?;
        Ok(ReviewRequest::restore(RequestRecord {
            id: parse("request id", &self.id)?,
            loop_id: parse("loop id", &self.loop_id)?,
            creator_id: parse("user id", &self.creator_id)?,
            api_key_id: parse_opt("api key id", self.api_key_id.as_deref())?,
            processing_type: enum_value(
                "processing type",
                &self.processing_type,
                ProcessingType::parse,
            )?,
            content_type: enum_value("content type", &self.content_type, ContentType::parse)?,
            priority: enum_value("priority", &self.priority, Priority::parse)?,
            request_text: self.request_text,
            image_url: self.image_url,
            context: from_json_opt("context", self.context.as_deref())?,
            platform: enum_value("platform", &self.platform, Platform::parse)?,
            platform_version: self.platform_version,
            response_type,
            // Parsed when an answer first needs it, not on every read.
            response_config: RequestConfig::restore(
                response_type,
                from_json_text("response config", &self.response_config)?,
            ),
            default_response: from_json_opt("default response", self.default_response.as_deref())?,
            timeout_seconds: (timeout_at - created_at).num_seconds(),
            timeout_at,
            callback_url: self.callback_url,
            metadata: from_json_opt("metadata", self.metadata.as_deref())?,
            tags: match from_json_opt("tags", self.tags.as_deref())? {
                Some(value) => serde_json::from_value(value)
                    .map_err(|_| corrupt("tags", self.tags.as_deref().unwrap_or_default()))?,
                None => Vec::new(),
            },
            broadcasted_to,
            broadcasted_at: opt_time(self.broadcasted_at),
            status: enum_value("status", &self.status, RequestStatus::parse)?,
            claimed_by: parse_opt("user id", self.claimed_by.as_deref())?,
            claimed_at: opt_time(self.claimed_at),
            response_by: parse_opt("user id", self.response_by.as_deref())?,
            response_at: opt_time(self.response_at),
            response_data: from_json_opt("response data", self.response_data.as_deref())?,
            response_comment: self.response_comment,
            response_time_seconds: self.response_time_seconds,
            cancelled_at: opt_time(self.cancelled_at),
            feedback,
            receipt: match from_json_opt("receipt", self.receipt.as_deref())? {
                Some(value) => {
                    let part = |name: &str| {
                        value[name].as_str().map(str::to_owned).ok_or_else(|| {
                            corrupt("receipt", self.receipt.as_deref().unwrap_or_default())
                        })
                    };
                    Some(Receipt {
                        key_id: part("key_id")?,
                        signed: part("signed")?,
                        signature: part("signature")?,
                    })
                }
                None => None,
            },
            quorum: quorum_of("quorum", self.quorum.as_deref())?,
            escalation: escalation_of("escalation", self.escalation.as_deref())?,
            escalated_at: self.escalated_at.map(from_db_time),
            applied_rules: match from_json_opt("applied rules", self.applied_rules.as_deref())? {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        AppliedRule::from_value(item)
                            .ok_or_else(|| corrupt("applied rule", &item.to_string()))
                    })
                    .collect::<Result<_, _>>()?,
                None => Vec::new(),
                Some(other) => return Err(corrupt("applied rules", &other.to_string())),
            },
            test: self.test,
            test_answer: match from_json_opt("test answer", self.test_answer.as_deref())? {
                Some(answer) => Some(TestAnswer {
                    response: answer["response"].clone(),
                    at: serde_json::from_value(answer["at"].clone())
                        .map_err(|_| corrupt("test answer", &answer.to_string()))?,
                }),
                None => None,
            },
            coalescing: self.coalesce_slot.is_some(),
            coalesce_key: self.coalesce_key.map(QuestionKey::restore),
            coalesced_into: parse_opt("request id", self.coalesced_into.as_deref())?,
            reused_from: parse_opt("request id", self.reused_from.as_deref())?,
            reassign_after_seconds: self.reassign_after_seconds,
            offered_at: opt_time(self.offered_at),
            created_at,
            updated_at: from_db_time(self.updated_at),
            version: self.version,
        }))
    }
}

/// A stored escalation, from its JSON text (NULL: none).
pub(crate) fn escalation_of(what: &str, text: Option<&str>) -> Result<Option<Escalation>, DbError> {
    let Some(value) = from_json_opt(what, text)? else {
        return Ok(None);
    };
    Escalation::parse(Some(&value), what).map_err(|_| corrupt(what, text.unwrap_or_default()))
}

/// A stored quorum, from its JSON text (NULL: none).
pub(crate) fn quorum_of(what: &str, text: Option<&str>) -> Result<Option<Quorum>, DbError> {
    let Some(value) = from_json_opt(what, text)? else {
        return Ok(None);
    };
    Quorum::parse(Some(&value), None).map_err(|_| corrupt(what, text.unwrap_or_default()))
}
