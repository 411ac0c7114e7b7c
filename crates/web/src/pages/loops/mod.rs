//! `/app/loops`: the loops I own and the ones I review in; a loop's page
//! with its invite code and QR code shown large for scanning, its members,
//! invitations by email, and (for its owner) edit, new code and delete.

mod actions;
mod repeats;
mod rules_form;

pub(crate) use actions::{delete, edit, invite, notify, regenerate, remove, rules};

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use base64::Engine as _;
use maud::{html, Markup};
use reviewloop_domain::MAX_QUORUM;
use reviewloop_domain::{Loop, LoopId, MemberStatus, NotifyLevel, QuorumRule};
use reviewloop_service::Routing;
use serde_json::{json, Value};

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, csrf_field, Nav};
use crate::pages::Problems;
use crate::session::Person;
use crate::state::WebState;

fn parse_id(raw: &str) -> Result<LoopId, PageError> {
    LoopId::parse(raw).map_err(|_| PageError::NotFound("Loop not found".into()))
}

fn loop_fields(previous: &FormData, lp: Option<&Loop>) -> Markup {
    let name = previous
        .get("name")
        .map(str::to_owned)
        .or_else(|| lp.map(|l| l.name.as_str().to_owned()))
        .unwrap_or_default();
    let description = previous
        .get("description")
        .map(str::to_owned)
        .or_else(|| lp.and_then(|l| l.description.as_ref().map(|d| d.as_str().to_owned())))
        .unwrap_or_default();
    let icon = previous
        .get("icon")
        .map(str::to_owned)
        .or_else(|| lp.map(|l| l.icon.as_str().to_owned()))
        .unwrap_or_default();
    html! {
        label { "Name" input type="text" name="name" value=(name) maxlength="100" required; }
        label { "Description " small { "(optional)" }
            textarea name="description" rows="2" maxlength="500" { (description) } }
        label { "Icon " small { "(an emoji, optional)" }
            input type="text" name="icon" value=(icon) maxlength="10" placeholder="📋"; }
    }
}

/// The choices a member has, in the words the page shows.
const NOTIFY_CHOICES: [(NotifyLevel, &str); 3] = [
    (NotifyLevel::All, "Every request"),
    (NotifyLevel::Urgent, "High and critical requests only"),
    (NotifyLevel::Off, "Nothing: I look in my inbox"),
];

/// Where the member's notifications go, so the choice means something.
fn notify_hint(email: bool, slack: bool, reminders: bool) -> &'static str {
    match (email, slack) {
        (true, _) if reminders => "New requests, and reminders of those nobody answered, are emailed to you. Your inbox always shows them.",
        (true, _) => "New requests are emailed to you. Your inbox always shows them.",
        (false, true) => "This server sends no email; the loop posts new requests to Slack, and your inbox always shows them. Your choice applies to email once it is set up.",
        (false, false) => "This server sends no email yet; your inbox always shows new requests. Your choice applies once email is set up.",
    }
}

fn list_page(
    person: &Person,
    owned: &[Loop],
    joined: &[Loop],
    problems: &Problems,
    previous: &FormData,
    notice: Option<&str>,
) -> HttpResponse {
    let me = person.principal().user_id;
    let body = html! {
        h1 { "Loops" }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        p.hint { "A loop is a group of reviewers. Requests sent to a loop go to all of its active members." }
        section.card {
            h2 { "Your loops" }
            @if owned.is_empty() { p.empty { "You have not created a loop yet." } }
            ul.loops {
                @for lp in owned {
                    li { a href={ "/app/loops/" (lp.id) } { span.icon { (lp.icon.as_str()) } " " (lp.name.as_str()) }
                        span.hint { " · " (lp.active_count()) " active, " (lp.pending_count()) " invited" } }
                }
            }
        }
        @let reviewing: Vec<&Loop> = joined.iter().filter(|l| l.creator_id != me).collect();
        @if !reviewing.is_empty() {
            section.card {
                h2 { "Loops you review in" }
                ul.loops {
                    @for lp in reviewing {
                        li { a href={ "/app/loops/" (lp.id) } { span.icon { (lp.icon.as_str()) } " " (lp.name.as_str()) } }
                    }
                }
            }
        }
        section.card #new-loop {
            h2 { "New loop" }
            (problems.show())
            form method="post" action="/app/loops" {
                (csrf_field(person.csrf()))
                (loop_fields(previous, None))
                button.primary type="submit" { "Create loop" }
            }
        }
    };
    layout::respond(
        problems.status,
        layout::page("Loops", Some(person), Nav::Loops, body),
    )
}

