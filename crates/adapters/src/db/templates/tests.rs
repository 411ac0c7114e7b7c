use diesel::prelude::*;
use reviewloop_domain::{
    Event, EventId, EventType, Template, TemplateInput, TemplatePatch, UserId,
};
use reviewloop_ports::{AccountStore, StoreError};
use serde_json::json;

use super::super::schema::outbox_events;
use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

fn template(n: u8, owner: UserId, created: i64) -> Template {
    Template::create(
        TemplateId::new(fixtures::oid(n)),
        owner,
        TemplateInput {
            name: Some(format!("Template {n}")),
            description: Some("For blog posts".into()),
            fields: Some(json!([
                {"name": "post", "type": "content_display", "label": "Post"},
                {"name": "tone", "type": "single_select", "label": "Tone", "options": ["calm", "sharp"], "required": true},
                {"name": "reply", "type": "text", "label": "Reply", "editable": true, "max_length": 280}
            ])),
        },
        fixtures::at(created),
    )
    .expect("valid template")
}

async fn owner(store: &SqlStore, n: u8) -> UserId {
    let user = fixtures::user(n, &format!("owner{n}@example.com"));
    store.insert_user(&user).await.unwrap();
    user.id
}

async fn a_template_round_trips_with_its_fields(db: TestDb) {
    let store = db.store();
    let owner = owner(&store, 1).await;
    let t = template(10, owner, 0);
    store.insert_template(&t).await.unwrap();
    assert_eq!(store.template_by_id(&t.id()).await.unwrap(), Some(t));
    let unknown = TemplateId::new(fixtures::oid(99));
    assert_eq!(store.template_by_id(&unknown).await.unwrap(), None);
}

async fn templates_are_listed_per_account_newest_first(db: TestDb) {
    let store = db.store();
    let (a, b) = (owner(&store, 1).await, owner(&store, 2).await);
    for (n, who, at) in [(10, a, 0), (11, b, 1), (12, a, 2)] {
        store.insert_template(&template(n, who, at)).await.unwrap();
    }
    let names: Vec<String> = store
        .templates_of(&a)
        .await
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["Template 12", "Template 10"]);
}

async fn an_update_writes_the_change_and_its_event_together(db: TestDb) {
    let store = db.store();
    let owner = owner(&store, 1).await;
    let mut t = template(10, owner, 0);
    store.insert_template(&t).await.unwrap();
    t.change(
        TemplatePatch {
            description: Some(None),
            fields: Some(json!([{"name": "ok", "type": "boolean", "required": true}])),
            ..TemplatePatch::default()
        },
        fixtures::at(5),
    )
    .unwrap();
    let event = Event::for_account(
        EventId::new(fixtures::oid(50)),
        EventType::TemplateUpdated,
        owner,
        json!({"template": {"id": t.id()}}),
        fixtures::at(5),
    );
    store.update_template(&t, &[event]).await.unwrap();
    assert_eq!(
        store.template_by_id(&t.id()).await.unwrap(),
        Some(t.clone())
    );
    let kinds: Vec<String> = db
        .db
        .run(|c| {
            Ok(outbox_events::table
                .select(outbox_events::event_type)
                .load(c)?)
        })
        .await
        .unwrap();
    assert_eq!(kinds, ["template.updated"]);

    store.delete_template(&t.id()).await.unwrap();
    assert_eq!(store.template_by_id(&t.id()).await.unwrap(), None);
    assert!(matches!(
        store.update_template(&t, &[]).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_template(&t.id()).await,
        Err(StoreError::NotFound)
    ));
}

on_every_backend!(
    a_template_round_trips_with_its_fields,
    templates_are_listed_per_account_newest_first,
    an_update_writes_the_change_and_its_event_together,
);
