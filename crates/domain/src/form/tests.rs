use serde_json::{json, Map, Value};

use super::*;

fn fields_of(error: ValidationError) -> Vec<String> {
    error.errors.into_iter().map(|e| e.field).collect()
}

fn moderation_form() -> Form {
    Form::parse(&json!([
        {"name": "post", "type": "content_display", "label": "Post"},
        {"name": "approve", "type": "boolean", "label": "Publish?", "required": true},
        {"name": "reply", "type": "text", "label": "Reply", "editable": true, "max_length": 20},
        {"name": "tone", "type": "single_select", "label": "Tone", "options": ["calm", "sharp"]},
        {"name": "tags", "type": "multi_select", "label": "Tags", "options": ["a", "b", "c"]},
        {"name": "quality", "type": "rating", "label": "Quality", "scale_max": 10},
        {"name": "price", "type": "number", "label": "Price", "min": 0, "max": 99.5}
    ]))
    .unwrap()
}

#[test]
fn every_field_type_parses_with_its_settings_and_defaults() {
    let form = moderation_form();
    let types: Vec<&str> = form.fields().iter().map(|f| f.kind().type_name()).collect();
    assert_eq!(
        types,
        [
            "content_display",
            "boolean",
            "text",
            "single_select",
            "multi_select",
            "rating",
            "number"
        ]
    );
    let shown = form.to_value();
    assert_eq!(
        shown[0],
        json!({"name": "post", "type": "content_display", "label": "Post", "required": false, "editable": false})
    );
    assert_eq!(shown[2]["max_length"], 20);
    assert_eq!(shown[2]["editable"], true);
    assert_eq!(shown[5]["scale_min"], 1, "rating scale_min defaults to 1");
    assert_eq!(shown[5]["scale_max"], 10);
    assert_eq!(shown[6]["max"], 99.5);
    assert_eq!(form.field("approve").map(Field::required), Some(true));
    assert_eq!(form.field("tone").map(Field::required), Some(false));
}

#[test]
fn stored_fields_parse_back_to_the_same_form() {
    let form = moderation_form();
    assert_eq!(Form::parse(&form.to_value()).unwrap(), form);
}

#[test]
fn a_label_defaults_to_the_name() {
    let form = Form::parse(&json!([{"name": "ok", "type": "boolean"}])).unwrap();
    assert_eq!(form.fields()[0].label(), "ok");
}

#[test]
fn mistakes_are_named_by_their_path() {
    let error = Form::parse(&json!([
        {"name": "a", "type": "boolean"},
        {"name": "b", "type": "single_select", "options": []},
        {"name": "c", "type": "essay"},
        {"name": "a", "type": "text"},
        {"name": "9lives", "type": "text"},
        {"name": "e", "type": "rating", "scale_min": 5, "scale_max": 2},
        {"name": "f", "type": "text", "required": "yes"},
        {"name": "g", "type": "boolean", "optons": ["x"]},
        "h",
        {"name": "i", "type": "content_display", "editable": true},
        {"name": "j", "type": "number", "label": ""}
    ]))
    .unwrap_err();
    assert_eq!(
        fields_of(error.clone()),
        [
            "fields[1].options",
            "fields[2].type",
            "fields[3].name",
            "fields[4].name",
            "fields[5].scale_max",
            "fields[6].required",
            "fields[7].optons",
            "fields[8]",
            "fields[9].editable",
            "fields[10].label",
        ]
    );
    let text = error.to_string();
    assert!(
        text.contains("fields[1].options must have 1 to 100 entries"),
        "{text}"
    );
    assert!(
        text.contains("fields[2].type must be one of content_display, text,"),
        "{text}"
    );
    assert!(
        text.contains("fields[3].name 'a' is used by another field"),
        "{text}"
    );
    assert!(
        text.contains("fields[5].scale_max must be greater than fields[5].scale_min"),
        "{text}"
    );
    assert!(
        text.contains("fields[7].optons is not a setting of a boolean field"),
        "{text}"
    );
}

