//! Route table. Every request-surface operation is registered once and
//! mounted under both `/v1/api` and `/v1`, so the two path forms cannot drift.

mod account;
mod audit;
mod clock;
mod events;
mod key;
mod loops;
mod members;
mod once;
mod public;
pub(crate) use public::health;
mod push;
mod requests;
mod reviewer;
mod reviews;
mod slack;
mod teams;
mod templates;
pub(crate) mod views;
mod webhooks;

use actix_web::http::Method;
use actix_web::middleware::from_fn;
use actix_web::web;

use crate::{auth, envelope, public_limit};

/// One entry of the route table: a full path pattern and its methods.
// Read only by the document test; serving only records it.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// The pattern as actix-web matches it, e.g. `/v1/api/loops/{id}`.
    pub path: String,
    /// The methods it answers.
    pub methods: Vec<Method>,
}

/// Registers resources and remembers what it registered, so the table can
/// be compared with the OpenAPI document (a test does) without a second
/// list to keep in step.
pub(crate) struct Table<'a> {
    cfg: &'a mut web::ServiceConfig,
    prefix: &'static str,
    seen: &'a mut Vec<Route>,
}

/// The pattern of the route a request matched, kept with its resource so
/// the metrics can name it without matching the path again.
#[derive(Debug, Clone)]
pub(crate) struct RoutePattern(pub std::sync::Arc<str>);

impl Table<'_> {
    fn add<T, B>(&mut self, path: &str, methods: &[Method], resource: actix_web::Resource<T>)
    where
        T: actix_web::dev::ServiceFactory<
                actix_web::dev::ServiceRequest,
                Config = (),
                Response = actix_web::dev::ServiceResponse<B>,
                Error = actix_web::Error,
                InitError = (),
            > + 'static,
        B: actix_web::body::MessageBody + 'static,
    {
        let pattern = format!("{}{path}", self.prefix);
        self.seen.push(Route {
            path: pattern.clone(),
            methods: methods.to_vec(),
        });
        self.cfg
            .service(resource.app_data(RoutePattern(pattern.into())));
    }

    /// The same table under `prefix`, on the scope's own config.
    fn scoped<'b>(
        cfg: &'b mut web::ServiceConfig,
        prefix: &'static str,
        seen: &'b mut Vec<Route>,
    ) -> Table<'b> {
        Table { cfg, prefix, seen }
    }
}

/// `resource!(table, "/path", get => handler, post => handler)` registers
/// a resource and records its methods from the same list.
macro_rules! resource {
    (@method get) => { actix_web::http::Method::GET };
    (@method post) => { actix_web::http::Method::POST };
    (@method put) => { actix_web::http::Method::PUT };
    (@method patch) => { actix_web::http::Method::PATCH };
    (@method delete) => { actix_web::http::Method::DELETE };
    ($table:expr, $path:literal, wrap = $wrap:expr, $($method:ident => $handler:expr),+ $(,)?) => {
        $table.add(
            $path,
            &[$(resource!(@method $method)),+],
            actix_web::web::resource($path)
                .wrap($wrap)
                $(.route(actix_web::web::$method().to($handler)))+,
        )
    };
    ($table:expr, $path:literal, $($method:ident => $handler:expr),+ $(,)?) => {
        $table.add(
            $path,
            &[$(resource!(@method $method)),+],
            actix_web::web::resource($path)
                $(.route(actix_web::web::$method().to($handler)))+,
        )
    };
}
pub(crate) use resource;

/// Every route the API answers, as registered by [`configure`]; the
/// OpenAPI test compares it with the document.
#[cfg(test)]
pub(crate) fn table() -> Vec<Route> {
    let mut seen = Vec::new();
    let _ = actix_web::App::new().configure(|cfg| register(cfg, &mut seen));
    seen
}

pub(crate) fn configure(cfg: &mut web::ServiceConfig) {
    register(cfg, &mut Vec::new());
}

