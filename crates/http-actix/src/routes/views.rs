//! Answers built from what a service returned, where the wire type needs
//! more than a domain object: the loop invite's QR code, the create
//! answer's polling URL, a rules test's routing.

use base64::Engine;
use reviewloop_service::{CreatedRequest, Decision, LoopInvite, Routing};
use reviewloop_wire::loops::{LoopInviteOut, LoopOut, TeamOut};
use reviewloop_wire::requests::{CreatedRequestOut, PassedOverOut, RulesTestOut};
use serde_json::Value;

/// The loop creation result: the loop and everything needed to join it.
pub(super) fn invite(invite: &LoopInvite) -> LoopInviteOut<'_> {
    LoopInviteOut {
        lp: LoopOut::of(&invite.lp),
        invite_code: invite.lp.invite_code.as_str(),
        qr_code_base64: format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&invite.qr_png)
        ),
        qr_code_url: &invite.qr_code_url,
        join_url: &invite.join_url,
    }
}

/// A new team: the loop with its join details.
pub(super) fn new_team(invite: &LoopInvite) -> TeamOut<'_> {
    TeamOut {
        lp: LoopOut::of(&invite.lp),
        join_url: Some(&invite.join_url),
        qr_code_url: Some(&invite.qr_code_url),
    }
}

/// What a create answers (over the API and MCP alike).
pub(crate) fn created(created: &CreatedRequest) -> CreatedRequestOut<'_> {
    CreatedRequestOut::of(&created.request, &created.polling_url)
}

/// Where a sample request would land and what would decide it.
pub(super) fn rules_test(routing: &Routing) -> RulesTestOut<'_> {
    let (outcome, response_data, quorum) = match &routing.decision {
        Decision::People => ("people", Value::Null, Value::Null),
        Decision::Answer(answer) => ("answer", answer.clone(), Value::Null),
        Decision::Quorum(q) => ("quorum", Value::Null, q.to_value()),
    };
    RulesTestOut {
        fires: !routing.applied.is_empty(),
        rule: routing.applied.last().map(|a| a.to_value()),
        applied_rules: routing.applied.iter().map(|a| a.to_value()).collect(),
        loop_id: routing.lp.id,
        loop_name: routing.lp.name.as_str(),
        outcome,
        response_data,
        quorum,
        passed_over: routing
            .passed_over
            .iter()
            .map(|p| PassedOverOut {
                loop_id: p.loop_id,
                rule_id: &p.rule_id,
                reason: &p.reason,
            })
            .collect(),
        summary: routing.summary(),
    }
}