/// `GET /app/loops`
pub(crate) async fn list(
    state: web::Data<WebState>,
    person: Person,
    req: actix_web::HttpRequest,
) -> Result<HttpResponse, PageError> {
    let owned = state.loops.list(person.principal()).await?;
    let joined = state.loops.joined(person.principal()).await?;
    let notice = match FormData::query(&req).get("done") {
        Some("deleted") => Some("The loop was deleted."),
        _ => None,
    };
    Ok(list_page(
        &person,
        &owned,
        &joined,
        &Problems::none(),
        &FormData::default(),
        notice,
    ))
}

/// `POST /app/loops`
pub(crate) async fn create(
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let (person, f) = (&posted.person, &posted.form);
    let optional = |name: &str| f.get(name).map(str::trim).filter(|v| !v.is_empty());
    match state
        .loops
        .create(
            person.principal(),
            Some(f.text("name")),
            optional("description"),
            optional("icon"),
            None,
        )
        .await
    {
        Ok(created) => Ok(layout::redirect(&format!("/app/loops/{}", created.lp.id))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let owned = state.loops.list(person.principal()).await?;
            let joined = state.loops.joined(person.principal()).await?;
            Ok(list_page(person, &owned, &joined, &problems, f, None))
        }
    }
}

/// The parts of a loop's page, each a page of its own so that what a form
/// says after it was posted is beside it: invite and members (what
/// members see too), then the owner's settings, rules and deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Members,
    Settings,
    Rules,
    Delete,
}

impl Section {
    const ALL: [(Section, &'static str); 4] = [
        (Section::Members, "Members"),
        (Section::Settings, "Settings"),
        (Section::Rules, "Rules"),
        (Section::Delete, "Delete"),
    ];

    fn path(self, id: &LoopId) -> String {
        match self {
            Section::Members => format!("/app/loops/{id}"),
            Section::Settings => format!("/app/loops/{id}/settings"),
            Section::Rules => format!("/app/loops/{id}/rules"),
            Section::Delete => format!("/app/loops/{id}/delete"),
        }
    }

    fn label(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("", |(_, label)| label)
    }
}

/// The forms of a loop's pages: which one a refusal belongs beside, and
/// the words its fields have on the page for the API's names in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoopForm {
    Regenerate,
    Notify,
    Invite,
    Remove,
    Edit,
    Rules,
    Delete,
}

impl LoopForm {
    pub(crate) fn section(self) -> Section {
        match self {
            Self::Regenerate | Self::Notify | Self::Invite | Self::Remove => Section::Members,
            Self::Edit => Section::Settings,
            Self::Rules => Section::Rules,
            Self::Delete => Section::Delete,
        }
    }

    /// The API's names of this form's fields, as the form labels them.
    /// (The rules are JSON, written in the API's own names.)
    pub(crate) fn labels(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Edit => &[
                ("name", "Name"),
                ("description", "Description"),
                ("icon", "Icon"),
                ("slack_webhook_url", "Slack incoming webhook"),
                ("slack_app.bot_token", "Bot token"),
                ("slack_app.signing_secret", "Signing secret"),
                ("slack_app.channel", "Channel"),
                ("slack_app", "Slack app"),
                ("quorum.count", "Answers needed"),
                ("quorum.rule", "Decided when"),
                ("quorum", "Quorum of new requests"),
                ("escalation.to_loop_id", "Also send to"),
                (
                    "escalation.after_seconds",
                    "After this many minutes unclaimed",
                ),
                ("escalation", "Escalation"),
                (
                    "coalesce.window_seconds",
                    "Join a repeated question for this many minutes",
                ),
                ("coalesce", "Repeated questions"),
                (
                    "reuse_answers.window_seconds",
                    "Reuse an answer given within this many minutes",
                ),
                ("reuse_answers", "Reused answers"),
                ("assignment.strategy", "Offer each request to"),
                (
                    "assignment.per_request",
                    "How many members each request is offered to",
                ),
                (
                    "assignment.reassign_after_seconds",
                    "Offer it to the next ones after this many minutes unclaimed",
                ),
                ("assignment", "Who is asked"),
            ],
            Self::Invite => &[("email", "Invite by email")],
            Self::Notify => &[("notify", "Tell me about")],
            _ => &[],
        }
    }
}

