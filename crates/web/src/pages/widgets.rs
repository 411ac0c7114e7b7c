//! One answer widget per response type, built from the request's
//! `response_config`, and the reading of a submitted widget into the JSON
//! answer the API would receive. The service validates that answer with
//! the API's own rules and messages; the widget adds nothing of its own.

use maud::{html, Markup};
use reviewloop_domain::ResponseConfig;
use serde_json::Value;

use crate::form::FormData;

/// The widget's form fields, inside a `<form>` the caller provides.
pub(crate) fn widget(config: &ResponseConfig, previous: &FormData) -> Markup {
    match config {
        ResponseConfig::Text { max_length } => html! {
            label for="answer" { "Your answer" }
            textarea #answer name="answer" rows="6" maxlength=(max_length) data-counter="answer-count" required {
                (previous.text("answer"))
            }
            p.hint { span #answer-count { (previous.text("answer").chars().count()) } " / " (max_length) " characters" }
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::SingleSelect { options } => html! {
            div.choices role="group" aria-label="Choose one" {
                @for (i, option) in options.iter().enumerate() {
                    button.choice type="submit" name="answer" value=(option) data-key=[shortcut(i)] {
                        @if let Some(k) = shortcut(i) { kbd { (k) } " " }
                        (option)
                    }
                }
            }
        },
        ResponseConfig::MultiSelect { options } => html! {
            fieldset.checks {
                legend { "Choose one or more" }
                @for (i, option) in options.iter().enumerate() {
                    label.check {
                        input type="checkbox" name="answer" value=(option)
                            checked[previous.all("answer").contains(&option.as_str())]
                            data-key=[shortcut(i)];
                        " " (option)
                    }
                }
            }
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::Rating {
            scale_min,
            scale_max,
        } if scale_max - scale_min <= 10 => html! {
            div.scale role="group" aria-label={ "Rate from " (scale_min) " to " (scale_max) } {
                @for (i, n) in (*scale_min..=*scale_max).enumerate() {
                    button.choice type="submit" name="answer" value=(n) data-key=[shortcut(i)] { (n) }
                }
            }
            p.hint { (scale_min) " is lowest, " (scale_max) " is highest." }
        },
        ResponseConfig::Rating {
            scale_min,
            scale_max,
        } => html! {
            label for="answer" { "Rating from " (scale_min) " to " (scale_max) }
            input #answer type="number" name="answer" min=(scale_min) max=(scale_max) step="1" value=(previous.text("answer")) required;
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::Number { min, max } => html! {
            label for="answer" {
                "Your number"
                @match (min, max) {
                    (Some(a), Some(b)) => { " (" (a) " to " (b) ")" }
                    (Some(a), None) => { " (at least " (a) ")" }
                    (None, Some(b)) => { " (at most " (b) ")" }
                    (None, None) => {}
                }
            }
            input #answer type="number" name="answer" step="any" min=[*min] max=[*max] value=(previous.text("answer")) inputmode="decimal" required;
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::Boolean => html! {
            div.choices.yesno {
                button.choice.approve type="submit" name="answer" value="true" data-key="a" { kbd { "a" } " Approve" }
                button.choice.reject type="submit" name="answer" value="false" data-key="r" { kbd { "r" } " Reject" }
            }
        },
    }
}

/// Number keys 1–9 pick the first nine options.
fn shortcut(i: usize) -> Option<String> {
    (i < 9).then(|| (i + 1).to_string())
}

/// The submitted widget as the JSON answer. Anything that is not what the
/// type wants is passed on as text, so the service refuses it with the
/// message the API gives.
pub(crate) fn answer(config: &ResponseConfig, form: &FormData) -> Value {
    let raw = form.text("answer");
    match config {
        // Browsers send a textarea's line breaks as CRLF; the person typed LF.
        ResponseConfig::Text { .. } | ResponseConfig::SingleSelect { .. } => {
            Value::String(raw.replace("\r\n", "\n"))
        }
        ResponseConfig::MultiSelect { .. } => Value::Array(
            form.all("answer")
                .into_iter()
                .map(|v| Value::String(v.to_owned()))
                .collect(),
        ),
        ResponseConfig::Rating { .. } | ResponseConfig::Number { .. } => number(raw),
        ResponseConfig::Boolean => match raw {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            other => Value::String(other.to_owned()),
        },
    }
}

/// `42` stays a whole number (not `42.0`); `2.5` a decimal.
fn number(raw: &str) -> Value {
    let raw = raw.trim();
    if let Ok(n) = raw.parse::<i64>() {
        return Value::from(n);
    }
    raw.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(raw.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(body: &str) -> FormData {
        FormData::parse(body.as_bytes())
    }

    #[test]
    fn each_widget_reads_into_the_json_the_api_takes() {
        let text = ResponseConfig::Text { max_length: 10 };
        assert_eq!(answer(&text, &form("answer=a%0D%0Ab")), json!("a\nb"));
        let multi = ResponseConfig::MultiSelect {
            options: vec!["x".into(), "y".into()],
        };
        assert_eq!(
            answer(&multi, &form("answer=x&answer=y")),
            json!(["x", "y"])
        );
        assert_eq!(answer(&multi, &form("csrf=1")), json!([]));
        let rating = ResponseConfig::Rating {
            scale_min: 1,
            scale_max: 5,
        };
        assert_eq!(answer(&rating, &form("answer=4")), json!(4));
        let number = ResponseConfig::Number {
            min: None,
            max: None,
        };
        assert_eq!(answer(&number, &form("answer=2.5")), json!(2.5));
        assert_eq!(answer(&number, &form("answer=-3")), json!(-3));
        assert_eq!(answer(&number, &form("answer=abc")), json!("abc"));
        assert_eq!(
            answer(&ResponseConfig::Boolean, &form("answer=false")),
            json!(false)
        );
    }

    #[test]
    fn options_are_escaped_in_the_widget() {
        let select = ResponseConfig::SingleSelect {
            options: vec!["<b>\"x\"</b>".into()],
        };
        let html = widget(&select, &FormData::default()).into_string();
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
    }
}
