use chrono::DateTime;
use serde_json::json;

use super::*;
use crate::id::ObjectId;
use crate::template::TemplateInput;

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
}

fn person(n: u8) -> Reviewer {
    Reviewer {
        user_id: UserId::new(ObjectId::from_parts(1, [n; 8])),
        email: Email::parse(&format!("u{n}@x.io")).unwrap(),
    }
}

fn template() -> Template {
    Template::create(
        TemplateId::new(ObjectId::from_parts(1, [9; 8])),
        person(1).user_id,
        TemplateInput {
            name: Some("Reply".into()),
            description: None,
            fields: Some(json!([
                {"name": "post", "type": "content_display"},
                {"name": "approve", "type": "boolean", "required": true},
                {"name": "reply", "type": "text", "editable": true, "max_length": 40}
            ])),
        },
        at(0),
    )
    .unwrap()
}

fn input() -> ReviewInput {
    ReviewInput {
        template_id: Some(json!("010101010909090909090909")),
        content: Some(json!({"text": "A post", "metadata": {"reply": "Thanks, AI draft"}})),
        assignees: Some(json!(["u2@x.io", "0000000102020202020202ff"])),
        priority: Some(json!("high")),
        due_date: Some(json!("2027-01-20T10:00:00+01:00")),
        ..ReviewInput::default()
    }
}

fn review() -> Review {
    let parsed = input().parse().unwrap();
    Review::create(
        ReviewId::new(ObjectId::from_parts(1, [7; 8])),
        person(1).user_id,
        &template(),
        parsed,
        vec![person(2)],
        at(0),
    )
    .unwrap()
}

fn fields_of(error: ValidationError) -> Vec<String> {
    error.errors.into_iter().map(|e| e.field).collect()
}

#[test]
fn a_valid_body_parses_with_defaults() {
    let parsed = input().parse().unwrap();
    assert_eq!(parsed.priority, Priority::High);
    assert_eq!(parsed.assignees.len(), 2);
    assert!(matches!(parsed.assignees[0], AssigneeRef::Email(_)));
    assert!(matches!(parsed.assignees[1], AssigneeRef::User(_)));
    let due = DateTime::parse_from_rfc3339("2027-01-20T09:00:00Z").unwrap();
    assert_eq!(parsed.due_date, Some(due.with_timezone(&Utc)));
    let minimal = ReviewInput {
        template_id: Some(json!("010101010909090909090909")),
        team_id: Some(json!("010101010808080808080808")),
        ..ReviewInput::default()
    }
    .parse()
    .unwrap();
    assert_eq!(minimal.priority, Priority::Medium);
    assert!(minimal.assignees.is_empty() && minimal.metadata.is_empty());
}

#[test]
fn every_bad_part_is_named() {
    let error = ReviewInput {
        template_id: Some(json!("nope")),
        content: Some(json!({"text": 5, "metadata": [], "body": "x"})),
        assignees: Some(json!(["u2@x.io", "not an email", 7, "U2@x.io"])),
        team_id: Some(json!(12)),
        priority: Some(json!("urgent")),
        due_date: Some(json!("tomorrow")),
        callback_url: Some(json!("ftp://x")),
    }
    .parse()
    .unwrap_err();
    assert_eq!(
        fields_of(error),
        [
            "template_id",
            "content.body",
            "content.text",
            "content.metadata",
            "assignees[1]",
            "assignees[2]",
            "assignees[3]",
            "team_id",
            "priority",
            "due_date",
            "callback_url"
        ]
    );
    let nobody = ReviewInput {
        template_id: Some(json!("010101010909090909090909")),
        ..ReviewInput::default()
    };
    assert_eq!(fields_of(nobody.parse().unwrap_err()), ["assignees"]);
    assert_eq!(
        fields_of(ReviewInput::default().parse().unwrap_err()),
        ["template_id", "assignees"]
    );
    let long = ReviewInput {
        content: Some(json!({"text": "x".repeat(MAX_CONTENT_TEXT + 1)})),
        ..input()
    };
    assert_eq!(fields_of(long.parse().unwrap_err()), ["content.text"]);
}

#[test]
fn a_prefill_that_does_not_fit_its_field_is_refused_at_creation() {
    let parsed = ReviewInput {
        content: Some(json!({"metadata": {"reply": "x".repeat(41)}})),
        ..input()
    }
    .parse()
    .unwrap();
    let error = Review::create(
        ReviewId::new(ObjectId::from_parts(1, [7; 8])),
        person(1).user_id,
        &template(),
        parsed,
        vec![],
        at(0),
    )
    .unwrap_err();
    assert_eq!(fields_of(error), ["content.metadata.reply"]);
}