/// What a loop's page shows besides the loop: what was posted and what is
/// wrong with it (beside `form`), a notice, a rules test's result.
pub(crate) struct Shown<'a> {
    pub problems: Problems,
    pub form: Option<LoopForm>,
    pub previous: &'a FormData,
    pub notice: Option<&'a str>,
    pub tested: Option<&'a Routing>,
    /// The rules as last posted, for both views of the rules editor.
    pub draft: Option<&'a RulesDraft>,
}

/// Rules being edited, as the editor's two views show them: the JSON text
/// and the form's rows, drawn from the same rules.
pub(crate) struct RulesDraft {
    json: String,
    rows: Vec<rules_form::RuleRow>,
}

impl RulesDraft {
    /// Both views of `rules`: the JSON laid out as saved rules are when
    /// they read as rules, else as it is.
    pub(crate) fn of(rules: &Value) -> Self {
        let json = match reviewloop_domain::Rules::parse(Some(rules)) {
            Ok(parsed) => rules_text(&parsed),
            Err(_) => serde_json::to_string_pretty(rules).unwrap_or_default(),
        };
        Self {
            json,
            rows: rules_form::rows_of(rules),
        }
    }

    /// JSON that does not read, kept as typed beside the form as posted.
    pub(crate) fn unread(json: &str, f: &FormData) -> Self {
        Self {
            json: json.to_owned(),
            rows: rules_form::rows_posted(f),
        }
    }
}

/// The rules a post of the editor means: its JSON when that was edited
/// (it differs from the copy the page was drawn with, or there is no
/// form), else its form's rows.
pub(crate) fn posted_rules(f: &FormData) -> Result<Value, Problems> {
    let json_edited = f.get("rule_count").is_none()
        || !rules_form::same_text(f.text("rules"), f.text("rules_was"));
    if json_edited {
        json_field(f, "rules", "Rules")
    } else {
        Ok(rules_form::json_of(&rules_form::rows_posted(f)))
    }
}

impl<'a> Shown<'a> {
    /// A form's part again after it was refused, with what was posted.
    pub(crate) fn refused(form: LoopForm, problems: Problems, previous: &'a FormData) -> Self {
        Self {
            problems,
            form: Some(form),
            previous,
            notice: None,
            tested: None,
            draft: None,
        }
    }

    /// The problems, if they belong beside `form`.
    fn beside(&self, form: LoopForm) -> Markup {
        if self.form == Some(form) {
            self.problems.show()
        } else {
            html! {}
        }
    }
}

