use mockall::predicate::always;
use reviewloop_domain::{MemberStatus, Permission};

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

const URL: &str = "https://review.example.com/";

fn service(kit: Kit) -> LoopService {
    LoopService::new(kit.ports(), URL)
}

fn with_loop(kit: &mut Kit, lp: Loop) {
    let by_code = lp.clone();
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.loops()
        .expect_loop_by_invite_code()
        .returning(move |_| Ok(Some(by_code.clone())));
}

#[tokio::test]
async fn create_makes_the_creator_an_active_member_and_returns_join_links() {
    let mut kit = Kit::new();
    kit.qr()
        .expect_png()
        .withf(|t| t == "https://review.example.com/join/ABCDEF")
        .returning(|_| Ok(vec![1, 2]));
    let creator = kit.user_id(1);
    kit.loops()
        .expect_insert_loop()
        .withf(move |lp, _| {
            lp.members.len() == 1
                && lp.members[0].user_id == creator
                && lp.members[0].status == MemberStatus::Active
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let invite = service(kit)
        .create(&caller, Some("Legal"), Some("contracts"), None, None)
        .await
        .unwrap();
    assert_eq!(invite.lp.name.as_str(), "Legal");
    assert_eq!(invite.lp.icon.as_str(), "🔁");
    assert_eq!(invite.join_url, "https://review.example.com/join/ABCDEF");
    assert_eq!(
        invite.qr_code_url,
        "https://review.example.com/v1/qr/ABCDEF.png"
    );
    assert_eq!(invite.qr_png, vec![1, 2]);
}

#[tokio::test]
async fn create_retries_when_the_invite_code_is_taken() {
    let mut kit = Kit::new();
    kit.codes = vec!["AAAAAA", "BBBBBB"];
    kit.qr().expect_png().returning(|_| Ok(vec![]));
    kit.loops()
        .expect_insert_loop()
        .withf(|lp, _| lp.invite_code.as_str() == "AAAAAA")
        .returning(|_, _| Err(StoreError::Conflict("invite_code".into())));
    kit.loops()
        .expect_insert_loop()
        .withf(|lp, _| lp.invite_code.as_str() == "BBBBBB")
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let invite = service(kit)
        .create(&caller, Some("Legal"), None, None, None)
        .await
        .unwrap();
    assert_eq!(invite.lp.invite_code.as_str(), "BBBBBB");
}

#[tokio::test]
async fn create_validates_and_checks_permission_before_storing() {
    let kit = Kit::new();
    let mut caller = kit.principal(1);
    let svc = service(kit);
    let err = svc
        .create(&caller, None, None, None, None)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "name is required");
    caller.permissions = vec![Permission::LoopsRead];
    let err = svc
        .create(&caller, Some("x"), None, None, None)
        .await
        .classed()
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Forbidden(m) if m == "Insufficient permissions: requires loops:write")
    );
}

#[tokio::test]
async fn strangers_and_pending_members_get_404_active_members_see_the_loop() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[3]);
    with_loop(&mut kit, lp);
    let (member, pending, stranger) = (kit.principal(2), kit.principal(3), kit.principal(4));
    let id = LoopId::new(kit.oid(50));
    let svc = service(kit);
    assert!(svc.get(&member, &id).await.is_ok());
    for caller in [pending, stranger] {
        let err = svc.get(&caller, &id).await.classed().unwrap_err();
        assert!(matches!(err, ServiceError::NotFound(Missing::Loop)));
    }
}

#[tokio::test]
async fn members_may_not_update_or_delete() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    kit.loops().expect_update_loop().never();
    kit.loops().expect_delete_loop().never();
    let member = kit.principal(2);
    let svc = service(kit);
    let patch = LoopPatch {
        name: Some("New".into()),
        ..LoopPatch::default()
    };
    let err = svc.update(&member, &id, patch).await.classed().unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(m) if m == "Access denied to this loop"));
    let err = svc.delete(&member, &id, false).await.classed().unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(m) if m == "Access denied to this loop"));
}

#[tokio::test]
async fn update_changes_only_what_is_sent_and_can_clear_the_description() {
    let mut kit = Kit::new();
    let mut lp = kit.a_loop(&[], &[]);
    let now = kit.now;
    lp.change(
        None,
        Some(Some(LoopDescription::parse("old").unwrap())),
        None,
        now,
    );
    let id = lp.id;
    with_loop(&mut kit, lp);
    kit.loops()
        .expect_update_loop()
        .withf(|lp| {
            lp.name.as_str() == "Reviewers" && lp.description.is_none() && lp.icon.as_str() == "✅"
        })
        .times(1)
        .returning(|_| Ok(()));
    let caller = kit.principal(1);
    let patch = LoopPatch {
        description: Some(None),
        icon: Some("✅".into()),
        ..LoopPatch::default()
    };
    let lp = service(kit).update(&caller, &id, patch).await.unwrap();
    assert_eq!(lp.icon.as_str(), "✅");
}

