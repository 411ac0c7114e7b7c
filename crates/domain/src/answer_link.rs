//! One-click answers: a link in a member's email that gives one answer to
//! one request as that member. The link's token is a secret; only its
//! hash is kept. Following it (a GET) only asks for confirmation, since
//! mail scanners fetch every link; confirming (a POST) answers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::id::{RequestId, UserId};
use crate::request::ReviewRequest;
use crate::response::{ResponseConfig, ResponseType, ReviewerHints};

/// The most options a `single_select` request may have for its email to
/// carry one link per option.
pub const MAX_ONE_CLICK_OPTIONS: usize = 6;

/// One answer offered by a link, bound to one member of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerLink {
    /// The SHA-256 (hex) of the token in the link.
    pub token_hash: String,
    /// The request it answers.
    pub request_id: RequestId,
    /// The member it answers as.
    pub user_id: UserId,
    /// The answer it gives.
    pub answer: Value,
    /// The answer in words, as the email's button says it.
    pub label: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it answered; a used link is spent.
    pub used_at: Option<DateTime<Utc>>,
}

/// The answers an email may offer as one click each, in the order the
/// request lists them, with their words: both answers of a `boolean`
/// request, every option of a `single_select` request with at most
/// [`MAX_ONE_CLICK_OPTIONS`]; none for other requests, or for a request
/// whose bounds no longer parse (a person answers those on its page).
pub fn one_click_answers(request: &ReviewRequest) -> Vec<(Value, String)> {
    let Ok(config) = request.config() else {
        return Vec::new();
    };
    match (request.response_type, config) {
        (ResponseType::Boolean, _) => {
            let hints = ReviewerHints::of(request.response_config.as_value());
            vec![
                (
                    Value::Bool(true),
                    hints.true_label.unwrap_or_else(|| "Approve".into()),
                ),
                (
                    Value::Bool(false),
                    hints.false_label.unwrap_or_else(|| "Reject".into()),
                ),
            ]
        }
        (ResponseType::SingleSelect, ResponseConfig::SingleSelect { options })
            if options.len() <= MAX_ONE_CLICK_OPTIONS =>
        {
            options
                .iter()
                .map(|o| {
                    (
                        Value::String(o.value.clone()),
                        o.label.clone().unwrap_or_else(|| o.value.clone()),
                    )
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