async fn loop_page(
    state: &WebState,
    person: &Person,
    lp: &Loop,
    section: Section,
    shown: Shown<'_>,
) -> Result<HttpResponse, PageError> {
    let owner = lp.is_creator(&person.principal().user_id);
    if !owner && section != Section::Members {
        return Err(PageError::Status(
            StatusCode::FORBIDDEN,
            "Only the loop's owner can change its settings, rules or existence.".into(),
        ));
    }
    // The loops a request of this one may escalate or be routed to.
    let others: Vec<Loop> = if owner && matches!(section, Section::Settings | Section::Rules) {
        let mut usable = state.loops.list(person.principal()).await?;
        usable.extend(state.loops.joined(person.principal()).await?);
        usable.retain(|o| o.id != lp.id);
        usable.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()).then(a.id.cmp(&b.id)));
        usable.dedup_by_key(|o| o.id);
        usable
    } else {
        Vec::new()
    };
    let content = match section {
        Section::Members => members_section(state, person, lp, owner, &shown).await?,
        Section::Settings => settings_section(person, lp, &others, &shown),
        Section::Rules => rules_card(person, lp, &others, &shown),
        Section::Delete => delete_section(person, lp, &shown),
    };
    let body = html! {
        nav.crumbs aria-label="Loops" { a href="/app/loops" { "← Loops" } }
        h1 { span.icon { (lp.icon.as_str()) } " " (lp.name.as_str()) }
        @if let Some(d) = &lp.description { p { (d.as_str()) } }
        @if owner {
            nav.tabs aria-label="This loop" {
                @for (s, label) in Section::ALL {
                    a href=(s.path(&lp.id)) aria-current=[(s == section).then_some("page")] { (label) }
                }
            }
        }
        @if let Some(n) = shown.notice { p.notice role="status" { (n) } }
        // Said beside its form when the form is on this page; else here.
        @if !shown.form.is_some_and(|f| drawn(f, lp, person, owner)) { (shown.problems.show()) }
        (content)
    };
    let title = match section {
        Section::Members => lp.name.as_str().to_owned(),
        other => format!("{} · {}", other.label(), lp.name.as_str()),
    };
    Ok(layout::respond(
        shown.problems.status,
        layout::page(&title, Some(person), Nav::Loops, body),
    ))
}

/// Whether `form` is drawn for this person (so its problems go beside it).
fn drawn(form: LoopForm, lp: &Loop, person: &Person, owner: bool) -> bool {
    match form {
        LoopForm::Notify => lp
            .member(&person.principal().user_id)
            .is_some_and(|m| m.status == MemberStatus::Active),
        LoopForm::Regenerate | LoopForm::Invite | LoopForm::Remove => owner,
        LoopForm::Edit | LoopForm::Rules | LoopForm::Delete => owner,
    }
}

