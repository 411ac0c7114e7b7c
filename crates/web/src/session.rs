//! Who is looking at a page: the session cookie, read into a [`Person`].

use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use reviewloop_service::{Principal, WebSession, SESSION_DAYS};

use crate::error::PageError;
use crate::state::WebState;

pub(crate) use reviewloop_service::SESSION_COOKIE;
/// The cookie holding the anti-forgery token of forms shown before sign-in.
pub(crate) const FORM_COOKIE: &str = "rl_form";

pub(crate) fn state(req: &HttpRequest) -> Result<web::Data<WebState>, PageError> {
    req.app_data::<web::Data<WebState>>()
        .cloned()
        .ok_or_else(|| {
            PageError::Status(
                actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                "The application is not configured".into(),
            )
        })
}

/// A signed-in person.
#[derive(Debug, Clone)]
pub(crate) struct Person {
    pub session: WebSession,
    /// The cookie's token (to end this session at sign-out).
    pub token: String,
    /// Whether the account sends requests (owns a loop or a key): the
    /// navigation offers the owner's pages only then.
    pub sends_requests: bool,
}

impl Person {
    pub fn principal(&self) -> &Principal {
        &self.session.principal
    }

    pub fn csrf(&self) -> &str {
        &self.session.csrf_token
    }
}

async fn read_session(
    state: web::Data<WebState>,
    token: Option<String>,
) -> Result<Option<Person>, PageError> {
    let Some(token) = token else { return Ok(None) };
    let Some(session) = state.people.session(&token).await? else {
        return Ok(None);
    };
    let sends_requests = state.people.sends_requests(&session.principal).await?;
    Ok(Some(Person {
        session,
        token,
        sends_requests,
    }))
}

impl FromRequest for Person {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let token = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
        // After signing in, come back here; a form post comes back to the
        // page it was sent from instead.
        let next = if req.method() == actix_web::http::Method::GET {
            req.uri()
                .path_and_query()
                .map(|p| p.as_str().to_owned())
                .unwrap_or_else(|| "/app".into())
        } else {
            "/app".into()
        };
        Box::pin(async move {
            read_session(state?, token)
                .await?
                .ok_or(PageError::SignIn { next })
        })
    }
}

/// Someone who may or may not be signed in.
pub(crate) struct MaybePerson(pub Option<Person>);

impl FromRequest for MaybePerson {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let token = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
        Box::pin(async move { Ok(MaybePerson(read_session(state?, token).await?)) })
    }
}

/// The cookie that carries a new session's token.
pub(crate) fn session_cookie(token: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, token.to_owned())
        .path("/")
        .http_only(true)
        // Lax: a link from an email or chat opens the page signed in;
        // forms are guarded by their tokens and the Origin check.
        .same_site(SameSite::Lax)
        .secure(secure)
        .max_age(actix_web::cookie::time::Duration::days(SESSION_DAYS))
        .finish()
}

/// A cookie that removes the session cookie.
pub(crate) fn expired_session_cookie(secure: bool) -> Cookie<'static> {
    let mut cookie = session_cookie("", secure);
    cookie.make_removal();
    cookie
}

/// The anti-forgery cookie of forms shown before sign-in.
pub(crate) fn form_cookie(token: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(FORM_COOKIE, token.to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_out_of_scripts_reach_and_secure_on_https() {
        let plain = session_cookie("t", false).to_string();
        assert!(
            plain.contains("HttpOnly") && plain.contains("SameSite=Lax"),
            "{plain}"
        );
        assert!(!plain.contains("Secure"), "{plain}");
        assert!(session_cookie("t", true).to_string().contains("Secure"));
        let gone = expired_session_cookie(true).to_string();
        assert!(gone.contains("Max-Age=0"), "{gone}");
        assert!(form_cookie("t", false)
            .to_string()
            .contains("SameSite=Strict"));
    }
}
