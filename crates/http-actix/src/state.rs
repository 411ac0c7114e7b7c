//! What every handler can reach: the services.

use std::sync::Arc;

use crate::client_addr::TrustedProxies;
use crate::public_limit::PublicLimiter;

use reviewloop_service::{
    AccountService, AuditService, Authenticator, EventStream, IdempotencyService, LoopService,
    OperationsService, Ports, ReceiptKeys, RequestService, ReviewService, TemplateService,
    WebhookService,
};

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
    /// Webhook subscriptions.
    pub webhooks: WebhookService,
    /// Templates (reusable forms).
    pub templates: TemplateService,
    /// Reviews.
    pub reviews: ReviewService,
    /// The account's own settings (callback signing secret).
    pub accounts: AccountService,
    /// The event stream.
    pub events: EventStream,
    /// Per-client limit of the routes that need no key.
    pub public_limiter: Arc<PublicLimiter>,
    /// Proxies whose forwarding headers name the client.
    pub trusted_proxies: TrustedProxies,
    /// Readiness and metrics.
    pub operations: OperationsService,
    /// The accounts' audit logs.
    pub audit: AuditService,
    /// The public keys of decision receipts.
    pub receipts: Arc<ReceiptKeys>,
    /// Answers of `GET /requests/{id}` kept while their request is unchanged.
    pub(crate) rendered: Arc<crate::rendered::RenderedRequests>,
    /// Answers from loops' Slack apps.
    pub slack: Arc<reviewloop_service::SlackService>,
    /// Web Push devices and the key they subscribe with.
    pub push: reviewloop_service::PushService,
}

impl AppState {
    /// Builds every service over `ports`; links shown to users start with `public_url`.
    pub fn new(ports: Ports, public_url: &str) -> Self {
        let auth = Authenticator::new((&ports).into());
        Self {
            accounts: AccountService::new((&ports).into())
                .forgetting_revoked_keys_in(auth.key_cache()),
            auth,
            loops: LoopService::new((&ports).into(), public_url),
            idempotency: IdempotencyService::new((&ports).into()),
            webhooks: WebhookService::new((&ports).into()),
            templates: TemplateService::new((&ports).into()),
            reviews: ReviewService::new((&ports).into()),
            events: EventStream::new((&ports).into()),
            operations: OperationsService::new((&ports).into()),
            receipts: ports.receipts.clone(),
            audit: AuditService::new((&ports).into()),
            public_limiter: Arc::new(PublicLimiter::default()),
            trusted_proxies: TrustedProxies::default(),
            rendered: Arc::default(),
            slack: Arc::new(reviewloop_service::SlackService::new(
                (&ports).into(),
                RequestService::new((&ports).into(), public_url),
            )),
            push: reviewloop_service::PushService::new((&ports).into(), public_url),
            requests: RequestService::new((&ports).into(), public_url),
        }
    }

    /// Believes forwarding headers from these proxies (none by default).
    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.trusted_proxies = proxies;
        self
    }
}
