//! `/app/templates`: the account's templates (the forms reviews are sent
//! with). A list; a new template built field by field; a template's page
//! with the same builder, the reviews sent with it, and deletion.

mod builder;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use reviewloop_domain::{Template, TemplateId, TemplateInput, TemplatePatch};
use reviewloop_service::ListReviewsInput;

use self::builder::{fields_json, in_builder_words, rows_of, rows_posted, Change, Row};
use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, csrf_field, priority_badge, Nav};
use crate::markdown::first_line;
use crate::pages::Problems;
use crate::session::Person;
use crate::state::WebState;

fn parse_id(raw: &str) -> Result<TemplateId, PageError> {
    TemplateId::parse(raw).map_err(|_| PageError::NotFound("Template not found".into()))
}

/// `GET /app/templates`
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: Person,
) -> Result<HttpResponse, PageError> {
    let templates = state.templates.list(person.principal()).await?;
    let now = Utc::now();
    let notice = match FormData::query(&req).get("done") {
        Some("deleted") => Some("The template was deleted. Reviews sent with it keep their form."),
        _ => None,
    };
    let body = html! {
        h1 { "Templates" }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        p.hint { "A template is a form: the fields a reviewer fills. Programs send reviews with it ("
            code { "POST /v1/reviews" } " with its " code { "template_id" } "); each review keeps its own copy, so changing a template never changes a review already sent." }
        p { a.button.primary href="/app/templates/new" { "New template" } }
        @if templates.is_empty() {
            p.empty { "You have no template yet." }
        } @else {
            ul.loops {
                @for t in &templates {
                    li {
                        a href={ "/app/templates/" (t.id()) } { (t.name()) }
                        span.hint {
                            " · " (t.form().fields().len()) " field" @if t.form().fields().len() != 1 { "s" }
                            " · changed " (layout::time(t.updated_at(), now))
                        }
                        @if let Some(d) = t.description() { br; span.hint { (d) } }
                    }
                }
            }
        }
    };
    Ok(layout::ok(layout::page(
        "Templates",
        Some(&person),
        Nav::Templates,
        body,
    )))
}

/// What the builder page shows: the template (when it exists), the
/// name, description and rows as typed, and what went wrong.
struct Builder<'a> {
    template: Option<&'a Template>,
    name: &'a str,
    description: &'a str,
    rows: &'a [Row],
    problems: Problems,
    notice: Option<&'a str>,
}

fn builder_page(state_reviews: Markup, person: &Person, b: Builder<'_>) -> HttpResponse {
    let (title, action) = match b.template {
        Some(t) => (t.name().to_owned(), format!("/app/templates/{}", t.id())),
        None => ("New template".to_owned(), "/app/templates/new".to_owned()),
    };
    let body = html! {
        nav.crumbs aria-label="Templates" { a href="/app/templates" { "← Templates" } }
        h1 { (title) }
        @if let Some(n) = b.notice { p.notice role="status" { (n) } }
        @if let Some(t) = b.template {
            p.hint { "Its id, for " code { "POST /v1/reviews" } ": " code { (t.id()) } }
        }
        section.card #template-form {
            (b.problems.show())
            form.template-builder method="post" action=(action) {
                (csrf_field(person.csrf()))
                label { "Name" input type="text" name="name" value=(b.name) maxlength="100" required; }
                label { "Description " small { "(optional)" }
                    textarea name="description" rows="2" maxlength="500" { (b.description) } }
                h2 { "Fields" }
                p.hint { "Shown to the reviewer in this order. A field that shows content displays the review's text, or the entry of its " code { "content.metadata" } " under the field's name." }
                (builder::render(b.rows))
                div.actions {
                    button.primary type="submit" name="do" value="save" {
                        @if b.template.is_some() { "Save template" } @else { "Create template" }
                    }
                }
            }
        }
        (state_reviews)
        @if let Some(t) = b.template {
            section.card.danger-zone #delete {
                h2 { "Delete this template" }
                p { "Programs can no longer send reviews with it. Reviews sent with it keep their own copy of its fields." }
                form method="post" action={ "/app/templates/" (t.id()) "/delete" } {
                    (csrf_field(person.csrf()))
                    button.danger type="submit" { "Delete template" }
                }
            }
        }
    };
    let title = match b.template {
        Some(t) => format!("{} · template", t.name()),
        None => "New template".to_owned(),
    };
    layout::respond(
        b.problems.status,
        layout::page(&title, Some(person), Nav::Templates, body),
    )
}