/// The invite code and QR code, the member's own notifications, the
/// members and (for the owner) an invitation by email.
async fn members_section(
    state: &WebState,
    person: &Person,
    lp: &Loop,
    owner: bool,
    shown: &Shown<'_>,
) -> Result<Markup, PageError> {
    let join_url = state.loops.join_url(&lp.invite_code);
    let qr = state.loops.qr_png(lp.invite_code.as_str()).await?;
    let qr = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(qr)
    );
    let action = |what: &str| format!("/app/loops/{}/{what}", lp.id);
    Ok(html! {
        section.card.invite #invite {
            h2 { "Invite reviewers" }
            p { "Reviewers scan this code with their phone, or open the link, to join." }
            img.qr src=(qr) alt={ "QR code for " (join_url) } width="300" height="300";
            p.code { "Invite code " strong.invite-code { (lp.invite_code.as_str()) } }
            p { input.copy-source #join-url type="text" readonly value=(join_url) aria-label="Join link";
                button.secondary type="button" data-copy="join-url" hidden { "Copy link" } }
            @if owner {
                (shown.beside(LoopForm::Regenerate))
                form method="post" action=(action("regenerate")) {
                    (csrf_field(person.csrf()))
                    button.secondary type="submit" { "Make a new code" }
                    span.hint { " The old code and link stop working." }
                }
            }
        }
        @if let Some(me) = lp.member(&person.principal().user_id).filter(|m| m.status == MemberStatus::Active) {
            section.card #notifications {
                h2 { "Your notifications" }
                p.hint { (notify_hint(state.email_enabled, lp.slack_webhook_url.is_some() || lp.slack_app.is_some(), lp.reminders)) }
                (shown.beside(LoopForm::Notify))
                form method="post" action=(action("notify")) {
                    (csrf_field(person.csrf()))
                    fieldset.preference {
                        legend { "Tell me about" }
                        @for (level, label) in NOTIFY_CHOICES {
                            label.check {
                                input type="radio" name="notify" value=(level.as_str()) checked[me.notify == level];
                                " " (label)
                            }
                        }
                    }
                    button.secondary type="submit" { "Save preference" }
                }
            }
        }
        section.card #members {
            h2 { "Members" }
            (shown.beside(LoopForm::Remove))
            div.table-scroll {
                table.members {
                    thead { tr { th { "Email" } th { "Status" } @if owner { th { span.visually-hidden { "Actions" } } } } }
                    tbody {
                        @for m in &lp.members {
                            @if m.status != MemberStatus::Removed {
                                tr {
                                    td { (m.email.as_str()) @if m.user_id == lp.creator_id { " (owner)" } }
                                    td { span class={ "badge member-" (m.status.as_str()) } { (m.status.as_str()) } }
                                    @if owner {
                                        td {
                                            @if m.user_id != lp.creator_id {
                                                form.inline method="post" action=(action("remove")) {
                                                    (csrf_field(person.csrf()))
                                                    input type="hidden" name="user_id" value=(m.user_id);
                                                    button.link type="submit" { "Remove" }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if owner {
                form method="post" action=(action("invite")) {
                    (csrf_field(person.csrf()))
                    label { "Invite by email"
                        input type="email" name="email" value=(shown.previous.text("email")) placeholder="reviewer@example.com" required; }
                    (shown.beside(LoopForm::Invite))
                    button.secondary type="submit" { "Invite" }
                    p.hint { "They become a pending member, and active once they join with the link." }
                }
            }
        }
    })
}

/// The owner's settings: name, Slack, reminders, quorum and escalation.
fn settings_section(person: &Person, lp: &Loop, others: &[Loop], shown: &Shown<'_>) -> Markup {
    let previous = shown.previous;
    html! {
        section.card #settings {
            h2 { "Settings" }
            (shown.beside(LoopForm::Edit))
            form method="post" action={ "/app/loops/" (lp.id) "/edit" } {
                (csrf_field(person.csrf()))
                (loop_fields(previous, Some(lp)))
                label { "Slack incoming webhook"
                    input type="url" name="slack_webhook_url"
                        value=(previous.get("slack_webhook_url").or(lp.slack_webhook_url.as_deref()).unwrap_or(""))
                        placeholder="https://hooks.slack.com/services/…"; }
                p.hint { "Each new request is posted there, with a link to answer it. Leave it empty to post nowhere." }
                fieldset.slack-app {
                    legend { "Slack app (answer buttons in Slack)" }
                    @if let Some(app) = &lp.slack_app {
                        p.hint { "A Slack app posts new requests to " code { (app.channel) } " with a button per answer. Its token and signing secret are kept and never shown: enter all three to replace them." }
                        label.check { input type="checkbox" name="slack_app_remove" value="true"; " Stop posting through this Slack app" }
                    } @else {
                        p.hint { "Posts each new request with a button per answer (yes/no, or up to five options) and changes the message once it is answered. See Reaching reviewers in the docs for the app's manifest." }
                    }
                    label { "Bot token" input type="password" name="slack_bot_token" autocomplete="off" placeholder="xoxb-…"; }
                    label { "Signing secret" input type="password" name="slack_signing_secret" autocomplete="off"; }
                    label { "Channel" input type="text" name="slack_channel" value=(previous.get("slack_channel").unwrap_or("")) placeholder="#reviews or C0123ABCD"; }
                }
                @let remind = if previous.get("name").is_some() { previous.checked("reminders") } else { lp.reminders };
                label.check { input type="checkbox" name="reminders" value="true" checked[remind];
                    " Remind members of a request nobody has answered when a quarter of its time is left" }
                (quorum_fields(previous, lp))
                (escalation_fields(previous, lp, others))
                (repeats::repeats_fields(previous, lp))
                (repeats::assignment_fields(previous, lp))
                button.primary type="submit" { "Save" }
            }
        }
    }
}

/// Deleting the loop (the button asks first, on a page of its own).
fn delete_section(person: &Person, lp: &Loop, shown: &Shown<'_>) -> Markup {
    html! {
        section.card.danger-zone #delete {
            h2 { "Delete this loop" }
            p { "Its members leave it, its invite code stops working, and its finished requests go with it. You are asked once more before anything happens." }
            (shown.beside(LoopForm::Delete))
            form method="post" action={ "/app/loops/" (lp.id) "/delete" } {
                (csrf_field(person.csrf()))
                label.check { input type="checkbox" name="force" value="true"; " Also cancel its pending and claimed requests" }
                button.danger type="submit" { "Delete loop" }
            }
        }
    }
}

/// The loop's default escalation: where its unclaimed requests go.
fn escalation_fields(previous: &FormData, lp: &Loop, others: &[Loop]) -> Markup {
    let edited = previous.get("name").is_some();
    let to = if edited {
        previous.text("escalation_to").to_owned()
    } else {
        lp.escalation
            .map(|e| e.to_loop_id.to_string())
            .unwrap_or_default()
    };
    let minutes = if edited {
        previous.text("escalation_minutes").to_owned()
    } else {
        lp.escalation
            .map(|e| minutes_text(e.after_seconds))
            .unwrap_or_else(|| "30".into())
    };
    let raise = if edited {
        previous.checked("escalation_raise")
    } else {
        lp.escalation.is_some_and(|e| e.raise_priority)
    };
    html! {
        fieldset.escalation-policy {
            legend { "Escalation of unclaimed requests" }
            label { "Also send to"
                select name="escalation_to" {
                    option value="" selected[to.is_empty()] { "Nobody: keep them in this loop" }
                    (loop_choices(others, &to))
                }
            }
            label { "after this many minutes unclaimed"
                input type="number" name="escalation_minutes" min="0.01" step="any" value=(minutes); }
            label.check { input type="checkbox" name="escalation_raise" value="true" checked[raise];
                " Raise its priority one step when it escalates" }
            p.hint { "Happens once, and only while nobody has claimed the request. A request can name its own escalation." }
        }
    }
}

/// The loops a select offers (`others`, with `chosen` selected). A chosen
/// loop the person may no longer use is kept as it is, so saving other
/// fields does not clear it silently; the save then says it cannot be used.
pub(super) fn loop_choices(others: &[Loop], chosen: &str) -> Markup {
    html! {
        @for o in others {
            option value=(o.id) selected[chosen == o.id.to_string()] { (o.icon.as_str()) " " (o.name.as_str()) }
        }
        @if !chosen.is_empty() && !others.iter().any(|o| o.id.to_string() == chosen) {
            option value=(chosen) selected { "A loop you may no longer use" }
        }
    }
}

/// Seconds as minutes for a person: whole when they are, else to two
/// decimals.
fn minutes_text(seconds: i64) -> String {
    if seconds % 60 == 0 {
        return (seconds / 60).to_string();
    }
    let text = format!("{:.2}", seconds as f64 / 60.0);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The rules as the editor shows them: one rule after another, each with
/// its id first and its `when` and `then` on a line of their own.
fn rules_text(rules: &reviewloop_domain::Rules) -> String {
    if rules.is_empty() {
        return "[]".into();
    }
    let one = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let items: Vec<String> = rules
        .iter()
        .map(|r| {
            let v = r.to_value();
            format!(
                "  {{\n    \"id\": {},\n    \"when\": {},\n    \"then\": {}\n  }}",
                one(&v["id"]),
                one(&v["when"]),
                one(&v["then"])
            )
        })
        .collect();
    format!("[\n{}\n]", items.join(",\n"))
}

/// The escalation the edit form asks for, as the API would take it.
fn escalation_of_form(f: &FormData) -> Value {
    let to = f.text("escalation_to").trim();
    if to.is_empty() {
        return Value::Null;
    }
    let after = seconds_of_minutes(f.text("escalation_minutes").trim());
    json!({"after_seconds": after, "to_loop_id": to, "raise_priority": f.checked("escalation_raise")})
}

/// Minutes a person typed, as the seconds the API takes; anything that is
/// not a positive number goes on as typed, for the service to name.
fn seconds_of_minutes(minutes: &str) -> Value {
    minutes
        .parse::<f64>()
        .ok()
        .filter(|m| m.is_finite() && *m > 0.0)
        .map_or_else(
            || Value::from(minutes),
            |m| Value::from((m * 60.0).round() as i64),
        )
}

/// A sample request for the rules test, until the owner writes one.
const SAMPLE_REQUEST: &str = r#"{
  "request_text": "Refund order 1042?",
  "type": "markdown",
  "response_type": "boolean",
  "priority": "medium",
  "processing_type": "deferred",
  "platform": "api",
  "context": {"amount": 25}
}"#;

/// The owner's editor of the loop's rules, with the test beside it: the
/// rules as JSON, a sample request, and what the rules would do with it.
fn rules_card(person: &Person, lp: &Loop, others: &[Loop], shown: &Shown<'_>) -> Markup {
    let previous = shown.previous;
    let saved;
    let draft = match shown.draft {
        Some(draft) => draft,
        None => {
            saved = RulesDraft::of(&lp.rules.to_value());
            &saved
        }
    };
    let sample = previous.get("sample").unwrap_or(SAMPLE_REQUEST);
    let testing = previous.get("do") == Some("test");
    html! {
        section.card #rules {
            h2 { "Rules" }
            p.hint { "Tried in order on each new request; the first whose conditions all hold fires: it answers the request at once, sends it to another loop, or asks for a quorum. "
                "Edit the rules in the form or as JSON: after Test or Save both show the same rules (the JSON wins when you changed it)." }
            form.rules-editor method="post" action={ "/app/loops/" (lp.id) "/rules" } {
                (csrf_field(person.csrf()))
                div.rules-form {
                    h3 { "As a form" }
                    (rules_form::render(&draft.rows, others))
                }
                div.rules-json {
                    h3 { "As JSON" }
                    input type="hidden" name="rules_was" value=(draft.json);
                    label { span.visually-hidden { "Rules (JSON)" }
                        textarea.code name="rules" rows="16" spellcheck="false" { (draft.json) } }
                    p.hint { code { "when" } " may name " code { "priority" } ", " code { "platform" } ", "
                        code { "response_type" } " and " code { "context" } " tests such as "
                        code { "{\"pointer\": \"/amount\", \"lt\": 100}" } "; " code { "then" } " is "
                        code { "{\"answer\": true}" } ", " code { "{\"route_to_loop_id\": \"…\"}" } " or "
                        code { "{\"quorum\": {\"count\": 2}}" } "." }
                    @if !others.is_empty() {
                        details.loop-ids {
                            summary { "Ids of loops to route to" }
                            ul { @for o in others { li { (o.name.as_str()) ": " code { (o.id) } } } }
                        }
                    }
                }
                div.rules-try {
                    label { "A sample request (JSON)"
                        textarea.code name="sample" rows="9" spellcheck="false" { (sample) } }
                    @if testing { (shown.beside(LoopForm::Rules)) }
                    @if let Some(routing) = shown.tested {
                        div.rules-result role="status" {
                            p.hint { "Tested; nothing was saved or sent." }
                            p { strong { (routing.summary()) } }
                            @if !routing.passed_over.is_empty() {
                                ul { @for p in &routing.passed_over {
                                    li { "Rule " code { (p.rule_id) } " matched but was passed over: " (p.reason) }
                                } }
                            }
                        }
                    }
                    @if !testing { (shown.beside(LoopForm::Rules)) }
                    div.actions {
                        button.secondary type="submit" name="do" value="test" { "Test these rules" }
                        " "
                        button.primary type="submit" name="do" value="save" { "Save rules" }
                    }
                }
            }
        }
    }
}

/// Reads a JSON textarea: `field` names it in the message when it is not
/// JSON.
fn json_field(f: &FormData, field: &str, label: &str) -> Result<Value, Problems> {
    serde_json::from_str(f.text(field)).map_err(|e| {
        Problems::one(
            StatusCode::BAD_REQUEST,
            format!("{label} is not valid JSON: {e}"),
        )
    })
}

/// The loop's default quorum: how many reviewers answer its new requests.
fn quorum_fields(previous: &FormData, lp: &Loop) -> Markup {
    let edited = previous.get("name").is_some();
    let count = if edited {
        previous.text("quorum_count").to_owned()
    } else {
        lp.quorum.map(|q| q.count.to_string()).unwrap_or_default()
    };
    let rule = if edited {
        previous.text("quorum_rule").to_owned()
    } else {
        lp.quorum
            .map_or(QuorumRule::AllAgree, |q| q.rule)
            .as_str()
            .to_owned()
    };
    let exclude = if edited {
        previous.checked("quorum_exclude_requester")
    } else {
        lp.quorum.is_none_or(|q| q.exclude_requester)
    };
    html! {
        fieldset.quorum-policy {
            legend { "Quorum of new requests" }
            label { "Answers needed"
                input type="number" name="quorum_count" min="1" max=(MAX_QUORUM) step="1"
                    value=(count) placeholder="1"; }
            label { "Decided when"
                select name="quorum_rule" {
                    option value="all_agree" selected[rule == "all_agree"] { "that many reviewers give the same answer" }
                    option value="majority" selected[rule == "majority"] { "that many have answered, by the most common answer" }
                }
            }
            label.check { input type="checkbox" name="quorum_exclude_requester" value="true" checked[exclude];
                " The member who sends a request may not answer it" }
            p.hint { "Leave the number empty for the first answer to decide. A request can ask for its own quorum." }
        }
    }
}

/// The quorum the edit form asks for, as the API would take it: `null`
/// for none; a count that is not a number is passed on for the service to
/// name.
fn quorum_of_form(f: &FormData) -> Value {
    let count = f.text("quorum_count").trim();
    if count.is_empty() {
        return Value::Null;
    }
    let count = count
        .parse::<u64>()
        .map_or_else(|_| Value::from(count), Value::from);
    json!({
        "count": count,
        "rule": f.text("quorum_rule"),
        "exclude_requester": f.checked("quorum_exclude_requester"),
    })
}

/// What a `?done=` after a form says.
fn done_notice(done: &str) -> &'static str {
    match done {
        "regenerated" => "New invite code made. The old one no longer works.",
        "invited" => "Invitation added.",
        "removed" => "Member removed.",
        "notify" => "Notification preference saved.",
        "saved" => "Settings saved.",
        "rules" => "Rules saved.",
        _ => "Done.",
    }
}

async fn show_section(
    state: &WebState,
    person: &Person,
    id: &str,
    query: &std::collections::HashMap<String, String>,
    section: Section,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(id)?;
    let lp = state.loops.get(person.principal(), &id).await?;
    let shown = Shown {
        problems: Problems::none(),
        form: None,
        previous: &FormData::default(),
        notice: query.get("done").map(|d| done_notice(d)),
        tested: None,
        draft: None,
    };
    loop_page(state, person, &lp, section, shown).await
}

type Query = web::Query<std::collections::HashMap<String, String>>;

/// `GET /app/loops/{id}`: invite and members.
pub(crate) async fn page(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: Query,
) -> Result<HttpResponse, PageError> {
    show_section(&state, &person, &id, &query, Section::Members).await
}

/// `GET /app/loops/{id}/settings`
pub(crate) async fn settings(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: Query,
) -> Result<HttpResponse, PageError> {
    show_section(&state, &person, &id, &query, Section::Settings).await
}

/// `GET /app/loops/{id}/rules`
pub(crate) async fn rules_page(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: Query,
) -> Result<HttpResponse, PageError> {
    show_section(&state, &person, &id, &query, Section::Rules).await
}

/// `GET /app/loops/{id}/delete`
pub(crate) async fn delete_page(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: Query,
) -> Result<HttpResponse, PageError> {
    show_section(&state, &person, &id, &query, Section::Delete).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_read_plainly() {
        assert_eq!(minutes_text(1800), "30");
        assert_eq!(minutes_text(90), "1.5");
        assert_eq!(minutes_text(2), "0.03");
    }

    #[test]
    fn the_rules_text_reads_back_as_the_same_rules() {
        let rules = reviewloop_domain::Rules::parse(Some(&json!([
            {"id": "a", "when": {"context": {"pointer": "/x", "lt": 1}}, "then": {"answer": true}},
            {"id": "b", "then": {"quorum": {"count": 2}}}
        ])))
        .unwrap();
        let text = rules_text(&rules);
        assert!(text.contains("\"id\": \"a\",\n    \"when\""), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(reviewloop_domain::Rules::parse(Some(&back)).unwrap(), rules);
    }
}
