use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use reviewloop_domain::{
    EventType, Member, Review, ReviewId, ReviewInput, ReviewStatus, Reviewer, Template, TemplateId,
    TemplateInput,
};
use reviewloop_ports::StoreError;
use serde_json::json;

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

fn template(kit: &Kit, owner: u8) -> Template {
    Template::create(
        TemplateId::new(kit.oid(60)),
        kit.user_id(owner),
        TemplateInput {
            name: Some("Reply".into()),
            description: None,
            fields: Some(json!([
                {"name": "approve", "type": "boolean", "required": true},
                {"name": "reply", "type": "text", "editable": true}
            ])),
        },
        kit.now,
    )
    .unwrap()
}

fn input(kit: &Kit) -> ReviewInput {
    ReviewInput {
        template_id: Some(json!(TemplateId::new(kit.oid(60)).to_string())),
        content: Some(json!({"text": "Post", "metadata": {"reply": "Draft"}})),
        assignees: Some(json!(["u2@x.io", "new@x.io"])),
        callback_url: Some(json!("https://example.com/done")),
        ..ReviewInput::default()
    }
}

/// A review by user 1, assigned to user 2, in the team of `kit.a_loop`.
pub(crate) fn stored(kit: &Kit) -> Review {
    let mut parsed = input(kit).parse().unwrap();
    parsed.team_id = Some(kit.a_loop(&[], &[]).id);
    Review::create(
        ReviewId::new(kit.oid(70)),
        kit.user_id(1),
        &template(kit, 1),
        parsed,
        vec![Reviewer {
            user_id: kit.user_id(2),
            email: Kit::email(2),
        }],
        kit.now,
    )
    .unwrap()
}