#[tokio::test]
async fn update_refuses_empty_and_invalid_patches() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[], &[]);
    with_loop(&mut kit, lp);
    kit.loops().expect_update_loop().never();
    let caller = kit.principal(1);
    let id = LoopId::new(kit.oid(50));
    let svc = service(kit);
    assert!(svc
        .update(&caller, &id, LoopPatch::default())
        .await
        .unwrap_err()
        .to_string()
        .starts_with("nothing to update"));
    let patch = LoopPatch {
        name: Some(String::new()),
        ..LoopPatch::default()
    };
    assert_eq!(
        svc.update(&caller, &id, patch)
            .await
            .unwrap_err()
            .to_string(),
        "name must be 1 to 100 characters"
    );
}

#[tokio::test]
async fn delete_refuses_open_requests_unless_forced() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[], &[]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    kit.loops()
        .expect_delete_loop()
        .withf(|_, refuse, events| {
            *refuse && events.len() == 1 && events[0].event_type == EventType::LoopDeleted
        })
        .returning(|_, _, _| Err(StoreError::Conflict("open requests".into())));
    let caller = kit.principal(1);
    let err = service(kit)
        .delete(&caller, &id, false)
        .await
        .classed()
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Refused(m) if m == "Cannot delete loop with active requests")
    );
}

#[tokio::test]
async fn forced_delete_cancels_open_requests_with_events() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[], &[]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    let open = crate::requests::tests::a_request(&kit);
    kit.requests()
        .expect_open_requests_in_loop()
        .returning(move |_| Ok(vec![open.clone(), open.clone()]));
    kit.loops()
        .expect_delete_loop()
        .withf(|_, refuse, events| {
            let kinds: Vec<_> = events.iter().map(|e| e.event_type).collect();
            !*refuse
                && kinds
                    == [
                        EventType::RequestCancelled,
                        EventType::RequestCancelled,
                        EventType::LoopDeleted,
                    ]
                && events[0].data["request"]["status"] == "cancelled"
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let caller = kit.principal(1);
    assert_eq!(service(kit).delete(&caller, &id, true).await.unwrap(), id);
}

#[tokio::test]
async fn member_removal_rules() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2, 3], &[]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    let removed = kit.user_id(3);
    kit.loops()
        .expect_save_member()
        .withf(move |m, _, events, _| {
            m.user_id == removed
                && m.status == MemberStatus::Removed
                && events.len() == 1
                && events[0].event_type == EventType::LoopMemberLeft
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    // User 3 holds a claim in the loop; removing it gives the request back.
    let mut claimed = crate::requests::tests::a_request(&kit);
    claimed.claim(kit.user_id(3), kit.now).unwrap();
    let mut others = crate::requests::tests::a_request(&kit);
    others.claim(kit.user_id(2), kit.now).unwrap();
    kit.requests()
        .expect_open_requests_in_loop()
        .returning(move |_| Ok(vec![claimed.clone(), others.clone()]));
    // A request of another loop that escalated here, claimed by user 3,
    // who is still active in that other loop: the claim stands.
    let mut escalated = crate::requests::tests::a_request(&kit).into_record();
    escalated.loop_id = reviewloop_domain::LoopId::new(kit.oid(51));
    escalated.escalation = Some(reviewloop_domain::Escalation {
        after_seconds: 1,
        to_loop_id: id,
        raise_priority: false,
    });
    escalated.escalated_at = Some(kit.now);
    let mut escalated = reviewloop_domain::ReviewRequest::restore(escalated);
    escalated.claim(kit.user_id(3), kit.now).unwrap();
    kit.requests()
        .expect_open_requests_escalated_to()
        .returning(move |_| Ok(vec![escalated.clone()]));
    kit.requests()
        .expect_update_request()
        .withf(|r, events| {
            r.status == reviewloop_domain::RequestStatus::Pending
                && r.claimed_by.is_none()
                && events.is_empty()
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let (creator, member) = (kit.principal(1), kit.principal(2));
    let (u1, u3, u9) = (kit.user_id(1), kit.user_id(3), kit.user_id(9));
    let svc = service(kit);

    let err = svc
        .remove_member(&member, &id, &u3)
        .await
        .classed()
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Forbidden(m) if m == "Only loop creator can remove members")
    );
    let err = svc
        .remove_member(&creator, &id, &u1)
        .await
        .classed()
        .unwrap_err();
    assert!(
        matches!(err, ServiceError::Refused(m) if m == "Loop creator cannot remove themselves")
    );
    let err = svc
        .remove_member(&creator, &id, &u9)
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(Missing::Member)));
    let out = svc.remove_member(&creator, &id, &u3).await.unwrap();
    assert_eq!((out.loop_id, out.user_id), (id, u3));
}

