use reviewloop_domain::{
    Email, LoopId, Review, ReviewId, ReviewInput, Reviewer, Template, TemplateId, TemplateInput,
    UserId,
};
use reviewloop_ports::{ReviewQuery, ReviewScope, ReviewStore, StoreError};
use serde_json::json;

use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::super::SqlStore;

fn person(n: u8) -> Reviewer {
    Reviewer {
        user_id: UserId::new(fixtures::oid(n)),
        email: Email::parse(&format!("u{n}@x.io")).unwrap(),
    }
}

fn template() -> Template {
    Template::create(
        TemplateId::new(fixtures::oid(90)),
        person(1).user_id,
        TemplateInput {
            name: Some("Reply".into()),
            description: None,
            fields: Some(json!([
                {"name": "approve", "type": "boolean", "required": true},
                {"name": "reply", "type": "text", "editable": true}
            ])),
        },
        fixtures::at(0),
    )
    .unwrap()
}

/// Review `n` by user 1: assigned to `assignees`, in `team`, due at `due`.
fn review(
    n: u8,
    assignees: &[u8],
    team: Option<LoopId>,
    due: Option<&str>,
    created: i64,
) -> Review {
    let parsed = ReviewInput {
        template_id: Some(json!(TemplateId::new(fixtures::oid(90)).to_string())),
        content: Some(json!({"text": "Post", "metadata": {"reply": "Draft"}})),
        assignees: Some(json!(assignees
            .iter()
            .map(|a| format!("u{a}@x.io"))
            .collect::<Vec<_>>())),
        team_id: team.map(|t| json!(t.to_string())),
        due_date: due.map(|d| json!(d)),
        ..ReviewInput::default()
    }
    .parse()
    .unwrap();
    Review::create(
        ReviewId::new(fixtures::oid(n)),
        person(1).user_id,
        &template(),
        parsed,
        assignees.iter().map(|a| person(*a)).collect(),
        fixtures::at(created),
    )
    .unwrap()
}

fn query(scope: ReviewScope) -> ReviewQuery {
    ReviewQuery {
        scope,
        status: None,
        template_id: None,
        assignee: None,
        team_id: None,
        priority: None,
        overdue_at: None,
        limit: 50,
        offset: 0,
    }
}

async fn ids(store: &SqlStore, q: ReviewQuery) -> Vec<u8> {
    store
        .list_reviews(&q)
        .await
        .unwrap()
        .reviews
        .iter()
        .map(|r| {
            (1..=255u8)
                .find(|n| ReviewId::new(fixtures::oid(*n)) == r.record().id)
                .unwrap()
        })
        .collect()
}

async fn a_review_round_trips_and_changes_by_compare_and_set(db: TestDb) {
    let store = db.store();
    fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let mut r = review(20, &[2, 3], None, Some("2027-01-20T09:00:00Z"), 0);
    store.insert_review(&r, &[]).await.unwrap();
    assert_eq!(
        store.review_by_id(&r.record().id).await.unwrap(),
        Some(r.clone())
    );

    let stale = r.clone();
    r.change(&Default::default(), Some(vec![person(3)]), fixtures::at(5))
        .unwrap();
    r.complete(person(3), &json!({"approve": true}), fixtures::at(5))
        .unwrap();
    store.update_review(&r, &[]).await.unwrap();
    r.written();
    let loaded = store.review_by_id(&r.record().id).await.unwrap().unwrap();
    assert_eq!(loaded, r);
    assert_eq!(
        loaded.record().result,
        Some(json!({"approve": true, "reply": "Draft"}))
    );
    assert_eq!(loaded.record().assignees, vec![person(3)]);

    let mut late = stale;
    late.cancel(fixtures::at(6)).unwrap();
    assert!(matches!(
        store.update_review(&late, &[]).await,
        Err(StoreError::Conflict(_))
    ));
    let missing = review(21, &[2], None, None, 0);
    assert!(matches!(
        store.update_review(&missing, &[]).await,
        Err(StoreError::NotFound)
    ));
}

async fn listings_follow_scope_and_filters(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    // 20: assigned to 2; 21: the team's (2 and 3 active, 4 pending);
    // 22: assigned to 4 only, overdue.
    store
        .insert_review(
            &review(20, &[2], None, Some("2030-01-01T00:00:00Z"), 0),
            &[],
        )
        .await
        .unwrap();
    store
        .insert_review(&review(21, &[], Some(lp.id), None, 1), &[])
        .await
        .unwrap();
    store
        .insert_review(
            &review(22, &[4], None, Some("2020-01-01T00:00:00Z"), 2),
            &[],
        )
        .await
        .unwrap();
    let u = |n| UserId::new(fixtures::oid(n));
    assert_eq!(
        ids(&store, query(ReviewScope::SentBy(u(1)))).await,
        [22, 21, 20]
    );
    assert!(ids(&store, query(ReviewScope::SentBy(u(2))))
        .await
        .is_empty());
    assert_eq!(ids(&store, query(ReviewScope::For(u(2)))).await, [21, 20]);
    assert_eq!(ids(&store, query(ReviewScope::For(u(3)))).await, [21]);
    assert_eq!(
        ids(&store, query(ReviewScope::For(u(4)))).await,
        [22],
        "a pending member does not get the team's reviews"
    );

    let mut q = query(ReviewScope::SentBy(u(1)));
    q.assignee = Some(u(2));
    assert_eq!(ids(&store, q).await, [20]);
    let mut q = query(ReviewScope::SentBy(u(1)));
    q.team_id = Some(lp.id);
    assert_eq!(ids(&store, q).await, [21]);
    let mut q = query(ReviewScope::SentBy(u(1)));
    q.overdue_at = Some(fixtures::at(0));
    assert_eq!(ids(&store, q).await, [22]);
    let mut q = query(ReviewScope::SentBy(u(1)));
    q.limit = 1;
    q.offset = 1;
    let page = store.list_reviews(&q).await.unwrap();
    assert_eq!((page.reviews.len(), page.total), (1, 3));
}

on_every_backend!(
    a_review_round_trips_and_changes_by_compare_and_set,
    listings_follow_scope_and_filters,
);
