//! A real SMTP server for notification tests: it speaks enough SMTP for
//! lettre (greeting, EHLO, MAIL, RCPT, DATA, QUIT) and keeps every message.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One message the sink took.
#[derive(Debug, Clone)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// The DATA as sent, headers and encoded parts.
    pub data: String,
}

impl Mail {
    /// The data with quoted-printable soft breaks and `=3D` undone, so a
    /// test can look for links and sentences.
    pub fn readable(&self) -> String {
        self.data.replace("=\r\n", "").replace("=3D", "=")
    }
}

/// Listens on 127.0.0.1 until dropped with the test.
#[derive(Clone)]
pub struct SmtpSink {
    pub port: u16,
    mails: Arc<Mutex<Vec<Mail>>>,
}

/// A port nothing listens on yet, for a mail server that is down.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl SmtpSink {
    pub fn start() -> Self {
        Self::start_on(0)
    }

    /// Starts on `port` (0: any free one).
    pub fn start_on(port: u16) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mails: Arc<Mutex<Vec<Mail>>> = Arc::default();
        let shared = mails.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let _ = converse(stream, &shared);
                });
            }
        });
        SmtpSink { port, mails }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    pub fn mails(&self) -> Vec<Mail> {
        self.mails.lock().unwrap().clone()
    }

    /// Waits until `pred` holds of the mails taken, or fails the test.
    pub fn wait_until(&self, limit: Duration, pred: impl Fn(&[Mail]) -> bool) -> Vec<Mail> {
        let started = Instant::now();
        loop {
            let mails = self.mails();
            if pred(&mails) {
                return mails;
            }
            assert!(
                started.elapsed() < limit,
                "the mail server did not get what was expected in {limit:?}: {mails:#?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn converse(stream: TcpStream, mails: &Mutex<Vec<Mail>>) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    let mut lines = BufReader::new(stream);
    out.write_all(b"220 sink.test ESMTP\r\n")?;
    let (mut from, mut to) = (String::new(), Vec::new());
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_owned();
        let verb = command.get(..4).unwrap_or("").to_ascii_uppercase();
        match verb.as_str() {
            "EHLO" | "HELO" => out.write_all(b"250-sink.test\r\n250 8BITMIME\r\n")?,
            "MAIL" => {
                from = command[10..].trim().to_owned();
                out.write_all(b"250 OK\r\n")?;
            }
            "RCPT" => {
                to.push(command[8..].trim().to_owned());
                out.write_all(b"250 OK\r\n")?;
            }
            "DATA" => {
                out.write_all(b"354 go on\r\n")?;
                let mut data = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line)? == 0 {
                        return Ok(());
                    }
                    if line == ".\r\n" {
                        break;
                    }
                    data.push_str(&line);
                }
                mails.lock().unwrap().push(Mail {
                    from: std::mem::take(&mut from),
                    to: std::mem::take(&mut to),
                    data,
                });
                out.write_all(b"250 queued\r\n")?;
            }
            "QUIT" => {
                out.write_all(b"221 bye\r\n")?;
                return Ok(());
            }
            _ => out.write_all(b"250 OK\r\n")?,
        }
    }
}
