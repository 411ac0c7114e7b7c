//! A push service of our own (RFC 8030) and the devices subscribed to it:
//! each device holds its P-256 key pair and authentication secret as a
//! browser does, and every push that arrives is decrypted with them (RFC
//! 8291) and its VAPID JWT checked (RFC 8292: ES256 signature by the key
//! in `k`, `aud` this service's origin, `exp` in the next 24 hours).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::elliptic_curve::rand_core::OsRng;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use serde_json::{json, Value};

/// A device, as a browser keeps its subscription.
#[derive(Clone)]
pub struct Device {
    pub name: String,
    pub endpoint: String,
    secret: p256::SecretKey,
    auth: [u8; 16],
}

impl Device {
    /// What a browser reads a push with: its private scalar and auth
    /// secret, base64url.
    pub fn secrets(&self) -> (String, String) {
        (
            URL_SAFE_NO_PAD.encode(self.secret.to_bytes()),
            URL_SAFE_NO_PAD.encode(self.auth),
        )
    }

    /// What the browser's `PushSubscription.toJSON()` gives.
    pub fn subscription(&self) -> Value {
        let public = self.secret.public_key().as_affine().to_encoded_point(false);
        json!({
            "endpoint": self.endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(public.as_bytes()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            }
        })
    }
}

/// One push as the device saw it.
#[derive(Debug, Clone)]
pub struct Push {
    pub device: String,
    /// The decrypted payload.
    pub payload: Value,
    pub ttl: u64,
    pub urgency: String,
    pub topic: Option<String>,
    /// The VAPID public key (`k`), base64url.
    pub vapid_key: String,
    /// The JWT's claims.
    pub claims: Value,
    /// When it arrived.
    pub at: Instant,
    /// The body as it came, encrypted.
    pub raw: Vec<u8>,
    /// The `Authorization` header as it came.
    pub authorization: String,
}

#[derive(Default)]
struct State {
    devices: HashMap<String, Device>,
    pushes: Vec<Push>,
    /// Pushes that failed a check, with why.
    refused: Vec<String>,
    /// The status each device's pushes are answered with (201 otherwise).
    status: HashMap<String, u16>,
}

#[derive(Clone)]
pub struct PushService {
    pub origin: String,
    state: Arc<Mutex<State>>,
}

