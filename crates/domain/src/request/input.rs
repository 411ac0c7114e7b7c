//! Validation of what clients send to create or change a request.

use serde_json::{Map, Value};

use super::escalation::Escalation;
use crate::error::ValidationError;
use crate::form::Form;
use crate::quorum::Quorum;
use crate::request_fields::{
    ContentType, Platform, Priority, ProcessingType, DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS,
};
use crate::response::{RequestConfig, ResponseType};
use crate::text::{char_len, check_line, check_prose, parse_http_url};

const MAX_PLATFORM_VERSION_LEN: usize = 100;

/// A create-request body as the client sent it: every field optional and
/// loosely typed, so that validation can say exactly what is wrong.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestInput {
    /// 1 to 2000 characters.
    pub request_text: Option<String>,
    /// `markdown` or `image` (the body's `type`).
    pub content_type: Option<String>,
    /// Required for `image`.
    pub image_url: Option<String>,
    /// See [`ResponseType`].
    pub response_type: Option<String>,
    /// See [`crate::ResponseConfig`].
    pub response_config: Option<Value>,
    /// `low`, `medium`, `high`, `critical`.
    pub priority: Option<String>,
    /// `time-sensitive` or `deferred`.
    pub processing_type: Option<String>,
    /// Whole seconds, 1 to 30 days; required for `time-sensitive`.
    pub timeout_seconds: Option<Value>,
    /// Must be a valid answer.
    pub default_response: Option<Value>,
    /// A JSON object.
    pub context: Option<Value>,
    /// See [`Platform`]; defaults to `api`.
    pub platform: Option<String>,
    /// At most 100 characters.
    pub platform_version: Option<String>,
    /// An http(s) URL.
    pub callback_url: Option<String>,
    /// A JSON object.
    pub metadata: Option<Value>,
    /// Labels of the requester's own: at most 20 texts of 1 to 50 characters.
    pub tags: Option<Value>,
    /// `{"count", "rule", "exclude_requester"}`: answers from several
    /// reviewers; `Null` declines the loop's default quorum.
    pub quorum: Option<Value>,
    /// Whether the requester is kept from answering a quorum request.
    pub exclude_requester: Option<Value>,
    /// `{"after_seconds", "to_loop_id", "raise_priority"}`; `Null` declines
    /// the loop's default escalation.
    pub escalation: Option<Value>,
    /// Test mode only: the answer the request gets by itself.
    pub test_response: Option<Value>,
    /// Test mode only: seconds (on the test clock) before `test_response`
    /// is given; 0 by default.
    pub test_delay_seconds: Option<Value>,
    /// 1 to 200 characters: a request with the key of an open one joins it.
    pub coalesce_key: Option<String>,
}

/// The most tags a request may carry.
pub const MAX_TAGS: usize = 20;
/// The most characters one tag may have.
pub const MAX_TAG_LEN: usize = 50;

/// Reads `tags`: an array of distinct texts (trimmed), or null for none.
pub(super) fn parse_tags(raw: Option<&Value>) -> Result<Vec<String>, ValidationError> {
    let bad = || {
        ValidationError::field(
            "tags",
            format!("tags must be an array of at most {MAX_TAGS} texts of 1 to {MAX_TAG_LEN} characters"),
        )
    };
    let items = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= MAX_TAGS => items,
        Some(_) => return Err(bad()),
    };
    let mut tags: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let tag = item.as_str().map(str::trim).ok_or_else(bad)?;
        if tag.is_empty() || char_len(tag) > MAX_TAG_LEN {
            return Err(bad());
        }
        check_line("tags", tag)?;
        if !tags.iter().any(|t| t == tag) {
            tags.push(tag.to_owned());
        }
    }
    Ok(tags)
}

