//! Web Push delivery: each push's payload encrypted for its device (RFC
//! 8291 `aes128gcm`, by `web-push-native`), signed with the server's VAPID
//! key (RFC 8292: an ES256 JWT by `p256`), and POSTed to the device's push
//! service (RFC 8030) through the guarded client that webhooks use, so a
//! subscription can never make the server reach an internal address.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use reviewloop_domain::VapidKey;
use reviewloop_ports::{PushFailure, PushGateway, WebPush};
use serde_json::json;

use crate::http_client::{check_literal, guarded_client};

/// How long a VAPID signature is valid: RFC 8292 allows at most a day;
/// push services check it when the push arrives, so an hour is plenty.
const SIGNATURE_LIFETIME: Duration = Duration::from_secs(3600);

/// Delivers pushes to push services.
pub struct HttpPushGateway {
    client: reqwest::Client,
    allow_private: bool,
    subject: String,
}

impl HttpPushGateway {
    /// A gateway whose pushes name `subject` (a `mailto:` or `https:` URI
    /// push services can reach the operator at, the VAPID JWT's `sub`);
    /// `allow_private` lets push services be internal (tests).
    pub fn new(allow_private: bool, subject: &str) -> Result<Self, reqwest::Error> {
        Ok(Self {
            client: guarded_client(
                allow_private,
                concat!("reviewloop-push/", env!("CARGO_PKG_VERSION")),
            )?,
            allow_private,
            subject: subject.to_owned(),
        })
    }
}

/// The `Authorization` header of RFC 8292: `vapid t=<JWT>, k=<public key>`,
/// the JWT naming the push service's origin as its audience.
pub fn vapid_authorization(
    key: &VapidKey,
    audience: &str,
    contact: &str,
    now: SystemTime,
) -> Result<String, String> {
    let signer = SigningKey::from_slice(&key.secret_key)
        .map_err(|_| "the VAPID key is damaged".to_owned())?;
    let expires = now
        .checked_add(SIGNATURE_LIFETIME)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let header = URL_SAFE_NO_PAD.encode(json!({"typ": "JWT", "alg": "ES256"}).to_string());
    let claims = URL_SAFE_NO_PAD
        .encode(json!({"aud": audience, "exp": expires, "sub": contact}).to_string());
    let signed = format!("{header}.{claims}");
    let signature: Signature = signer.sign(signed.as_bytes());
    Ok(format!(
        "vapid t={signed}.{}, k={}",
        URL_SAFE_NO_PAD.encode(signature.to_bytes()),
        key.public_key_base64url()
    ))
}

/// The error and its causes on one line (reqwest keeps the useful part,
/// such as "resolves only to internal addresses", in a cause).
fn chain(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "the push service did not answer within 10 s".into();
    }
    let mut text = "the push service could not be reached".to_owned();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text = format!("{text}: {inner}");
        source = inner.source();
    }
    text
}

#[async_trait]
impl PushGateway for HttpPushGateway {
    async fn push(&self, key: &VapidKey, push: &WebPush) -> Result<(), PushFailure> {
        let sub = &push.subscription;
        let endpoint = check_literal(&sub.endpoint, self.allow_private)
            .map_err(|why| PushFailure::Refused(format!("push service refused: {why}")))?;
        // The origin as the push service sees it (punycode, port when not
        // the scheme's own): the JWT's audience.
        let audience = endpoint.origin().ascii_serialization();
        let device_key = p256::PublicKey::from_sec1_bytes(&sub.p256dh)
            .map_err(|_| PushFailure::Refused("the device's key is not a P-256 key".into()))?;
        let auth: [u8; 16] = sub
            .auth
            .as_slice()
            .try_into()
            .map_err(|_| PushFailure::Refused("the device's secret is not 16 bytes".into()))?;
        let body = web_push_native::encrypt(push.payload.clone(), &device_key, &auth.into())
            .map_err(|e| PushFailure::Refused(format!("the push could not be encrypted: {e}")))?;
        let authorization = vapid_authorization(key, &audience, &self.subject, SystemTime::now())
            .map_err(PushFailure::Refused)?;
        let mut request = self
            .client
            .post(endpoint)
            .header("authorization", authorization)
            .header("ttl", push.ttl.to_string())
            .header("urgency", push.urgency)
            .header("content-encoding", "aes128gcm")
            .header("content-type", "application/octet-stream")
            .body(body);
        if let Some(topic) = &push.topic {
            request = request.header("topic", topic);
        }
        let answer = request
            .send()
            .await
            .map_err(|e| PushFailure::Unreachable(chain(&e)))?;
        let status = answer.status().as_u16();
        match status {
            200..=299 => Ok(()),
            404 | 410 => Err(PushFailure::Gone(format!("HTTP {status}"))),
            429 | 500..=599 => Err(PushFailure::Unreachable(format!(
                "the push service answered HTTP {status}"
            ))),
            _ => Err(PushFailure::Refused(format!(
                "the push service refused the push: HTTP {status}"
            ))),
        }
    }

    fn new_vapid_key(&self) -> Result<VapidKey, String> {
        let secret = p256::SecretKey::random(&mut p256::elliptic_curve::rand_core::OsRng);
        Ok(VapidKey {
            public_key: secret
                .public_key()
                .as_affine()
                .to_encoded_point(false)
                .as_bytes()
                .to_vec(),
            secret_key: secret.to_bytes().to_vec(),
            created_at: chrono::Utc::now(),
        })
    }

    fn is_device_key(&self, p256dh: &[u8]) -> bool {
        p256::PublicKey::from_sec1_bytes(p256dh).is_ok()
    }
}

#[cfg(test)]
mod tests;
