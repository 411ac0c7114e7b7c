//! Reading requests: one (at once or when it settles), a list, a reviewer's inbox.

use std::sync::Arc;

use reviewloop_domain::{LoopId, Permission, RequestId, RequestStatus, ReviewRequest};
use reviewloop_ports::{InboxView, RequestPage, RequestQuery};

use super::{ListLoopRequestsError, ListRequestsInput, RequestService};
use crate::error::{Missing, QueryError, ReadError};
use crate::principal::Principal;

/// Inbox page size when none is asked for, and the largest allowed.
const INBOX_DEFAULT_LIMIT: u32 = 50;
const INBOX_MAX_LIMIT: u32 = 200;

impl RequestService {
    /// One request the caller created or was sent (shared with other
    /// readers of the same state, not copied).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<Arc<ReviewRequest>, ReadError> {
        caller.require(Permission::RequestsRead)?;
        self.ports
            .requests
            .request_for_viewer(id, &caller.user_id)
            .await?
            .filter(|(request, active)| {
                request.test == caller.test && request.is_readable_by(&caller.user_id, *active)
            })
            .map(|(request, _)| request)
            .ok_or(Missing::Request.into())
    }

    /// How many requests joined `request` (asking the same question while
    /// it was open), for its requester, who read it through
    /// [`RequestService::get`]; 0 for anyone else, and for a request
    /// nothing could join.
    pub async fn joined_count(
        &self,
        caller: &Principal,
        request: &ReviewRequest,
    ) -> Result<u64, ReadError> {
        if request.creator_id != caller.user_id
            || request.coalesce_key.is_none()
            || request.coalesced_into.is_some()
        {
            return Ok(0);
        }
        // While it is open, those that joined wait with it (a claim on it
        // is not theirs); once it ended, they ended the same way.
        let status = match request.status {
            RequestStatus::Claimed => RequestStatus::Pending,
            other => other,
        };
        Ok(self
            .ports
            .requests
            .follower_count(&request.id, status)
            .await?)
    }

    /// [`RequestService::get`], but while the request is still open, waits
    /// up to `wait` for it to be answered, time out or be cancelled. The
    /// wait holds no connection and reads nothing: it sleeps until a
    /// change to this request is announced (by this instance's writers or,
    /// on PostgreSQL, the other instances' notifications), then reads once.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_when_settled(
        &self,
        caller: &Principal,
        id: &RequestId,
        wait: std::time::Duration,
    ) -> Result<Arc<ReviewRequest>, ReadError> {
        let deadline = tokio::time::Instant::now() + wait;
        let watcher = self.ports.changes.watch_request(*id);
        // Listening before the read: a change between the read and the
        // sleep still wakes us.
        let mut changed = Box::pin(watcher.notify().notified());
        let mut request = self.get(caller, id).await?;
        loop {
            let stopping = self.ports.changes.is_stopping();
            if !request.status.is_open() || tokio::time::Instant::now() >= deadline || stopping {
                return Ok(request);
            }
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
            changed = Box::pin(watcher.notify().notified());
            request = if request.creator_id == caller.user_id {
                // The creator may always read it: every waiting creator
                // can share one read of the new state.
                self.newest_for_creator(&watcher, request).await?
            } else {
                // A reviewer's right to read it may have ended meanwhile.
                self.get(caller, id).await?
            };
        }
    }

    /// The newest state of a request its creator waits for: from whoever
    /// read or wrote it last, or read now by one waiter for all of them.
    async fn newest_for_creator(
        &self,
        watcher: &crate::watch::RequestWatcher,
        seen: Arc<ReviewRequest>,
    ) -> Result<Arc<ReviewRequest>, ReadError> {
        let shared = watcher.shared();
        if let Some(newer) = shared.newer_than(seen.version) {
            return Ok(newer);
        }
        let _turn = shared.reading().await;
        if let Some(newer) = shared.newer_than(seen.version) {
            return Ok(newer);
        }
        let fresh = Arc::new(
            self.ports
                .requests
                .request_by_id(&seen.id)
                .await?
                .ok_or(Missing::Request)?,
        );
        shared.publish(fresh.clone());
        Ok(fresh)
    }

    /// A page of the requests the caller created, with the query it answers.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(
        &self,
        caller: &Principal,
        input: ListRequestsInput,
    ) -> Result<(RequestPage, RequestQuery), QueryError> {
        caller.require(Permission::RequestsRead)?;
        let query = input.into_query(caller)?;
        Ok((self.ports.requests.list_requests(&query).await?, query))
    }

    /// A page of the requests the caller created in one loop it can see.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_in_loop(
        &self,
        caller: &Principal,
        loop_id: &LoopId,
        mut input: ListRequestsInput,
    ) -> Result<(RequestPage, RequestQuery), ListLoopRequestsError> {
        caller.require(Permission::RequestsRead)?;
        self.visible_loop::<ListLoopRequestsError>(caller, loop_id)
            .await?;
        input.loop_id = Some(loop_id.to_string());
        let query = input.into_query(caller)?;
        Ok((self.ports.requests.list_requests(&query).await?, query))
    }

    /// One view of the caller's inbox ([`InboxView::Actionable`] is what it
    /// can still act on), most urgent first, then oldest.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn inbox(
        &self,
        caller: &Principal,
        view: InboxView,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> Result<Vec<ReviewRequest>, QueryError> {
        caller.require(Permission::RequestsRead)?;
        let limit = limit.unwrap_or(INBOX_DEFAULT_LIMIT);
        if !(1..=INBOX_MAX_LIMIT).contains(&limit) {
            return Err(reviewloop_domain::ValidationError::field(
                "limit",
                format!("limit must be a whole number from 1 to {INBOX_MAX_LIMIT}"),
            )
            .into());
        }
        // Test requests are sent to nobody, and a test-mode key sees no
        // live request: its inbox is always empty.
        if caller.test {
            return Ok(Vec::new());
        }
        Ok(self
            .ports
            .requests
            .inbox(&caller.user_id, view, limit, offset.unwrap_or(0))
            .await?)
    }
}