/// A create-request body that passed validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidRequest {
    /// The question.
    pub request_text: String,
    /// What reviewers look at.
    pub content_type: ContentType,
    /// The image, for `image` requests.
    pub image_url: Option<String>,
    /// The kind of answer.
    pub response_type: ResponseType,
    /// The answer's bounds.
    pub response_config: RequestConfig,
    /// Urgency.
    pub priority: Priority,
    /// Processing type.
    pub processing_type: ProcessingType,
    /// Seconds from creation to timeout.
    pub timeout_seconds: i64,
    /// The answer used on timeout.
    pub default_response: Option<Value>,
    /// Data for reviewers.
    pub context: Option<Value>,
    /// Origin.
    pub platform: Platform,
    /// Origin's version.
    pub platform_version: Option<String>,
    /// Where to call on completion.
    pub callback_url: Option<String>,
    /// Data for the requester.
    pub metadata: Option<Value>,
    /// Labels of the requester's own.
    pub tags: Vec<String>,
    /// The quorum the request asked for, if any.
    pub quorum: Option<Quorum>,
    /// `exclude_requester` as given, which also applies to a quorum taken
    /// from the loop.
    pub exclude_requester: Option<bool>,
    /// `quorum: null` was sent: the first answer decides, whatever the
    /// loop's default.
    pub no_quorum: bool,
    /// Where the request goes if nobody claims it in time.
    pub escalation: Option<Escalation>,
    /// `escalation: null` was sent: the loop's default escalation is not
    /// used.
    pub no_escalation: bool,
    /// The rules that fired for it (set by whoever applies the loops' rules).
    pub applied_rules: Vec<crate::rules::AppliedRule>,
    /// The answer a test request gets by itself, checked against the
    /// response configuration.
    pub test_response: Option<Value>,
    /// Seconds before it is given, if the body said.
    pub test_delay_seconds: Option<i64>,
    /// Made with a test-mode key (set by whoever knows the key).
    pub test: bool,
    /// The requester's own key for joining an open request.
    pub coalesce_key: Option<super::QuestionKey>,
}

impl ValidRequest {
    /// The key that makes another request the same question: the one the
    /// requester gave, else (when `loop_keys_questions`: its loop joins or
    /// reuses them) the hash of the question.
    pub fn question_key(&self, loop_keys_questions: bool) -> Option<super::QuestionKey> {
        match &self.coalesce_key {
            Some(key) => Some(key.clone()),
            None if loop_keys_questions => Some(super::QuestionKey::of_question(self)),
            None => None,
        }
    }

    /// Settles the quorum: the request's own, else the loop's default
    /// (with the request's `exclude_requester`, if it gave one).
    pub fn with_loop_quorum(mut self, loop_default: Option<Quorum>) -> Self {
        if self.quorum.is_none() && !self.no_quorum {
            self.quorum = loop_default.map(|q| Quorum {
                exclude_requester: self.exclude_requester.unwrap_or(q.exclude_requester),
                ..q
            });
        }
        self
    }

    /// The facts the loops' rules look at.
    pub fn facts(&self) -> crate::rules::Facts<'_> {
        crate::rules::Facts {
            priority: self.priority,
            platform: self.platform,
            response_type: self.response_type,
            context: self.context.as_ref(),
        }
    }

    /// Settles the escalation: the request's own, else the loop's default
    /// when it can happen before the request times out.
    pub fn with_loop_escalation(mut self, loop_default: Option<Escalation>) -> Self {
        if self.escalation.is_none() && !self.no_escalation {
            self.escalation = loop_default.filter(|e| e.after_seconds < self.timeout_seconds);
        }
        self
    }
}

