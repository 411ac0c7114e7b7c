//! The loops' rules applied to a new request: routes are followed from
//! loop to loop, then the first rule of the last loop that answers the
//! request or sets its quorum fires. Which rule matches is the domain's
//! rule (`Rules::matching`); following routes needs the other loops, so it
//! happens here.

use std::collections::HashSet;

use reviewloop_domain::ValidRequest;
use reviewloop_domain::{Action, AppliedRule, Form, Loop, LoopId, Quorum, Rules, UserId};
use serde_json::{Map, Value};

use reviewloop_ports::LoopStore;
use reviewloop_ports::StoreError;

/// The most routes one request follows. Saving rules refuses cycles, so
/// this only bounds chains made by two owners' concurrent edits.
const MAX_HOPS: usize = 8;

/// What the rules make of a new request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// People answer it, as the loop and the request say.
    People,
    /// It is decided at once with this answer.
    Answer(Value),
    /// People answer it under this quorum.
    Quorum(Quorum),
}

/// A rule that matched but could not apply, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct PassedOver {
    /// The loop whose rule it was.
    pub loop_id: LoopId,
    /// The rule.
    pub rule_id: String,
    /// Why it did not fire.
    pub reason: String,
}

/// Where a new request lands and what decides it.
#[derive(Debug, Clone)]
pub struct Routing {
    /// The loop it lands in.
    pub lp: Loop,
    /// The rules that fired, in order.
    pub applied: Vec<AppliedRule>,
    /// What decides it.
    pub decision: Decision,
    /// Rules that matched but could not apply.
    pub passed_over: Vec<PassedOver>,
}

/// Applies the rules of `first` (or `draft`, rules not yet saved, in its
/// place) and of every loop they route to, to `fields` sent by
/// `requester`. A route is followed only into a loop that both the owner
/// of the routing loop and the requester may use: nobody's request lands
/// among people it may not see, and no owner's rule reaches a loop it lost.
pub(crate) async fn route<E>(
    loops: &dyn LoopStore,
    first: Loop,
    draft: Option<&Rules>,
    fields: &ValidRequest,
    requester: &UserId,
) -> Result<Routing, E>
where
    E: From<StoreError> + From<reviewloop_domain::ValidationError>,
{
    let facts = fields.facts();
    let mut lp = first;
    let mut applied = Vec::new();
    let mut passed_over = Vec::new();
    let mut seen: HashSet<LoopId> = HashSet::from([lp.id]);
    let mut rules = draft.cloned().unwrap_or_else(|| lp.rules.clone());
    loop {
        let (here, owner) = (lp.id, lp.creator_id);
        let mut next_loop = None;
        let mut decision = None;
        for (_, rule) in rules.matching(&facts) {
            let pass = |reason: String| PassedOver {
                loop_id: here,
                rule_id: rule.id.clone(),
                reason,
            };
            let fired = AppliedRule {
                loop_id: here,
                rule_id: rule.id.clone(),
                then: rule.then.clone(),
            };
            match &rule.then {
                Action::Answer(answer) => {
                    let fits = Form::single(fields.response_config.typed()?.clone()).validate(
                        "answer",
                        answer,
                        &Map::new(),
                    );
                    match fits {
                        Ok(answer) => {
                            applied.push(fired);
                            decision = Some(Decision::Answer(answer));
                            break;
                        }
                        Err(e) => passed_over
                            .push(pass(format!("its answer does not fit this request: {e}"))),
                    }
                }
                Action::Quorum(quorum) => {
                    applied.push(fired);
                    decision = Some(Decision::Quorum(*quorum));
                    break;
                }
                Action::Route(to) => {
                    if seen.contains(to) || seen.len() > MAX_HOPS {
                        passed_over.push(pass(
                            "it routes back into a loop this request already passed".into(),
                        ));
                        continue;
                    }
                    match loops.loop_by_id(to).await? {
                        Some(next)
                            if next.is_visible_to(&owner) && next.is_visible_to(requester) =>
                        {
                            applied.push(fired);
                            next_loop = Some(next);
                            break;
                        }
                        Some(next) if next.is_visible_to(&owner) => passed_over.push(pass(
                            "the requester may not use the loop it routes to".into(),
                        )),
                        _ => passed_over.push(pass(
                            "the loop it routes to is gone, or this loop's owner may no longer use it"
                                .into(),
                        )),
                    }
                }
            }
        }
        match (next_loop, decision) {
            (Some(next), _) => {
                seen.insert(next.id);
                rules = next.rules.clone();
                lp = next;
            }
            (None, decision) => {
                return Ok(Routing {
                    lp,
                    applied,
                    decision: decision.unwrap_or(Decision::People),
                    passed_over,
                })
            }
        }
    }
}

/// Whether following the saved routes from `from` leads to `target`: then
/// a route from `target` to `from` would close a cycle. Reads each loop
/// at most once.
pub(crate) async fn cycle_through(
    loops: &dyn LoopStore,
    from: LoopId,
    target: LoopId,
) -> Result<bool, StoreError> {
    let mut seen = HashSet::from([from]);
    let mut queue = vec![from];
    while let Some(id) = queue.pop() {
        if id == target {
            return Ok(true);
        }
        let Some(lp) = loops.loop_by_id(&id).await? else {
            continue;
        };
        for (_, to) in lp.rules.routes() {
            if seen.insert(to) {
                queue.push(to);
            }
        }
    }
    Ok(false)
}

impl Routing {
    /// One sentence on what would happen.
    pub fn summary(&self) -> String {
        let routing = self;
        let routes: Vec<String> = routing
            .applied
            .iter()
            .filter(|a| matches!(a.then, reviewloop_domain::Action::Route(_)))
            .map(|a| format!("rule {} routes it on", a.rule_id))
            .collect();
        let lead = if routes.is_empty() {
            String::new()
        } else {
            format!("{}; ", routes.join(", then "))
        };
        let last = routing.applied.last().map(|a| a.rule_id.as_str());
        let end = match (&routing.decision, last) {
            (Decision::Answer(answer), Some(rule)) => {
                format!("rule {rule} answers it at once with {answer}: nobody is asked")
            }
            (Decision::Quorum(q), Some(rule)) => format!(
                "rule {rule} sends it to the members of {} and asks for {} answers ({})",
                routing.lp.name.as_str(),
                q.count,
                q.rule.as_str()
            ),
            _ if routing.applied.is_empty() => format!(
                "no rule fires: it goes to the members of {}",
                routing.lp.name.as_str()
            ),
            _ => format!("it goes to the members of {}", routing.lp.name.as_str()),
        };
        let mut sentence = format!("{lead}{end}.");
        if let Some(first) = sentence.get(0..1) {
            sentence = first.to_uppercase() + &sentence[1..];
        }
        sentence
    }
}
