use diesel::prelude::*;
use reviewloop_domain::{EventType, LoopRecord, MemberRecord, MemberStatus};
use reviewloop_ports::RequestStore;
use serde_json::json;

use super::super::schema::{loop_members, outbox_events};
use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

async fn a_loop_round_trips_with_members_creator_first(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let loaded = store.loop_by_id(&lp.id).await.unwrap().unwrap();
    assert_eq!(loaded, lp);
    assert_eq!(loaded.members[0].user_id, lp.creator_id);
    let by_code = store
        .loop_by_invite_code(&lp.invite_code)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_code.id, lp.id);
    // Active members (the creator too) see it among their loops; the
    // pending member does not yet.
    for (n, joined) in [(1u8, true), (2, true), (4, false)] {
        let user = reviewloop_domain::UserId::new(fixtures::oid(n));
        let ids: Vec<_> = store
            .loops_joined_by(&user)
            .await
            .unwrap()
            .iter()
            .map(|l| l.id)
            .collect();
        assert_eq!(ids == vec![lp.id], joined, "user {n}");
    }
    assert!(store
        .loop_by_invite_code(&InviteCode::parse("ZZZZZZ").unwrap())
        .await
        .unwrap()
        .is_none());
}

async fn invite_codes_are_unique(db: TestDb) {
    let store = db.store();
    fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let mut twin = store
        .loop_by_id(&LoopId::new(fixtures::oid(10)))
        .await
        .unwrap()
        .unwrap()
        .into_record();
    twin.id = LoopId::new(fixtures::oid(11));
    twin.members = twin
        .members
        .into_iter()
        .map(|m| {
            let mut m = m.into_record();
            m.loop_id = twin.id;
            Member::restore(m)
        })
        .collect();
    let twin = Loop::restore(twin);
    assert!(matches!(
        store.insert_loop(&twin, &[]).await,
        Err(StoreError::Conflict(_))
    ));
}

async fn loops_are_listed_per_creator_newest_first(db: TestDb) {
    let store = db.store();
    let first = fixtures::loop_with_members(&store, 10, "AAAAAA").await;
    let mut second = fixtures::loop_with_members(&store, 11, "BBBBBB")
        .await
        .into_record();
    second.created_at = fixtures::at(50);
    let second = Loop::restore(second);
    store.update_loop(&second).await.unwrap();
    let listed: Vec<_> = store
        .loops_created_by(&first.creator_id)
        .await
        .unwrap()
        .iter()
        .map(|l| l.id)
        .collect();
    assert_eq!(listed, [second.id, first.id]);
    let stranger = UserId::new(fixtures::oid(4));
    assert!(store.loops_created_by(&stranger).await.unwrap().is_empty());
}

async fn update_writes_fields_and_can_clear_the_description(db: TestDb) {
    let store = db.store();
    let mut lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    lp.change(
        Some(LoopName::parse("Renamed").unwrap()),
        Some(None),
        None,
        fixtures::at(9),
    );
    store.update_loop(&lp).await.unwrap();
    assert_eq!(store.loop_by_id(&lp.id).await.unwrap().unwrap(), lp);
}

async fn an_edit_never_brings_back_an_old_invite_code(db: TestDb) {
    let store = db.store();
    let mut stale = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let fresh = InviteCode::parse("NEWCDE").unwrap();
    store
        .set_invite_code(&stale.id, &fresh, fixtures::at(5))
        .await
        .unwrap();
    // An edit made from a copy read before the new code was set.
    stale.change(
        Some(LoopName::parse("Renamed").unwrap()),
        None,
        None,
        fixtures::at(6),
    );
    store.update_loop(&stale).await.unwrap();
    let loaded = store.loop_by_id(&stale.id).await.unwrap().unwrap();
    assert_eq!(
        (loaded.name.as_str(), loaded.invite_code.as_str()),
        ("Renamed", "NEWCDE")
    );
    assert!(store
        .loop_by_invite_code(&InviteCode::parse("ABCDEF").unwrap())
        .await
        .unwrap()
        .is_none());

    let other = fixtures::loop_with_members(&store, 11, "WXYZ23").await;
    let taken = store
        .set_invite_code(&other.id, &fresh, fixtures::at(6))
        .await;
    assert!(matches!(taken, Err(StoreError::Conflict(_))));
    let gone = Loop::restore(LoopRecord {
        id: LoopId::new(fixtures::oid(99)),
        ..stale.into_record()
    });
    assert!(matches!(
        store
            .set_invite_code(&gone.id, &fresh, fixtures::at(6))
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.update_loop(&gone).await,
        Err(StoreError::NotFound)
    ));
}