#[tokio::test]
async fn joining_activates_a_pending_member_once() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[], &[2]);
    with_loop(&mut kit, lp.clone());
    let pending = lp.members[1].clone();
    kit.loops()
        .expect_member()
        .returning(move |_, _| Ok(Some(pending.clone())));
    kit.loops()
        .expect_save_member()
        .withf(|m, _, events, _| {
            m.status == MemberStatus::Active && events[0].event_type == EventType::LoopMemberJoined
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let caller = kit.principal(2);
    let (lp, member) = service(kit).join(&caller, " abcdef ").await.unwrap();
    assert_eq!(member.status, MemberStatus::Active);
    assert!(lp.is_active_member(&caller.user_id));
}

#[tokio::test]
async fn joining_as_an_active_member_changes_nothing() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    with_loop(&mut kit, lp.clone());
    let active = lp.members[1].clone();
    kit.loops()
        .expect_member()
        .returning(move |_, _| Ok(Some(active.clone())));
    kit.loops().expect_save_member().never();
    let caller = kit.principal(2);
    service(kit).join(&caller, "ABCDEF").await.unwrap();
}

#[tokio::test]
async fn unknown_or_malformed_codes_are_invalid() {
    let mut kit = Kit::new();
    kit.loops()
        .expect_loop_by_invite_code()
        .returning(|_| Ok(None));
    let caller = kit.principal(2);
    let svc = service(kit);
    for code in ["ZZZZZZ", "0", ""] {
        let err = svc.join(&caller, code).await.classed().unwrap_err();
        assert!(
            matches!(err, ServiceError::NotFound(Missing::InviteCode)),
            "{code}"
        );
    }
}