#[test]
fn a_reviewer_starts_and_completes_keeping_the_draft_when_left_out() {
    let mut review = review();
    assert!(review.start(person(2), at(5)).unwrap());
    assert!(!review.start(person(2), at(6)).unwrap(), "twice is a no-op");
    assert_eq!(
        review.start(person(3), at(6)),
        Err(TransitionError::AlreadyClaimed)
    );
    assert!(review
        .complete(person(3), &json!({"approve": true}), at(7))
        .is_err());
    let bad = review
        .complete(person(2), &json!({"approve": "yes"}), at(8))
        .unwrap_err();
    assert!(matches!(bad, ChangeError::Invalid(_)));
    assert_eq!(review.record().status, ReviewStatus::Started);

    review
        .complete(person(2), &json!({"approve": true}), at(9))
        .unwrap();
    let record = review.record();
    assert_eq!(record.status, ReviewStatus::Completed);
    assert_eq!(
        record.result,
        Some(json!({"approve": true, "reply": "Thanks, AI draft"}))
    );
    assert_eq!(record.started_at, Some(at(5)));
    assert_eq!(record.completed_at, Some(at(9)));
    assert_eq!(
        record.reviewer.as_ref().map(|r| r.user_id),
        Some(person(2).user_id)
    );
    assert_eq!(
        review.start(person(2), at(10)),
        Err(TransitionError::NotOpen)
    );
    assert!(review.cancel(at(10)).is_err());
}

#[test]
fn completing_from_created_starts_it_and_edits_replace_the_draft() {
    let mut review = review();
    review
        .complete(
            person(2),
            &json!({"approve": false, "reply": "Mine"}),
            at(3),
        )
        .unwrap();
    assert_eq!(review.record().started_at, Some(at(3)));
    assert_eq!(review.record().result.as_ref().unwrap()["reply"], "Mine");
}

#[test]
fn cancel_and_change_only_while_open() {
    let mut review = review();
    let patch = ReviewPatch {
        priority: Some(json!("low")),
        due_date: Some(Value::Null),
        assignees: None,
    };
    assert!(!review.change(&patch, Some(vec![person(2)]), at(1)).unwrap());
    assert_eq!(review.record().priority, Priority::Low);
    assert_eq!(review.record().due_date, None);
    assert!(review
        .change(&ReviewPatch::default(), Some(vec![person(3)]), at(2))
        .unwrap());
    assert!(
        review
            .change(&ReviewPatch::default(), Some(vec![]), at(2))
            .is_err(),
        "no team, nobody"
    );
    let bad = ReviewPatch {
        priority: Some(json!("soon")),
        ..ReviewPatch::default()
    };
    assert!(review.change(&bad, None, at(3)).is_err());
    assert_eq!(
        review.record().priority,
        Priority::Low,
        "nothing of a bad patch lands"
    );
    review.cancel(at(4)).unwrap();
    assert_eq!(review.record().status, ReviewStatus::Cancelled);
    assert!(review.change(&patch, None, at(5)).is_err());
    assert!(review
        .complete(person(2), &json!({"approve": true}), at(5))
        .is_err());
}

#[test]
fn a_released_review_can_be_started_by_someone_else() {
    let mut review = review();
    assert!(!review.release(at(1)), "nothing to release before a start");
    review.start(person(2), at(2)).unwrap();
    assert!(review.release(at(3)));
    assert_eq!(review.record().status, ReviewStatus::Created);
    assert_eq!(review.record().reviewer, None);
    assert!(review.start(person(3), at(4)).unwrap());
}

#[test]
fn overdue_means_open_and_past_the_deadline() {
    let mut review = review();
    let due = review.record().due_date.unwrap();
    assert!(!review.is_overdue(due));
    assert!(review.is_overdue(due + chrono::Duration::seconds(1)));
    review.cancel(due).unwrap();
    assert!(!review.is_overdue(due + chrono::Duration::seconds(1)));
}

#[test]
fn a_stored_review_restores_whole() {
    let review = review();
    assert_eq!(Review::restore(review.record().clone()).unwrap(), review);
}

#[test]
fn a_team_hears_of_a_review_except_its_assignees_and_who_asked_for_less() {
    use crate::id::LoopId;
    use crate::notice::NotifyLevel;
    use crate::review_loop::InviteCode;
    use crate::review_loop::NewLoop;
    let id = LoopId::new(ObjectId::from_parts(1, [8; 8]));
    let creator = Member::creator(id, person(1).user_id, person(1).email, at(0));
    let fields = NewLoop::parse(Some("Editors"), None, None).unwrap();
    let mut team = Loop::create(id, fields, creator, InviteCode::from_random([0; 6]), at(0));
    for (n, level) in [
        (2, NotifyLevel::All),
        (3, NotifyLevel::Off),
        (4, NotifyLevel::Urgent),
    ] {
        let mut m = Member::joined(id, person(n).user_id, person(n).email, at(0));
        m.set_notify(level);
        team.put_member(m).unwrap();
    }
    team.put_member(Member::invited(
        id,
        person(5).user_id,
        person(5).email,
        at(0),
    ))
    .unwrap();
    let told: Vec<UserId> = review()
        .team_audience(&team)
        .iter()
        .map(|m| m.user_id)
        .collect();
    assert_eq!(
        told,
        [person(1).user_id, person(4).user_id],
        "2 is an assignee, 3 is silent, 5 has not joined; 4 wants high ones"
    );
}
