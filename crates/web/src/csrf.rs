//! Forms that change state are accepted only from this site's own pages:
//! each carries a token the server gave that page (the session's, or the
//! form cookie's before sign-in), and a browser's `Origin` (or `Referer`)
//! must name this site.

use actix_web::dev::Payload;
use actix_web::http::header::{HOST, ORIGIN, REFERER};
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;

use crate::error::PageError;
use crate::form::FormData;
use reviewloop_service::same_token;

use crate::session::{state, Person, FORM_COOKIE};

/// The form field that carries the token.
pub(crate) const FIELD: &str = "csrf";

fn authority(url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// Whether the browser says the form came from this site. Browsers send
/// `Origin` on every POST; without it (and without `Referer`) the token
/// alone decides.
pub(crate) fn same_origin(req: &HttpRequest, public_url: &str) -> bool {
    let headers = req.headers();
    let Some(source) = headers
        .get(ORIGIN)
        .or_else(|| headers.get(REFERER))
        .and_then(|v| v.to_str().ok())
    else {
        return true;
    };
    let Some(source) = url::Url::parse(source).ok().as_ref().and_then(authority) else {
        return false;
    };
    let host = headers.get(HOST).and_then(|v| v.to_str().ok());
    let public = url::Url::parse(public_url).ok();
    host == Some(source.as_str()) || public.as_ref().and_then(authority) == Some(source)
}

async fn read_form(bytes: Result<web::Bytes, actix_web::Error>) -> Result<FormData, PageError> {
    let bytes = bytes.map_err(|e| {
        let status = e.as_response_error().status_code();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "The form is too large"
        } else {
            "The form could not be read"
        };
        PageError::Status(status, message.into())
    })?;
    Ok(FormData::parse(&bytes))
}

/// A form a signed-in person sent from one of this site's pages.
pub(crate) struct PersonForm {
    pub person: Person,
    pub form: FormData,
}

impl FromRequest for PersonForm {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let person = Person::from_request(req, payload);
        let bytes = web::Bytes::from_request(req, payload);
        let origin_ok = state(req).map(|s| same_origin(req, &s.public_url));
        Box::pin(async move {
            let person = person.await?;
            let form = read_form(bytes.await).await?;
            if !origin_ok? || !same_token(form.text(FIELD), person.csrf()) {
                return Err(PageError::Forgery);
            }
            Ok(Self { person, form })
        })
    }
}

/// A form sent before sign-in (sign-in, sign-up, password link).
pub(crate) struct AnonForm {
    pub form: FormData,
}

impl FromRequest for AnonForm {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = web::Bytes::from_request(req, payload);
        let cookie = req.cookie(FORM_COOKIE).map(|c| c.value().to_owned());
        let origin_ok = state(req).map(|s| same_origin(req, &s.public_url));
        Box::pin(async move {
            let form = read_form(bytes.await).await?;
            let cookie = cookie.unwrap_or_default();
            if !origin_ok? || !same_token(form.text(FIELD), &cookie) {
                return Err(PageError::Forgery);
            }
            Ok(Self { form })
        })
    }
}

/// The form token of a page shown before sign-in: the one in the
/// browser's cookie, or a new one to set.
pub(crate) fn anon_token(req: &HttpRequest, fresh: impl FnOnce() -> String) -> (String, bool) {
    match req.cookie(FORM_COOKIE) {
        Some(c) if c.value().len() == 64 => (c.value().to_owned(), false),
        _ => (fresh(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "abcd"));
        assert!(!same_token("", ""));
    }

    #[test]
    fn origin_must_be_this_site() {
        let base = "https://review.example.com";
        let req = |origin: Option<&str>| {
            let mut r = TestRequest::post().insert_header((HOST, "127.0.0.1:8080"));
            if let Some(o) = origin {
                r = r.insert_header((ORIGIN, o));
            }
            r.to_http_request()
        };
        assert!(same_origin(&req(Some("http://127.0.0.1:8080")), base));
        assert!(same_origin(&req(Some("https://review.example.com")), base));
        assert!(same_origin(&req(None), base));
        assert!(!same_origin(&req(Some("https://evil.example")), base));
        assert!(!same_origin(&req(Some("null")), base));
        assert!(!same_origin(&req(Some("http://127.0.0.1:9999")), base));
    }
}
