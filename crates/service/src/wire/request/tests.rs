use reviewloop_domain::{ApiKeyId, ReviewRequest};
use serde_json::{json, Value};

use super::*;
use crate::requests::tests::a_request;
use crate::testkit::Kit;

fn shown(view: RequestView<'_>) -> Value {
    serde_json::to_value(view).unwrap()
}

#[test]
fn the_requester_sees_everything_and_a_reviewer_only_what_it_needs() {
    let kit = Kit::new();
    let mut record = a_request(&kit).into_record();
    record.api_key_id = Some(ApiKeyId::new(kit.oid(90)));
    record.callback_url = Some("https://hooks.example.com/t0ken".into());
    record.metadata = Some(json!({"run": 7}));
    let r = ReviewRequest::restore(record);
    let (creator, reviewer_id, stranger) = (kit.user_id(1), kit.user_id(2), kit.user_id(9));

    let requester = shown(request_view(&r, &creator));
    assert_eq!(requester, shown(full_request(&r)));
    assert_eq!(requester["callback_url"], "https://hooks.example.com/t0ken");
    assert_eq!(requester["metadata"], json!({"run": 7}));
    assert!(requester["api_key_id"].is_string());
    assert_eq!(requester["broadcasted_to"].as_array().unwrap().len(), 3);
    assert_eq!(requester["type"], "markdown");
    assert_eq!(requester["processing_type"], "time-sensitive");
    assert_eq!(requester["status"], "pending");

    let reviewer = shown(request_view(&r, &reviewer_id));
    for hidden in ["callback_url", "metadata", "api_key_id"] {
        assert!(
            reviewer.get(hidden).is_none(),
            "{hidden} shown to a reviewer"
        );
    }
    let entries = reviewer["broadcasted_to"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["email"], Kit::email(2).as_str());
    assert_eq!(entries[0]["notification_sent"], true);
    assert_eq!(reviewer["request_text"], "Publish?");
    assert!(
        shown(request_view(&r, &stranger))["broadcasted_to"]
            .as_array()
            .unwrap()
            .is_empty(),
        "a stranger's view lists nobody (strangers are refused before this)"
    );
}

#[test]
fn feedback_is_shown_with_its_time() {
    let kit = Kit::new();
    let mut r = a_request(&kit);
    r.respond(kit.user_id(2), json!("yes"), kit.now).unwrap();
    r.give_feedback(Some(4.0), Some("quick".into()), kit.now)
        .unwrap();
    let shown = shown(full_request(&r));
    assert_eq!(shown["feedback"]["rating"], 4.0);
    assert_eq!(shown["feedback"]["comment"], "quick");
    assert!(shown["feedback"]["created_at"].is_string());
    assert_eq!(shown["response_data"], "yes");
}
