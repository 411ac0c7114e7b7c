//! What every page handler can reach: the services and where the site lives.

use reviewloop_service::{
    AccountService, AnalyticsService, KeyCache, LoopService, OneClickService, PeopleService, Ports,
    RequestService, ReviewService, SignupPolicy, TemplateService, WebhookService,
};
use std::net::IpAddr;
use std::sync::Arc;

use actix_web::http::header::HeaderMap;
use actix_web::HttpRequest;

/// Finds the client's address from the peer and the forwarding headers
/// (the server passes the API's rule, which trusts only known proxies).
pub type ClientAddress = Arc<dyn Fn(Option<IpAddr>, &HeaderMap) -> Option<IpAddr> + Send + Sync>;

/// Counts one call of a page that needs no sign-in (the join page) against
/// the caller's per-address allowance: `Err(seconds to wait)` when spent.
/// The server passes the API's limiter, so both share one allowance.
pub type PublicGate = Arc<dyn Fn(&HttpRequest) -> Result<(), u64> + Send + Sync>;

/// The services the pages call, built once at start.
#[derive(Clone)]
pub struct WebState {
    pub(crate) people: PeopleService,
    pub(crate) loops: LoopService,
    pub(crate) requests: RequestService,
    pub(crate) reviews: ReviewService,
    pub(crate) templates: TemplateService,
    pub(crate) accounts: AccountService,
    pub(crate) analytics: AnalyticsService,
    pub(crate) webhooks: WebhookService,
    pub(crate) one_click: OneClickService,
    pub(crate) push: reviewloop_service::PushService,
    pub(crate) changes: Arc<reviewloop_service::ChangeHub>,
    /// `https://…` or `http://…`, without a trailing slash.
    pub(crate) public_url: String,
    /// Cookies get `Secure` when the public URL is https.
    pub(crate) secure_cookies: bool,
    pub(crate) client_address: ClientAddress,
    pub(crate) public_gate: PublicGate,
    /// Whether an SMTP server is set up, so pages can say where
    /// notifications and password links go.
    pub(crate) email_enabled: bool,
    /// The OpenAPI document `/docs/api` renders, when the API publishes one.
    pub(crate) api_document: Option<fn() -> &'static serde_json::Value>,
}

impl WebState {
    /// The client behind `req`, as text for throttles ("" when unknown).
    pub(crate) fn client_of(&self, req: &HttpRequest) -> String {
        (self.client_address)(req.peer_addr().map(|a| a.ip()), req.headers())
            .map(|ip| ip.to_string())
            .unwrap_or_default()
    }

    /// Builds the services over `ports`. `keys` is the API's key cache, so
    /// that a key revoked in the dashboard stops working at once here too.
    pub fn new(ports: Ports, public_url: &str, signup: SignupPolicy, keys: Arc<KeyCache>) -> Self {
        let public_url = public_url.trim_end_matches('/').to_owned();
        Self {
            email_enabled: ports.email_enabled(),
            api_document: None,
            people: PeopleService::new((&ports).into(), &public_url, signup),
            loops: LoopService::new((&ports).into(), &public_url),
            accounts: AccountService::new((&ports).into()).forgetting_revoked_keys_in(keys),
            changes: ports.changes.clone(),
            analytics: AnalyticsService::new((&ports).into()),
            webhooks: WebhookService::new((&ports).into()),
            reviews: ReviewService::new((&ports).into()),
            templates: TemplateService::new((&ports).into()),
            requests: RequestService::new((&ports).into(), &public_url),
            one_click: OneClickService::new(
                (&ports).into(),
                RequestService::new((&ports).into(), &public_url),
            ),
            push: reviewloop_service::PushService::new((&ports).into(), &public_url),
            secure_cookies: public_url.starts_with("https://"),
            client_address: Arc::new(|peer, _| peer),
            public_gate: Arc::new(|_| Ok(())),
            public_url,
        }
    }

    /// Counts sign-in attempts under the address `rule` finds (by default
    /// the peer's, which behind a proxy is the proxy's).
    pub fn with_client_address(mut self, rule: ClientAddress) -> Self {
        self.client_address = rule;
        self
    }

    /// Limits the pages anyone may open (by default, nothing is limited).
    pub fn with_public_gate(mut self, gate: PublicGate) -> Self {
        self.public_gate = gate;
        self
    }

    /// Publishes the OpenAPI 3.1 document `document` gives as the
    /// reference page `/docs/api`. It is asked for at the page's first
    /// visit, not at start: building it costs megabytes an idle instance
    /// need not hold.
    pub fn with_api_document(mut self, document: fn() -> &'static serde_json::Value) -> Self {
        self.api_document = Some(document);
        self
    }

    /// The people service (the server uses it for the first-start link).
    pub fn people(&self) -> &PeopleService {
        &self.people
    }
}