fn register(cfg: &mut web::ServiceConfig, seen: &mut Vec<Route>) {
    {
        let mut t = Table::scoped(cfg, "", seen);
        resource!(t, "/health", get => public::health);
        // Where HITL.sh's clients and troubleshooting page look, without a
        // key (registered before the scopes that would ask for one).
        resource!(t, "/v1/health", get => public::health);
        resource!(t, "/v1/api/health", get => public::health);
        resource!(t, "/ready", get => public::ready);
        resource!(t, "/v1/openapi.json", get => public::openapi);
        // Each scrape reads the database: the public per-client allowance
        // (60 a minute) keeps it from being used to load it.
        resource!(t, "/metrics", wrap = from_fn(public_limit::limit), get => public::metrics);
        resource!(t, "/v1/qr/{file}", wrap = from_fn(public_limit::limit), get => public::qr_png);
        resource!(t, "/v1/receipts/keys", wrap = from_fn(public_limit::limit), get => public::receipt_keys);
    }
    // Slack's interactions are signed by Slack and shaped by it: they are
    // described in the docs (reaching reviewers), not the OpenAPI document.
    // Every click of every team comes from Slack's few addresses, so the
    // per-address allowance of public routes would throttle them all.
    cfg.service(web::resource("/slack/interactions").route(web::post().to(slack::interactions)));
    // The MCP server speaks JSON-RPC, described by its own tool list rather
    // than the OpenAPI document, so it stays out of the table.
    cfg.service(
        web::resource("/mcp")
            .wrap(from_fn(crate::body::read_body_first))
            .wrap(from_fn(auth::authenticate))
            .route(web::post().to(crate::mcp::handle)),
    );
    // Web Push devices are managed by programs and by the account page,
    // so this scope takes a web session (with its anti-forgery token) as
    // well as a key; it is registered before `/v1/api`, which would
    // otherwise take these paths.
    cfg.service(
        web::scope("/v1/api/push")
            .wrap(from_fn(crate::body::read_body_first))
            .wrap(from_fn(auth::key_or_session))
            .wrap(from_fn(envelope::request_surface))
            .configure(|cfg| push::resources(&mut Table::scoped(cfg, "/v1/api/push", seen))),
    );
    // Each scope answers in one envelope, chosen here by its surface and
    // nowhere else. Its calls are authenticated (and counted) first; then
    // the whole body is read before the handler runs (`read_body_first`),
    // so a body that breaks off changes nothing. The alternate surface's resources are scopes of their
    // own, before `/v1`, so that what falls under them (an unknown id's
    // route, a wrong method) answers in envelope B too.
    cfg.service(
        web::scope("/v1/api")
            .wrap(from_fn(crate::body::read_body_first))
            .wrap(from_fn(auth::authenticate))
            .wrap(from_fn(envelope::request_surface))
            .configure(|cfg| {
                let mut t = Table::scoped(cfg, "/v1/api", seen);
                webhooks::routes(&mut t);
                operations(&mut t);
            }),
    );
    for (prefix, routes) in ALTERNATE {
        cfg.service(
            web::scope(prefix)
                .wrap(from_fn(crate::body::read_body_first))
                .wrap(from_fn(auth::authenticate))
                .wrap(from_fn(envelope::alternate_surface))
                .configure(|cfg| routes(&mut Table::scoped(cfg, prefix, seen))),
        );
    }
    cfg.service(
        web::scope("/v1")
            .wrap(from_fn(crate::body::read_body_first))
            .wrap(from_fn(auth::authenticate))
            .wrap(from_fn(envelope::request_surface))
            .configure(|cfg| operations(&mut Table::scoped(cfg, "/v1", seen))),
    );
}

/// Registers a scope's resources, relative to its prefix.
type Resources = fn(&mut Table);

/// The alternate surface's resources, mounted under `/v1` only.
const ALTERNATE: [(&str, Resources); 4] = [
    ("/v1/templates", |t| {
        resource!(t, "", get => templates::list, post => templates::create);
        resource!(t, "/{id}",
            get => templates::get, patch => templates::update, delete => templates::delete);
    }),
    ("/v1/reviews", |t| {
        resource!(t, "", get => reviews::list, post => reviews::create);
        resource!(t, "/{id}",
            get => reviews::get, patch => reviews::update, delete => reviews::cancel);
        resource!(t, "/{id}/start", post => reviews::start);
        resource!(t, "/{id}/complete", post => reviews::complete);
    }),
    ("/v1/teams", |t| {
        resource!(t, "", get => teams::list, post => teams::create);
        resource!(t, "/{id}", get => teams::get);
        resource!(t, "/{id}/members", get => teams::members, post => teams::invite);
    }),
    ("/v1/webhooks", |t| webhooks::resources(t)),
];

fn operations(t: &mut Table) {
    resource!(t, "/events", get => events::stream);
    resource!(t, "/account/signing-secret", get => account::signing_secret);
    resource!(t, "/account/signing-secret/rotate", post => account::rotate_signing_secret);
    resource!(t, "/test", get => key::check);
    resource!(t, "/test/clock", get => clock::get, post => clock::advance);
    resource!(t, "/loops", get => loops::list, post => loops::create);
    // Before `/loops/{id}`, or `join` would be taken for an id.
    resource!(t, "/loops/join", post => members::join);
    resource!(t, "/loops/{id}", get => loops::get, put => loops::update, delete => loops::delete);
    resource!(t, "/loops/{id}/members", get => members::list, post => members::invite);
    resource!(t, "/loops/{id}/members/{user_id}", delete => members::remove);
    resource!(t, "/loops/{id}/notifications", put => members::notifications);
    resource!(t, "/loops/{id}/invite-code", post => members::new_invite_code);
    resource!(t, "/loops/{id}/rules/test", post => loops::test_rules);
    resource!(t, "/loops/{id}/requests",
        get => requests::list_in_loop, post => requests::create_in_loop);
    resource!(t, "/requests", get => requests::list, post => requests::create);
    resource!(t, "/requests/{id}",
        get => requests::get, patch => requests::update, delete => requests::cancel);
    resource!(t, "/requests/{id}/feedback", post => requests::feedback);
    resource!(t, "/requests/{id}/claim", post => reviewer::claim);
    resource!(t, "/requests/{id}/release", post => reviewer::release);
    resource!(t, "/requests/{id}/respond", post => reviewer::respond);
    resource!(t, "/inbox", get => reviewer::inbox);
    resource!(t, "/audit", get => audit::list);
}
