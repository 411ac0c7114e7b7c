//! A steady client load for restart tests: one call every 20 ms until
//! told to stop, counting the calls and every one that failed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Runs `call` (given `http` and the call's number) on a thread until
/// `stop` is set; joins to how many calls were made and what each failed
/// one got (its status, or the error).
pub fn until_stopped(
    stop: Arc<AtomicBool>,
    http: reqwest::blocking::Client,
    call: impl Fn(&reqwest::blocking::Client, u32) -> reqwest::Result<reqwest::blocking::Response>
        + Send
        + 'static,
) -> JoinHandle<(u32, Vec<String>)> {
    std::thread::spawn(move || {
        let (mut calls, mut failed) = (0u32, Vec::new());
        while !stop.load(Ordering::Relaxed) {
            match call(&http, calls) {
                Ok(r) if r.status().is_success() => {}
                Ok(r) => failed.push(r.status().to_string()),
                Err(e) => failed.push(e.to_string()),
            }
            calls += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        (calls, failed)
    })
}
