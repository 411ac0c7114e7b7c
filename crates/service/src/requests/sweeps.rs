//! Background passes: escalating what nobody claimed, timing out what nobody answered.

use reviewloop_domain::EventType;

use super::RequestService;
use crate::loops::LoopCache;
use crate::ports::event_id;
use reviewloop_ports::StoreError;
use reviewloop_wire::events as wire;

impl RequestService {
    /// Escalates every pending request whose escalation is due, up to
    /// `batch` of them, and returns how many escalated. The other loop must
    /// be one the requester may use; otherwise the request keeps to its
    /// loop and drops the escalation.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn escalate_due(&self, batch: u32) -> Result<usize, StoreError> {
        let now = self.ports.clock.now();
        let due = self.ports.requests.due_escalations(now, batch).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        for mut request in due {
            let Some(escalation) = request.escalation else {
                continue;
            };
            loops.load(&*self.ports.loops, request.loop_id).await?;
            loops
                .load(&*self.ports.loops, escalation.to_loop_id)
                .await?;
            let Some(home) = loops.get(&request.loop_id) else {
                continue;
            };
            // The requester sees who its request went to: it may go only
            // among people the requester may see.
            let target = loops
                .get(&escalation.to_loop_id)
                .filter(|to| to.is_visible_to(&request.creator_id));
            let mut events = Vec::new();
            match target {
                Some(to) => {
                    let priority = if escalation.raise_priority {
                        request.priority.raised()
                    } else {
                        request.priority
                    };
                    let reviewers = to.broadcast_entries(priority, self.ports.mailer.is_some());
                    if request.escalate(reviewers, now).is_err() {
                        continue;
                    }
                    events.push(wire::request_event(
                        event_id(&*self.ports.ids, now),
                        EventType::RequestEscalated,
                        &request,
                        home,
                        None,
                        now,
                    ));
                }
                None => request.drop_escalation(now),
            }
            changes.push((request, events));
        }
        if changes.is_empty() {
            return Ok(0);
        }
        let landed = self.ports.requests.escalate_requests(&changes).await?;
        // A dropped escalation lands too, but did not escalate.
        Ok(self
            .announce(&changes, &landed)
            .iter()
            .filter(|r| r.escalated_at.is_some())
            .count())
    }

    /// Times out every open request that is due, up to `batch` of them, and
    /// returns how many it ended. A request another writer changed first
    /// (answered, cancelled, or timed out by another instance) is skipped.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn time_out_due(&self, batch: u32) -> Result<usize, crate::receipts::SweepError> {
        let now = self.ports.clock.now();
        // Loops are read once per pass, not once per request.
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        let due = self.ports.requests.due_requests(now, batch).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let sealer = self.ports.receipts.sealer().await?;
        for mut request in due {
            if request.time_out(now).is_err() {
                continue;
            }
            sealer.seal(&mut request);
            loops.load(&*self.ports.loops, request.loop_id).await?;
            let Some(lp) = loops.get(&request.loop_id) else {
                continue;
            };
            let event = wire::request_event(
                event_id(&*self.ports.ids, now),
                EventType::RequestTimeout,
                &request,
                lp,
                None,
                now,
            );
            changes.push((request, vec![event]));
        }
        if changes.is_empty() {
            return Ok(0);
        }
        // One transaction for the pass; a request answered meanwhile is
        // simply not among those that landed.
        let landed = self.ports.requests.update_requests(&changes).await?;
        let ended = self.announce(&changes, &landed);
        for request in &ended {
            let late = now - request.timeout_at;
            self.ports
                .meter
                .timeout_lag(late.num_milliseconds() as f64 / 1000.0);
        }
        for request in &ended {
            self.settle_followers_of(request).await?;
        }
        Ok(ended.len())
    }
}
