//! Changing a pending request: the requester's patch, checked whole
//! before anything changes.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use super::input::{parse_object, parse_request_text, parse_tags, parse_timeout_seconds};
use super::{ChangeError, Platform, Priority, RequestPatch, RequestStatus, ReviewRequest};
use crate::error::{TransitionError, ValidationError};
use crate::form::Form;
use crate::response::RequestConfig;

impl ReviewRequest {
    /// Changes a pending request. Every field is checked before anything
    /// changes, so a refused patch leaves the request as it was.
    pub fn update(&mut self, patch: RequestPatch, now: DateTime<Utc>) -> Result<(), ChangeError> {
        if self.status != RequestStatus::Pending {
            return Err(TransitionError::WrongStatus {
                status: self.status.to_string(),
                allowed: "pending",
                action: "updated",
            }
            .into());
        }
        if patch.is_empty() {
            return Err(ValidationError::field(
                "body",
                "nothing to update: send request_text, priority, context, response_config, default_response, timeout_seconds, tags, platform or callback_url",
            )
            .into());
        }
        // A request that joined another ends with it, with its answer: it
        // has nothing of its own left to change.
        if self.coalesced_into.is_some() {
            return Err(ValidationError::field(
                "body",
                "this request joined an open request that asks the same question (coalesced_into) and ends with it: cancel it to ask something else",
            )
            .into());
        }
        let question_changes = patch.request_text.is_some()
            || patch.context.is_some()
            || patch.response_config.is_some();
        // Others joined this request for its question: changing it would
        // give them the answer to another.
        if question_changes && self.coalescing {
            return Err(ValidationError::field(
                "body",
                "other requests may have joined this one for its question (coalesce_key): its request_text, context and response_config stay as they are; cancel it and create another to ask something else",
            )
            .into());
        }
        let mut errors = ValidationError::default();
        let request_text = patch
            .request_text
            .as_deref()
            .and_then(|t| errors.collect(parse_request_text(t)));
        let priority = patch
            .priority
            .as_deref()
            .and_then(|p| errors.collect(Priority::parse(p)));
        let context = patch
            .context
            .map(|c| errors.collect(parse_object("context", Some(c))).flatten());
        let config_raw = patch.response_config.filter(|c| !c.is_null());
        let new_config = config_raw
            .as_ref()
            .and_then(|raw| errors.collect(RequestConfig::parse(self.response_type, Some(raw))));
        // A new configuration that is wrong is reported alone: the default
        // is checked against the configuration that will hold.
        let config = match (&config_raw, &new_config) {
            (Some(_), Some(new)) => new.typed().ok(),
            (Some(_), None) => None,
            (None, _) => errors.collect(self.config()),
        };
        let default_response = match patch.default_response {
            Some(Value::Null) => None,
            Some(value) => Some(value),
            None => self.default_response.clone(),
        };
        if let (Some(config), Some(default)) = (config, &default_response) {
            errors.collect(Form::single(config.for_default()).validate(
                "default_response",
                default,
                &Map::new(),
            ));
        }
        let timeout_seconds = patch
            .timeout_seconds
            .as_ref()
            .and_then(|t| errors.collect(parse_timeout_seconds(t)));
        if let Some(seconds) = timeout_seconds {
            if self.created_at + Duration::seconds(seconds) <= now {
                errors.extend(ValidationError::field(
                    "timeout_seconds",
                    "timeout_seconds counts from the request's creation and would already have passed",
                ));
            }
        }
        let tags = patch
            .tags
            .as_ref()
            .and_then(|t| errors.collect(parse_tags(Some(t))));
        let platform = patch
            .platform
            .as_deref()
            .and_then(|p| errors.collect(Platform::parse(p)));
        let callback_url = match patch.callback_url {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(url)) => errors
                .collect(crate::text::parse_http_url("callback_url", &url))
                .map(Some),
            Some(_) => {
                errors.extend(ValidationError::field(
                    "callback_url",
                    "callback_url must be an http(s) URL, or null to remove it",
                ));
                None
            }
        };
        // What the request was made as stays: the same value is no change.
        let fixed = [
            (
                "processing_type",
                patch.processing_type,
                self.processing_type.as_str(),
            ),
            (
                "response_type",
                patch.response_type,
                self.response_type.as_str(),
            ),
        ];
        for (field, given, own) in fixed {
            if given.as_deref().is_some_and(|g| g != own) {
                errors.extend(ValidationError::field(
                    field,
                    format!("{field} cannot change once a request is made (it is {own}): cancel it and make a new one"),
                ));
            }
        }
        errors.into_result()?;

        // Its answer no longer answers the question its key names, so no
        // later request may reuse it.
        if question_changes {
            self.record.coalesce_key = None;
        }
        if let Some(url) = callback_url {
            self.record.callback_url = url;
        }

        if let Some(tags) = tags {
            self.record.tags = tags;
        }
        if let Some(platform) = platform {
            self.record.platform = platform;
        }
        if let Some(text) = request_text {
            self.record.request_text = text;
        }
        if let Some(priority) = priority {
            self.record.priority = priority;
        }
        if let Some(context) = context {
            self.record.context = context;
        }
        if let Some(config) = new_config {
            self.record.response_config = config;
        }
        self.record.default_response = default_response;
        if let Some(seconds) = timeout_seconds {
            self.record.timeout_seconds = seconds;
            self.record.timeout_at = self.created_at + Duration::seconds(seconds);
        }
        self.record.updated_at = now;
        Ok(())
    }
}
