use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::Duration;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use reviewloop_domain::ReviewRequest;
use reviewloop_ports::{MockReceiptKeyStore, ReceiptKey};
use serde_json::{json, Value};

use super::*;
use crate::testkit::Kit;

/// Checks `request`'s receipt as a third party would: with the kit's
/// public key, over the bytes it names, which must state the request.
pub(crate) fn assert_verifies(request: &ReviewRequest) {
    let receipt = request.receipt.as_ref().expect("a receipt");
    assert_eq!(receipt.key_id, "rk_test");
    let public: [u8; 32] = Kit::receipt_key().public_key.try_into().unwrap();
    let key = VerifyingKey::from_bytes(&public).unwrap();
    let signed = URL_SAFE_NO_PAD.decode(&receipt.signed).unwrap();
    let signature: [u8; 64] = URL_SAFE_NO_PAD
        .decode(&receipt.signature)
        .unwrap()
        .try_into()
        .unwrap();
    key.verify(&signed, &Signature::from_bytes(&signature))
        .expect("the signature verifies");
    let statement: Value = serde_json::from_slice(&signed).unwrap();
    assert_eq!(statement["request_id"], json!(request.id));
    assert_eq!(statement["status"], request.status.as_str());
    assert_eq!(statement["response_data"], json!(request.response_data));
    assert_eq!(statement["response_by"], json!(request.response_by));
    assert_eq!(statement["response_at"], json!(request.response_at));
}

#[test]
fn a_sealed_request_verifies_and_a_changed_statement_does_not() {
    let kit = Kit::new();
    let mut request = crate::requests::tests::a_request(&kit);
    request
        .respond(kit.user_id(2), json!("yes"), None, kit.now)
        .unwrap();
    let key = Kit::receipt_key();
    let sealer = Sealer {
        key_id: key.key_id.clone(),
        key: SigningKey::from_bytes(&key.secret_key.clone().try_into().unwrap()),
    };
    sealer.seal(&mut request);
    assert_verifies(&request);

    // Flip the answer inside the signed bytes: the signature no longer fits.
    let receipt = request.receipt.clone().unwrap();
    let signed = String::from_utf8(URL_SAFE_NO_PAD.decode(&receipt.signed).unwrap()).unwrap();
    let forged = signed.replace("\"yes\"", "\"no\"");
    assert_ne!(forged, signed);
    let public = VerifyingKey::from_bytes(&key.public_key.try_into().unwrap()).unwrap();
    let signature: [u8; 64] = URL_SAFE_NO_PAD
        .decode(&receipt.signature)
        .unwrap()
        .try_into()
        .unwrap();
    assert!(public
        .verify(forged.as_bytes(), &Signature::from_bytes(&signature))
        .is_err());

    // A second seal, even with another key, leaves the first receipt alone.
    let other = Sealer {
        key_id: "rk_other".into(),
        key: SigningKey::from_bytes(&[9u8; 32]),
    };
    other.seal(&mut request);
    assert_eq!(request.receipt, Some(receipt));
}

#[test]
fn open_requests_are_not_sealed() {
    let kit = Kit::new();
    let mut request = crate::requests::tests::a_request(&kit);
    let key = Kit::receipt_key();
    Sealer {
        key_id: key.key_id,
        key: SigningKey::from_bytes(&key.secret_key.try_into().unwrap()),
    }
    .seal(&mut request);
    assert_eq!(request.receipt, None);
}

/// The kit's receipt keys, kept in `store`.
fn keys_with(store: MockReceiptKeyStore) -> Arc<ReceiptKeys> {
    let mut kit = Kit::new();
    kit.receipt_keys = Some(store);
    kit.ports()
}