/// The builder drawn again after a post, with what was typed and what is
/// wrong (for a new template, or for `template` with its `reviews`).
fn posted_again(
    reviews: Markup,
    person: &Person,
    template: Option<&Template>,
    f: &FormData,
    rows: &[Row],
    problems: Problems,
) -> HttpResponse {
    builder_page(
        reviews,
        person,
        Builder {
            template,
            name: f.text("name"),
            description: f.text("description"),
            rows,
            problems,
            notice: None,
        },
    )
}

/// The latest reviews sent with `template`, linking to each.
async fn reviews_using(
    state: &WebState,
    person: &Person,
    template: &Template,
) -> Result<Markup, PageError> {
    let input = ListReviewsInput {
        role: Some("sent".into()),
        template_id: Some(template.id().to_string()),
        limit: Some(25),
        ..ListReviewsInput::default()
    };
    let (page, _, _) = state.reviews.list(person.principal(), input).await?;
    let now = Utc::now();
    Ok(html! {
        section.card #reviews {
            h2 { "Reviews sent with it" }
            @if page.reviews.is_empty() {
                p.empty { "No review has been sent with this template yet." }
            } @else {
                p.hint { (page.total) " in all" @if page.total > 25 { "; the latest 25:" } }
                ol.requests {
                    @for review in &page.reviews {
                        @let r = review.record();
                        li data-priority=(r.priority.as_str()) {
                            a href={ "/app/reviews/" (r.id) } {
                                span.row-top { (priority_badge(r.priority)) span.kind { (r.status.as_str()) } }
                                span.title { (r.content_text.as_deref().map(|t| first_line(t, 120)).filter(|t| !t.is_empty()).unwrap_or_else(|| "A review".into())) }
                                span.when { "sent " (layout::time(r.created_at, now)) }
                            }
                        }
                    }
                }
            }
        }
    })
}

/// `GET /app/templates/new`
pub(crate) async fn new_page(person: Person) -> HttpResponse {
    let rows = builder::first_rows();
    builder_page(
        html! {},
        &person,
        Builder {
            template: None,
            name: "",
            description: "",
            rows: &rows,
            problems: Problems::none(),
            notice: None,
        },
    )
}

/// The builder's problems: the rows that do not read, or the service's
/// refusal in the builder's words.
fn refused(messages: Vec<String>, from_rows: &[usize]) -> Problems {
    Problems {
        messages: messages
            .iter()
            .map(|m| in_builder_words(m, from_rows))
            .collect(),
        status: StatusCode::BAD_REQUEST,
    }
}

/// What a post of the builder asks for: the builder again with a row more
/// or less, or the template's fields to save.
enum Posted {
    Again(Vec<Row>, Problems),
    Save(Vec<Row>, TemplateFields),
}

/// A template's name, description and fields as the builder posted them.
struct TemplateFields {
    name: String,
    description: Option<String>,
    fields: serde_json::Value,
    from_rows: Vec<usize>,
}

fn read_builder(f: &FormData) -> Posted {
    let mut rows = rows_posted(f);
    if let Some(change) = Change::of(f) {
        change.apply(&mut rows);
        return Posted::Again(rows, Problems::none());
    }
    match fields_json(&rows) {
        Ok((fields, from_rows)) => {
            let description = f.text("description").trim();
            let posted = TemplateFields {
                name: f.text("name").trim().to_owned(),
                description: (!description.is_empty()).then(|| description.to_owned()),
                fields,
                from_rows,
            };
            Posted::Save(rows, posted)
        }
        Err(problems) => Posted::Again(rows, refused(problems, &[])),
    }
}

