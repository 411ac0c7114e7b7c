//! What an owner or member posts from a loop's page, one handler per
//! action. Each calls one service and either goes back to the page with a
//! notice (`?done=`) or shows the page again with what was posted and
//! what is wrong with it.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use maud::html;
use reviewloop_domain::{LoopId, RequestInput, UserId};
use reviewloop_service::{Failure, LoopPatch, Routing};
use serde_json::Value;

use super::{
    escalation_of_form, json_field, loop_page, parse_id, posted_rules, quorum_of_form, LoopForm,
    RulesDraft, Section, Shown,
};
use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout;
use crate::pages::Problems;
use crate::session::Person;
use crate::state::WebState;

/// Back to the form's part of the loop's page with `done` as its notice,
/// or that part again with the service's refusal beside the form, in the
/// form's words.
async fn finish(
    state: &WebState,
    posted: &PersonForm,
    id: &LoopId,
    form: LoopForm,
    result: Result<&str, impl Failure>,
) -> Result<HttpResponse, PageError> {
    match result {
        Ok(done) => Ok(layout::redirect(&format!(
            "{}?done={done}",
            form.section().path(id)
        ))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let shown = Shown::refused(form, problems, &posted.form);
            rerender(state, &posted.person, id, form, shown).await
        }
    }
}

/// `POST /app/loops/{id}/edit`: name, description, icon, Slack, reminders,
/// quorum and escalation.
pub(crate) async fn edit(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let f = &posted.form;
    let description = f.get("description").map(str::trim);
    let patch = LoopPatch {
        name: Some(f.text("name").to_owned()),
        description: Some(description.filter(|d| !d.is_empty()).map(str::to_owned)),
        icon: f
            .get("icon")
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(str::to_owned),
        // Blank stops the posts.
        slack_webhook_url: f
            .get("slack_webhook_url")
            .map(|u| Some(u.trim().to_owned())),
        slack_app: slack_app_of_form(f),
        reminders: Some(f.checked("reminders")),
        quorum: Some(quorum_of_form(f)),
        escalation: Some(escalation_of_form(f)),
        rules: None,
        coalesce: Some(super::repeats::window_of_form(f, "coalesce_minutes")),
        reuse_answers: Some(super::repeats::window_of_form(f, "reuse_minutes")),
        assignment: Some(super::repeats::assignment_of_form(f)),
    };
    let result = state
        .loops
        .update(posted.person.principal(), &id, patch)
        .await
        .map(|_| "saved");
    finish(&state, &posted, &id, LoopForm::Edit, result).await
}

/// The Slack app as the edit form gives it: removed, replaced (all three
/// fields; the service names what is missing or wrong), or, when every
/// field is blank, left as it is, since its secrets are never shown back.
fn slack_app_of_form(f: &crate::form::FormData) -> Option<serde_json::Value> {
    if f.checked("slack_app_remove") {
        return Some(serde_json::Value::Null);
    }
    let field = |name| f.text(name).trim().to_owned();
    let (token, secret, channel) = (
        field("slack_bot_token"),
        field("slack_signing_secret"),
        field("slack_channel"),
    );
    if token.is_empty() && secret.is_empty() && channel.is_empty() {
        return None;
    }
    Some(serde_json::json!({
        "bot_token": token,
        "signing_secret": secret,
        "channel": channel,
    }))
}

/// `POST /app/loops/{id}/rules`: saves the rules, or with `do=test` tries
/// them on the sample request and saves nothing. The rules are the
/// editor's JSON when it was changed, else its form's; either way the page
/// drawn again shows them in both views.
pub(crate) async fn rules(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let (person, f) = (&posted.person, &posted.form);
    let rules = match posted_rules(f) {
        Ok(rules) => rules,
        Err(problems) => {
            let draft = RulesDraft::unread(f.text("rules"), f);
            let again = Again {
                state: &state,
                person,
                id: &id,
                f,
                draft: &draft,
            };
            return again.show(problems, None).await;
        }
    };
    let draft = RulesDraft::of(&rules);
    let again = Again {
        state: &state,
        person,
        id: &id,
        f,
        draft: &draft,
    };
    if f.get("do") == Some("test") {
        return test_rules(&again, rules).await;
    }
    let patch = LoopPatch {
        rules: Some(rules),
        ..LoopPatch::default()
    };
    match state.loops.update(person.principal(), &id, patch).await {
        Ok(_) => Ok(layout::redirect(&format!(
            "{}?done=rules",
            Section::Rules.path(&id)
        ))),
        Err(error) => again.show(Problems::from_service(error)?, None).await,
    }
}

/// The rules editor drawn again after a post.
struct Again<'a> {
    state: &'a WebState,
    person: &'a Person,
    id: &'a LoopId,
    f: &'a FormData,
    draft: &'a RulesDraft,
}

