//! One answer widget per response type, built from the request's
//! `response_config`, and the reading of a submitted widget into the JSON
//! answer the API would receive. The service validates that answer with
//! the API's own rules and messages; the widget adds nothing of its own.

use maud::{html, Markup};
use reviewloop_domain::{Field, FieldKind, Form, ResponseConfig, ReviewerHints, SelectOption};
use serde_json::{Map, Value};

use crate::form::FormData;

/// The form control of the comment a reviewer may leave with an answer.
/// Its name starts with `_`, which no field of a form may, so it never
/// meets one.
pub(crate) const COMMENT_FIELD: &str = "_comment";

/// The optional comment for the requester, above the answer's buttons so
/// that it goes with whichever one is pressed.
pub(crate) fn comment_field(previous: &FormData) -> Markup {
    html! {
        div.field.comment {
            label for="answer-comment" { "Comment for the requester " span.hint { "(optional)" } }
            textarea #answer-comment name=(COMMENT_FIELD) rows="2" maxlength=(reviewloop_domain::MAX_COMMENT_CHARS) {
                (previous.text(COMMENT_FIELD))
            }
        }
    }
}

/// The widget's form fields, inside a `<form>` the caller provides;
/// `hints` are the request's own words around it (a number's prefix and
/// suffix, a placeholder, a yes/no's labels).
pub(crate) fn widget(
    config: &ResponseConfig,
    hints: &ReviewerHints,
    previous: &FormData,
) -> Markup {
    match config {
        ResponseConfig::Text {
            min_length,
            max_length,
        } => html! {
            label for="answer" { "Your answer" }
            textarea #answer name="answer" rows="6" minlength=[(*min_length > 0).then_some(min_length)] maxlength=(max_length) placeholder=[hints.placeholder.as_deref()] data-counter="answer-count" required {
                (previous.text("answer"))
            }
            p.hint {
                // Without the script the limit is stated; with it, counted.
                span data-counter-static="answer-count" { "Up to " (max_length) " characters" }
                span.counter hidden { span #answer-count { (previous.text("answer").chars().count()) } " / " (max_length) " characters" }
                @if *min_length > 0 { " (at least " (min_length) ")" }
            }
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::SingleSelect { options } => html! {
            div.choices role="group" aria-label="Choose one" {
                @for (i, option) in options.iter().enumerate() {
                    button.choice type="submit" name="answer" value=(option.value) data-key=[shortcut(i)] {
                        @if let Some(k) = shortcut(i) { kbd { (k) } " " }
                        (swatch(option))
                        (option.label())
                        @if let Some(d) = &option.description { small.option-description { (d) } }
                    }
                }
            }
        },
        ResponseConfig::MultiSelect {
            options,
            min_selections,
            max_selections,
        } => html! {
            fieldset.checks {
                legend { (how_many(*min_selections, *max_selections)) }
                @for (i, option) in options.iter().enumerate() {
                    label.check {
                        input type="checkbox" name="answer" value=(option.value)
                            checked[previous.all("answer").contains(&option.value.as_str())]
                            data-key=[shortcut(i)];
                        " " (swatch(option)) (option.label())
                        @if let Some(d) = &option.description { small.option-description { (d) } }
                    }
                }
            }
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::Rating {
            scale_min,
            scale_max,
            scale_step,
        } => match rating_values(*scale_min, *scale_max, *scale_step) {
            Some(values) => html! {
                div.scale role="group" aria-label={ "Rate from " (scale_min) " to " (scale_max) } {
                    @for (i, n) in values.iter().enumerate() {
                        button.choice type="submit" name="answer" value=(n) data-key=[shortcut(i)] {
                            (n)
                            @if let Some(label) = hints.rating_label(&n.to_string()) { small.option-description { (label) } }
                        }
                    }
                }
                p.hint { (scale_min) " is lowest, " (scale_max) " is highest." }
            },
            None => html! {
                label for="answer" { "Rating from " (scale_min) " to " (scale_max) @if *scale_step != 1.0 { " in steps of " (scale_step) } }
                input #answer type="number" name="answer" min=(scale_min) max=(scale_max) step=(scale_step) value=(previous.text("answer")) required;
                button.primary type="submit" { "Send answer" }
            },
        },
        ResponseConfig::Number {
            min,
            max,
            decimal_places,
        } => html! {
            label for="answer" {
                "Your number"
                @match (min, max) {
                    (Some(a), Some(b)) => { " (" (a) " to " (b) ")" }
                    (Some(a), None) => { " (at least " (a) ")" }
                    (None, Some(b)) => { " (at most " (b) ")" }
                    (None, None) => {}
                }
            }
            div.affixed {
                @if let Some(prefix) = &hints.prefix { span.affix aria-hidden="true" { (prefix) } }
                input #answer type="number" name="answer" step=(number_step(*decimal_places)) min=[*min] max=[*max] value=(previous.text("answer")) placeholder=[hints.placeholder.as_deref()] inputmode="decimal" required;
                @if let Some(suffix) = &hints.suffix { span.affix aria-hidden="true" { (suffix) } }
            }
            @if let Some(places) = decimal_places { p.hint { "At most " (places) " decimal places." } }
            button.primary type="submit" { "Send answer" }
        },
        ResponseConfig::Boolean => html! {
            div.choices.yesno {
                button.choice.approve type="submit" name="answer" value="true" data-key="a" {
                    kbd { "a" } " " (dot(hints.true_color.as_deref())) (hints.true_label.as_deref().unwrap_or("Approve"))
                }
                button.choice.reject type="submit" name="answer" value="false" data-key="r" {
                    kbd { "r" } " " (dot(hints.false_color.as_deref())) (hints.false_label.as_deref().unwrap_or("Reject"))
                }
            }
        },
    }
}

/// The values a rating offers as buttons: every step, when there are at
/// most eleven of them.
fn rating_values(min: i64, max: i64, step: f64) -> Option<Vec<f64>> {
    let count = ((max - min) as f64 / step).floor();
    (count <= 10.0).then(|| {
        (0..=count as i64)
            .map(|k| min as f64 + k as f64 * step)
            .collect()
    })
}

/// A number input's `step`: one unit of the last allowed decimal place.
fn number_step(decimal_places: Option<u32>) -> String {
    match decimal_places {
        Some(0) => "1".into(),
        Some(places) => format!("0.{}1", "0".repeat(places as usize - 1)),
        None => "any".into(),
    }
}

/// What a multiple choice asks for, in words.
fn how_many(min: usize, max: Option<usize>) -> String {
    match (min, max) {
        (0, None) => "Choose any".into(),
        (1, None) => "Choose one or more".into(),
        (n, None) => format!("Choose at least {n}"),
        (0, Some(m)) => format!("Choose up to {m}"),
        (n, Some(m)) if n == m => format!("Choose {n}"),
        (n, Some(m)) => format!("Choose {n} to {m}"),
    }
}

/// A dot in the option's colour, when it has one. An SVG attribute, not a
/// style: the pages' Content-Security-Policy allows no inline styles.
fn swatch(option: &SelectOption) -> Markup {
    dot(option.color.as_deref())
}

fn dot(color: Option<&str>) -> Markup {
    html! {
        @if let Some(color) = color {
            svg.swatch width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" {
                circle cx="6" cy="6" r="6" fill=(color) {}
            }
        }
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
                ResponseConfig::Text { min_length, max_length } => {
                    label for=(id) { (field.label()) @if required { " *" } }
                    textarea id=(id) name=(name) rows="4" minlength=[(*min_length > 0).then_some(min_length)] maxlength=(max_length) required[required] { (first) }
                    // Only a draft the workflow wrote needs checking.
                    @if field.editable() && !first.is_empty() { p.hint { "A draft to check and correct before you submit." } }
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
                        @for option in options { (radio(name, &option.value, option.label(), first == option.value, required)) }
                    }
                }
                ResponseConfig::MultiSelect { options, min_selections, max_selections } => {
                    fieldset.checks {
                        legend { (field.label()) " (" (how_many(*min_selections, *max_selections).to_lowercase()) ")" @if required { " *" } }
                        @for option in options {
                            label.check {
                                input type="checkbox" name=(name) value=(option.value) checked[values.contains(&option.value)];
                                " " (option.label())
                            }
                        }
                    }
                }
                ResponseConfig::Rating { scale_min, scale_max, scale_step } => {
                    @match rating_values(*scale_min, *scale_max, *scale_step) {
                        Some(steps) => {
                            fieldset.checks.scale-radios {
                                legend { (field.label()) " (" (scale_min) " to " (scale_max) ")" @if required { " *" } }
                                @for n in steps {
                                    (radio(name, &n.to_string(), &n.to_string(), first == n.to_string(), required))
                                }
                            }
                        }
                        None => {
                            label for=(id) { (field.label()) " (" (scale_min) " to " (scale_max) ")" @if required { " *" } }
                            input id=(id) type="number" name=(name) min=(scale_min) max=(scale_max) step=(scale_step) value=(first) required[required];
                        }
                    }
                }
                ResponseConfig::Number { min, max, decimal_places } => {
                    label for=(id) { (field.label()) @if required { " *" } }
                    input id=(id) type="number" name=(name) step=(number_step(*decimal_places)) min=[*min] max=[*max] value=(first) inputmode="decimal" required[required];
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
        let text = ResponseConfig::Text {
            min_length: 0,
            max_length: 10,
        };
        assert_eq!(answer(&text, &form("answer=a%0D%0Ab")), json!("a\nb"));
        let multi = ResponseConfig::MultiSelect {
            options: vec![SelectOption::plain("x"), SelectOption::plain("y")],
            min_selections: 1,
            max_selections: None,
        };
        assert_eq!(
            answer(&multi, &form("answer=x&answer=y")),
            json!(["x", "y"])
        );
        assert_eq!(answer(&multi, &form("csrf=1")), json!([]));
        let rating = ResponseConfig::Rating {
            scale_min: 1,
            scale_max: 5,
            scale_step: 1.0,
        };
        assert_eq!(answer(&rating, &form("answer=4")), json!(4));
        let number = ResponseConfig::Number {
            min: None,
            max: None,
            decimal_places: None,
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
            options: vec![
                SelectOption::plain("<b>\"x\"</b>"),
                SelectOption {
                    value: "ok".into(),
                    label: Some("<i>Approve</i>".into()),
                    description: Some("<script>alert(1)</script>".into()),
                    color: Some("#16a34a".into()),
                    as_object: true,
                },
            ],
        };
        let html = widget(&select, &ReviewerHints::default(), &FormData::default()).into_string();
        assert!(
            !html.contains("<b>") && !html.contains("<script>") && !html.contains("<i>"),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert!(
            html.contains(r#"value="ok""#),
            "the value is sent, the label shown: {html}"
        );
        assert!(html.contains("&lt;i&gt;Approve&lt;/i&gt;"), "{html}");
        assert!(html.contains(r##"fill="#16a34a""##), "{html}");
    }

    #[test]
    fn the_requests_own_words_show_around_the_widget_escaped() {
        let price = ResponseConfig::Number {
            min: Some(0.0),
            max: None,
            decimal_places: Some(2),
        };
        let hints = ReviewerHints::of(&serde_json::json!({
            "prefix": "$", "suffix": " <b>USD</b>", "placeholder": "0.00"
        }));
        let html = widget(&price, &hints, &FormData::default()).into_string();
        assert!(
            html.contains(r#"<span class="affix" aria-hidden="true">$</span>"#),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;USD&lt;/b&gt;"), "escaped: {html}");
        assert!(html.contains(r#"placeholder="0.00""#), "{html}");
        let yes_no = ReviewerHints::of(&serde_json::json!({
            "true_label": "Ship it", "false_label": "Hold", "true_color": "#16a34a"
        }));
        let html = widget(&ResponseConfig::Boolean, &yes_no, &FormData::default()).into_string();
        assert!(html.contains("Ship it") && html.contains("Hold"), "{html}");
        assert!(html.contains(r##"fill="#16a34a""##), "{html}");
        assert!(!html.contains("Approve"), "{html}");
        let plain = widget(
            &ResponseConfig::Boolean,
            &ReviewerHints::default(),
            &FormData::default(),
        )
        .into_string();
        assert!(plain.contains("Approve") && plain.contains("Reject"));
    }

    #[test]
    fn hitl_bounds_show_in_the_widgets() {
        let halves = ResponseConfig::Rating {
            scale_min: 1,
            scale_max: 3,
            scale_step: 0.5,
        };
        let html = widget(&halves, &ReviewerHints::default(), &FormData::default()).into_string();
        for value in ["1", "1.5", "2", "2.5", "3"] {
            assert!(
                html.contains(&format!(r#"value="{value}""#)),
                "{value}: {html}"
            );
        }
        let multi = ResponseConfig::MultiSelect {
            options: vec![
                SelectOption::plain("a"),
                SelectOption::plain("b"),
                SelectOption::plain("c"),
            ],
            min_selections: 2,
            max_selections: Some(3),
        };
        assert!(
            widget(&multi, &ReviewerHints::default(), &FormData::default())
                .into_string()
                .contains("Choose 2 to 3")
        );
        let price = ResponseConfig::Number {
            min: Some(0.0),
            max: None,
            decimal_places: Some(2),
        };
        let html = widget(&price, &ReviewerHints::default(), &FormData::default()).into_string();
        assert!(
            html.contains(r#"step="0.01""#) && html.contains("At most 2 decimal places"),
            "{html}"
        );
        let text = ResponseConfig::Text {
            min_length: 20,
            max_length: 500,
        };
        assert!(
            widget(&text, &ReviewerHints::default(), &FormData::default())
                .into_string()
                .contains(r#"minlength="20""#)
        );
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
        let hint = "A draft to check and correct";
        assert!(fresh.contains(hint), "a draft says it is one: {fresh}");
        let empty = form_fields(&form_def, &FormData::default(), &Map::new()).into_string();
        assert!(!empty.contains(hint), "an empty field is no draft: {empty}");
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
