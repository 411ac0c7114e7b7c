//! One answer widget per response type, built from the request's
//! `response_config`, and the reading of a submitted widget into the JSON
//! answer the API would receive. The service validates that answer with
//! the API's own rules and messages; the widget adds nothing of its own.

use maud::{html, Markup};
use reviewloop_domain::{Field, FieldKind, Form, ResponseConfig};
use serde_json::{Map, Value};

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
        } if scale_max.checked_sub(*scale_min).is_some_and(|d| d <= 10) => html! {
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
    value_of(config, form, "answer")
}

/// The value submitted under `name`, as the JSON a field of `config` takes.
fn value_of(config: &ResponseConfig, form: &FormData, name: &str) -> Value {
    let raw = form.text(name);
    match config {
        // Browsers send a textarea's line breaks as CRLF; the person typed LF.
        ResponseConfig::Text { .. } | ResponseConfig::SingleSelect { .. } => {
            Value::String(raw.replace("\r\n", "\n"))
        }
        ResponseConfig::MultiSelect { .. } => Value::Array(
            form.all(name)
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

/// The value a field shows: what was just typed (after a refused
/// submission), else the review's pre-filled value, else nothing.
fn shown(field: &Field, previous: &FormData, prefill: &Map<String, Value>) -> Vec<String> {
    let typed = previous.all(field.name());
    if !typed.is_empty() {
        return typed.into_iter().map(str::to_owned).collect();
    }
    match prefill.get(field.name()) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect(),
        Some(other) => vec![other.to_string()],
        None => Vec::new(),
    }
}

fn radio(name: &str, value: &str, label: &str, checked: bool, required: bool) -> Markup {
    html! {
        label.check {
            input type="radio" name=(name) value=(value) checked[checked] required[required];
            " " (label)
        }
    }
}

/// One input of a form of several fields. Every field is an ordinary form
/// control named after the field, so the form works without a script;
/// `content_display` fields are shown by the caller, not here.
fn form_field(field: &Field, previous: &FormData, prefill: &Map<String, Value>) -> Markup {
    let FieldKind::Answer(config) = field.kind() else {
        return html! {};
    };
    let name = field.name();
    let id = format!("field-{name}");
    let values = shown(field, previous, prefill);
    let first = values.first().map(String::as_str).unwrap_or_default();
    let required = field.required();
    html! {
        div.field data-field=(name) {
            @match config {
                ResponseConfig::Text { max_length } => {
                    label for=(id) { (field.label()) @if required { " *" } }
                    textarea id=(id) name=(name) rows="4" maxlength=(max_length) required[required] { (first) }
                    @if field.editable() { p.hint { "A draft to check and correct before you submit." } }
                }
                ResponseConfig::Boolean => {
                    fieldset.checks {
                        legend { (field.label()) @if required { " *" } }
                        (radio(name, "true", "Yes", first == "true", required))
                        (radio(name, "false", "No", first == "false", required))
                    }
                }
                ResponseConfig::SingleSelect { options } => {
                    fieldset.checks {
                        legend { (field.label()) @if required { " *" } }
                        @for option in options { (radio(name, option, option, first == option, required)) }
                    }
                }
                ResponseConfig::MultiSelect { options } => {
                    fieldset.checks {
                        legend { (field.label()) @if required { " *" } }
                        @for option in options {
                            label.check {
                                input type="checkbox" name=(name) value=(option) checked[values.contains(option)];
                                " " (option)
                            }
                        }
                    }
                }
                ResponseConfig::Rating { scale_min, scale_max } if scale_max.checked_sub(*scale_min).is_some_and(|d| d <= 10) => {
                    fieldset.checks.scale-radios {
                        legend { (field.label()) " (" (scale_min) " to " (scale_max) ")" @if required { " *" } }
                        @for n in *scale_min..=*scale_max {
                            (radio(name, &n.to_string(), &n.to_string(), first == n.to_string(), required))
                        }
                    }
                }
                ResponseConfig::Rating { scale_min, scale_max } => {
                    label for=(id) { (field.label()) " (" (scale_min) " to " (scale_max) ")" @if required { " *" } }
                    input id=(id) type="number" name=(name) min=(scale_min) max=(scale_max) step="1" value=(first) required[required];
                }
                ResponseConfig::Number { min, max } => {
                    label for=(id) { (field.label()) @if required { " *" } }
                    input id=(id) type="number" name=(name) step="any" min=[*min] max=[*max] value=(first) inputmode="decimal" required[required];
                }
            }
        }
    }
}

/// Every field of `form` that takes an answer, in order.
pub(crate) fn form_fields(
    form: &Form,
    previous: &FormData,
    prefill: &Map<String, Value>,
) -> Markup {
    html! {
        @for field in form.fields() { (form_field(field, previous, prefill)) }
    }
}

/// The submitted form as a result object: field name to the JSON value the
/// API would take. A field left empty is left out (an editable one then
/// keeps its draft, a required one is refused by the service with its
/// message); anything not of the field's type is passed on as text, so the
/// service refuses it as the API would.
pub(crate) fn form_result(form: &Form, submitted: &FormData) -> Value {
    let mut result = Map::new();
    for field in form.fields() {
        let FieldKind::Answer(config) = field.kind() else {
            continue;
        };
        let name = field.name();
        let left_empty = match config {
            ResponseConfig::MultiSelect { .. } => submitted.all(name).is_empty(),
            _ => submitted.text(name).trim().is_empty(),
        };
        if left_empty {
            continue;
        }
        let value = value_of(config, submitted, name);
        result.insert(name.to_owned(), value);
    }
    Value::Object(result)
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

    fn review_form() -> Form {
        Form::parse(&json!([
            {"name": "post", "type": "content_display"},
            {"name": "ok", "type": "boolean", "required": true},
            {"name": "tone", "type": "single_select", "options": ["calm", "sharp"]},
            {"name": "tags", "type": "multi_select", "options": ["a", "b"]},
            {"name": "stars", "type": "rating"},
            {"name": "price", "type": "number"},
            {"name": "reply", "type": "text", "editable": true}
        ]))
        .unwrap()
    }

    #[test]
    fn a_submitted_form_reads_into_the_result_the_api_takes() {
        let submitted =
            form("ok=true&tone=sharp&tags=a&tags=b&stars=4&price=2.5&reply=Hi%0D%0Athere&post=x");
        assert_eq!(
            form_result(&review_form(), &submitted),
            json!({"ok": true, "tone": "sharp", "tags": ["a", "b"], "stars": 4, "price": 2.5, "reply": "Hi\nthere"})
        );
    }

    #[test]
    fn empty_fields_are_left_out_and_odd_values_passed_on_for_the_service_to_refuse() {
        assert_eq!(
            form_result(&review_form(), &form("ok=&tone=&reply=%20&price=")),
            json!({})
        );
        assert_eq!(
            form_result(&review_form(), &form("ok=maybe&stars=lots")),
            json!({"ok": "maybe", "stars": "lots"})
        );
    }

    #[test]
    fn the_draft_fills_an_editable_field_until_the_person_types() {
        let form_def = review_form();
        let mut prefill = Map::new();
        prefill.insert("reply".into(), json!("AI draft"));
        let fresh = form_fields(&form_def, &FormData::default(), &prefill).into_string();
        assert!(fresh.contains(">AI draft</textarea>"), "{fresh}");
        let retyped = form_fields(&form_def, &form("reply=%3Cb%3Emine"), &prefill).into_string();
        assert!(
            retyped.contains(">&lt;b&gt;mine</textarea>"),
            "escaped: {retyped}"
        );
        assert!(
            !fresh.contains("name=\"post\""),
            "content display takes no input"
        );
    }
}
