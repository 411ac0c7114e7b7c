//! reviewloop's web application: pages for people, beside the JSON API
//! in the same binary. Reviewers get an inbox and a review page with one
//! answer widget per response type; owners get loops, requests, API keys
//! and their account. Pages are rendered on the server (maud, checked at
//! compile time); CSS and one small script of our own are embedded. Every
//! flow works with JavaScript off; the script only makes pages live.
//!
//! An inbound adapter like the JSON API: it depends on the services, never
//! on the stores, and a page may do exactly what the API lets its account
//! do, because it calls the same use cases.

mod assets;
mod csrf;
mod error;
mod form;
mod layout;
mod markdown;
mod pages;
mod session;
mod state;
mod stream;

pub use state::{ClientAddress, PublicGate, WebState};

use actix_web::middleware::ErrorHandlers;
use actix_web::web;

/// Mounts the application's routes (`/`, `/login`, `/app/...`, `/join/...`,
/// `/static/...`) on an actix-web app.
pub fn mount(cfg: &mut web::ServiceConfig, state: WebState) {
    // Errors the framework answers itself (wrong method, oversized body)
    // are pages here too, not the API's JSON.
    let pages = || ErrorHandlers::new().default_handler(error::as_page);
    cfg.app_data(web::Data::new(state))
        .service(web::resource("/").wrap(pages()).get(pages::auth::root))
        // The stylesheet, the script and the API reference (over 200 KB of
        // HTML) go out compressed to browsers that take gzip; live streams
        // stay uncompressed, so nothing holds their events back.
        .service(
            web::resource("/static/{name}")
                .wrap(actix_web::middleware::Compress::default())
                .get(assets::serve),
        )
        .service(web::resource(["/favicon.svg", "/favicon.ico"]).get(assets::icon))
        .service(
            web::resource("/docs/api")
                .wrap(pages())
                .wrap(actix_web::middleware::Compress::default())
                .get(pages::api_docs::page),
        )
        .service(
            web::resource("/login")
                .wrap(pages())
                .get(pages::auth::login_page)
                .post(pages::auth::login),
        )
        .service(
            web::resource("/logout")
                .wrap(pages())
                .post(pages::auth::logout),
        )
        .service(
            web::resource("/signup")
                .wrap(pages())
                .get(pages::auth::signup_page)
                .post(pages::auth::signup),
        )
        .service(
            web::resource("/forgot")
                .wrap(pages())
                .get(pages::auth::forgot_page)
                .post(pages::auth::forgot),
        )
        .service(
            web::resource("/setup/{token}")
                .wrap(pages())
                .get(pages::auth::setup_page)
                .post(pages::auth::setup),
        )
        .service(
            web::resource("/answer/{token}")
                .wrap(pages())
                .get(pages::one_click::page)
                .post(pages::one_click::answer),
        )
        .service(
            web::resource("/join/{code}")
                .wrap(pages())
                .get(pages::join::page)
                .post(pages::join::join),
        )
        .service(
            web::scope("/app")
                .wrap(pages())
                .service(web::resource("").get(pages::inbox::page))
                .service(web::resource("/stream").get(stream::events))
                .service(
                    web::resource("/join")
                        .get(pages::join::box_page)
                        .post(pages::join::join_typed),
                )
                .service(web::resource("/requests").get(pages::requests::list))
                .service(web::resource("/requests/{id}").get(pages::review::page))
                .service(web::resource("/requests/{id}/claim").post(pages::review::claim))
                .service(web::resource("/requests/{id}/release").post(pages::review::release))
                .service(web::resource("/requests/{id}/cancel").post(pages::review::cancel))
                .service(web::resource("/requests/{id}/respond").post(pages::review::respond))
                .service(web::resource("/requests/{id}/feedback").post(pages::review::feedback))
                .service(web::resource("/reviews").get(pages::reviews::list))
                .service(web::resource("/reviews/{id}").get(pages::reviews::page))
                .service(web::resource("/reviews/{id}/start").post(pages::reviews::start))
                .service(web::resource("/reviews/{id}/cancel").post(pages::reviews::cancel))
                .service(web::resource("/reviews/{id}/complete").post(pages::reviews::complete))
                .service(
                    web::resource("/loops")
                        .get(pages::loops::list)
                        .post(pages::loops::create),
                )
                .service(web::resource("/loops/{id}").get(pages::loops::page))
                .service(web::resource("/loops/{id}/settings").get(pages::loops::settings))
                .service(web::resource("/loops/{id}/edit").post(pages::loops::edit))
                .service(
                    web::resource("/loops/{id}/rules")
                        .get(pages::loops::rules_page)
                        .post(pages::loops::rules),
                )
                .service(web::resource("/loops/{id}/notify").post(pages::loops::notify))
                .service(web::resource("/loops/{id}/regenerate").post(pages::loops::regenerate))
                .service(web::resource("/loops/{id}/invite").post(pages::loops::invite))
                .service(web::resource("/loops/{id}/remove").post(pages::loops::remove))
                .service(
                    web::resource("/loops/{id}/delete")
                        .get(pages::loops::delete_page)
                        .post(pages::loops::delete),
                )
                .service(web::resource("/templates").get(pages::templates::list))
                .service(
                    web::resource("/templates/new")
                        .get(pages::templates::new_page)
                        .post(pages::templates::create),
                )
                .service(
                    web::resource("/templates/{id}")
                        .get(pages::templates::page)
                        .post(pages::templates::save),
                )
                .service(web::resource("/templates/{id}/delete").post(pages::templates::delete))
                .service(
                    web::resource("/keys")
                        .get(pages::keys::page)
                        .post(pages::keys::create),
                )
                .service(web::resource("/keys/{id}/revoke").post(pages::keys::revoke))
                .service(
                    web::resource("/webhooks")
                        .get(pages::webhooks::list)
                        .post(pages::webhooks::create),
                )
                .service(web::resource("/webhooks/{id}").get(pages::webhooks::page))
                .service(web::resource("/webhooks/{id}/edit").post(pages::webhooks::edit))
                .service(web::resource("/webhooks/{id}/rotate").post(pages::webhooks::rotate))
                .service(web::resource("/webhooks/{id}/redeliver").post(pages::webhooks::redeliver))
                .service(web::resource("/webhooks/{id}/test").post(pages::webhooks::test))
                .service(web::resource("/webhooks/{id}/delete").post(pages::webhooks::delete))
                .service(web::resource("/analytics").get(pages::analytics::page))
                .service(
                    web::resource("/account")
                        .get(pages::account::page)
                        .post(pages::account::act),
                )
                .service(
                    web::resource("/account/devices/{id}/test").post(pages::account::test_device),
                )
                .service(
                    web::resource("/account/devices/{id}/remove")
                        .post(pages::account::remove_device),
                )
                .service(web::resource("/sw.js").get(assets::service_worker))
                .service(web::resource("/manifest.webmanifest").get(assets::manifest))
                .default_service(web::to(pages::not_found)),
        );
}
