use mockall::predicate::always;
use reviewloop_domain::{
    EventType, Permission, Template, TemplateId, TemplateInput, TemplatePatch,
};
use serde_json::json;

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

fn input() -> TemplateInput {
    TemplateInput {
        name: Some("Blog post".into()),
        description: None,
        fields: Some(json!([
            {"name": "post", "type": "content_display", "label": "Post"},
            {"name": "approve", "type": "boolean", "label": "Publish?", "required": true}
        ])),
    }
}

fn stored(kit: &Kit, owner: u8) -> Template {
    Template::create(
        TemplateId::new(kit.oid(60)),
        kit.user_id(owner),
        input(),
        kit.now,
    )
    .unwrap()
}

#[tokio::test]
async fn create_stores_a_valid_template_of_the_caller() {
    let mut kit = Kit::new();
    let caller = kit.principal(1);
    kit.templates()
        .expect_insert_template()
        .withf(|t| t.name() == "Blog post" && t.form().fields().len() == 2)
        .times(1)
        .returning(|_| Ok(()));
    let service = TemplateService::new(kit.ports());
    let template = service.create(&caller, input()).await.unwrap();
    assert_eq!(template.account_id(), caller.user_id);
}

#[tokio::test]
async fn invalid_fields_are_refused_before_anything_is_stored() {
    let kit = Kit::new();
    let caller = kit.principal(1);
    let service = TemplateService::new(kit.ports());
    let bad = TemplateInput {
        fields: Some(json!([{"name": "x", "type": "single_select"}])),
        ..input()
    };
    match service.create(&caller, bad).await.classed() {
        Err(ServiceError::Invalid(e)) => assert_eq!(e.errors[0].field, "fields[0].options"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn creating_needs_requests_write() {
    let kit = Kit::new();
    let mut caller = kit.principal(1);
    caller.permissions = vec![Permission::RequestsRead];
    let service = TemplateService::new(kit.ports());
    assert!(matches!(
        service.create(&caller, input()).await.classed(),
        Err(ServiceError::Forbidden(_))
    ));
}

#[tokio::test]
async fn another_accounts_template_is_not_found() {
    let mut kit = Kit::new();
    let template = stored(&kit, 2);
    kit.templates()
        .expect_template_by_id()
        .returning(move |_| Ok(Some(template.clone())));
    let caller = kit.principal(1);
    let id = TemplateId::new(kit.oid(60));
    let service = TemplateService::new(kit.ports());
    for result in [
        service.get(&caller, &id).await.map(drop).classed(),
        service.delete(&caller, &id).await.classed(),
        service
            .update(
                &caller,
                &id,
                TemplatePatch {
                    name: Some("Mine now".into()),
                    ..TemplatePatch::default()
                },
            )
            .await
            .map(drop)
            .classed(),
    ] {
        assert!(
            matches!(result, Err(ServiceError::NotFound(Missing::Template))),
            "{result:?}"
        );
    }
}

#[tokio::test]
async fn an_update_is_written_with_its_template_updated_event() {
    let mut kit = Kit::new();
    let template = stored(&kit, 1);
    kit.templates()
        .expect_template_by_id()
        .returning(move |_| Ok(Some(template.clone())));
    kit.templates()
        .expect_update_template()
        .with(always(), always())
        .withf(|t, events| {
            t.name() == "Renamed"
                && events.len() == 1
                && events[0].event_type == EventType::TemplateUpdated
                && events[0].data["template"]["name"] == "Renamed"
                && events[0].data["template"]["fields"][1]["name"] == "approve"
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let id = TemplateId::new(kit.oid(60));
    let service = TemplateService::new(kit.ports());
    let patch = TemplatePatch {
        name: Some("Renamed".into()),
        ..TemplatePatch::default()
    };
    let updated = service.update(&caller, &id, patch).await.unwrap();
    assert_eq!(updated.name(), "Renamed");
}
