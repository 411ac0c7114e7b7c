//! Creating a request, and trying a loop's rules on a sample without creating one.

use reviewloop_domain::{
    Event, EventType, LoopId, ObjectId, Permission, RequestId, RequestInput, ReviewRequest,
};
use reviewloop_ports::StoreError;
use serde_json::Value;

use super::repeats::Repeat;
use super::routing::{self, Decision, Routing};
use super::{CreateRequestError, CreatedRequest, RequestService, TestRulesError};
use crate::error::{Bug, Busy, Denied, Missing};
use crate::ports::{check_target, event_id};
use crate::principal::Principal;
use reviewloop_wire::events as wire;

/// How often a create looks again for what it repeats after losing a
/// race for its key: each loss means another request took it.
const REPEAT_ATTEMPTS: usize = 4;

impl RequestService {
    /// Creates a request in a loop the caller can see and broadcasts it to
    /// the loop's active members, in one transaction with `request.created`.
    /// With `id` (an idempotent retry), a request the caller already created
    /// under that id is answered instead of a new one.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        caller: &Principal,
        loop_id: &LoopId,
        input: RequestInput,
        id: Option<ObjectId>,
    ) -> Result<CreatedRequest, CreateRequestError> {
        caller.require(Permission::RequestsWrite)?;
        let lp = self
            .visible_loop::<CreateRequestError>(caller, loop_id)
            .await?;
        let mut fields = input.validate()?;
        if !caller.test && (fields.test_response.is_some() || fields.test_delay_seconds.is_some()) {
            let field = if fields.test_response.is_some() {
                "test_response"
            } else {
                "test_delay_seconds"
            };
            return Err(reviewloop_domain::ValidationError::field(
                field,
                "test_response and test_delay_seconds are for test-mode keys (reviewloop key create --test)",
            )
            .into());
        }
        fields.test = caller.test;
        if let Some(escalation) = &fields.escalation {
            self.check_escalation(caller, &lp.id, escalation).await?;
        }
        if let Some(url) = &fields.callback_url {
            check_target(&*self.ports.guard, "callback_url", url).await?;
        }
        let routing = routing::route::<CreateRequestError>(
            &*self.ports.loops,
            lp,
            None,
            &fields,
            &caller.user_id,
        )
        .await?;
        let lp = routing.lp;
        let mut fields = fields
            .with_loop_quorum(lp.quorum)
            .with_loop_escalation(lp.escalation);
        if fields.escalation.is_some_and(|e| e.to_loop_id == lp.id) || fields.test {
            // A rule routed it into the loop it would escalate to, or it is
            // test data, which reaches no people.
            fields.escalation = None;
        }
        fields.applied_rules = routing.applied;
        let answer = match routing.decision {
            Decision::Answer(answer) => {
                fields.quorum = None;
                fields.escalation = None;
                Some(answer)
            }
            Decision::Quorum(quorum) => {
                fields.quorum = Some(quorum);
                None
            }
            Decision::People => None,
        };
        let now = self.now_for(&caller.user_id, caller.test).await?;
        // Ids and events keep the real time (see `change`).
        let real = self.ports.clock.now();
        let id = RequestId::new(id.unwrap_or_else(|| self.ports.ids.object_id(real)));
        // A create that lost a race for its key (another joined or asked
        // first) looks again: it then joins the winner.
        for _ in 0..REPEAT_ATTEMPTS {
            let repeat = match answer {
                Some(_) => Repeat::Unkeyed,
                None => self.repeat_of(&caller.user_id, &lp, &fields, now).await?,
            };
            // A request a rule answered is asked of nobody, a test request
            // too, and one that joins another or takes an answer.
            let asks = answer.is_none()
                && !caller.test
                && matches!(repeat, Repeat::Unkeyed | Repeat::Ask { .. });
            let broadcasts = if asks {
                self.first_offer(&lp, &fields, &caller.user_id).await?
            } else {
                Vec::new()
            };
            let mut request = ReviewRequest::create(
                id,
                lp.id,
                caller.user_id,
                caller.api_key_id,
                fields.clone(),
                broadcasts,
                now,
            );
            let mut kinds = vec![EventType::RequestCreated];
            match (&answer, repeat) {
                (Some(answer), _) => {
                    request.decide_by_rule(answer.clone(), now)?;
                    // Test decisions are not signed: a receipt proves a real one.
                    if !request.test {
                        self.ports.receipts.sealer().await?.seal(&mut request);
                    }
                    kinds.push(EventType::RequestCompleted);
                }
                (None, Repeat::Reuse(earlier)) => {
                    // Found by its key, which is this request's too.
                    if let Some(key) = earlier.coalesce_key.clone() {
                        request.keep_key(key);
                    }
                    request
                        .reuse(&earlier, now)
                        .map_err(reviewloop_domain::ChangeError::from)?;
                    self.ports.receipts.sealer().await?.seal(&mut request);
                    kinds.push(EventType::RequestCompleted);
                }
                (None, Repeat::Join(open))
                    if !open.answers_like(fields.response_type, &fields.response_config) =>
                {
                    return Err(reviewloop_domain::ValidationError::field(
                        "coalesce_key",
                        format!(
                            "the open request with this coalesce_key wants a {} answer with other options: a request joins only one whose answer it can take; use another key",
                            open.response_type.as_str()
                        ),
                    )
                    .into());
                }
                (None, Repeat::Join(open)) => {
                    if let Some(key) = open.coalesce_key.clone() {
                        request.keep_key(key);
                    }
                    request
                        .join(&open)
                        .map_err(reviewloop_domain::ChangeError::from)?;
                }
                (None, repeat) => {
                    if let Repeat::Ask { key, coalesce } = repeat {
                        if coalesce {
                            request.take_followers(key);
                        } else {
                            request.keep_key(key);
                        }
                    }
                    if let Some(seconds) = lp.assignment.and_then(|a| a.reassign_after_seconds) {
                        request.reassign_after(seconds);
                    }
                    if request.test {
                        // A test request with no delay is answered as it is made.
                        if request.answer_as_test(now).is_ok() {
                            kinds.push(EventType::RequestCompleted);
                        }
                    } else {
                        request.check_quorum()?;
                    }
                }
            }
            let events: Vec<Event> = kinds
                .into_iter()
                .map(|kind| {
                    wire::request_event(
                        event_id(&*self.ports.ids, real),
                        kind,
                        &request,
                        &lp,
                        None,
                        real,
                    )
                })
                .collect();
            match self.ports.requests.insert_request(&request, &events).await {
                Ok(()) => {
                    self.ports.changes.request_written(&request);
                    self.ports.changes.outbox_written();
                    return Ok(self.created(request));
                }
                // The loop was deleted between reading it and writing the request.
                Err(StoreError::NotFound) => return Err(Missing::Loop.into()),
                Err(StoreError::Conflict(cause)) => {
                    // An earlier attempt under the same idempotency key got here first.
                    match self.ports.requests.request_by_id(&request.id).await? {
                        Some(existing) if existing.creator_id == caller.user_id => {
                            return Ok(self.created(existing))
                        }
                        Some(_) => {
                            return Err(
                                Bug::new(format!("request insert conflicted: {cause}")).into()
                            )
                        }
                        // Another request took the key, or the one this
                        // joined ended: look again.
                        None if request.coalesce_key.is_some() => continue,
                        None => {
                            return Err(
                                Bug::new(format!("request insert conflicted: {cause}")).into()
                            )
                        }
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(Busy::Request.into())
    }

    /// Refuses an escalation to a loop the caller may not use, or back
    /// into the loop the request is sent to.
    async fn check_escalation(
        &self,
        caller: &Principal,
        from: &LoopId,
        escalation: &reviewloop_domain::Escalation,
    ) -> Result<(), CreateRequestError> {
        escalation.check_target(from, "escalation")?;
        if !crate::loops::may_use(&*self.ports.loops, &caller.user_id, &escalation.to_loop_id)
            .await?
        {
            return Err(crate::loops::unusable("escalation.to_loop_id").into());
        }
        Ok(())
    }

    /// What the rules of `loop_id` (or `draft` rules in their place) would
    /// do with a request made from `input`, without making it. The
    /// sample's context must hold every value this loop's rules read.
    pub async fn test_rules(
        &self,
        caller: &Principal,
        loop_id: &LoopId,
        input: RequestInput,
        draft: Option<Value>,
    ) -> Result<Routing, TestRulesError> {
        caller.require(Permission::LoopsRead)?;
        let lp = self.visible_loop::<TestRulesError>(caller, loop_id).await?;
        // Rules not yet saved are the owner's to try: they may route
        // anywhere the owner may, which a member must not explore.
        if draft.is_some() && !lp.is_creator(&caller.user_id) {
            return Err(Denied::LoopAccess.into());
        }
        let draft = draft
            .map(|rules| reviewloop_domain::Rules::parse(Some(&rules)))
            .transpose()?;
        if let Some(draft) = &draft {
            crate::loops::rules_problems(&*self.ports.loops, &caller.user_id, &lp, draft)
                .await?
                .into_result()?;
        }
        let fields = input.validate()?;
        let rules = draft.as_ref().unwrap_or(&lp.rules);
        if let Some((rule, pointer)) = rules.missing_pointer(fields.context.as_ref()) {
            return Err(reviewloop_domain::ValidationError::field(
                format!("context{pointer}"),
                format!(
                    "the sample's context has no {pointer}, which rule {rule} reads: add it to see what the rules do"
                ),
            )
            .into());
        }
        routing::route(
            &*self.ports.loops,
            lp,
            draft.as_ref(),
            &fields,
            &caller.user_id,
        )
        .await
    }
}
