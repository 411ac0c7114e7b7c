//! The shapes the API reads and writes, as JSON Schema (OpenAPI 3.1
//! dialect). Enumerations are read from the domain's own lists, so a new
//! priority or response type appears here without an edit. The black-box
//! schemathesis test checks every answer of the running binary against
//! these shapes.

use reviewloop_domain::{
    ContentType, EventType, Permission, Plan, Platform, Priority, ProcessingType, RequestStatus,
    ResponseType, ReviewStatus,
};
use serde_json::{json, Map, Value};

fn names<'a>(all: impl IntoIterator<Item = &'a str>) -> Value {
    json!({"type": "string", "enum": all.into_iter().collect::<Vec<_>>()})
}

fn nullable(schema: Value) -> Value {
    json!({"oneOf": [schema, {"type": "null"}]})
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn id() -> Value {
    reference("Id")
}

fn time() -> Value {
    json!({"type": "string", "format": "date-time"})
}

fn text() -> Value {
    json!({"type": "string"})
}

fn object(required: &[&str], properties: Value) -> Value {
    json!({"type": "object", "required": required, "properties": properties})
}

fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// Every named schema of the document.
pub(super) fn components() -> Map<String, Value> {
    let mut all = Map::new();
    let mut put = |name: &str, schema: Value| {
        all.insert(name.to_owned(), schema);
    };
    put(
        "Id",
        json!({
            "type": "string", "pattern": "^[0-9a-f]{24}$",
            "description": "24 lowercase hexadecimal characters, ordered by creation time.",
            "example": "6743a1f09c1e4b2a8d3f5e61",
        }),
    );
    put("Priority", names(Priority::ALL.iter().map(|p| p.as_str())));
    put(
        "ProcessingType",
        names(ProcessingType::ALL.iter().map(|p| p.as_str())),
    );
    put(
        "ContentType",
        names(ContentType::ALL.iter().map(|c| c.as_str())),
    );
    put("Platform", names(Platform::ALL.iter().map(|p| p.as_str())));
    put(
        "RequestStatus",
        names(RequestStatus::ALL.iter().map(|s| s.as_str())),
    );
    put(
        "ResponseType",
        names(ResponseType::ALL.iter().map(|r| r.as_str())),
    );
    put(
        "ReviewStatus",
        names(ReviewStatus::ALL.iter().map(|s| s.as_str())),
    );
    put(
        "EventType",
        names(EventType::ALL.iter().map(|e| e.as_str())),
    );
    envelopes(&mut put);
    loops(&mut put);
    requests(&mut put);
    request_bodies(&mut put);
    alternate(&mut put);
    webhooks(&mut put);
    put(
        "KeyCheck",
        object(
            &[
                "api_key_id",
                "user_id",
                "email",
                "permissions",
                "rate_limit",
            ],
            json!({
                "api_key_id": id(), "user_id": id(), "email": text(),
                "account_status": text(),
                "permissions": array(names(Permission::ALL.iter().map(|p| p.as_str()))),
                "rate_limit": object(&["limit", "remaining", "reset_at"], json!({
                    "limit": {"type": "integer"}, "remaining": {"type": "integer"},
                    "reset_at": time(),
                })),
                "plan": names(Plan::ALL.iter().map(|p| p.as_str())),
                "plan_rate_limit": object(&["per_minute"], json!({"per_minute": {"type": "integer"}})),
                "test": {"type": "boolean", "description": "A test-mode key: it makes and sees test data only."},
            }),
        ),
    );
    put(
        "SigningSecret",
        object(
            &["signing_secret"],
            json!({"signing_secret": {"type": "string", "description": "`whsec_` and the base64 key, as Standard Webhooks write it."}}),
        ),
    );
    put("Status", object(&["status"], json!({"status": text()})));
    put(
        "AuditLog",
        object(
            &["entries", "total", "limit", "offset"],
            json!({
                "entries": array(object(
                    &["account_id", "seq", "at", "action", "loop_id", "request_id", "data", "prev_hash", "hash"],
                    json!({
                        "account_id": id(),
                        "seq": {"type": "integer", "minimum": 1},
                        "at": time(),
                        "action": {"type": "string", "description": "An event type (`request.completed`) or a change without one (`request.changed`, `loop.created`, `loop.updated`, `loop.invite_code_changed`, `loop.member_changed`)."},
                        "loop_id": nullable(id()), "request_id": nullable(id()),
                        "data": {"type": "object"},
                        "prev_hash": {"type": "string", "description": "The `hash` of the entry before; 64 zeros for the first."},
                        "hash": {"type": "string", "description": "Lowercase hex SHA-256 of the entry's canonical JSON (keys sorted, no spaces, as serde_json writes it) without `hash`."},
                    }),
                )),
                "total": {"type": "integer"},
                "limit": {"type": "integer"}, "offset": {"type": "integer"},
            }),
        ),
    );
    put(
        "ReceiptKeys",
        object(
            &["keys"],
            json!({"keys": array(object(
                &["key_id", "alg", "public_key", "created_at", "retired_at"],
                json!({
                    "key_id": text(), "alg": {"const": "Ed25519"},
                    "public_key": {"type": "string", "description": "base64url (no padding) of the 32-byte Ed25519 public key."},
                    "created_at": time(), "retired_at": nullable(time()),
                }),
            ))}),
        ),
    );
    all
}

type Put<'a> = dyn FnMut(&str, Value) + 'a;

fn envelopes(put: &mut Put) {
    put(
        "ErrorA",
        json!({
            "type": "object",
            "required": ["error", "msg"],
            "description": "A failure on the request surface. A 429 also carries `data` with the key's usage.",
            "properties": {
                "error": {"const": true},
                "msg": {"type": "string", "description": "What is wrong, for people."},
                "data": object(&["usage_count", "usage_limit", "remaining", "reset_at"], json!({
                    "usage_count": {"type": "integer"}, "usage_limit": {"type": "integer"},
                    "remaining": {"type": "integer"}, "reset_at": time(),
                })),
            },
            "example": {"error": true, "msg": "request_text is required"},
        }),
    );
    put(
        "Meta",
        json!({
            "type": "object",
            "required": ["request_id", "timestamp"],
            "properties": {
                "request_id": nullable(text()),
                "timestamp": time(),
                "pagination": object(&["total", "limit", "offset", "has_more"], json!({
                    "total": {"type": "integer"}, "limit": {"type": "integer"},
                    "offset": {"type": "integer"}, "has_more": {"type": "boolean"},
                })),
            },
        }),
    );
    put(
        "ErrorB",
        json!({
            "type": "object",
            "required": ["success", "error", "meta"],
            "description": "A failure on the alternate surface; `details` names each field at fault.",
            "properties": {
                "success": {"const": false},
                "error": object(&["code", "message", "details"], json!({
                    "code": text(),
                    "message": text(),
                    "details": nullable(array(object(&["field", "message"], json!({
                        "field": text(), "message": text(),
                    })))),
                })),
                "meta": reference("Meta"),
            },
            "example": {
                "success": false,
                "error": {"code": "validation_error", "message": "content.text is required",
                          "details": [{"field": "content.text", "message": "content.text is required"}]},
                "meta": {"request_id": "req_6743a1f0", "timestamp": "2026-11-24T12:00:00.000Z"},
            },
        }),
    );
}

fn loops(put: &mut Put) {
    put(
        "Member",
        object(
            &[
                "user_id",
                "email",
                "status",
                "notify",
                "invited_at",
                "joined_at",
            ],
            json!({
                "user_id": id(), "email": text(),
                "status": {"type": "string", "enum": ["pending", "active", "removed"]},
                "notify": {"type": "string", "enum": ["all", "urgent", "none"]},
                "invited_at": time(), "joined_at": nullable(time()), "removed_at": nullable(time()),
            }),
        ),
    );
    put(
        "Loop",
        object(
            &[
                "id",
                "name",
                "description",
                "icon",
                "creator_id",
                "invite_code",
                "members",
                "member_count",
                "pending_count",
                "active_count",
                "created_at",
                "updated_at",
            ],
            json!({
                "id": id(), "name": text(), "description": text(), "icon": text(),
                "creator_id": id(), "invite_code": text(),
                "members": array(reference("Member")),
                "member_count": {"type": "integer"}, "pending_count": {"type": "integer"},
                "active_count": {"type": "integer"},
                "created_at": time(), "updated_at": time(),
                "slack_configured": {"type": "boolean"}, "reminders": {"type": "boolean"},
                "quorum": nullable(reference("Quorum")),
                "escalation": nullable(reference("Escalation")),
                "rules": array(reference("Rule")),
            }),
        ),
    );
    put(
        "TestClock",
        object(
            &["now", "offset_seconds", "answered", "timed_out"],
            json!({
                "now": time(),
                "offset_seconds": {"type": "integer"},
                "answered": {"type": "integer", "description": "Test requests the move answered."},
                "timed_out": {"type": "integer", "description": "Test requests the move timed out."},
            }),
        ),
    );
    put(
        "Escalation",
        json!({
            "type": "object",
            "description": "Unclaimed `after_seconds` after creation, the request is also sent to the active members of `to_loop_id` (a loop the requester may use), once; `raise_priority` moves it one step up.",
            "required": ["after_seconds", "to_loop_id"],
            "properties": {
                "after_seconds": {"type": "integer", "minimum": 1},
                "to_loop_id": id(),
                "raise_priority": {"type": "boolean", "default": false},
            },
            "example": {"after_seconds": 900, "to_loop_id": "6743a1f09c1e4b2a8d3f5e61", "raise_priority": true},
        }),
    );
    put(
        "Rule",
        json!({
            "type": "object",
            "description": "Tried in order on each new request; the first whose `when` holds fires. `when` may name `priority`, `platform`, `response_type` (a value or a list) and `context`: tests such as `{\"pointer\": \"/amount\", \"lt\": 100}` with `eq`, `ne`, `lt`, `lte`, `gt`, `gte`, `in`. `then` is `{\"answer\": VALUE}`, `{\"route_to_loop_id\": ID}` or `{\"quorum\": {...}}`.",
            "required": ["then"],
            "properties": {
                "id": {"type": "string", "maxLength": 64},
                "when": {"type": "object"},
                "then": {"type": "object"},
            },
            "example": {"id": "small-refunds", "when": {"context": [{"pointer": "/amount", "lt": 50}]}, "then": {"answer": "approve"}},
        }),
    );
    put(
        "AppliedRule",
        object(
            &["loop_id", "rule_id", "then"],
            json!({"loop_id": id(), "rule_id": text(), "then": {"type": "object"}}),
        ),
    );
    put(
        "RulesTest",
        object(
            &[
                "fires",
                "rule",
                "applied_rules",
                "loop_id",
                "loop_name",
                "outcome",
                "response_data",
                "quorum",
                "passed_over",
                "summary",
            ],
            json!({
                "fires": {"type": "boolean"},
                "rule": nullable(reference("AppliedRule")),
                "applied_rules": array(reference("AppliedRule")),
                "loop_id": id(), "loop_name": text(),
                "outcome": {"type": "string", "enum": ["people", "answer", "quorum"]},
                "response_data": {},
                "quorum": nullable(reference("Quorum")),
                "passed_over": array(object(&["loop_id", "rule_id", "reason"],
                    json!({"loop_id": id(), "rule_id": text(), "reason": text()}))),
                "summary": text(),
            }),
        ),
    );
    put(
        "Quorum",
        json!({
            "type": "object",
            "description": "How many reviewers must answer and how their answers decide: `all_agree` when `count` reviewers gave the same answer; `majority` when `count` answers are in and one answer is the most common (a tie waits for one more). With `exclude_requester` (default true) the request's creator may not answer.",
            "required": ["count"],
            "properties": {
                "count": {"type": "integer", "minimum": 1, "maximum": 100},
                "rule": {"type": "string", "enum": ["all_agree", "majority"], "default": "all_agree"},
                "exclude_requester": {"type": "boolean", "default": true},
            },
            "example": {"count": 2, "rule": "all_agree"},
        }),
    );
    put(
        "QuorumState",
        object(
            &["count", "rule", "exclude_requester", "answered"],
            json!({
                "count": {"type": "integer"},
                "rule": {"type": "string", "enum": ["all_agree", "majority"]},
                "exclude_requester": {"type": "boolean"},
                "answered": {"type": "integer", "description": "How many reviewers have answered."},
            }),
        ),
    );
    put(
        "ReviewerAnswer",
        object(
            &["user_id", "email", "response_data", "response_at"],
            json!({
                "user_id": id(), "email": text(), "response_data": {}, "response_at": time(),
            }),
        ),
    );
    put(
        "LoopInvite",
        object(
            &[
                "loop",
                "invite_code",
                "qr_code_base64",
                "qr_code_url",
                "join_url",
            ],
            json!({
                "loop": reference("Loop"), "invite_code": text(),
                "qr_code_base64": {"type": "string", "description": "A `data:image/png;base64,` URI."},
                "qr_code_url": text(), "join_url": text(),
            }),
        ),
    );
    put(
        "LoopList",
        object(
            &["loops", "count"],
            json!({"loops": array(reference("Loop")), "count": {"type": "integer"}}),
        ),
    );
    put(
        "OneLoop",
        object(&["loop"], json!({"loop": reference("Loop")})),
    );
    put(
        "LoopDeleted",
        object(&["loop_id"], json!({"loop_id": id()})),
    );
    put(
        "MemberList",
        object(
            &["loop_id", "members", "count"],
            json!({
                "loop_id": id(), "members": array(reference("Member")),
                "count": {"type": "integer"}, "member_count": {"type": "integer"},
                "total_count": {"type": "integer"}, "active_count": {"type": "integer"},
                "pending_count": {"type": "integer"},
            }),
        ),
    );
    put(
        "LoopMember",
        object(
            &["loop_id", "member"],
            json!({"loop_id": id(), "member": reference("Member")}),
        ),
    );
    put(
        "Joined",
        object(
            &["loop", "member"],
            json!({"loop": reference("Loop"), "member": reference("Member")}),
        ),
    );
    put(
        "MemberRemoved",
        object(
            &["loop_id", "user_id", "removed_at"],
            json!({"loop_id": id(), "user_id": id(), "removed_at": nullable(time())}),
        ),
    );
}

fn requests(put: &mut Put) {
    put(
        "BroadcastEntry",
        object(
            &["user_id", "email", "notification_sent"],
            json!({
                "user_id": id(), "email": text(), "role": text(),
                "notification_sent": {"type": "boolean"},
                "notification_error": nullable(text()),
            }),
        ),
    );
    put(
        "Feedback",
        json!({
            "type": "object",
            "properties": {
                "rating": nullable(json!({"type": "number"})), "comment": nullable(text()),
                "accuracy": nullable(json!({"type": "number"})), "timeliness": nullable(json!({"type": "number"})),
                "helpfulness": nullable(json!({"type": "number"})),
                "would_recommend": nullable(json!({"type": "boolean"})),
                "follow_up_needed": nullable(json!({"type": "boolean"})),
                "tags": nullable(array(text())), "category": nullable(text()),
                "created_at": time(),
            },
        }),
    );
    let mut request = json!({
            "type": "object",
            "description": "A review request. `api_key_id`, `callback_url`, `metadata` and `tags` are shown to its requester only.",
            "required": ["id", "loop_id", "creator_id", "processing_type", "type", "priority",
                         "request_text", "response_type", "response_config", "status",
                         "broadcasted_to", "created_at", "updated_at"],
            "properties": {
                "id": id(), "loop_id": id(), "creator_id": id(), "api_key_id": nullable(id()),
                "processing_type": reference("ProcessingType"), "type": reference("ContentType"),
                "priority": reference("Priority"), "request_text": text(),
                "image_url": nullable(text()), "context": {}, "platform": text(),
                "platform_version": nullable(text()), "response_type": reference("ResponseType"),
                "response_config": {"type": "object"}, "default_response": {},
                "timeout_seconds": nullable(json!({"type": "integer"})), "timeout_at": nullable(time()),
                "callback_url": nullable(text()), "metadata": {},
                "tags": array(text()),
                "broadcasted_to": array(reference("BroadcastEntry")),
                "broadcasted_at": nullable(time()), "status": reference("RequestStatus"),
                "claimed_by": nullable(id()), "claimed_at": nullable(time()),
                "response_by": nullable(id()), "response_at": nullable(time()),
                "response_data": {}, "response_time_seconds": nullable(json!({"type": "number"})),
                "cancelled_at": nullable(time()),
                "feedback": nullable(reference("Feedback")),
                "receipt": nullable(reference("Receipt")),
                "quorum": nullable(reference("QuorumState")),
                "responses": {"type": "array", "items": reference("ReviewerAnswer"),
                              "description": "Every answer, oldest first; a reviewer sees only its own."},
                "created_at": time(), "updated_at": time(),
            },
    });
    // Added apart: one json! of every field is too deep for the macro.
    if let Some(props) = request["properties"].as_object_mut() {
        props.insert("escalation".into(), nullable(reference("Escalation")));
        props.insert("escalated_at".into(), nullable(time()));
        props.insert("decided_by_rule".into(), nullable(text()));
        props.insert(
            "test".into(),
            json!({"type": "boolean", "description": "Made with a test-mode key: answered by its `test_response` on the test clock, never by people."}),
        );
        props.insert(
            "applied_rules".into(),
            json!({"type": "array", "items": reference("AppliedRule"),
                   "description": "The loops' rules that fired at creation; shown to the requester only."}),
        );
    }
    put("Request", request);
    put(
        "Receipt",
        object(
            &["alg", "key_id", "signed", "signature"],
            json!({
                "alg": {"const": "Ed25519"},
                "key_id": {"type": "string", "description": "The key at `/v1/receipts/keys` that signed."},
                "signed": {"type": "string", "description": "base64url (no padding) of the canonical JSON statement: request_id, loop_id, status, response_data, response_by, response_at, request_text_sha256."},
                "signature": {"type": "string", "description": "base64url (no padding) of the Ed25519 signature of the `signed` bytes."},
            }),
        ),
    );
    put(
        "OneRequest",
        object(&["request"], json!({"request": reference("Request")})),
    );
    put(
        "CreatedRequest",
        object(
            &[
                "request",
                "request_id",
                "status",
                "processing_type",
                "type",
                "priority",
                "timeout_at",
                "polling_url",
                "broadcasted_to",
                "notifications_sent",
            ],
            json!({
                "request": reference("Request"), "request_id": id(), "id": id(),
                "status": reference("RequestStatus"),
                "processing_type": reference("ProcessingType"), "type": reference("ContentType"),
                "priority": reference("Priority"), "timeout_at": nullable(time()),
                "polling_url": text(),
                "broadcasted_to": {"type": "integer", "description": "How many reviewers were told."},
                "notifications_sent": {"type": "integer"},
            }),
        ),
    );
    put(
        "RequestPage",
        object(
            &[
                "requests",
                "count",
                "total",
                "has_more",
                "limit",
                "offset",
                "pagination",
            ],
            json!({
                "requests": array(reference("Request")), "count": {"type": "integer"},
                "total": {"type": "integer"}, "has_more": {"type": "boolean"},
                "limit": {"type": "integer"}, "offset": {"type": "integer"},
                "loop_id": id(),
                "pagination": object(&["limit", "offset", "next_offset"], json!({
                    "limit": {"type": "integer"}, "offset": {"type": "integer"},
                    "next_offset": nullable(json!({"type": "integer"})),
                })),
            }),
        ),
    );
    put(
        "Inbox",
        object(
            &["count", "requests"],
            json!({"count": {"type": "integer"}, "requests": array(reference("Request"))}),
        ),
    );
    put(
        "RequestCancelled",
        object(
            &["request_id", "status"],
            json!({"request_id": id(), "status": reference("RequestStatus")}),
        ),
    );
    put(
        "FeedbackRecorded",
        object(
            &["request_id", "feedback"],
            json!({"request_id": id(), "feedback": nullable(reference("Feedback"))}),
        ),
    );
}

/// Bodies: every field is checked by the service, which names what is
/// wrong; these say what it accepts.
fn request_bodies(put: &mut Put) {
    let request_fields = json!({
        "loop_id": id(),
        "request_text": {"type": "string", "minLength": 1, "maxLength": 2000},
        "type": reference("ContentType"),
        "image_url": {"type": "string", "format": "uri", "description": "Required when `type` is `image`."},
        "response_type": reference("ResponseType"),
        "response_config": {"type": "object", "description": "Depends on `response_type`: `options` for selects (strings or `{value, label, description, color}` objects), `scale_max`/`scale_step` for ratings, `min_value`/`max_value` for numbers, `max_length` for text."},
        "priority": reference("Priority"),
        "processing_type": reference("ProcessingType"),
        "timeout_seconds": {"type": "integer", "minimum": 60, "maximum": 2_592_000, "description": "Required when `processing_type` is `time-sensitive`."},
        "default_response": {"description": "The answer that stands when nobody answers in time; it must fit `response_config`."},
        "context": {"type": "object"},
        "platform": reference("Platform"),
        "platform_version": text(),
        "callback_url": {"type": "string", "format": "uri"},
        "metadata": {"type": "object"},
        "tags": array(text()),
        "quorum": nullable(reference("Quorum")),
        "exclude_requester": {"type": "boolean", "description": "Whether the requester is kept from answering (default true); also applies to the loop's default quorum."},
        "escalation": nullable(reference("Escalation")),
        "test_response": {"description": "Test-mode keys only: the answer the request gets by itself (it must fit `response_config`); without it a test request waits for its timeout on the test clock."},
        "test_delay_seconds": {"type": "integer", "minimum": 0, "description": "Test-mode keys only: seconds on the test clock before `test_response` is given (default 0: at once)."},
    });
    let mut in_loop = request_fields.clone();
    if let Some(map) = in_loop.as_object_mut() {
        map.remove("loop_id");
    }
    let example = json!({
        "request_text": "Publish this reply to the customer?",
        "type": "markdown",
        "response_type": "single_select",
        "response_config": {"options": [
            {"value": "approve", "label": "Approve", "color": "#16a34a"},
            {"value": "reject", "label": "Reject", "color": "#dc2626"}
        ]},
        "priority": "high",
        "processing_type": "time-sensitive",
        "timeout_seconds": 3600,
        "default_response": "reject",
        "platform": "api",
    });
    let mut with_loop = example.clone();
    with_loop["loop_id"] = json!("6743a1f09c1e4b2a8d3f5e61");
    put(
        "NewRequest",
        json!({"type": "object", "required": ["loop_id", "request_text", "type", "response_type", "response_config", "priority", "processing_type", "default_response"],
               "properties": request_fields, "example": with_loop}),
    );
    put(
        "NewRequestInLoop",
        json!({"type": "object", "required": ["request_text", "type", "response_type", "response_config", "priority", "processing_type", "default_response"],
               "properties": in_loop.clone(), "example": example}),
    );
    let mut sample = in_loop;
    sample["rules"] = json!({"type": "array", "items": reference("Rule"),
                             "description": "Rules to try instead of the loop's saved ones."});
    put(
        "RulesTestInput",
        json!({"type": "object", "required": ["request_text", "type", "response_type", "priority", "processing_type"],
               "properties": sample,
               "example": {"request_text": "Refund order 1234?", "type": "markdown",
                           "response_type": "boolean", "priority": "low", "processing_type": "deferred",
                           "context": {"amount": 20}}}),
    );
    put(
        "RequestPatch",
        json!({"type": "object", "description": "Only while the request is pending.", "properties": {
            "request_text": text(), "priority": reference("Priority"), "context": {},
            "response_config": {"type": "object"}, "default_response": {},
            "timeout_seconds": {"type": "integer"}, "tags": nullable(array(text())),
            "platform": reference("Platform"),
        }}),
    );
    let feedback_fields = json!({
        "rating": {"type": "number", "minimum": 1, "maximum": 5}, "comment": text(),
        "accuracy": {"type": "number"}, "timeliness": {"type": "number"},
        "helpfulness": {"type": "number"}, "would_recommend": {"type": "boolean"},
        "follow_up_needed": {"type": "boolean"}, "tags": array(text()), "category": text(),
    });
    let mut feedback_body = feedback_fields.clone();
    feedback_body["feedback"] = json!({"type": "object", "properties": feedback_fields});
    put(
        "FeedbackInput",
        json!({"type": "object", "description": "The fields at the top level or inside `feedback`.",
               "properties": feedback_body, "example": {"rating": 5, "comment": "Quick and right"}}),
    );
    put(
        "Answer",
        json!({"type": "object", "required": ["response_data"], "properties": {
            "response_data": {"description": "Fits the request's response type: a string, an array of strings, a number or a boolean."},
        }, "example": {"response_data": "approve"}}),
    );
    put(
        "NewLoop",
        json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 100}, "description": text(), "icon": text(),
        }, "example": {"name": "Support replies", "description": "Customer replies before they go out"}}),
    );
    put(
        "LoopPatch",
        json!({"type": "object", "properties": {
            "name": text(), "description": nullable(text()), "icon": text(),
            "slack_webhook_url": nullable(text()), "reminders": {"type": "boolean"},
            "quorum": nullable(reference("Quorum")),
            "escalation": nullable(reference("Escalation")),
            "rules": nullable(array(reference("Rule"))),
        }}),
    );
    put(
        "ClockAdvance",
        json!({"type": "object", "required": ["advance_seconds"], "properties": {
            "advance_seconds": {"type": "integer", "minimum": 1, "maximum": 31_536_000},
        }, "example": {"advance_seconds": 3600}}),
    );
    put(
        "Invite",
        json!({"type": "object", "required": ["email"], "properties": {"email": {"type": "string", "format": "email"}}}),
    );
    put(
        "Join",
        json!({"type": "object", "required": ["invite_code"], "properties": {"invite_code": text()}}),
    );
    put(
        "NotifyPreference",
        json!({"type": "object", "required": ["notify"], "properties": {
            "notify": {"type": "string", "enum": ["all", "urgent", "none"]}}}),
    );
}

