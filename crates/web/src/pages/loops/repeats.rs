//! The loop's settings for asking fewer people: joining repeated
//! questions while one is open, reusing a person's recent answer, and
//! offering each request to a few members instead of all.

use maud::{html, Markup};
use reviewloop_domain::{Loop, Strategy, Window};
use serde_json::{json, Value};

use crate::form::FormData;

/// The two windows, in minutes, as the settings form shows them.
pub(super) fn repeats_fields(previous: &FormData, lp: &Loop) -> Markup {
    let edited = previous.get("name").is_some();
    let minutes = |field: &str, window: Option<Window>| {
        if edited {
            previous.text(field).to_owned()
        } else {
            window
                .map(|w| super::minutes_text(w.window_seconds))
                .unwrap_or_default()
        }
    };
    let coalesce = minutes("coalesce_minutes", lp.coalesce);
    let reuse = minutes("reuse_minutes", lp.reuse_answers);
    html! {
        fieldset.repeats-policy {
            legend { "Repeated questions" }
            label { "Join a repeated question to the open one for this many minutes after it was asked"
                input type="number" name="coalesce_minutes" min="0.02" step="any" value=(coalesce) placeholder="Off"; }
            label { "Reuse a person's answer to the same question given within this many minutes"
                input type="number" name="reuse_minutes" min="0.02" step="any" value=(reuse) placeholder="Off"; }
            p.hint { "The same question is the same text, answer type, options and context. A request joined to an open one asks nobody and ends with it, the same way. A reused answer completes a request at once; answers decided by a rule, by a timeout or in test mode are never reused. Blank turns either off; a request can always name its own coalesce_key." }
        }
    }
}

/// A window the edit form asks for, as the API would take it: blank is
/// off, minutes become seconds, anything else goes on as typed for the
/// service to name.
pub(super) fn window_of_form(f: &FormData, field: &str) -> Value {
    let minutes = f.text(field).trim();
    if minutes.is_empty() {
        return Value::Null;
    }
    json!({ "window_seconds": super::seconds_of_minutes(minutes) })
}

/// Who the loop's requests are offered to.
pub(super) fn assignment_fields(previous: &FormData, lp: &Loop) -> Markup {
    let edited = previous.get("name").is_some();
    let (strategy, per_request, reassign) = if edited {
        (
            previous.text("assignment_strategy").to_owned(),
            previous.text("assignment_per_request").to_owned(),
            previous.text("assignment_reassign_minutes").to_owned(),
        )
    } else {
        match lp.assignment {
            Some(a) => (
                a.strategy.as_str().to_owned(),
                a.per_request.to_string(),
                a.reassign_after_seconds
                    .map(super::minutes_text)
                    .unwrap_or_default(),
            ),
            None => ("broadcast".into(), "1".into(), String::new()),
        }
    };
    let choices = [
        (Strategy::Broadcast, "Every active member"),
        (Strategy::RoundRobin, "A few members, in turn"),
        (
            Strategy::LeastLoaded,
            "The members with the fewest open requests",
        ),
    ];
    html! {
        fieldset.assignment-policy {
            legend { "Who is asked" }
            label { "Offer each request to"
                select name="assignment_strategy" {
                    @for (value, words) in choices {
                        option value=(value.as_str()) selected[strategy == value.as_str()] { (words) }
                    }
                }
            }
            label { "How many members each request is offered to"
                input type="number" name="assignment_per_request" min="1" max="100" step="1" value=(per_request); }
            label { "Offer it to the next ones after this many minutes unclaimed"
                input type="number" name="assignment_reassign_minutes" min="0.02" step="any" value=(reassign) placeholder="Never"; }
            p.hint { "Members it is not offered to do not see it, in their inbox or in notifications, and cannot claim it; the loop's Slack channel gets no posts while only a few are asked. A request that needs a quorum of M is offered to at least M." }
        }
    }
}

/// The assignment the edit form asks for, as the API would take it.
pub(super) fn assignment_of_form(f: &FormData) -> Value {
    let strategy = f.text("assignment_strategy").trim();
    if strategy.is_empty() || strategy == Strategy::Broadcast.as_str() {
        return Value::Null;
    }
    let per_request = f.text("assignment_per_request").trim();
    let per_request = per_request
        .parse::<u64>()
        .map_or_else(|_| Value::from(per_request), Value::from);
    let minutes = f.text("assignment_reassign_minutes").trim();
    let reassign = if minutes.is_empty() {
        Value::Null
    } else {
        super::seconds_of_minutes(minutes)
    };
    json!({"strategy": strategy, "per_request": per_request, "reassign_after_seconds": reassign})
}
