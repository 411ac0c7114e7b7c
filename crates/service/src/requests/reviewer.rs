//! What a reviewer does: claim, release, answer.

use reviewloop_domain::{EventType, Permission, RequestId, ReviewRequest};
use serde_json::Value;

use super::{Actor, ChangeRequestError, RequestService};
use crate::principal::Principal;

impl RequestService {
    /// Claims a request for the caller.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn claim(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        let by = caller.user_id;
        self.change(caller, id, Actor::Reviewer, |request, _, now| {
            Ok(request
                .claim(by, now)?
                .then_some(EventType::RequestClaimed)
                .into_iter()
                .collect())
        })
        .await
    }

    /// Gives back a claim the caller holds.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn release(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        let by = caller.user_id;
        self.change(caller, id, Actor::Reviewer, |request, _, now| {
            request.release(by, now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// Answers a request: from pending, or from a claim the caller holds,
    /// with the reviewer's `comment` if any.
    /// An answer to a quorum request fires `request.answered`; the answer
    /// that decides a request (the only one, without a quorum) also fires
    /// `request.completed` and seals the receipt, in the same write, so
    /// among racing last answers exactly one decides.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn respond(
        &self,
        caller: &Principal,
        id: &RequestId,
        answer: Option<Value>,
        comment: Option<&str>,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        let answer = answer.ok_or_else(|| {
            reviewloop_domain::ValidationError::field("response_data", "response_data is required")
        })?;
        let comment = reviewloop_domain::parse_comment(comment)?;
        let by = caller.user_id;
        let sealer = self.ports.receipts.sealer().await?;
        self.change(caller, id, Actor::Reviewer, |request, _, now| {
            let quorum = request.quorum.is_some();
            let decided = request.respond(by, answer.clone(), comment.clone(), now)?;
            let mut events = Vec::with_capacity(2);
            if quorum {
                events.push(EventType::RequestAnswered);
            }
            if decided {
                sealer.seal(request);
                events.push(EventType::RequestCompleted);
            }
            Ok(events)
        })
        .await
    }
}
