//! A TCP proxy between the service and its database that a test can cut
//! (every connection dropped, new ones closed at once) and mend: the
//! database going away and coming back, without stopping the PostgreSQL
//! server other tests share.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Proxy {
    pub port: u16,
    open: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buffer) {
        if n == 0 || to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

/// The `host:port` of the test PostgreSQL server, which a proxy forwards to.
pub fn postgres_address() -> String {
    let admin = std::env::var(super::POSTGRES_URL_VAR).expect("checked by run_on");
    admin
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("a host in the PostgreSQL URL")
        .to_owned()
}

impl Proxy {
    /// Forwards a new local port to `target` (`host:port`).
    pub fn start(target: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicBool::new(true));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let (target, is_open, kept) = (target.to_owned(), open.clone(), streams.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if !is_open.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                kept.lock()
                    .unwrap()
                    .extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                std::thread::spawn(move || pipe(client, server));
                std::thread::spawn(move || pipe(s2, c2));
            }
        });
        Proxy {
            port,
            open,
            streams,
        }
    }

    /// The database goes away: every connection is cut, new ones close.
    pub fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// The database is back.
    pub fn mend(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}