impl Again<'_> {
    async fn show(
        &self,
        problems: Problems,
        tested: Option<&Routing>,
    ) -> Result<HttpResponse, PageError> {
        let shown = Shown {
            tested,
            draft: Some(self.draft),
            ..Shown::refused(LoopForm::Rules, problems, self.f)
        };
        rerender(self.state, self.person, self.id, LoopForm::Rules, shown).await
    }
}

/// The rules as posted, tried on the sample request: the page again, saying
/// what would happen.
async fn test_rules(again: &Again<'_>, rules: Value) -> Result<HttpResponse, PageError> {
    let sample = match json_field(again.f, "sample", "The sample request") {
        Ok(Value::Object(sample)) => sample,
        Ok(_) => {
            let problems = Problems::one(
                StatusCode::BAD_REQUEST,
                "The sample request must be a JSON object, as a request body is",
            );
            return again.show(problems, None).await;
        }
        Err(problems) => return again.show(problems, None).await,
    };
    let input = RequestInput::from_json(&sample);
    match again
        .state
        .requests
        .test_rules(again.person.principal(), again.id, input, Some(rules))
        .await
    {
        Ok(routing) => again.show(Problems::none(), Some(&routing)).await,
        Err(error) => again.show(Problems::from_service(error)?, None).await,
    }
}

/// `POST /app/loops/{id}/notify`: which new requests the member is told of.
pub(crate) async fn notify(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state
        .loops
        .set_notify(posted.person.principal(), &id, posted.form.get("notify"))
        .await
        .map(|_| "notify");
    finish(&state, &posted, &id, LoopForm::Notify, result).await
}

/// `POST /app/loops/{id}/regenerate`: a new invite code.
pub(crate) async fn regenerate(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state
        .loops
        .regenerate_code(posted.person.principal(), &id)
        .await
        .map(|_| "regenerated");
    finish(&state, &posted, &id, LoopForm::Regenerate, result).await
}

/// `POST /app/loops/{id}/invite`: an invitation by email.
pub(crate) async fn invite(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state
        .loops
        .invite(posted.person.principal(), &id, posted.form.get("email"))
        .await
        .map(|_| "invited");
    finish(&state, &posted, &id, LoopForm::Invite, result).await
}

/// `POST /app/loops/{id}/remove`: a member out of the loop.
pub(crate) async fn remove(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let user = UserId::parse(posted.form.text("user_id"))
        .map_err(|_| PageError::Status(StatusCode::BAD_REQUEST, "No member was chosen".into()))?;
    let result = state
        .loops
        .remove_member(posted.person.principal(), &id, &user)
        .await
        .map(|_| "removed");
    finish(&state, &posted, &id, LoopForm::Remove, result).await
}

/// `POST /app/loops/{id}/delete`: the loop, and with `force` its open
/// requests too; then the list of loops.
pub(crate) async fn delete(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let force = posted.form.checked("force");
    if !posted.form.checked(crate::pages::CONFIRMED) {
        // Seen only by those who may see the loop: others get a 404.
        let lp = state.loops.get(posted.person.principal(), &id).await?;
        let question = html! {
            p { "Delete the loop " strong { (lp.name.as_str()) } "? Its members leave it, its invite code stops working, and its finished requests go with it." }
            @if force { p { strong { "Its pending and claimed requests are cancelled too." } } }
            @else { p.hint { "If it still has pending or claimed requests, it is not deleted: go back and tick “Also cancel”." } }
        };
        let fields: &[(&str, &str)] = if force { &[("force", "true")] } else { &[] };
        let asked = crate::pages::Confirmation {
            title: "Delete this loop?",
            question,
            action: format!("/app/loops/{id}/delete"),
            fields,
            confirm: "Delete loop",
            back: Section::Delete.path(&id),
        };
        return Ok(asked.page(&posted.person, crate::layout::Nav::Loops));
    }
    match state
        .loops
        .delete(posted.person.principal(), &id, force)
        .await
    {
        Ok(_) => Ok(layout::redirect("/app/loops?done=deleted")),
        Err(error) => finish(&state, &posted, &id, LoopForm::Delete, Err(error)).await,
    }
}

/// The form's part of the loop's page again, with what was posted, its
/// problems in the form's words and any rules test result.
async fn rerender(
    state: &WebState,
    person: &Person,
    id: &LoopId,
    form: LoopForm,
    shown: Shown<'_>,
) -> Result<HttpResponse, PageError> {
    let lp = state.loops.get(person.principal(), id).await?;
    let shown = Shown {
        problems: match form {
            LoopForm::Rules => shown.problems.reworded(super::rules_form::in_rule_words),
            _ => shown.problems.in_words_of(form.labels()),
        },
        form: Some(form),
        ..shown
    };
    loop_page(state, person, &lp, form.section(), shown).await
}