/// A change to a pending request. `Some(Value::Null)` clears `context` or
/// `default_response`; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestPatch {
    /// New question.
    pub request_text: Option<String>,
    /// New urgency.
    pub priority: Option<String>,
    /// New context, or `Null` to clear it.
    pub context: Option<Value>,
    /// New bounds for the same response type.
    pub response_config: Option<Value>,
    /// New default, or `Null` to clear it.
    pub default_response: Option<Value>,
    /// New timeout, counted from the request's creation.
    pub timeout_seconds: Option<Value>,
    /// New labels, replacing the old ones (`Null` or `[]` clears them).
    pub tags: Option<Value>,
    /// Where the request now says it came from.
    pub platform: Option<String>,
    /// A new callback URL, or `Null` to remove it.
    pub callback_url: Option<Value>,
    /// The processing type: accepted when it is the request's own, refused
    /// otherwise (it decided the deadline).
    pub processing_type: Option<String>,
    /// The response type: accepted when it is the request's own, refused
    /// otherwise (answers and reviewers' widgets follow it).
    pub response_type: Option<String>,
}

impl RequestPatch {
    /// True when the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

fn required<'a>(value: &'a Option<String>, field: &str) -> Result<&'a str, ValidationError> {
    value
        .as_deref()
        .ok_or_else(|| ValidationError::field(field, format!("{field} is required")))
}

pub(super) fn parse_request_text(raw: &str) -> Result<String, ValidationError> {
    if raw.trim().is_empty() || char_len(raw) > 2000 {
        return Err(ValidationError::field(
            "request_text",
            "request_text must be 1 to 2000 characters",
        ));
    }
    check_prose("request_text", raw)?;
    Ok(raw.to_owned())
}

pub(super) fn parse_timeout_seconds(raw: &Value) -> Result<i64, ValidationError> {
    raw.as_i64()
        .filter(|s| (1..=MAX_TIMEOUT_SECONDS).contains(s))
        .ok_or_else(|| {
            ValidationError::field(
                "timeout_seconds",
                format!("timeout_seconds must be a whole number from 1 to {MAX_TIMEOUT_SECONDS}"),
            )
        })
}

pub(super) fn parse_object(
    field: &str,
    raw: Option<Value>,
) -> Result<Option<Value>, ValidationError> {
    match raw {
        None | Some(Value::Null) => Ok(None),
        Some(value @ Value::Object(_)) => Ok(Some(value)),
        Some(_) => Err(ValidationError::field(
            field,
            format!("{field} must be a JSON object"),
        )),
    }
}

impl RequestInput {
    /// A create-request body read from a JSON object, as a person types
    /// one in: each known key taken, a text field that holds something
    /// else kept as its JSON text for validation to judge.
    pub fn from_json(body: &Map<String, Value>) -> Self {
        let text = |key: &str| {
            body.get(key).filter(|v| !v.is_null()).map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        };
        let value = |key: &str| body.get(key).cloned();
        Self {
            request_text: text("request_text"),
            content_type: text("type"),
            image_url: text("image_url"),
            response_type: text("response_type"),
            response_config: value("response_config"),
            priority: text("priority"),
            processing_type: text("processing_type"),
            timeout_seconds: value("timeout_seconds"),
            default_response: value("default_response"),
            context: value("context"),
            platform: text("platform"),
            platform_version: text("platform_version"),
            callback_url: text("callback_url"),
            metadata: value("metadata"),
            tags: value("tags"),
            quorum: value("quorum"),
            exclude_requester: value("exclude_requester"),
            escalation: value("escalation"),
            test_response: value("test_response"),
            test_delay_seconds: value("test_delay_seconds"),
            coalesce_key: text("coalesce_key"),
        }
    }

