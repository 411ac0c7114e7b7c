//! The pages, one module per area of the application.

pub(crate) mod account;
pub(crate) mod analytics;
pub(crate) mod api_docs;
pub(crate) mod auth;
pub(crate) mod inbox;
pub(crate) mod join;
pub(crate) mod keys;
pub(crate) mod loops;
pub(crate) mod one_click;
pub(crate) mod requests;
pub(crate) mod review;
pub(crate) mod reviews;
pub(crate) mod templates;
pub(crate) mod webhooks;
mod widgets;

use actix_web::HttpResponse;
use maud::{html, Markup};
use reviewloop_domain::ValidationError;
use reviewloop_service::{Failure, ServiceError};

use crate::error::PageError;

/// No page here.
pub(crate) async fn not_found() -> Result<HttpResponse, PageError> {
    Err(PageError::NotFound(
        "There is no page at this address".into(),
    ))
}

/// What went wrong with a form, to show above it. Validation errors name
/// their fields; errors that are not about the form become error pages.
pub(crate) struct Problems {
    pub messages: Vec<String>,
    pub status: actix_web::http::StatusCode,
}

impl Problems {
    pub fn none() -> Self {
        Self {
            messages: Vec::new(),
            status: actix_web::http::StatusCode::OK,
        }
    }

    pub fn one(status: actix_web::http::StatusCode, message: impl Into<String>) -> Self {
        Self {
            messages: vec![message.into()],
            status,
        }
    }

    /// The messages of a failure a person can fix in the form (invalid
    /// input, a refusal, a conflict, a wrong password, too many tries);
    /// other failures (not found, the store down) stay errors.
    pub fn from_service(error: impl Failure) -> Result<Self, PageError> {
        use actix_web::http::StatusCode;
        let error: ServiceError = error.into();
        let status = match &error {
            ServiceError::Invalid(ValidationError { errors }) => {
                return Ok(Self {
                    messages: errors.iter().map(|e| e.message.clone()).collect(),
                    status: StatusCode::BAD_REQUEST,
                })
            }
            ServiceError::Refused(_) => StatusCode::BAD_REQUEST,
            ServiceError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
            ServiceError::Conflict(_) => StatusCode::CONFLICT,
            ServiceError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ServiceError::RateLimited(status) => {
                let minutes = (status.reset_at - chrono::Utc::now()).num_minutes().max(1);
                return Ok(Self::one(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!("Too many attempts. Try again in {minutes} min."),
                ));
            }
            _ => return Err(error.into()),
        };
        Ok(Self::one(status, error.to_string()))
    }

    /// What a form that answers on the same page (no redirect) shows
    /// next: the thing made and a blank form, or the problems and the form
    /// as it was typed.
    pub fn outcome<T, E: Failure>(
        result: Result<T, E>,
        typed: &crate::form::FormData,
    ) -> Result<(Option<T>, Self, crate::form::FormData), PageError> {
        Ok(match result {
            Ok(made) => (Some(made), Self::none(), crate::form::FormData::default()),
            Err(error) => (None, Self::from_service(error)?, typed.clone()),
        })
    }

    /// The messages with the API's names of fields (`quorum.count`) put
    /// in the words the form labels them with (“Answers needed”), so a
    /// person reads about the field they see. `labels` pairs API names
    /// with labels; the longest name that starts a message wins.
    pub fn in_words_of(self, labels: &[(&str, &str)]) -> Self {
        self.reworded(|message| {
            let (name, label) = labels
                .iter()
                .filter(|(name, _)| {
                    message
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with(' '))
                })
                .max_by_key(|(name, _)| name.len())?;
            Some(format!("“{label}”{}", &message[name.len()..]))
        })
    }

    /// Each message `words` has other words for, in those.
    pub fn reworded(mut self, words: impl Fn(&str) -> Option<String>) -> Self {
        for message in &mut self.messages {
            if let Some(said) = words(message) {
                *message = said;
            }
        }
        self
    }

    pub fn show(&self) -> Markup {
        html! {
            @if !self.messages.is_empty() {
                div.problems role="alert" {
                    @for m in &self.messages { p { (m) } }
                }
            }
        }
    }
}

/// The field a confirmation page adds to the form it posts again.
pub(crate) const CONFIRMED: &str = "confirmed";

/// A page that asks before something that cannot be undone: its button
/// posts `fields` again to `action`, with [`CONFIRMED`]; works without
/// the script.
pub(crate) struct Confirmation<'a> {
    pub title: &'a str,
    pub question: Markup,
    pub action: String,
    pub fields: &'a [(&'a str, &'a str)],
    pub confirm: &'a str,
    /// Where *Cancel* goes.
    pub back: String,
}

impl Confirmation<'_> {
    pub(crate) fn page(
        self,
        person: &crate::session::Person,
        nav: crate::layout::Nav,
    ) -> HttpResponse {
        let body = html! {
            h1 { (self.title) }
            section.card.danger-zone {
                (self.question)
                form method="post" action=(self.action) {
                    (crate::layout::csrf_field(person.csrf()))
                    input type="hidden" name=(CONFIRMED) value="yes";
                    @for (name, value) in self.fields {
                        input type="hidden" name=(name) value=(value);
                    }
                    button.danger type="submit" { (self.confirm) }
                    " "
                    a.button href=(self.back) { "Cancel" }
                }
            }
        };
        crate::layout::ok(crate::layout::page(self.title, Some(person), nav, body))
    }
}
