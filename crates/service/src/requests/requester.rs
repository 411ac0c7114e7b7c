//! What the requester changes: the request's fields, a cancel, its rating.

use reviewloop_domain::{
    EventType, FeedbackInput, Permission, RequestId, RequestPatch, ReviewRequest,
};

use super::{Actor, ChangeRequestError, RequestService};
use crate::principal::Principal;

impl RequestService {
    /// Changes a pending request (requester only).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        caller: &Principal,
        id: &RequestId,
        patch: RequestPatch,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        // A new callback must pass the guard, as at creation.
        if let Some(serde_json::Value::String(url)) = &patch.callback_url {
            crate::ports::check_target(&*self.ports.guard, "callback_url", url).await?;
        }
        self.change(caller, id, Actor::Requester, |request, _, now| {
            request.update(patch.clone(), now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// Cancels a pending or claimed request (requester only).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn cancel(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            request.cancel(now)?;
            Ok(vec![EventType::RequestCancelled])
        })
        .await
    }

    /// Rates a completed request (requester only); replaces earlier feedback.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn feedback(
        &self,
        caller: &Principal,
        id: &RequestId,
        input: FeedbackInput,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            request.record_feedback(input.clone(), now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// Sets only the rating and comment of the requester's feedback,
    /// keeping its other parts; read and changed in one step, so a
    /// concurrent API call cannot be lost in between.
    pub async fn rate(
        &self,
        caller: &Principal,
        id: &RequestId,
        rating: Option<f64>,
        comment: Option<String>,
    ) -> Result<ReviewRequest, ChangeRequestError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            let input = FeedbackInput::rating_and_comment(
                request.feedback.as_ref(),
                rating,
                comment.clone(),
            );
            request.record_feedback(input, now)?;
            Ok(Vec::new())
        })
        .await
    }
}
