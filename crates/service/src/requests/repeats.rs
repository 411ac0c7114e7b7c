//! Fewer questions for people: a new request joins an open one that asks
//! the same question, or takes a person's recent answer to it; the
//! requests that joined one end when it ends, the same way.

use reviewloop_domain::{EventType, Loop, QuestionKey, RequestStatus, ReviewRequest, ValidRequest};
use reviewloop_ports::StoreError;

use super::RequestService;
use crate::loops::LoopCache;
use crate::ports::event_id;
use crate::receipts::SweepError;
use reviewloop_wire::events as wire;

/// What a new request does about the requests before it with its key.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Repeat {
    /// It has no key: people are asked, as always.
    Unkeyed,
    /// People are asked; it keeps its key (for reuse) and, when its loop
    /// or body coalesces, takes in later requests with it.
    Ask { key: QuestionKey, coalesce: bool },
    /// It joins this open request.
    Join(Box<ReviewRequest>),
    /// It takes this request's answer.
    Reuse(Box<ReviewRequest>),
}

impl RequestService {
    /// Looks for what a new request with `fields` in `lp` repeats, at
    /// `now` (its account's clock).
    pub(super) async fn repeat_of(
        &self,
        creator: &reviewloop_domain::UserId,
        lp: &Loop,
        fields: &ValidRequest,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Repeat, StoreError> {
        let Some(key) = fields.question_key(lp.keys_questions()) else {
            return Ok(Repeat::Unkeyed);
        };
        let requests = &*self.ports.requests;
        if let (Some(window), false) = (lp.reuse_answers, fields.test) {
            let since = now - chrono::Duration::seconds(window.window_seconds);
            if let Some(earlier) = requests
                .answer_to_reuse(creator, &lp.id, &key, since)
                .await?
                .filter(|earlier| {
                    earlier.is_reusable_answer()
                        && earlier.answers_like(fields.response_type, &fields.response_config)
                })
            {
                return Ok(Repeat::Reuse(Box::new(earlier)));
            }
        }
        let coalesce = fields.coalesce_key.is_some() || lp.coalesce.is_some();
        if !coalesce {
            return Ok(Repeat::Ask { key, coalesce });
        }
        match requests
            .open_request_with_key(creator, &lp.id, fields.test, &key)
            .await?
        {
            Some(mut open) if open.coalescing_expired(lp.coalesce, now) => {
                // Past its loop's window it takes no more in; if another
                // writer changed it first, the insert's unique index
                // still keeps two from asking at once.
                open.stop_coalescing(now);
                match requests.update_request(&open, &[]).await {
                    Ok(()) => {
                        open.written();
                        self.ports.changes.request_written(&open);
                    }
                    Err(StoreError::Conflict(_) | StoreError::NotFound) => {}
                    Err(e) => return Err(e),
                }
                Ok(Repeat::Ask { key, coalesce })
            }
            Some(open) => Ok(Repeat::Join(Box::new(open))),
            None => Ok(Repeat::Ask { key, coalesce }),
        }
    }

    /// Ends every open request that joined `ended` the way it ended, each
    /// with its own events (and so its own callback and webhooks) and
    /// receipt; returns how many. Called once `ended` is written; what a
    /// crash leaves open, [`RequestService::settle_stranded`] finds.
    pub(crate) async fn settle_followers_of(
        &self,
        ended: &ReviewRequest,
    ) -> Result<usize, SweepError> {
        if ended.status.is_open() || ended.coalesce_key.is_none() || ended.coalesced_into.is_some()
        {
            return Ok(0);
        }
        let followers = self.ports.requests.open_followers(&ended.id).await?;
        self.settle(ended, followers).await
    }

    /// Settles up to `batch` requests left open after the one they joined
    /// ended (an instance stopped between the two writes, or a request
    /// joined just as the other ended); returns how many it ended.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn settle_stranded(&self, batch: u32) -> Result<usize, SweepError> {
        let stranded = self.ports.requests.stranded_followers(batch).await?;
        let mut settled = 0;
        let mut by_request: Vec<(reviewloop_domain::RequestId, Vec<ReviewRequest>)> = Vec::new();
        for follower in stranded {
            let Some(into) = follower.coalesced_into else {
                continue;
            };
            match by_request.iter_mut().find(|(id, _)| *id == into) {
                Some((_, followers)) => followers.push(follower),
                None => by_request.push((into, vec![follower])),
            }
        }
        for (into, followers) in by_request {
            if let Some(ended) = self.ports.requests.request_by_id(&into).await? {
                settled += self.settle(&ended, followers).await?;
            }
        }
        Ok(settled)
    }

    async fn settle(
        &self,
        ended: &ReviewRequest,
        followers: Vec<ReviewRequest>,
    ) -> Result<usize, SweepError> {
        if followers.is_empty() {
            return Ok(0);
        }
        let kind = match ended.status {
            RequestStatus::Completed => EventType::RequestCompleted,
            RequestStatus::Timeout => EventType::RequestTimeout,
            RequestStatus::Cancelled => EventType::RequestCancelled,
            RequestStatus::Pending | RequestStatus::Claimed => return Ok(0),
        };
        let sealer = if ended.test {
            None
        } else {
            Some(self.ports.receipts.sealer().await?)
        };
        let now = self.now_for(&ended.creator_id, ended.test).await?;
        let real = self.ports.clock.now();
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        for mut follower in followers {
            if follower.follow(ended, now).is_err() {
                continue;
            }
            if let Some(sealer) = &sealer {
                sealer.seal(&mut follower);
            }
            loops.load(&*self.ports.loops, follower.loop_id).await?;
            let Some(lp) = loops.get(&follower.loop_id) else {
                continue;
            };
            let event = wire::request_event(
                event_id(&*self.ports.ids, real),
                kind,
                &follower,
                lp,
                None,
                real,
            );
            changes.push((follower, vec![event]));
        }
        if changes.is_empty() {
            return Ok(0);
        }
        let landed = self.ports.requests.settle_followers(&changes).await?;
        Ok(self.announce(&changes, &landed).len())
    }

    /// After `ended` was written: settles its followers, or leaves them
    /// to the sweep if that fails (the request's own change stands).
    pub(super) async fn after_end(&self, ended: &ReviewRequest) {
        if let Err(e) = self.settle_followers_of(ended).await {
            tracing::warn!(request = %ended.id, error = ?e, "requests that joined it are left to the sweep");
        }
    }
}

#[cfg(test)]
mod tests;
