//! What every handler can reach: the services.

use reviewloop_service::{Authenticator, IdempotencyService, LoopService, Ports, RequestService};

/// The services, built once at start and shared by every worker.
#[derive(Clone)]
pub struct AppState {
    /// Bearer-key authentication and rate limiting.
    pub auth: Authenticator,
    /// Loops and membership.
    pub loops: LoopService,
    /// Review requests.
    pub requests: RequestService,
    /// Safe retries of create calls.
    pub idempotency: IdempotencyService,
}

impl AppState {
    /// Builds every service over `ports`; links shown to users start with `public_url`.
    pub fn new(ports: Ports, public_url: &str) -> Self {
        Self {
            auth: Authenticator::new(ports.clone()),
            loops: LoopService::new(ports.clone(), public_url),
            idempotency: IdempotencyService::new(ports.clone()),
            requests: RequestService::new(ports, public_url),
        }
    }
}