    /// Validates every field and reports every failure at once.
    pub fn validate(self) -> Result<ValidRequest, ValidationError> {
        let mut errors = ValidationError::default();

        let request_text = errors
            .collect(required(&self.request_text, "request_text").and_then(parse_request_text));
        let content_type =
            errors.collect(required(&self.content_type, "type").and_then(ContentType::parse));
        let response_type = errors
            .collect(required(&self.response_type, "response_type").and_then(ResponseType::parse));
        let priority =
            errors.collect(required(&self.priority, "priority").and_then(Priority::parse));
        let processing_type = errors.collect(
            required(&self.processing_type, "processing_type").and_then(ProcessingType::parse),
        );

        let image_url = match self.image_url.as_deref().filter(|u| !u.trim().is_empty()) {
            Some(url) => errors.collect(parse_http_url("image_url", url)),
            None => {
                if content_type == Some(ContentType::Image) {
                    errors.extend(ValidationError::field(
                        "image_url",
                        "image_url is required when type is image",
                    ));
                }
                None
            }
        };

        let timeout_seconds = match (&self.timeout_seconds, processing_type) {
            (Some(raw), _) if !raw.is_null() => errors.collect(parse_timeout_seconds(raw)),
            (_, Some(ProcessingType::TimeSensitive)) => {
                errors.extend(ValidationError::field(
                    "timeout_seconds",
                    "timeout_seconds is required when processing_type is time-sensitive",
                ));
                None
            }
            _ => Some(DEFAULT_TIMEOUT_SECONDS),
        };

        let config = response_type
            .and_then(|t| errors.collect(RequestConfig::parse(t, self.response_config.as_ref())));
        let default_response = self.default_response.filter(|v| !v.is_null());
        // Just parsed, so its typed bounds are there.
        let bounds = config.as_ref().and_then(|c| c.typed().ok());
        if let (Some(bounds), Some(default)) = (bounds, &default_response) {
            errors.collect(Form::single(bounds.for_default()).validate(
                "default_response",
                default,
                &Map::new(),
            ));
        }

        let context = errors
            .collect(parse_object("context", self.context))
            .flatten();
        let metadata = errors
            .collect(parse_object("metadata", self.metadata))
            .flatten();
        let platform = match self.platform.as_deref() {
            Some(p) => errors.collect(Platform::parse(p)),
            None => Some(Platform::Api),
        };
        let platform_version = self.platform_version.filter(|v| !v.trim().is_empty());
        if platform_version
            .as_deref()
            .is_some_and(|v| char_len(v) > MAX_PLATFORM_VERSION_LEN)
        {
            errors.extend(ValidationError::field(
                "platform_version",
                format!("platform_version must be at most {MAX_PLATFORM_VERSION_LEN} characters"),
            ));
        }
        if let Some(version) = &platform_version {
            errors.collect(check_line("platform_version", version));
        }
        let callback_url = self
            .callback_url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .and_then(|u| errors.collect(parse_http_url("callback_url", u)));
        let tags = errors
            .collect(parse_tags(self.tags.as_ref()))
            .unwrap_or_default();
        let quorum = errors
            .collect(Quorum::parse(
                self.quorum.as_ref(),
                self.exclude_requester.as_ref(),
            ))
            .flatten();
        let exclude_requester = self.exclude_requester.as_ref().and_then(Value::as_bool);
        let no_quorum = self.quorum.as_ref().is_some_and(Value::is_null);
        let escalation = errors
            .collect(Escalation::parse(self.escalation.as_ref(), "escalation"))
            .flatten();
        if let (Some(e), Some(timeout)) = (&escalation, timeout_seconds) {
            if e.after_seconds >= timeout {
                errors.extend(ValidationError::field(
                    "escalation.after_seconds",
                    format!(
                        "escalation.after_seconds must be less than the request's timeout ({timeout} seconds)"
                    ),
                ));
            }
        }
        let no_escalation = self.escalation.as_ref().is_some_and(Value::is_null);
        let test_response =
            match (bounds, self.test_response.filter(|v| !v.is_null())) {
                (Some(bounds), Some(answer)) => errors.collect(
                    Form::single(bounds.clone()).validate("test_response", &answer, &Map::new()),
                ),
                _ => None,
            };
        let test_delay_seconds = match self.test_delay_seconds.filter(|v| !v.is_null()) {
            None => None,
            Some(raw) => {
                let limit = timeout_seconds.unwrap_or(MAX_TIMEOUT_SECONDS);
                let delay = raw.as_i64().filter(|d| (0..limit).contains(d));
                if delay.is_none() {
                    errors.extend(ValidationError::field(
                        "test_delay_seconds",
                        format!(
                            "test_delay_seconds must be a whole number of seconds from 0 to {}, less than the timeout",
                            limit - 1
                        ),
                    ));
                }
                delay
            }
        };

        let coalesce_key = self
            .coalesce_key
            .as_deref()
            .and_then(|k| errors.collect(super::QuestionKey::parse(k)));

        errors.into_result()?;
        match (
            request_text,
            content_type,
            response_type,
            config,
            priority,
            processing_type,
            timeout_seconds,
            platform,
        ) {
            (
                Some(request_text),
                Some(content_type),
                Some(response_type),
                Some(response_config),
                Some(priority),
                Some(processing_type),
                Some(timeout_seconds),
                Some(platform),
            ) => Ok(ValidRequest {
                request_text,
                content_type,
                image_url,
                response_type,
                response_config,
                priority,
                processing_type,
                timeout_seconds,
                default_response,
                context,
                platform,
                platform_version,
                callback_url,
                metadata,
                tags,
                quorum,
                exclude_requester,
                no_quorum,
                escalation,
                no_escalation,
                applied_rules: Vec::new(),
                test_response,
                test_delay_seconds,
                test: false,
                coalesce_key,
            }),
            // Every `None` above recorded an error, so this arm is unreachable
            // in practice; it stays a validation error rather than a panic.
            _ => Err(ValidationError::field("body", "request body is invalid")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn valid_input() -> RequestInput {
        RequestInput {
            request_text: Some("Approve this post?".into()),
            content_type: Some("markdown".into()),
            response_type: Some("single_select".into()),
            response_config: Some(json!({"options": ["approve", "reject"]})),
            priority: Some("high".into()),
            processing_type: Some("time-sensitive".into()),
            timeout_seconds: Some(json!(300)),
            default_response: Some(json!("reject")),
            ..RequestInput::default()
        }
    }

    fn fields(err: ValidationError) -> Vec<String> {
        err.errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn a_complete_body_validates_with_defaults() {
        let valid = valid_input().validate().unwrap();
        assert_eq!(valid.platform, Platform::Api);
        assert_eq!(valid.timeout_seconds, 300);
        assert_eq!(
            valid.response_config.as_value(),
            &json!({"options": ["approve", "reject"]})
        );
        assert_eq!(valid.default_response, Some(json!("reject")));
    }

    #[test]
    fn an_empty_body_names_every_required_field() {
        let err = RequestInput::default().validate().unwrap_err();
        assert_eq!(
            fields(err),
            [
                "request_text",
                "type",
                "response_type",
                "priority",
                "processing_type"
            ]
        );
    }

    #[test]
    fn request_text_limits() {
        for (text, ok) in [
            ("x", true),
            (&*"x".repeat(2000), true),
            (&*"x".repeat(2001), false),
            ("  ", false),
        ] {
            let input = RequestInput {
                request_text: Some(text.into()),
                ..valid_input()
            };
            assert_eq!(input.validate().is_ok(), ok, "{} chars", text.len());
        }
    }

    #[test]
    fn image_requests_need_an_image_url() {
        let input = RequestInput {
            content_type: Some("image".into()),
            ..valid_input()
        };
        assert_eq!(
            input.validate().unwrap_err().to_string(),
            "image_url is required when type is image"
        );
        let input = RequestInput {
            content_type: Some("image".into()),
            image_url: Some("https://cdn.example.com/a.png".into()),
            ..valid_input()
        };
        assert!(input.validate().is_ok());
        let input = RequestInput {
            image_url: Some("ftp://x/a.png".into()),
            ..valid_input()
        };
        assert_eq!(
            input.validate().unwrap_err().to_string(),
            "image_url must be an http or https URL"
        );
    }

    #[test]
    fn time_sensitive_needs_a_timeout_and_deferred_defaults_to_30_days() {
        let input = RequestInput {
            timeout_seconds: None,
            ..valid_input()
        };
        assert_eq!(
            input.validate().unwrap_err().to_string(),
            "timeout_seconds is required when processing_type is time-sensitive"
        );
        let input = RequestInput {
            processing_type: Some("deferred".into()),
            timeout_seconds: None,
            ..valid_input()
        };
        assert_eq!(input.validate().unwrap().timeout_seconds, 2_592_000);
    }

    #[test]
    fn timeout_seconds_must_be_a_whole_number_within_30_days() {
        for bad in [
            json!(0),
            json!(-1),
            json!(2_592_001),
            json!(1.5),
            json!("60"),
        ] {
            let input = RequestInput {
                timeout_seconds: Some(bad.clone()),
                ..valid_input()
            };
            assert_eq!(
                fields(input.validate().unwrap_err()),
                ["timeout_seconds"],
                "{bad}"
            );
        }
        let input = RequestInput {
            timeout_seconds: Some(json!(2_592_000)),
            ..valid_input()
        };
        assert!(input.validate().is_ok());
    }

    #[test]
    fn default_response_must_fit_the_config() {
        let input = RequestInput {
            default_response: Some(json!("maybe")),
            ..valid_input()
        };
        assert_eq!(
            input.validate().unwrap_err().to_string(),
            "default_response 'maybe' is not one of the options: approve, reject"
        );
        let input = RequestInput {
            default_response: Some(Value::Null),
            ..valid_input()
        };
        assert_eq!(input.validate().unwrap().default_response, None);
    }

    #[test]
    fn context_and_metadata_must_be_objects() {
        let input = RequestInput {
            context: Some(json!("text")),
            metadata: Some(json!([1])),
            ..valid_input()
        };
        assert_eq!(
            fields(input.validate().unwrap_err()),
            ["context", "metadata"]
        );
        let input = RequestInput {
            context: Some(json!({"post_id": 7})),
            metadata: Some(json!({"run": "a"})),
            ..valid_input()
        };
        let valid = input.validate().unwrap();
        assert_eq!(valid.context, Some(json!({"post_id": 7})));
        assert_eq!(valid.metadata, Some(json!({"run": "a"})));
    }

    #[test]
    fn platform_and_callback_are_checked() {
        let input = RequestInput {
            platform: Some("make".into()),
            platform_version: Some("v".repeat(101)),
            callback_url: Some("javascript:alert(1)".into()),
            ..valid_input()
        };
        assert_eq!(
            fields(input.validate().unwrap_err()),
            ["platform", "platform_version", "callback_url"]
        );
        let input = RequestInput {
            platform: Some("n8n".into()),
            callback_url: Some("https://hooks.example.com/cb?x=1".into()),
            ..valid_input()
        };
        let valid = input.validate().unwrap();
        assert_eq!(valid.platform, Platform::N8n);
        assert_eq!(
            valid.callback_url.as_deref(),
            Some("https://hooks.example.com/cb?x=1")
        );
    }

    #[test]
    fn urls_need_a_host() {
        assert!(parse_http_url("u", "https://").is_err());
        assert!(parse_http_url("u", "http:///path").is_err());
        assert!(parse_http_url("u", "https://a b.com").is_err());
        assert!(parse_http_url("u", "http://localhost:8080/x").is_ok());
    }

    #[test]
    fn tags_are_distinct_short_texts() {
        assert_eq!(
            parse_tags(Some(&json!([" a ", "b", "a"]))).unwrap(),
            ["a", "b"]
        );
        assert!(parse_tags(None).unwrap().is_empty());
        assert!(parse_tags(Some(&json!(null))).unwrap().is_empty());
        for bad in [
            json!("a"),
            json!([""]),
            json!([7]),
            json!(["x".repeat(51)]),
            json!(vec!["t"; 21]),
        ] {
            assert!(parse_tags(Some(&bad)).is_err(), "{bad}");
        }
    }
}