/// `POST /app/templates/new`: a row added or removed, or the template made.
pub(crate) async fn create(
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let (person, f) = (&posted.person, &posted.form);
    let again = |rows: &[Row], problems| posted_again(html! {}, person, None, f, rows, problems);
    let (rows, fields) = match read_builder(f) {
        Posted::Again(rows, problems) => return Ok(again(&rows, problems)),
        Posted::Save(rows, fields) => (rows, fields),
    };
    let input = TemplateInput {
        name: Some(fields.name),
        description: fields.description,
        fields: Some(fields.fields),
    };
    match state.templates.create(person.principal(), input).await {
        Ok(made) => Ok(layout::redirect(&format!(
            "/app/templates/{}?done=created",
            made.id()
        ))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            Ok(again(&rows, refused(problems.messages, &fields.from_rows)))
        }
    }
}

/// `GET /app/templates/{id}`
pub(crate) async fn page(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&id)?;
    let template = state.templates.get(person.principal(), &id).await?;
    let rows = rows_of(template.form());
    let notice = match FormData::query(&req).get("done") {
        Some("created") => Some("Template created."),
        Some("saved") => Some("Template saved. Reviews sent from now on use these fields."),
        _ => None,
    };
    let reviews = reviews_using(&state, &person, &template).await?;
    Ok(builder_page(
        reviews,
        &person,
        Builder {
            template: Some(&template),
            name: template.name(),
            description: template.description().unwrap_or_default(),
            rows: &rows,
            problems: Problems::none(),
            notice,
        },
    ))
}

/// `POST /app/templates/{id}`: a row added or removed, or the changes saved.
pub(crate) async fn save(
    state: web::Data<WebState>,
    id: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&id)?;
    let (person, f) = (&posted.person, &posted.form);
    let template = state.templates.get(person.principal(), &id).await?;
    let reviews = reviews_using(&state, person, &template).await?;
    let again = |rows: &[Row], problems| {
        posted_again(reviews.clone(), person, Some(&template), f, rows, problems)
    };
    let (rows, fields) = match read_builder(f) {
        Posted::Again(rows, problems) => return Ok(again(&rows, problems)),
        Posted::Save(rows, fields) => (rows, fields),
    };
    let patch = TemplatePatch {
        name: Some(fields.name),
        description: Some(fields.description),
        fields: Some(fields.fields),
    };
    match state.templates.update(person.principal(), &id, patch).await {
        Ok(_) => Ok(layout::redirect(&format!("/app/templates/{id}?done=saved"))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            Ok(again(&rows, refused(problems.messages, &fields.from_rows)))
        }
    }
}

/// `POST /app/templates/{id}/delete`: asks first, then deletes.
pub(crate) async fn delete(
    state: web::Data<WebState>,
    id: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&id)?;
    let person = &posted.person;
    if !posted.form.checked(crate::pages::CONFIRMED) {
        // Seen only by its owner: anyone else's id is not found.
        let template = state.templates.get(person.principal(), &id).await?;
        let question = html! {
            p { "Delete the template " strong { (template.name()) } "? Programs can no longer send reviews with it; reviews sent with it keep their own copy of its fields." }
        };
        let asked = crate::pages::Confirmation {
            title: "Delete this template?",
            question,
            action: format!("/app/templates/{id}/delete"),
            fields: &[],
            confirm: "Delete template",
            back: format!("/app/templates/{id}"),
        };
        return Ok(asked.page(person, Nav::Templates));
    }
    state.templates.delete(person.principal(), &id).await?;
    Ok(layout::redirect("/app/templates?done=deleted"))
}