fn alternate(put: &mut Put) {
    put(
        "Template",
        object(
            &[
                "id",
                "name",
                "description",
                "fields",
                "created_at",
                "updated_at",
            ],
            json!({"id": id(), "name": text(), "description": nullable(text()),
                   "fields": {"type": "array"}, "created_at": time(), "updated_at": time()}),
        ),
    );
    put(
        "Review",
        object(
            &[
                "id",
                "template_id",
                "content",
                "fields",
                "assignees",
                "priority",
                "status",
                "created_at",
                "updated_at",
            ],
            json!({
                "id": id(), "template_id": id(),
                "content": object(&["text"], json!({"text": text(), "metadata": {}})),
                "fields": {"type": "array"}, "assignees": array(text()), "team_id": nullable(id()),
                "priority": text(), "due_date": nullable(time()), "status": reference("ReviewStatus"),
                "result": {}, "reviewer": nullable(object(&["id", "email"], json!({"id": id(), "email": text()}))),
                "started_at": nullable(time()), "completed_at": nullable(time()),
                "cancelled_at": nullable(time()), "created_at": time(), "updated_at": time(),
            }),
        ),
    );
    put(
        "Team",
        json!({"allOf": [reference("Loop")], "description": "A team is a loop; a new one also carries its join details.",
               "properties": {"join_url": text(), "qr_code_url": text()}}),
    );
    put(
        "Deleted",
        object(
            &["id", "deleted"],
            json!({"id": id(), "deleted": {"type": "boolean"}}),
        ),
    );
    put(
        "NewTemplate",
        json!({"type": "object", "required": ["name", "fields"], "properties": {
            "name": text(), "description": text(),
            "fields": {"type": "array", "items": {"type": "object"}, "description": "Form fields: `{name, type, label, required, options}`."},
        }, "example": {"name": "Refund", "fields": [
            {"name": "decision", "type": "select", "label": "Decision", "required": true, "options": ["approve", "deny"]}
        ]}}),
    );
    put(
        "TemplatePatch",
        json!({"type": "object", "properties": {"name": text(), "description": nullable(text()), "fields": {"type": "array"}}}),
    );
    put(
        "NewReview",
        json!({"type": "object", "required": ["template_id", "content"], "properties": {
            "template_id": id(),
            "content": {"type": "object", "properties": {"text": text(), "metadata": {"type": "object"}}},
            "assignees": array(text()), "team_id": id(), "priority": text(),
            "due_date": nullable(time()), "callback_url": {"type": "string", "format": "uri"},
        }}),
    );
    put(
        "ReviewPatch",
        json!({"type": "object", "properties": {
            "priority": text(), "due_date": nullable(time()), "assignees": array(text())}}),
    );
    put(
        "ReviewResult",
        json!({"type": "object", "required": ["result"], "properties": {
            "result": {"type": "object", "description": "One value per template field."}}}),
    );
    put(
        "NewTeam",
        json!({"type": "object", "required": ["name"], "properties": {"name": text(), "description": text(), "icon": text()}}),
    );
}

