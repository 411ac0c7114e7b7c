//! Signatures of webhook and callback deliveries. Two schemes, so receivers
//! can verify with whatever they have:
//!
//! - `X-ReviewLoop-Signature-256: sha256=<hex>`: HMAC-SHA256 of the raw body,
//!   keyed with the secret's text (as GitHub does).
//! - Standard Webhooks: `webhook-id`, `webhook-timestamp` and
//!   `webhook-signature: v1,<base64>`, the HMAC-SHA256 of
//!   `{id}.{timestamp}.{body}`, keyed with the base64 part of a `whsec_`
//!   secret (or with the secret's text when it is not of that form).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    // HMAC takes keys of any length, so this cannot fail.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => return Vec::new(),
    };
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().to_vec()
}

/// A new secret in the Standard Webhooks form: `whsec_` and 24 random bytes in base64.
pub(crate) fn new_secret(random_hex: &str) -> String {
    let bytes = hex::decode(random_hex).unwrap_or_else(|_| random_hex.as_bytes().to_vec());
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// The key of the Standard Webhooks signature.
fn standard_key(secret: &str) -> Vec<u8> {
    secret
        .strip_prefix("whsec_")
        .and_then(|b64| STANDARD.decode(b64).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// `sha256=<hex HMAC-SHA256 of the body>`.
pub fn body_signature(secret: &str, body: &str) -> String {
    format!(
        "sha256={}",
        hex::encode(hmac(secret.as_bytes(), &[body.as_bytes()]))
    )
}

/// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`.
pub fn standard_signature(secret: &str, id: &str, timestamp: i64, body: &str) -> String {
    let ts = timestamp.to_string();
    let mac = hmac(
        &standard_key(secret),
        &[id.as_bytes(), b".", ts.as_bytes(), b".", body.as_bytes()],
    );
    format!("v1,{}", STANDARD.encode(mac))
}

/// Every header of a delivery.
pub fn delivery_headers(
    secret: &str,
    event_id: &str,
    event_type: &str,
    timestamp: i64,
    body: &str,
) -> Vec<(String, String)> {
    vec![
        ("Content-Type".into(), "application/json".into()),
        ("X-ReviewLoop-Event".into(), event_type.into()),
        (
            "X-ReviewLoop-Signature-256".into(),
            body_signature(secret, body),
        ),
        // The same signature under the name HITL.sh's receivers read.
        ("X-HITL-Signature-256".into(), body_signature(secret, body)),
        // The alternate surface's header: the same HMAC, bare hex.
        (
            "X-ReviewLoop-Signature".into(),
            body_signature(secret, body)
                .trim_start_matches("sha256=")
                .to_owned(),
        ),
        ("webhook-id".into(), event_id.into()),
        ("webhook-timestamp".into(), timestamp.to_string()),
        (
            "webhook-signature".into(),
            standard_signature(secret, event_id, timestamp, body),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_signature_matches_a_known_vector() {
        // HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog")
        assert_eq!(
            body_signature("key", "The quick brown fox jumps over the lazy dog"),
            "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        );
    }

    #[test]
    fn standard_signature_uses_the_decoded_secret() {
        // The Standard Webhooks specification's example.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            standard_signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn new_secrets_have_the_standard_form() {
        let secret = new_secret(&"ab".repeat(24));
        assert!(secret.starts_with("whsec_"));
        assert_eq!(standard_key(&secret), vec![0xab; 24]);
    }
}
