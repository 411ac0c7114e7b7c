use chrono::DateTime;
use serde_json::{json, Value};

use super::*;
use crate::id::{LoopId, ObjectId};
use crate::request::RequestInput;

fn request(response_type: &str, config: Value) -> ReviewRequest {
    let input = RequestInput {
        request_text: Some("Ship it?".into()),
        content_type: Some("markdown".into()),
        response_type: Some(response_type.into()),
        response_config: Some(config),
        priority: Some("high".into()),
        processing_type: Some("deferred".into()),
        ..RequestInput::default()
    };
    ReviewRequest::create(
        RequestId::new(ObjectId::from_parts(1, [7; 8])),
        LoopId::new(ObjectId::from_parts(1, [8; 8])),
        UserId::new(ObjectId::from_parts(1, [1; 8])),
        None,
        input.validate().unwrap(),
        Vec::new(),
        DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
    )
}

#[test]
fn a_boolean_request_offers_both_answers_in_its_own_words() {
    assert_eq!(
        one_click_answers(&request("boolean", json!({}))),
        vec![
            (json!(true), "Approve".into()),
            (json!(false), "Reject".into())
        ]
    );
    assert_eq!(
        one_click_answers(&request(
            "boolean",
            json!({"true_label": "Ship", "false_label": "Hold"})
        )),
        vec![(json!(true), "Ship".into()), (json!(false), "Hold".into())]
    );
}

#[test]
fn a_short_single_select_offers_each_option_and_a_long_one_none() {
    let six = json!({"options": [
        {"value": "a", "label": "Alpha"}, "b", "c", "d", "e", "f"
    ]});
    let offered = one_click_answers(&request("single_select", six));
    assert_eq!(offered.len(), MAX_ONE_CLICK_OPTIONS);
    assert_eq!(offered[0], (json!("a"), "Alpha".into()));
    assert_eq!(offered[1], (json!("b"), "b".into()));
    let seven = json!({"options": ["a", "b", "c", "d", "e", "f", "g"]});
    assert!(one_click_answers(&request("single_select", seven)).is_empty());
    assert!(one_click_answers(&request("text", json!({}))).is_empty());
    assert!(one_click_answers(&request("multi_select", json!({"options": ["a", "b"]}))).is_empty());
}