fn webhooks(put: &mut Put) {
    put(
        "Webhook",
        object(
            &[
                "id",
                "account_id",
                "url",
                "events",
                "active",
                "created_at",
                "updated_at",
            ],
            json!({
                "id": id(), "account_id": id(), "url": text(),
                "events": array(text()), "description": nullable(text()),
                "active": {"type": "boolean"}, "disabled_reason": nullable(text()),
                "secret": {"type": "string", "description": "Shown when created or rotated only."},
                "created_at": time(), "updated_at": time(),
            }),
        ),
    );
    put(
        "Delivery",
        object(
            &[
                "id",
                "event_id",
                "event_type",
                "url",
                "status",
                "attempts",
                "attempts_made",
                "created_at",
            ],
            json!({
                "id": id(), "event_id": text(), "event_type": reference("EventType"),
                "account_id": id(), "target": text(), "webhook_id": nullable(id()), "url": text(),
                "status": text(),
                "attempts": array(object(&["attempt", "attempted_at", "success"], json!({
                    "delivery_id": id(), "attempt": {"type": "integer"}, "attempted_at": time(),
                    "status_code": nullable(json!({"type": "integer"})), "latency_ms": nullable(json!({"type": "integer"})),
                    "error": nullable(text()), "success": {"type": "boolean"},
                }))),
                "attempts_made": {"type": "integer"}, "next_attempt_at": nullable(time()),
                "last_attempt_at": nullable(time()), "last_status_code": nullable(json!({"type": "integer"})),
                "last_error": nullable(text()), "created_at": time(),
            }),
        ),
    );
    put(
        "OneWebhook",
        object(&["webhook"], json!({"webhook": reference("Webhook")})),
    );
    put(
        "WebhookList",
        object(
            &["webhooks", "count"],
            json!({"webhooks": array(reference("Webhook")), "count": {"type": "integer"}}),
        ),
    );
    put(
        "WebhookDeleted",
        object(&["webhook_id"], json!({"webhook_id": id()})),
    );
    put(
        "DeliveryList",
        object(
            &["webhook_id", "deliveries", "count"],
            json!({"webhook_id": id(), "deliveries": array(reference("Delivery")), "count": {"type": "integer"}}),
        ),
    );
    put(
        "OneDelivery",
        object(&["delivery"], json!({"delivery": reference("Delivery")})),
    );
    put(
        "NewWebhook",
        json!({"type": "object", "required": ["url", "events"], "properties": {
            "url": {"type": "string", "format": "uri"},
            "events": {"type": "array", "items": reference("EventType")},
            "secret": {"type": "string", "description": "`whsec_` and base64; generated when absent."},
            "description": text(),
        }, "example": {"url": "https://example.com/hooks/reviewloop", "events": ["request.completed", "request.timeout"]}}),
    );
    put(
        "WebhookPatch",
        json!({"type": "object", "properties": {
            "url": {"type": "string", "format": "uri"}, "events": {"type": "array", "items": reference("EventType")},
            "active": {"type": "boolean"}, "secret": text(), "rotate_secret": {"type": "boolean"},
            "description": nullable(text()),
        }}),
    );
}
