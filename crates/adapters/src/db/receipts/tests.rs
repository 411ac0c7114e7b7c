use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

fn key(n: u8, created: i64) -> ReceiptKey {
    ReceiptKey {
        key_id: format!("rk_{n:016}"),
        public_key: vec![n; 32],
        secret_key: vec![n + 100; 32],
        created_at: fixtures::at(created),
        retired_at: None,
    }
}

async fn the_first_key_is_kept_once_and_read_back_whole(db: TestDb) {
    let store = db.store();
    assert!(store.receipt_keys().await.unwrap().is_empty());
    assert!(store.insert_first_receipt_key(&key(1, 0)).await.unwrap());
    assert!(
        !store.insert_first_receipt_key(&key(2, 1)).await.unwrap(),
        "a second first key is refused"
    );
    assert_eq!(store.receipt_keys().await.unwrap(), vec![key(1, 0)]);
}

async fn a_rotation_retires_the_signing_key_and_keeps_it(db: TestDb) {
    let store = db.store();
    store.insert_first_receipt_key(&key(1, 0)).await.unwrap();
    store.rotate_receipt_key(&key(2, 10)).await.unwrap();
    store.rotate_receipt_key(&key(3, 20)).await.unwrap();
    let keys = store.receipt_keys().await.unwrap();
    let ids: Vec<&str> = keys.iter().map(|k| k.key_id.as_str()).collect();
    assert_eq!(ids, [key(3, 0).key_id, key(2, 0).key_id, key(1, 0).key_id]);
    assert_eq!(keys[0].retired_at, None);
    assert_eq!(keys[1].retired_at, Some(fixtures::at(20)));
    assert_eq!(
        keys[2].retired_at,
        Some(fixtures::at(10)),
        "a retired key keeps the time it was first retired"
    );
    assert_eq!(keys[2].public_key, vec![1; 32]);
}

on_every_backend!(
    the_first_key_is_kept_once_and_read_back_whole,
    a_rotation_retires_the_signing_key_and_keeps_it,
);
