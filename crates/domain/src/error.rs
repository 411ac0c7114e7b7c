//! Typed errors of the domain: validation failures and refused transitions.

use std::fmt;

/// One field that failed validation, with a message a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's name as the API spells it (`name`, `response_config.options`).
    pub field: String,
    /// What is wrong, as a whole sentence fragment that names the field.
    pub message: String,
}

/// One or more fields that failed validation. Its `Display` joins every
/// message, so a client sees all of its mistakes at once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationError {
    /// The failures, in the order the fields were checked.
    pub errors: Vec<FieldError>,
}

impl ValidationError {
    /// A validation error about one field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            errors: vec![FieldError {
                field: field.into(),
                message: message.into(),
            }],
        }
    }

    /// Adds the failures of `other` to this one.
    pub fn extend(&mut self, other: ValidationError) {
        self.errors.extend(other.errors);
    }

    /// True when no failure was recorded.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Records the error of `result`, if any, and returns its value.
    pub fn collect<T>(&mut self, result: Result<T, ValidationError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.extend(error);
                None
            }
        }
    }

    /// `Ok(())` when nothing was recorded, otherwise the collected error.
    pub fn into_result(self) -> Result<(), ValidationError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let messages: Vec<&str> = self.errors.iter().map(|e| e.message.as_str()).collect();
        f.write_str(&messages.join("; "))
    }
}

impl std::error::Error for ValidationError {}

/// A state transition the state machine refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    /// Another reviewer holds the claim.
    #[error("Request already claimed")]
    AlreadyClaimed,
    /// The request is completed, timed out or cancelled.
    #[error("Request is not open")]
    NotOpen,
    /// Release by someone who does not hold the claim.
    #[error("Request is not claimed by you")]
    NotClaimedByYou,
    /// Creator-side changes (update, cancel) need a request in one of the given states.
    #[error("Request is {status}; only {allowed} requests can be {action}")]
    WrongStatus {
        /// The request's current status.
        status: String,
        /// The statuses that allow the action, in words.
        allowed: &'static str,
        /// What was attempted, in the past participle (`updated`, `cancelled`).
        action: &'static str,
    },
    /// A claim on a request that several reviewers answer.
    #[error("This request needs answers from several reviewers: answer it without claiming")]
    QuorumNotClaimable,
    /// A second answer by the same reviewer to a quorum request.
    #[error("You have already answered this request")]
    AlreadyAnswered,
    /// The requester answering its own quorum request.
    #[error("The requester may not answer a request that needs a quorum")]
    RequesterExcluded,
    /// An answer from someone the request was not sent to.
    #[error("This request was not sent to you")]
    NotSentToYou,
    /// A receipt for a request without a decision, or a second one.
    #[error("Request has no decision to sign, or is signed already")]
    NotSealable,
    /// The request's timeout has not been reached yet.
    #[error("Request is not due for timeout")]
    NotDue,
    /// A member entry given to a loop it does not belong to.
    #[error("Member belongs to another loop")]
    ForeignMember,
    /// A redelivery of a delivery that is still being attempted.
    #[error("Delivery is still being attempted; redeliver it once it has succeeded or failed")]
    StillPending,
    /// A member transition that the member state machine does not allow.
    #[error("Member cannot move from {from} to {to}")]
    Member {
        /// Status before.
        from: &'static str,
        /// Status asked for.
        to: &'static str,
    },
}
