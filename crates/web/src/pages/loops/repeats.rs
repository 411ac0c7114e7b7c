//! The loop's settings for repeated questions: joining them while one is
//! open, and reusing a person's recent answer.

use maud::{html, Markup};
use reviewloop_domain::{Loop, Window};
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
    let seconds = minutes
        .parse::<f64>()
        .ok()
        .filter(|m| m.is_finite() && *m > 0.0)
        .map_or_else(
            || Value::from(minutes),
            |m| Value::from((m * 60.0).round() as i64),
        );
    json!({ "window_seconds": seconds })
}
