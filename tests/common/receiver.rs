//! A real HTTP receiver for webhook and callback tests: it records every
//! POST (headers and raw body) and answers with scripted statuses.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(&name.to_lowercase())
            .map(String::as_str)
            .unwrap_or_default()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    script: VecDeque<u16>,
    delay: Duration,
}

/// Listens on 127.0.0.1 on a free port until dropped with the test.
#[derive(Clone)]
pub struct Receiver {
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl Receiver {
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
        Receiver { base, state }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The next answers' statuses, in order; 200 once they run out.
    pub fn answer(&self, statuses: &[u16]) {
        self.state.lock().unwrap().script.extend(statuses);
    }

    /// How long to wait before answering.
    pub fn delay(&self, delay: Duration) {
        self.state.lock().unwrap().delay = delay;
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// Waits until `pred` holds for what was received (or panics after `limit`).
    pub fn wait_until(&self, limit: Duration, pred: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let started = Instant::now();
        loop {
            let got = self.received();
            if pred(&got) {
                return got;
            }
            assert!(
                started.elapsed() < limit,
                "receiver did not get what was expected in {limit:?}; got {} requests",
                got.len()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One HTTP request as read off `stream`: its path, its headers (names in
/// lower case) and its body; `None` when the client went away.
pub fn read_request(stream: &TcpStream) -> Option<(String, HashMap<String, String>, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_lowercase(), value.trim().to_owned());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((path, headers, body))
}

fn handle(stream: TcpStream, state: &Mutex<State>) {
    let Some((path, headers, body)) = read_request(&stream) else {
        return;
    };
    let (status, delay) = {
        let mut state = state.lock().unwrap();
        state.received.push(Received {
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        (state.script.pop_front().unwrap_or(200), state.delay)
    };
    std::thread::sleep(delay);
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Scripted\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    );
}