impl PushService {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let service = Self::down(&format!("http://{}", listener.local_addr().unwrap()));
        service.serve(listener);
        service
    }

    /// A service at a free address that does not answer yet (its devices
    /// can be made already); [`PushService::listen`] starts it.
    pub fn down_at_a_free_address() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        Self::down(&origin)
    }

    fn down(origin: &str) -> Self {
        PushService {
            origin: origin.to_owned(),
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Starts answering at the service's address.
    pub fn listen(&self) {
        let address = self.origin.trim_start_matches("http://");
        self.serve(TcpListener::bind(address).unwrap());
    }

    fn serve(&self, listener: TcpListener) {
        let (state, me) = (self.state.clone(), self.origin.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let (shared, me) = (state.clone(), me.clone());
                std::thread::spawn(move || handle(stream, &shared, &me));
            }
        });
    }

    /// A new device subscribed to this service.
    pub fn device(&self, name: &str) -> Device {
        let mut auth = [0u8; 16];
        auth.copy_from_slice(&p256::SecretKey::random(&mut OsRng).to_bytes()[..16]);
        let device = Device {
            name: name.to_owned(),
            endpoint: format!("{}/push/{name}", self.origin),
            secret: p256::SecretKey::random(&mut OsRng),
            auth,
        };
        self.state
            .lock()
            .unwrap()
            .devices
            .insert(name.to_owned(), device.clone());
        device
    }

    /// Answers `name`'s pushes with `status` from now on.
    pub fn answer(&self, name: &str, status: u16) {
        self.state
            .lock()
            .unwrap()
            .status
            .insert(name.to_owned(), status);
    }

    pub fn pushes(&self) -> Vec<Push> {
        self.state.lock().unwrap().pushes.clone()
    }

    pub fn refused(&self) -> Vec<String> {
        self.state.lock().unwrap().refused.clone()
    }

    /// The pushes once `count` of them came (or panics).
    pub fn wait_for(&self, count: usize) -> Vec<Push> {
        self.wait_for_within(count, Duration::from_secs(20))
    }

    /// The pushes once `count` of them came within `limit` (or panics).
    pub fn wait_for_within(&self, count: usize, limit: Duration) -> Vec<Push> {
        let started = Instant::now();
        loop {
            let pushes = self.pushes();
            if pushes.len() >= count {
                return pushes;
            }
            assert!(
                started.elapsed() < limit,
                "no {count} pushes; got {pushes:?}, refused {:?}",
                self.refused()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Checks the `Authorization` header as RFC 8292 says; the key and claims.
fn check_vapid(header: &str, origin: &str) -> Result<(String, Value), String> {
    let rest = header
        .strip_prefix("vapid ")
        .ok_or("not the vapid scheme")?;
    let mut token = None;
    let mut key = None;
    for part in rest.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => token = Some(v.trim().to_owned()),
            Some(("k", v)) => key = Some(v.trim().to_owned()),
            _ => {}
        }
    }
    let (token, key) = (token.ok_or("no t=")?, key.ok_or("no k=")?);
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err("the JWT has not three parts".into());
    }
    let decode = |p: &str| URL_SAFE_NO_PAD.decode(p).map_err(|e| e.to_string());
    let header: Value = serde_json::from_slice(&decode(parts[0])?).map_err(|e| e.to_string())?;
    if header["alg"] != "ES256" {
        return Err(format!("alg is {}", header["alg"]));
    }
    let verifying = VerifyingKey::from_sec1_bytes(&decode(&key)?).map_err(|e| e.to_string())?;
    let signature = Signature::from_slice(&decode(parts[2])?).map_err(|e| e.to_string())?;
    verifying
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
        .map_err(|_| "the signature does not verify".to_owned())?;
    let claims: Value = serde_json::from_slice(&decode(parts[1])?).map_err(|e| e.to_string())?;
    if claims["aud"] != origin {
        return Err(format!("aud is {} instead of {origin}", claims["aud"]));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let exp = claims["exp"].as_u64().ok_or("no exp")?;
    if exp <= now || exp > now + 24 * 3600 {
        return Err(format!("exp {exp} is not within the next day"));
    }
    if !claims["sub"]
        .as_str()
        .is_some_and(|s| s.starts_with("mailto:") || s.starts_with("https:"))
    {
        return Err(format!("sub {} is no mailto: or https: URI", claims["sub"]));
    }
    Ok((key, claims))
}

fn handle(stream: TcpStream, state: &Mutex<State>, origin: &str) {
    let Some((path, headers, body)) = super::receiver::read_request(&stream) else {
        return;
    };
    let name = path.trim_start_matches("/push/").to_owned();
    let status = {
        let mut state = state.lock().unwrap();
        let checked = (|| -> Result<Push, String> {
            let device = state.devices.get(&name).ok_or("unknown device")?.clone();
            if headers.get("content-encoding").map(String::as_str) != Some("aes128gcm") {
                return Err("content-encoding is not aes128gcm".into());
            }
            let (vapid_key, claims) = check_vapid(
                headers.get("authorization").ok_or("no authorization")?,
                origin,
            )?;
            let plain = web_push_native::decrypt(body.clone(), &device.secret, &device.auth.into())
                .map_err(|e| format!("cannot decrypt: {e}"))?;
            Ok(Push {
                device: name.clone(),
                payload: serde_json::from_slice(&plain).map_err(|e| e.to_string())?,
                ttl: headers
                    .get("ttl")
                    .and_then(|t| t.parse().ok())
                    .ok_or("no TTL")?,
                urgency: headers.get("urgency").cloned().unwrap_or_default(),
                topic: headers.get("topic").cloned(),
                vapid_key,
                claims,
                at: Instant::now(),
                raw: body.clone(),
                authorization: headers.get("authorization").cloned().unwrap_or_default(),
            })
        })();
        let answer = state.status.get(&name).copied().unwrap_or(201);
        match checked {
            Ok(push) if answer == 201 => {
                state.pushes.push(push);
                201
            }
            Ok(_) => answer,
            Err(why) => {
                state.refused.push(format!("{name}: {why}"));
                400
            }
        }
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Status\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
}
