//! A stand-in for Slack's Web API: it answers `chat.postMessage`,
//! `chat.update`, `chat.postEphemeral` and `users.info` as Slack documents
//! them, and records every call with its token and body.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One call the stand-in took.
#[derive(Debug, Clone)]
pub struct Call {
    /// The method, e.g. `chat.postMessage`.
    pub method: String,
    /// The bearer token it came with.
    pub token: String,
    /// The body: JSON, or a form read into an object.
    pub body: Value,
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    /// Slack user id to email, as `users.info` answers.
    emails: HashMap<String, String>,
    posted: u32,
}

#[derive(Clone)]
pub struct FakeSlack {
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl FakeSlack {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let shared = shared.clone();
                std::thread::spawn(move || handle(stream, &shared));
            }
        });
        FakeSlack { base, state }
    }

    /// Makes `users.info` answer `email` for `user`.
    pub fn user(&self, user: &str, email: &str) {
        let mut state = self.state.lock().unwrap();
        state.emails.insert(user.to_owned(), email.to_owned());
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state.lock().unwrap().calls.clone()
    }

    /// The calls of `method` once `count` of them came (or panics).
    pub fn wait_for(&self, method: &str, count: usize) -> Vec<Call> {
        let started = Instant::now();
        loop {
            let calls: Vec<Call> = self
                .calls()
                .into_iter()
                .filter(|c| c.method == method)
                .collect();
            if calls.len() >= count {
                return calls;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "no {count} {method} calls; got {:?}",
                self.calls()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn handle(stream: TcpStream, state: &Mutex<State>) {
    let Some((path, headers, raw)) = super::receiver::read_request(&stream) else {
        return;
    };
    let method = path.trim_start_matches('/').to_owned();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let body = serde_json::from_str(&raw).unwrap_or_else(|_| {
        Value::Object(
            raw.split('&')
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
                .collect(),
        )
    });
    let token = headers
        .get("authorization")
        .and_then(|a| a.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    let answer = {
        let mut state = state.lock().unwrap();
        let answer = match method.as_str() {
            "chat.postMessage" => {
                state.posted += 1;
                json!({"ok": true, "channel": "C0SLACK", "ts": format!("1700000000.{:06}", state.posted)})
            }
            "chat.update" | "chat.postEphemeral" => json!({"ok": true}),
            "users.info" => match body["user"].as_str().and_then(|u| state.emails.get(u)) {
                Some(email) => json!({"ok": true, "user": {
                    "id": body["user"], "deleted": false, "is_bot": false,
                    "is_email_confirmed": true, "profile": {"email": email}
                }}),
                None => json!({"ok": false, "error": "user_not_found"}),
            },
            _ => json!({"ok": false, "error": "unknown_method"}),
        };
        state.calls.push(Call {
            method,
            token,
            body,
        });
        answer
    };
    let text = answer.to_string();
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
}