#[tokio::test]
async fn the_first_key_is_made_once_when_there_is_none() {
    let made: Arc<std::sync::Mutex<Vec<ReceiptKey>>> = Arc::default();
    let mut store = MockReceiptKeyStore::new();
    let seen = made.clone();
    store
        .expect_receipt_keys()
        .returning(move || Ok(seen.lock().unwrap().clone()));
    let kept = made.clone();
    store
        .expect_insert_first_receipt_key()
        .times(1)
        .returning(move |key| {
            kept.lock().unwrap().push(key.clone());
            Ok(true)
        });
    let keys = keys_with(store);
    keys.ensure_key().await.unwrap();
    let listed = keys.public_keys().await.unwrap();
    assert_eq!(listed.len(), 1);
    let key = made.lock().unwrap()[0].clone();
    assert_eq!(listed[0].key_id, key.key_id);
    assert!(key.key_id.starts_with("rk_") && key.key_id.len() == 19);
    assert_eq!(listed[0].alg, "Ed25519");
    assert_eq!(
        URL_SAFE_NO_PAD.decode(&listed[0].public_key).unwrap(),
        key.public_key
    );
    // The public key belongs to the secret seed.
    let signing = SigningKey::from_bytes(&key.secret_key.clone().try_into().unwrap());
    assert_eq!(signing.verifying_key().to_bytes().to_vec(), key.public_key);
    // Signing now uses it without making another.
    assert_eq!(keys.sealer().await.unwrap().key_id, key.key_id);
}

#[tokio::test]
async fn a_rotation_signs_with_the_new_key_and_keeps_the_old_listed() {
    let stored: Arc<std::sync::Mutex<Vec<ReceiptKey>>> =
        Arc::new(std::sync::Mutex::new(vec![Kit::receipt_key()]));
    let reads = Arc::new(AtomicUsize::new(0));
    let mut store = MockReceiptKeyStore::new();
    let (seen, counted) = (stored.clone(), reads.clone());
    store.expect_receipt_keys().returning(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(seen.lock().unwrap().clone())
    });
    let kept = stored.clone();
    store
        .expect_rotate_receipt_key()
        .times(1)
        .returning(move |key| {
            let mut all = kept.lock().unwrap();
            for old in all.iter_mut() {
                old.retired_at = old.retired_at.or(Some(key.created_at));
            }
            all.insert(0, key.clone());
            Ok(())
        });
    let keys = keys_with(store);
    assert_eq!(keys.sealer().await.unwrap().key_id, "rk_test");
    assert_eq!(keys.sealer().await.unwrap().key_id, "rk_test");
    assert_eq!(reads.load(Ordering::SeqCst), 1, "the key is kept in memory");
    let new_id = keys.rotate().await.unwrap();
    assert_ne!(new_id, "rk_test");
    assert_eq!(keys.sealer().await.unwrap().key_id, new_id);
    let listed = keys.public_keys().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].key_id, new_id);
    assert_eq!(listed[0].retired_at, None);
    assert_eq!(listed[1].key_id, "rk_test");
    assert!(listed[1].retired_at.is_some());
}

/// A clock a test moves.
struct MovingClock(std::sync::Mutex<chrono::DateTime<chrono::Utc>>);

impl reviewloop_ports::Clock for MovingClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        *self.0.lock().unwrap()
    }
}

#[tokio::test]
async fn a_running_instance_takes_up_a_key_rotated_elsewhere_within_the_refresh() {
    let stored: Arc<std::sync::Mutex<Vec<ReceiptKey>>> =
        Arc::new(std::sync::Mutex::new(vec![Kit::receipt_key()]));
    let mut store = MockReceiptKeyStore::new();
    let seen = stored.clone();
    store
        .expect_receipt_keys()
        .returning(move || Ok(seen.lock().unwrap().clone()));
    let clock = Arc::new(MovingClock(std::sync::Mutex::new(Kit::new().now)));
    let kit = Kit::new();
    let ids: Arc<dyn IdSource> = kit.ports();
    let keys = ReceiptKeys::new(Arc::new(store), clock.clone(), ids);
    assert_eq!(keys.sealer().await.unwrap().key_id, "rk_test");

    // Another instance (or the command line) rotates.
    {
        let mut all = stored.lock().unwrap();
        let now = *clock.0.lock().unwrap();
        all[0].retired_at = Some(now);
        let mut newer = Kit::receipt_key();
        newer.key_id = "rk_newer".into();
        newer.secret_key = vec![8; 32];
        newer.created_at = now;
        all.insert(0, newer);
    }
    *clock.0.lock().unwrap() += Duration::seconds(30);
    assert_eq!(
        keys.sealer().await.unwrap().key_id,
        "rk_test",
        "kept in memory within the refresh"
    );
    *clock.0.lock().unwrap() += Duration::seconds(31);
    assert_eq!(keys.sealer().await.unwrap().key_id, "rk_newer");
}