#[tokio::test]
async fn invite_creates_a_pending_member_and_refuses_active_ones() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    let active_user = kit.user(2, "u2@x.io");
    kit.accounts()
        .expect_user_by_email()
        .returning(move |e| Ok((e.as_str() == "u2@x.io").then(|| active_user.clone())));
    kit.accounts()
        .expect_insert_user()
        .times(1)
        .returning(|_| Ok(()));
    let active_member = Member::joined(id, kit.user_id(2), Kit::email(2), kit.now);
    kit.loops()
        .expect_member()
        .returning(move |_, u| Ok((u == &active_member.user_id).then(|| active_member.clone())));
    kit.loops()
        .expect_save_member()
        .withf(|m, _, _, _| m.status == MemberStatus::Pending && m.email.as_str() == "new@x.io")
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let caller = kit.principal(1);
    let svc = service(kit);
    let member = svc.invite(&caller, &id, Some("New@x.io")).await.unwrap();
    assert_eq!(
        (member.status, member.joined_at),
        (MemberStatus::Pending, None)
    );
    let err = svc
        .invite(&caller, &id, Some("u2@x.io"))
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::Conflict(_)));
    assert!(matches!(
        svc.invite(&caller, &id, Some("bad")).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
    match svc.invite(&caller, &id, None).await.classed() {
        Err(ServiceError::Invalid(e)) => {
            assert_eq!(
                (e.errors[0].field.as_str(), e.to_string()),
                ("email", "email is required".to_owned())
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn regenerating_the_code_replaces_it() {
    let mut kit = Kit::new();
    kit.codes = vec!["NEWNEW"];
    let lp = kit.a_loop(&[], &[]);
    let id = lp.id;
    let old = lp.invite_code.clone();
    with_loop(&mut kit, lp);
    kit.qr().expect_png().returning(|_| Ok(vec![9]));
    kit.loops()
        .expect_set_invite_code()
        .withf(|_, code, _| code.as_str() == "NEWNEW")
        .times(1)
        .returning(|_, _, _| Ok(()));
    let caller = kit.principal(1);
    let invite = service(kit).regenerate_code(&caller, &id).await.unwrap();
    assert_ne!(invite.lp.invite_code, old);
    assert!(invite.join_url.ends_with("/join/NEWNEW"));
}

#[tokio::test]
async fn listing_needs_loops_read() {
    let mut kit = Kit::new();
    kit.loops()
        .expect_loops_created_by()
        .with(always())
        .returning(|_| Ok(vec![]));
    let mut caller = kit.principal(1);
    let svc = service(kit);
    assert!(svc.list(&caller).await.unwrap().is_empty());
    caller.permissions = vec![Permission::RequestsRead];
    assert!(matches!(
        svc.list(&caller).await.classed(),
        Err(ServiceError::Forbidden(_))
    ));
}

#[tokio::test]
async fn a_retry_under_an_idempotency_id_answers_the_loop_it_already_created() {
    let mut kit = Kit::new();
    let existing = kit.a_loop(&[], &[]);
    let id = existing.id.object_id();
    kit.qr().expect_png().returning(|_| Ok(vec![7]));
    kit.loops()
        .expect_insert_loop()
        .times(1)
        .returning(|_, _| Err(StoreError::Conflict("loops.id".into())));
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(existing.clone())));
    let caller = kit.principal(1);
    let invite = service(kit)
        .create(&caller, Some("Again"), None, None, Some(id))
        .await
        .unwrap();
    assert_eq!(invite.lp.id.object_id(), id);
    assert_eq!(
        invite.lp.name.as_str(),
        "Reviewers",
        "the first loop, not a second one"
    );
}

#[tokio::test]
async fn an_invitation_is_emailed_with_the_join_link_in_the_same_write() {
    let mut kit = Kit::new();
    kit.mailer = Some(reviewloop_ports::MockMailer::new());
    let lp = kit.a_loop(&[], &[]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    kit.accounts()
        .expect_user_by_email()
        .returning(|_| Ok(None));
    kit.accounts().expect_insert_user().returning(|_| Ok(()));
    kit.loops().expect_member().returning(|_, _| Ok(None));
    kit.loops()
        .expect_save_member()
        .withf(|m, previous, _, notices| {
            let [email] = notices else { return false };
            previous.is_none()
                && email.kind == reviewloop_domain::NoticeKind::Invitation
                && email.to.as_deref() == Some("new@x.io")
                && email.recipient_id == Some(m.user_id)
                && email.message.subject == "You are invited to review in Reviewers"
                && email
                    .message
                    .text
                    .contains("u1@x.io invited you to review requests in Reviewers")
                && email
                    .message
                    .text
                    .contains("Join the loop: https://review.example.com/join/")
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let caller = kit.principal(1);
    service(kit)
        .invite(&caller, &id, Some("new@x.io"))
        .await
        .unwrap();
}

#[tokio::test]
async fn only_an_active_member_sets_their_own_notifications() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[3]);
    let id = lp.id;
    with_loop(&mut kit, lp);
    kit.loops()
        .expect_save_member()
        .withf(|m, previous, events, notices| {
            m.notify == reviewloop_domain::NotifyLevel::Urgent
                && *previous == Some(MemberStatus::Active)
                && events.is_empty()
                && notices.is_empty()
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let (member, pending, stranger) = (kit.principal(2), kit.principal(3), kit.principal(9));
    let svc = service(kit);
    let saved = svc.set_notify(&member, &id, Some("urgent")).await.unwrap();
    assert_eq!(saved.user_id, member.user_id);
    match svc
        .set_notify(&member, &id, Some("sometimes"))
        .await
        .classed()
    {
        Err(ServiceError::Invalid(e)) => {
            assert_eq!(e.to_string(), "notify must be one of all, urgent, none")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        svc.set_notify(&member, &id, None).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
    for outsider in [&pending, &stranger] {
        assert!(matches!(
            svc.set_notify(outsider, &id, Some("none")).await.classed(),
            Err(ServiceError::NotFound(_))
        ));
    }
}

#[test]
fn a_loop_patch_never_prints_a_slack_apps_secrets() {
    let patch = LoopPatch {
        slack_app: Some(serde_json::json!({
            "bot_token": "xoxb-never-shown", "signing_secret": "0123456789abcdefSECRET", "channel": "#x"
        })),
        slack_webhook_url: Some(Some(
            "https://hooks.slack.com/services/T/B/secretpath".into(),
        )),
        ..LoopPatch::default()
    };
    let shown = format!("{patch:?}");
    assert!(
        !shown.contains("xoxb") && !shown.contains("SECRET") && !shown.contains("secretpath"),
        "{shown}"
    );
    assert!(shown.contains("slack_app: Some(\"<set>\")"), "{shown}");
}