#[tokio::test]
async fn create_resolves_assignees_and_writes_created_and_assigned() {
    let mut kit = Kit::new();
    let t = template(&kit, 1);
    kit.templates()
        .expect_template_by_id()
        .returning(move |_| Ok(Some(t.clone())));
    kit.guard().expect_check().returning(|_| Ok(()));
    let known = kit.user(2, "u2@x.io");
    kit.accounts()
        .expect_user_by_email()
        .returning(move |e| Ok((e.as_str() == "u2@x.io").then(|| known.clone())));
    // The unknown address becomes an invitation.
    kit.accounts()
        .expect_insert_user()
        .withf(|u| u.email.as_str() == "new@x.io")
        .times(1)
        .returning(|_| Ok(()));
    kit.reviews()
        .expect_insert_review()
        .withf(|r, events| {
            let kinds: Vec<EventType> = events.iter().map(|e| e.event_type).collect();
            r.record().assignees.len() == 2
                && kinds == [EventType::ReviewCreated, EventType::ReviewAssigned]
                && events[1].data["review"]["assignees"] == json!(["u2@x.io", "new@x.io"])
                && events[1].data[NEWLY_ASSIGNED].as_array().map(Vec::len) == Some(2)
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let input = input(&kit);
    let service = ReviewService::new(kit.ports());
    let review = service.create(&caller, input).await.unwrap();
    assert_eq!(review.record().status, ReviewStatus::Created);
}

#[tokio::test]
async fn another_accounts_template_is_not_found_and_nothing_is_written() {
    let mut kit = Kit::new();
    let t = template(&kit, 2);
    kit.templates()
        .expect_template_by_id()
        .returning(move |_| Ok(Some(t.clone())));
    let caller = kit.principal(1);
    let input = input(&kit);
    let service = ReviewService::new(kit.ports());
    assert!(matches!(
        service.create(&caller, input).await.classed(),
        Err(ServiceError::NotFound(Missing::Template))
    ));
}

fn with_review(kit: &mut Kit, review: Review) {
    kit.reviews()
        .expect_review_by_id()
        .returning(move |_| Ok(Some(review.clone())));
}

#[tokio::test]
async fn only_assignees_and_active_team_members_answer() {
    let mut kit = Kit::new();
    let review = stored(&kit);
    with_review(&mut kit, review);
    let lp = kit.a_loop(&[3], &[4]);
    let members: Vec<Member> = lp.members.clone();
    kit.loops()
        .expect_member()
        .returning(move |_, user| Ok(members.iter().find(|m| &m.user_id == user).cloned()));
    kit.reviews()
        .expect_update_review()
        .withf(|r, events| {
            let kinds: Vec<EventType> = events.iter().map(|e| e.event_type).collect();
            r.record().status == ReviewStatus::Completed
                && kinds == [EventType::ReviewStarted, EventType::ReviewCompleted]
                && events[1].data["callback_url"] == "https://example.com/done"
                && events[0].data.get("callback_url").is_none()
                && events[1].data["review"]["result"] == json!({"approve": true, "reply": "Draft"})
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let (member, pending, stranger) = (kit.principal(3), kit.principal(4), kit.principal(5));
    let id = ReviewId::new(kit.oid(70));
    let service = ReviewService::new(kit.ports());
    let result = json!({"approve": true});
    assert!(matches!(
        service.complete(&stranger, &id, &result).await.classed(),
        Err(ServiceError::NotFound(Missing::Review))
    ));
    assert!(matches!(
        service.complete(&pending, &id, &result).await.classed(),
        Err(ServiceError::NotFound(Missing::Review))
    ));
    let done = service.complete(&member, &id, &result).await.unwrap();
    assert_eq!(
        done.record().reviewer.as_ref().map(|r| r.user_id),
        Some(member.user_id)
    );
}

#[tokio::test]
async fn a_lost_race_is_retried_from_a_fresh_read() {
    let mut kit = Kit::new();
    let review = stored(&kit);
    with_review(&mut kit, review);
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    kit.reviews().expect_update_review().returning(move |_, _| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            Err(StoreError::Conflict("version".into()))
        } else {
            Ok(())
        }
    });
    let caller = kit.principal(1);
    let id = ReviewId::new(kit.oid(70));
    let service = ReviewService::new(kit.ports());
    let cancelled = service.cancel(&caller, &id).await.unwrap();
    assert_eq!(cancelled.record().status, ReviewStatus::Cancelled);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn only_the_sender_changes_or_cancels() {
    let mut kit = Kit::new();
    let review = stored(&kit);
    with_review(&mut kit, review);
    let caller = kit.principal(2);
    let id = ReviewId::new(kit.oid(70));
    let service = ReviewService::new(kit.ports());
    assert!(matches!(
        service.cancel(&caller, &id).await.classed(),
        Err(ServiceError::Forbidden(_))
    ));
    let patch = ReviewPatch {
        priority: Some(json!("high")),
        ..ReviewPatch::default()
    };
    assert!(matches!(
        service.update(&caller, &id, patch).await.classed(),
        Err(ServiceError::Forbidden(_))
    ));
}

#[tokio::test]
async fn list_filters_are_checked_and_an_unknown_assignee_lists_nothing() {
    let mut kit = Kit::new();
    kit.accounts()
        .expect_user_by_email()
        .returning(|_| Ok(None));
    let caller = kit.principal(1);
    let service = ReviewService::new(kit.ports());
    let bad = ListReviewsInput {
        role: Some("boss".into()),
        status: Some("done".into()),
        template_id: Some("x".into()),
        limit: Some(500),
        ..ListReviewsInput::default()
    };
    match service.list(&caller, bad).await.classed() {
        Err(ServiceError::Invalid(e)) => {
            let fields: Vec<&str> = e.errors.iter().map(|f| f.field.as_str()).collect();
            assert_eq!(fields, ["role", "status", "template_id", "limit"]);
        }
        other => panic!("{other:?}"),
    }
    let nobody = ListReviewsInput {
        assignee: Some("nobody@x.io".into()),
        ..ListReviewsInput::default()
    };
    let (page, _, _) = service.list(&caller, nobody).await.unwrap();
    assert_eq!(page.total, 0);
}

#[tokio::test]
async fn a_sender_outside_the_review_cannot_answer_it() {
    let mut kit = Kit::new();
    let mut record = stored(&kit).record().clone();
    record.team_id = None;
    with_review(&mut kit, Review::restore(record).unwrap());
    let sender = kit.principal(1);
    let id = ReviewId::new(kit.oid(70));
    let service = ReviewService::new(kit.ports());
    assert!(matches!(
        service
            .complete(&sender, &id, &json!({"approve": true}))
            .await
            .classed(),
        Err(ServiceError::Forbidden(_))
    ));
    // It still reads its own review.
    assert!(service.get(&sender, &id).await.is_ok());
}

#[tokio::test]
async fn a_reassignment_names_only_the_assignees_it_adds() {
    let mut kit = Kit::new();
    let review = stored(&kit);
    with_review(&mut kit, review);
    let newcomer = kit.user(3, "u3@x.io");
    let known = kit.user(2, "u2@x.io");
    kit.accounts().expect_user_by_email().returning(move |e| {
        Ok([&known, &newcomer]
            .into_iter()
            .find(|u| u.email == *e)
            .cloned())
    });
    let added = kit.user_id(3);
    kit.reviews()
        .expect_update_review()
        .withf(move |_, events| {
            events.len() == 1
                && events[0].event_type == EventType::ReviewAssigned
                && events[0].data[NEWLY_ASSIGNED] == json!([added])
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let id = ReviewId::new(kit.oid(70));
    let patch = ReviewPatch {
        assignees: Some(json!(["u2@x.io", "u3@x.io"])),
        ..ReviewPatch::default()
    };
    ReviewService::new(kit.ports())
        .update(&caller, &id, patch)
        .await
        .unwrap();
}
