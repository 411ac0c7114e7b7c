use std::time::{Duration, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use reviewloop_domain::VapidKey;
use reviewloop_ports::PushGateway;
use serde_json::Value;

use super::{vapid_authorization, HttpPushGateway};

fn key() -> VapidKey {
    HttpPushGateway::new(false, "mailto:ops@example.com")
        .unwrap()
        .new_vapid_key()
        .unwrap()
}

#[test]
fn a_new_key_pair_is_an_uncompressed_p256_point_and_its_scalar() {
    let key = key();
    assert_eq!(key.public_key.len(), 65);
    assert_eq!(key.public_key[0], 0x04);
    assert_eq!(key.secret_key.len(), 32);
    assert_ne!(key.public_key, self::key().public_key, "each pair is new");
}

#[test]
fn the_vapid_header_is_an_es256_jwt_for_the_push_services_origin() {
    let key = key();
    let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let header =
        vapid_authorization(&key, "https://push.example", "mailto:ops@example.com", now).unwrap();
    let rest = header.strip_prefix("vapid t=").unwrap();
    let (jwt, k) = rest.split_once(", k=").unwrap();
    assert_eq!(k, key.public_key_base64url());
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let decode = |part: &str| -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    };
    assert_eq!(decode(parts[0])["alg"], "ES256");
    let claims = decode(parts[1]);
    assert_eq!(claims["aud"], "https://push.example");
    assert_eq!(claims["sub"], "mailto:ops@example.com");
    assert_eq!(claims["exp"], 1_800_000_000u64 + 3600);
    let verifying = VerifyingKey::from_sec1_bytes(&key.public_key).unwrap();
    let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
    verifying
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
        .expect("the signature verifies with the public key");
}

#[test]
fn only_points_on_the_curve_are_device_keys() {
    let gateway = HttpPushGateway::new(false, "mailto:ops@example.com").unwrap();
    assert!(gateway.is_device_key(&key().public_key));
    let mut off_curve = vec![0x04u8];
    off_curve.extend([7u8; 64]);
    assert!(!gateway.is_device_key(&off_curve));
}
