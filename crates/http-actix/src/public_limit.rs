//! A per-client limit on the routes that need no key (join page, QR code).
//! Invite codes are guessable only by trying many; this makes trying slow.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpResponse};

use crate::error::ApiError;
use crate::state::AppState;

/// Calls per client address per minute on the public routes.
pub const PUBLIC_CALLS_PER_MINUTE: u32 = 60;

/// Counts calls per client address in one-minute windows. The whole map is
/// dropped when a new minute starts, so it never holds more than one
/// minute's worth of addresses.
#[derive(Debug, Default)]
pub struct PublicLimiter {
    window: Mutex<(u64, HashMap<IpAddr, u32>)>,
}

impl PublicLimiter {
    /// Counts one call from `client`; `Err(seconds to wait)` when over the limit.
    pub fn hit(&self, client: IpAddr, now_seconds: u64) -> Result<(), u64> {
        let minute = now_seconds / 60;
        let Ok(mut guard) = self.window.lock() else {
            return Ok(());
        };
        let (current, counts) = &mut *guard;
        if *current != minute {
            *current = minute;
            counts.clear();
        }
        let count = counts.entry(client).or_insert(0);
        if *count >= PUBLIC_CALLS_PER_MINUTE {
            return Err(60 - now_seconds % 60);
        }
        *count += 1;
        Ok(())
    }
}

/// Middleware of the public routes. The client is the address the request
/// came from, or the one a trusted proxy in front (nginx) forwards.
pub(crate) async fn limit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let verdict = match req.app_data::<web::Data<AppState>>() {
        Some(state) => {
            let peer = req.peer_addr().map(|a| a.ip());
            match state.trusted_proxies.client(peer, req.headers()) {
                Some(client) => state.public_limiter.hit(client, now),
                None => Ok(()),
            }
        }
        None => Ok(()),
    };
    match verdict {
        Ok(()) => Ok(next.call(req).await?.map_into_boxed_body()),
        Err(wait) => {
            let mut response = HttpResponse::from_error(ApiError::with_status(
                StatusCode::TOO_MANY_REQUESTS,
                "Rate limit exceeded",
            ));
            if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
            Ok(req.into_response(response))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_gets_its_own_allowance_per_minute() {
        let limiter = PublicLimiter::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        for _ in 0..PUBLIC_CALLS_PER_MINUTE {
            assert!(limiter.hit(a, 600).is_ok());
        }
        assert_eq!(limiter.hit(a, 615), Err(45));
        assert!(
            limiter.hit(b, 615).is_ok(),
            "another client is not affected"
        );
        assert!(limiter.hit(a, 660).is_ok(), "a new minute, a new allowance");
    }
}
