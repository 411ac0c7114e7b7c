use reviewloop_ports::AccountStore;

use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

fn session(n: u8, user: &User, expires: i64) -> Session {
    Session {
        token_hash: format!("hash{n}"),
        user_id: user.id,
        csrf_token: format!("csrf{n}"),
        created_at: fixtures::at(0),
        expires_at: fixtures::at(expires),
    }
}

async fn sessions_live_until_they_expire(db: TestDb) {
    let store = db.store();
    let user = fixtures::user(1, "a@x.io");
    store.insert_user(&user).await.unwrap();
    store.insert_session(&session(1, &user, 100)).await.unwrap();

    let (found, owner) = store
        .session("hash1", fixtures::at(50))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found, session(1, &user, 100));
    assert_eq!(owner.id, user.id);
    assert!(store
        .session("hash1", fixtures::at(100))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .session("other", fixtures::at(0))
        .await
        .unwrap()
        .is_none());

    store
        .extend_session("hash1", fixtures::at(500))
        .await
        .unwrap();
    assert!(store
        .session("hash1", fixtures::at(400))
        .await
        .unwrap()
        .is_some());

    store.delete_session("hash1").await.unwrap();
    assert!(store
        .session("hash1", fixtures::at(0))
        .await
        .unwrap()
        .is_none());
}

async fn a_new_password_ends_every_session_of_that_account_only(db: TestDb) {
    let store = db.store();
    let (a, b) = (fixtures::user(1, "a@x.io"), fixtures::user(2, "b@x.io"));
    store.insert_user(&a).await.unwrap();
    store.insert_user(&b).await.unwrap();
    assert_eq!(store.password_hash(&a.id).await.unwrap(), None);
    store.insert_session(&session(1, &a, 100)).await.unwrap();
    store.insert_session(&session(2, &a, 100)).await.unwrap();
    store.insert_session(&session(3, &b, 100)).await.unwrap();

    store.set_password(&a.id, "$argon2id$x").await.unwrap();
    assert_eq!(
        store.password_hash(&a.id).await.unwrap().as_deref(),
        Some("$argon2id$x")
    );
    assert!(store
        .session("hash1", fixtures::at(0))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .session("hash2", fixtures::at(0))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .session("hash3", fixtures::at(0))
        .await
        .unwrap()
        .is_some());

    let ghost = fixtures::user(9, "ghost@x.io");
    assert!(matches!(
        store.set_password(&ghost.id, "h").await,
        Err(StoreError::NotFound)
    ));
}

async fn a_password_link_works_once_and_not_after_it_expires(db: TestDb) {
    let store = db.store();
    let user = fixtures::user(1, "a@x.io");
    store.insert_user(&user).await.unwrap();
    store.insert_session(&session(1, &user, 100)).await.unwrap();
    store
        .insert_password_token("link", &user.id, fixtures::at(60), &[])
        .await
        .unwrap();
    store
        .insert_password_token("old", &user.id, fixtures::at(10), &[])
        .await
        .unwrap();
    store
        .insert_password_token("other", &user.id, fixtures::at(600), &[])
        .await
        .unwrap();

    assert_eq!(
        store.password_token("link", fixtures::at(5)).await.unwrap(),
        Some(user.id)
    );
    assert_eq!(
        store
            .redeem_password_token("old", "h0", fixtures::at(20))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .redeem_password_token("link", "h1", fixtures::at(20))
            .await
            .unwrap(),
        Some(user.id)
    );
    assert_eq!(
        store.password_hash(&user.id).await.unwrap().as_deref(),
        Some("h1")
    );
    assert!(store
        .session("hash1", fixtures::at(0))
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        store
            .redeem_password_token("link", "h2", fixtures::at(21))
            .await
            .unwrap(),
        None,
        "a link is single-use"
    );
    assert_eq!(
        store
            .password_token("other", fixtures::at(21))
            .await
            .unwrap(),
        None,
        "a new password ends the account's other links"
    );
    assert_eq!(
        store.password_hash(&user.id).await.unwrap().as_deref(),
        Some("h1")
    );

    store.insert_session(&session(2, &user, 30)).await.unwrap();
    store
        .insert_password_token("stale", &user.id, fixtures::at(30), &[])
        .await
        .unwrap();
    assert_eq!(
        store
            .purge_expired_sessions(fixtures::at(40))
            .await
            .unwrap(),
        2
    );
}

async fn an_account_sends_requests_with_a_loop_or_a_live_key(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 1, "ABC234").await;
    let (creator, member) = (
        lp.creator_id,
        reviewloop_domain::UserId::new(fixtures::oid(2)),
    );
    assert!(store.sends_requests(&creator).await.unwrap(), "owns a loop");
    assert!(
        !store.sends_requests(&member).await.unwrap(),
        "only reviews"
    );
    let reviewer = store.user_by_id(&member).await.unwrap().unwrap();
    let key = fixtures::key(9, &reviewer, "hash-of-key");
    store.insert_api_key(&key).await.unwrap();
    assert!(store.sends_requests(&member).await.unwrap(), "holds a key");
    store
        .revoke_api_key(&key.id, fixtures::at(5))
        .await
        .unwrap();
    assert!(
        !store.sends_requests(&member).await.unwrap(),
        "a revoked key is none"
    );
}

on_every_backend!(
    an_account_sends_requests_with_a_loop_or_a_live_key,
    sessions_live_until_they_expire,
    a_new_password_ends_every_session_of_that_account_only,
    a_password_link_works_once_and_not_after_it_expires,
);