async fn removed_members_leave_the_loop_but_keep_their_row(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let mut member = lp.members[1].clone();
    member.remove(fixtures::at(5)).unwrap();
    let event = reviewloop_domain::Event::for_loop(
        reviewloop_domain::EventId::new(fixtures::oid(90)),
        EventType::LoopMemberLeft,
        &lp,
        json!({"member": member.user_id}),
        fixtures::at(5),
    );
    store
        .save_member(&member, Some(MemberStatus::Active), &[event], &[])
        .await
        .unwrap();
    let loaded = store.loop_by_id(&lp.id).await.unwrap().unwrap();
    assert!(loaded.member(&member.user_id).is_none());
    let row = store
        .member(&lp.id, &member.user_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.status, row.removed_at),
        (MemberStatus::Removed, Some(fixtures::at(5)))
    );
    let events: i64 = db
        .db
        .run(|c| {
            Ok(outbox_events::table
                .filter(outbox_events::event_type.eq("loop.member_left"))
                .count()
                .get_result(c)?)
        })
        .await
        .unwrap();
    assert_eq!(events, 1);
}

async fn save_member_inserts_new_members(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let newcomer_user = fixtures::user(7, "new@x.io");
    reviewloop_ports::AccountStore::insert_user(&store, &newcomer_user)
        .await
        .unwrap();
    let newcomer = Member::joined(
        lp.id,
        newcomer_user.id,
        newcomer_user.email.clone(),
        fixtures::at(3),
    );
    store.save_member(&newcomer, None, &[], &[]).await.unwrap();
    assert_eq!(
        store.member(&lp.id, &newcomer.user_id).await.unwrap(),
        Some(newcomer)
    );
}

async fn deleting_refuses_open_requests_unless_told_and_cascades(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let request = fixtures::request(&lp, 20, "low", 0);
    store.insert_request(&request, &[]).await.unwrap();
    let deleted = fixtures::event_for(&request, &lp, 91, EventType::LoopDeleted);

    let refused = store
        .delete_loop(&lp.id, true, std::slice::from_ref(&deleted))
        .await;
    assert!(matches!(refused, Err(StoreError::Conflict(_))));
    assert!(store.loop_by_id(&lp.id).await.unwrap().is_some());

    store.delete_loop(&lp.id, false, &[deleted]).await.unwrap();
    assert!(store.loop_by_id(&lp.id).await.unwrap().is_none());
    assert!(store.request_by_id(&request.id).await.unwrap().is_none());
    let members: i64 = db
        .db
        .run(|c| Ok(loop_members::table.count().get_result(c)?))
        .await
        .unwrap();
    assert_eq!(members, 0, "members go with the loop");
    let events: i64 = db
        .db
        .run(|c| Ok(outbox_events::table.count().get_result(c)?))
        .await
        .unwrap();
    assert_eq!(events, 1, "the loop.deleted event stays in the outbox");
    assert!(matches!(
        store.delete_loop(&lp.id, false, &[]).await,
        Err(StoreError::NotFound)
    ));
}

async fn membership_writes_lose_to_changes_made_since_they_read(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let pending = lp.members[3].clone();
    assert_eq!(pending.status, MemberStatus::Pending);

    // A join lands first ...
    let mut joined = pending.clone();
    joined.join(fixtures::at(2)).unwrap();
    store
        .save_member(&joined, Some(MemberStatus::Pending), &[], &[])
        .await
        .unwrap();
    // ... so an invitation based on the old "pending" read is refused,
    let reinvited = Member::restore(MemberRecord {
        invited_at: fixtures::at(3),
        ..pending.clone().into_record()
    });
    let stale = store
        .save_member(&reinvited, Some(MemberStatus::Pending), &[], &[])
        .await;
    assert!(matches!(stale, Err(StoreError::Conflict(_))));
    // ... and so is creating a membership that now exists.
    assert!(matches!(
        store.save_member(&joined, None, &[], &[]).await,
        Err(StoreError::Conflict(_))
    ));
    let stored = store
        .member(&lp.id, &pending.user_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.status,
        MemberStatus::Active,
        "the join was not undone"
    );
}

async fn a_member_of_a_deleted_loop_cannot_be_written(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    store.delete_loop(&lp.id, false, &[]).await.unwrap();
    let late = Member::joined(
        lp.id,
        UserId::new(fixtures::oid(2)),
        lp.members[1].email.clone(),
        fixtures::at(5),
    );
    let result = store.save_member(&late, None, &[], &[]).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

on_every_backend!(
    a_loop_round_trips_with_members_creator_first,
    invite_codes_are_unique,
    loops_are_listed_per_creator_newest_first,
    update_writes_fields_and_can_clear_the_description,
    an_edit_never_brings_back_an_old_invite_code,
    removed_members_leave_the_loop_but_keep_their_row,
    save_member_inserts_new_members,
    deleting_refuses_open_requests_unless_told_and_cascades,
    membership_writes_lose_to_changes_made_since_they_read,
    a_member_of_a_deleted_loop_cannot_be_written,
);
