//! What a rules test answers: where a sample request would land and what
//! would decide it, in JSON and in one sentence for people.

use serde_json::{json, Value};

use crate::requests::{Decision, Routing};

/// The answer of `POST /loops/{id}/rules/test`.
pub fn routing_json(routing: &Routing) -> Value {
    let (outcome, response_data, quorum) = match &routing.decision {
        Decision::People => ("people", Value::Null, Value::Null),
        Decision::Answer(answer) => ("answer", answer.clone(), Value::Null),
        Decision::Quorum(q) => ("quorum", Value::Null, q.to_value()),
    };
    json!({
        "fires": !routing.applied.is_empty(),
        "rule": routing.applied.last().map(|a| a.to_value()),
        "applied_rules": routing.applied.iter().map(|a| a.to_value()).collect::<Vec<_>>(),
        "loop_id": routing.lp.id,
        "loop_name": routing.lp.name.as_str(),
        "outcome": outcome,
        "response_data": response_data,
        "quorum": quorum,
        "passed_over": routing.passed_over.iter().map(|p| json!({
            "loop_id": p.loop_id,
            "rule_id": p.rule_id,
            "reason": p.reason,
        })).collect::<Vec<_>>(),
        "summary": summary(routing),
    })
}

/// One sentence on what would happen.
pub fn summary(routing: &Routing) -> String {
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
