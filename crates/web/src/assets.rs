//! The stylesheet and the script, embedded in the binary and served under
//! names that carry a hash of their content, so browsers may keep them
//! for a year and still get a new version the moment it changes.

use std::sync::OnceLock;

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpResponse};
use sha2::{Digest, Sha256};

use crate::error::PageError;

const CSS: &str = include_str!("../assets/app.css");
const JS: &str = include_str!("../assets/app.js");
const SERVICE_WORKER: &str = include_str!("../assets/sw.js");
const ICON: &str = include_str!("../assets/favicon.svg");

struct Asset {
    name: String,
    body: &'static str,
    content_type: &'static str,
}

fn named(stem: &str, ext: &str, body: &'static str, content_type: &'static str) -> Asset {
    let hash = hex::encode(Sha256::digest(body.as_bytes()));
    Asset {
        name: format!("{stem}.{}.{ext}", &hash[..12]),
        body,
        content_type,
    }
}

fn assets() -> &'static [Asset; 2] {
    static ASSETS: OnceLock<[Asset; 2]> = OnceLock::new();
    ASSETS.get_or_init(|| {
        [
            named("app", "css", CSS, "text/css; charset=utf-8"),
            named("app", "js", JS, "text/javascript; charset=utf-8"),
        ]
    })
}

/// `/static/app.<hash>.css`
pub(crate) fn css_path() -> String {
    format!("/static/{}", assets()[0].name)
}

/// `/static/app.<hash>.js`
pub(crate) fn js_path() -> String {
    format!("/static/{}", assets()[1].name)
}

/// `GET /favicon.svg` and `/favicon.ico` (which browsers ask for on their
/// own): the site's icon, as SVG, cached for a day.
pub(crate) async fn icon() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("image/svg+xml")
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(86_400),
        ]))
        .insert_header(("x-content-type-options", "nosniff"))
        .body(ICON)
}

/// `GET /app/manifest.webmanifest`: what a phone needs to keep the inbox
/// on its home screen as an app of its own (iOS gives Web Push only to
/// those).
pub(crate) async fn manifest() -> HttpResponse {
    let manifest = serde_json::json!({
        "name": "reviewloop",
        "short_name": "reviewloop",
        "start_url": "/app",
        "scope": "/app/",
        "display": "standalone",
        "background_color": "#f4f5f7",
        "theme_color": "#2b59d1",
    });
    HttpResponse::Ok()
        .content_type("application/manifest+json")
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .body(manifest.to_string())
}

/// `GET /app/sw.js`: the service worker that shows pushed notifications.
/// Its address is fixed (its scope is `/app/`), so it is revalidated on
/// every load rather than named after its hash.
pub(crate) async fn service_worker() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/javascript; charset=utf-8")
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .insert_header(("x-content-type-options", "nosniff"))
        .body(SERVICE_WORKER)
}

pub(crate) async fn serve(name: web::Path<String>) -> Result<HttpResponse, PageError> {
    let asset = assets()
        .iter()
        .find(|a| a.name == *name)
        .ok_or_else(|| PageError::NotFound("No such file".into()))?;
    Ok(HttpResponse::Ok()
        .content_type(asset.content_type)
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(31_536_000),
            CacheDirective::Extension("immutable".into(), None),
        ]))
        .insert_header(("x-content-type-options", "nosniff"))
        .body(asset.body))
}
