//! Who a request is offered to: every active member of its loop, or, when
//! the loop assigns its requests, a few of them in turn or the least
//! loaded, and the next few when nobody claims it in time.

use std::collections::HashMap;

use reviewloop_domain::{Assignment, BroadcastEntry, Loop, Quorum, Strategy, UserId, ValidRequest};
use reviewloop_ports::StoreError;

use super::RequestService;
use crate::loops::LoopCache;
use crate::ports::event_id;
use reviewloop_wire::events as wire;

/// Offers to whoever is left, for a loop that went back to broadcast.
const EVERYONE: Assignment = Assignment {
    strategy: Strategy::Broadcast,
    per_request: 0,
    reassign_after_seconds: None,
};

/// The active members of `lp` who may be offered a request of `creator`
/// under `quorum`, in one order every instance agrees on.
fn candidates(lp: &Loop, creator: &UserId, quorum: Option<Quorum>) -> Vec<UserId> {
    let excluded = quorum.is_some_and(|q| q.exclude_requester);
    let mut ids: Vec<UserId> = lp
        .active_members()
        .map(|m| m.user_id)
        .filter(|u| !(excluded && u == creator))
        .collect();
    ids.sort_by_key(|u| u.to_string());
    ids
}

impl RequestService {
    /// The broadcast entries of a new request with `fields` by `creator`
    /// in `lp`: every active member, or those its assignment picks.
    pub(super) async fn first_offer(
        &self,
        lp: &Loop,
        fields: &ValidRequest,
        creator: &UserId,
    ) -> Result<Vec<BroadcastEntry>, StoreError> {
        let email = self.ports.mailer.is_some();
        let Some(assignment) = lp.assignment else {
            return Ok(lp.broadcast_entries(fields.priority, email));
        };
        let count = assignment.offer_size(fields.quorum.map(|q| q.count as usize));
        let candidates = candidates(lp, creator, fields.quorum);
        let chosen = self
            .choose(lp, assignment, &candidates, (&[], None), count)
            .await?;
        Ok(lp.entries_for(fields.priority, email, |u| chosen.contains(u)))
    }

    /// The next `count` of `candidates` not in `already`, by `assignment`.
    /// Round robin starts at `from`, or, for a new request, at the loop's
    /// shared turn, which this offer moves on.
    async fn choose(
        &self,
        lp: &Loop,
        assignment: Assignment,
        candidates: &[UserId],
        (already, from): (&[UserId], Option<u64>),
        count: usize,
    ) -> Result<Vec<UserId>, StoreError> {
        let (turn, loads) = match (assignment.strategy, from) {
            (Strategy::RoundRobin, Some(from)) => (from, HashMap::new()),
            (Strategy::RoundRobin, None) => (
                self.ports.loops.take_turns(&lp.id, count as u64).await?,
                HashMap::new(),
            ),
            (Strategy::LeastLoaded, _) => (
                0,
                self.ports
                    .requests
                    .open_loads(&lp.id)
                    .await?
                    .into_iter()
                    .collect(),
            ),
            (Strategy::Broadcast, _) => (0, HashMap::new()),
        };
        Ok(assignment.choose(candidates, already, count, turn, &loads))
    }

    /// Offers every pending request nobody claimed in time to the next
    /// members its loop's assignment picks, up to `batch` of them, each
    /// with `request.reassigned`; returns how many reached someone new. A
    /// request with nobody left to offer it to stops being reassigned.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn reassign_due(&self, batch: u32) -> Result<usize, StoreError> {
        let now = self.ports.clock.now();
        let due = self.ports.requests.due_reassignments(now, batch).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let email = self.ports.mailer.is_some();
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        for mut request in due {
            loops.load(&*self.ports.loops, request.loop_id).await?;
            let Some(lp) = loops.get(&request.loop_id) else {
                continue;
            };
            let assignment = lp.assignment.unwrap_or(EVERYONE);
            let candidates = candidates(lp, &request.creator_id, request.quorum);
            let already: Vec<UserId> = request.broadcasted_to.iter().map(|b| b.user_id).collect();
            // The next ones after the last it was offered to: the loop's
            // shared turn is for new requests, so an offer to more never
            // moves it (nor gives a member two in a row).
            let from = already
                .iter()
                .rev()
                .find_map(|u| candidates.iter().position(|c| c == u))
                .map_or(0, |at| at as u64 + 1);
            let chosen = self
                .choose(
                    lp,
                    assignment,
                    &candidates,
                    (&already, Some(from)),
                    assignment.per_request,
                )
                .await?;
            let entries = lp.entries_for(request.priority, email, |u| chosen.contains(u));
            let Ok(added) = request.reassign(entries, now) else {
                continue;
            };
            let offered_to: Vec<UserId> = request.broadcasted_to[already.len()..]
                .iter()
                .map(|b| b.user_id)
                .collect();
            let events = if added > 0 {
                vec![wire::reassigned_event(
                    event_id(&*self.ports.ids, now),
                    &request,
                    lp,
                    &offered_to,
                    now,
                )]
            } else {
                Vec::new()
            };
            changes.push((request, events));
        }
        if changes.is_empty() {
            return Ok(0);
        }
        let landed = self.ports.requests.reassign_requests(&changes).await?;
        Ok(self
            .announce(&changes, &landed)
            .iter()
            .filter(|r| r.reassign_after_seconds.is_some())
            .count())
    }
}

#[cfg(test)]
mod tests;
