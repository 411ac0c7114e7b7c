//! Route table. Every request-surface operation is registered once and
//! mounted under both `/v1/api` and `/v1`, so the two path forms cannot drift.

mod account;
mod alternate;
mod events;
mod key;
mod loops;
mod members;
mod once;
mod public;
mod requests;
mod reviewer;
mod reviews;
mod teams;
mod templates;
mod views;
mod webhooks;

use actix_web::middleware::from_fn;
use actix_web::web;

use crate::{auth, public_limit};

pub(crate) fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/health", web::get().to(public::health))
        .route("/ready", web::get().to(public::ready))
        // Each scrape reads the database: the public per-client allowance
        // (60 a minute) keeps it from being used to load it.
        .service(
            web::resource("/metrics")
                .wrap(from_fn(public_limit::limit))
                .get(public::metrics),
        )
        .service(
            web::resource("/v1/qr/{file}")
                .wrap(from_fn(public_limit::limit))
                .get(public::qr_png),
        )
        .service(
            web::scope("/v1/api")
                .wrap(from_fn(auth::authenticate))
                .configure(webhooks::routes::<webhooks::EnvelopeA>)
                .configure(operations),
        )
        .service(
            web::scope("/v1")
                .wrap(from_fn(auth::authenticate))
                .configure(alternate_only)
                .configure(webhooks::routes::<webhooks::EnvelopeB>)
                .configure(operations),
        );
}

/// The alternate surface's own resources, mounted under `/v1` only; they
/// answer in envelope B whatever happens.
fn alternate_only(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/templates")
            .get(templates::list)
            .post(templates::create),
    )
    .service(
        web::resource("/templates/{id}")
            .get(templates::get)
            .patch(templates::update)
            .delete(templates::delete),
    )
    .service(
        web::resource("/reviews")
            .get(reviews::list)
            .post(reviews::create),
    )
    .service(
        web::resource("/reviews/{id}")
            .get(reviews::get)
            .patch(reviews::update)
            .delete(reviews::cancel),
    )
    .service(web::resource("/reviews/{id}/start").post(reviews::start))
    .service(web::resource("/reviews/{id}/complete").post(reviews::complete))
    .service(web::resource("/teams").get(teams::list).post(teams::create))
    .service(web::resource("/teams/{id}").get(teams::get))
    .service(
        web::resource("/teams/{id}/members")
            .get(teams::members)
            .post(teams::invite),
    );
}

fn operations(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/events").get(events::stream))
        .service(web::resource("/account/signing-secret").get(account::signing_secret))
        .service(
            web::resource("/account/signing-secret/rotate").post(account::rotate_signing_secret),
        );
    cfg.service(web::resource("/test").get(key::check))
        .service(web::resource("/loops").get(loops::list).post(loops::create))
        // Before `/loops/{id}`, or `join` would be taken for an id.
        .service(web::resource("/loops/join").post(members::join))
        .service(
            web::resource("/loops/{id}")
                .get(loops::get)
                .put(loops::update)
                .delete(loops::delete),
        )
        .service(
            web::resource("/loops/{id}/members")
                .get(members::list)
                .post(members::invite),
        )
        .service(web::resource("/loops/{id}/members/{user_id}").delete(members::remove))
        .service(web::resource("/loops/{id}/notifications").put(members::notifications))
        .service(web::resource("/loops/{id}/invite-code").post(members::new_invite_code))
        .service(
            web::resource("/loops/{id}/requests")
                .get(requests::list_in_loop)
                .post(requests::create_in_loop),
        )
        .service(
            web::resource("/requests")
                .get(requests::list)
                .post(requests::create),
        )
        .service(
            web::resource("/requests/{id}")
                .get(requests::get)
                .patch(requests::update)
                .delete(requests::cancel),
        )
        .service(web::resource("/requests/{id}/feedback").post(requests::feedback))
        .service(web::resource("/requests/{id}/claim").post(reviewer::claim))
        .service(web::resource("/requests/{id}/release").post(reviewer::release))
        .service(web::resource("/requests/{id}/respond").post(reviewer::respond))
        .service(web::resource("/inbox").get(reviewer::inbox));
}