#[test]
fn the_list_itself_must_be_a_non_empty_array_with_something_to_answer() {
    for bad in [json!({}), json!([]), json!("x")] {
        assert_eq!(
            fields_of(Form::parse(&bad).unwrap_err()),
            ["fields"],
            "{bad}"
        );
    }
    let display_only = json!([{"name": "post", "type": "content_display"}]);
    assert!(Form::parse(&display_only)
        .unwrap_err()
        .to_string()
        .contains("at least one field to answer"));
    let too_many: Vec<Value> = (0..=MAX_FIELDS)
        .map(|i| json!({"name": format!("f{i}"), "type": "boolean"}))
        .collect();
    assert!(Form::parse(&Value::Array(too_many)).is_err());
}

#[test]
fn a_result_is_checked_field_by_field() {
    let form = moderation_form();
    let result = form
        .validate(
            "result",
            &json!({"approve": true, "reply": "Thanks!", "tone": "calm", "tags": ["a", "c"], "quality": 7, "price": 12.5}),
            &Map::new(),
        )
        .unwrap();
    assert_eq!(result["tags"], json!(["a", "c"]));
    assert_eq!(result["price"], 12.5);

    let error = form
        .validate(
            "result",
            &json!({"approve": "yes", "reply": "x".repeat(21), "tone": "loud", "tags": [], "quality": 11, "price": -1, "post": "edited", "extra": 1}),
            &Map::new(),
        )
        .unwrap_err();
    assert_eq!(
        fields_of(error),
        [
            "result.extra",
            "result.post",
            "result.approve",
            "result.reply",
            "result.tone",
            "result.tags",
            "result.quality",
            "result.price",
        ]
    );
}

#[test]
fn required_fields_must_be_answered_and_optional_ones_may_be_left_out() {
    let form = moderation_form();
    let error = form
        .validate("result", &json!({}), &Map::new())
        .unwrap_err();
    assert_eq!(error.to_string(), "result.approve is required");
    assert_eq!(
        form.validate(
            "result",
            &json!({"approve": false, "tone": null}),
            &Map::new()
        )
        .unwrap(),
        json!({"approve": false})
    );
    assert!(form
        .validate("result", &json!([true]), &Map::new())
        .is_err());
}

#[test]
fn editable_fields_start_from_the_content_and_may_be_changed() {
    let form = moderation_form();
    let metadata = json!({"reply": "AI draft", "tone": "calm", "other": 1});
    let prefill = form.prefill(metadata.as_object().unwrap()).unwrap();
    // Only editable fields take a value from the content.
    assert_eq!(Value::Object(prefill.clone()), json!({"reply": "AI draft"}));
    let kept = form
        .validate("result", &json!({"approve": true}), &prefill)
        .unwrap();
    assert_eq!(kept["reply"], "AI draft");
    let changed = form
        .validate(
            "result",
            &json!({"approve": true, "reply": "Mine"}),
            &prefill,
        )
        .unwrap();
    assert_eq!(changed["reply"], "Mine");
    let bad = json!({"reply": "far too long for twenty"});
    assert_eq!(
        fields_of(form.prefill(bad.as_object().unwrap()).unwrap_err()),
        ["content.metadata.reply"]
    );
}

#[test]
fn a_request_is_a_form_of_one_field_whose_value_is_the_whole_answer() {
    let config = ResponseConfig::parse(
        ResponseType::SingleSelect,
        Some(&json!({"options": ["approve", "reject"]})),
    )
    .unwrap();
    let form = Form::single(config);
    assert_eq!(form.fields().len(), 1);
    assert_eq!(
        form.validate("response_data", &json!("approve"), &Map::new())
            .unwrap(),
        json!("approve")
    );
    assert_eq!(
        form.validate("response_data", &json!("maybe"), &Map::new())
            .unwrap_err()
            .to_string(),
        "response_data 'maybe' is not one of the options: approve, reject"
    );
}
