//! What notices say. Request text comes from automations: the HTML part is
//! escaped by maud and Slack's control characters are escaped by hand.

use maud::html;
use reviewloop_domain::{Loop, Message, Review, ReviewRequest};

/// Characters of request text an email or Slack message quotes.
const QUOTED_CHARS: usize = 500;

/// The first lines of `text`, at most [`QUOTED_CHARS`] characters.
fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(8).collect();
    let joined = lines.join("\n");
    let mut cut: String = joined.chars().take(QUOTED_CHARS).collect();
    if cut.len() < text.trim_end().len() {
        cut.push('…');
    }
    cut
}

/// The subject's summary: the first line, at most 60 characters.
fn headline(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut cut: String = first.trim().chars().take(60).collect();
    if first.trim().chars().count() > 60 {
        cut.push('…');
    }
    cut
}

fn deadline(request: &ReviewRequest) -> String {
    request.timeout_at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// Links a notice gives: where to answer and where to change preferences.
pub(crate) struct Links {
    /// The request's page in the web application.
    pub review: String,
    /// The loop's page, where a member chooses what they hear about.
    pub preferences: String,
}

impl Links {
    pub(crate) fn new(public_url: &str, request: &ReviewRequest) -> Self {
        Self {
            review: format!("{public_url}/app/requests/{}", request.id),
            preferences: format!("{public_url}/app/loops/{}", request.loop_id),
        }
    }
}

/// One answer a member can give from the email: its words and its link.
pub(crate) struct OneClick {
    pub label: String,
    pub url: String,
}

/// The email telling a member of a new request, with a link per answer
/// when the request can be answered in one click (`answers`; empty
/// otherwise). Each link only opens a page that asks to confirm.
pub(crate) fn new_request_email(
    request: &ReviewRequest,
    lp: &Loop,
    links: &Links,
    answers: &[OneClick],
) -> Message {
    let (loop_name, priority) = (lp.name.as_str(), request.priority.as_str());
    let quoted = excerpt(&request.request_text);
    let due = deadline(request);
    let one_click: String = if answers.is_empty() {
        String::new()
    } else {
        let lines: String = answers
            .iter()
            .map(|a| format!("  {}: {}\n", a.label, a.url))
            .collect();
        format!("Answer in one click (you confirm on the page it opens):\n{lines}\n")
    };
    let text = format!(
        "A new request is waiting in {loop_name}.\n\n\
         Priority: {priority}\n\
         Answer by: {due}\n\n\
         {quoted}\n\n\
         {one_click}\
         Review it: {review}\n\n\
         You get this email as a member of {loop_name}. Choose which requests \
         you hear about on the loop's page: {preferences}\n",
        review = links.review,
        preferences = links.preferences,
    );
    let html = html! {
        p { "A new request is waiting in " strong { (loop_name) } "." }
        p { "Priority: " strong { (priority) } br; "Answer by: " (due) }
        blockquote style="white-space: pre-wrap; border-left: 3px solid #ccc; margin: 0; padding-left: 12px" {
            (quoted)
        }
        @if !answers.is_empty() {
            p {
                @for a in answers {
                    a href=(a.url) style="display: inline-block; margin: 0 8px 8px 0; padding: 8px 16px; border-radius: 6px; background: #1d2330; color: #fff; text-decoration: none; font-weight: 600" {
                        (a.label)
                    }
                }
            }
            p style="color: #666; font-size: 13px" { "Each button opens a page where you confirm the answer." }
        }
        p { a href=(links.review) { "Review it" } }
        p style="color: #666; font-size: 13px" {
            "You get this email as a member of " (loop_name) ". "
            a href=(links.preferences) { "Choose which requests you hear about" } "."
        }
    };
    Message {
        subject: format!(
            "[{loop_name}] New {priority} request: {}",
            headline(&request.request_text)
        ),
        text,
        html: Some(html.into_string()),
    }
}

/// The first lines of request text as a Slack block quote, escaped.
fn slack_quote(text: &str) -> String {
    excerpt(text)
        .lines()
        .map(|l| format!("> {}\n", slack_escape(l)))
        .collect()
}

/// Escapes the three characters Slack reads as markup.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The Slack message announcing a new request to a loop's channel.
pub(crate) fn new_request_slack(request: &ReviewRequest, lp: &Loop, links: &Links) -> Message {
    let quoted = slack_quote(&request.request_text);
    let subject = format!(
        "New {} request in {}",
        request.priority.as_str(),
        slack_escape(lp.name.as_str())
    );
    Message {
        text: format!(
            "*{subject}*\n{quoted}Answer by {}\n<{}|Review it>",
            deadline(request),
            links.review
        ),
        subject,
        html: None,
    }
}

/// Characters of request text a push notification carries: phones show
/// two to four lines of it.
const PUSHED_CHARS: usize = 180;

/// The notification of a new request pushed to a member's devices. Shown
/// by the device as plain text: nothing to escape.
pub(crate) fn new_request_push(request: &ReviewRequest, lp: &Loop) -> Message {
    let text = request
        .request_text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut body: String = text.chars().take(PUSHED_CHARS).collect();
    if text.chars().count() > PUSHED_CHARS {
        body.push('…');
    }
    Message {
        subject: format!(
            "New {} request in {}",
            request.priority.as_str(),
            lp.name.as_str()
        ),
        text: body,
        html: None,
    }
}

/// The email inviting someone to review in a loop.
pub(crate) fn invitation_email(lp: &Loop, inviter: &str, join_url: &str) -> Message {
    let loop_name = lp.name.as_str();
    let text = format!(
        "{inviter} invited you to review requests in {loop_name} on reviewloop.\n\n\
         Join the loop: {join_url}\n\n\
         If you have no account yet, the link lets you make one with this \
         email address. If you did not expect this, ignore this email.\n"
    );
    let html = html! {
        p { (inviter) " invited you to review requests in " strong { (loop_name) } " on reviewloop." }
        p { a href=(join_url) { "Join the loop" } }
        p style="color: #666; font-size: 13px" {
            "If you have no account yet, the link lets you make one with this email address. "
            "If you did not expect this, ignore this email."
        }
    };
    Message {
        subject: format!("You are invited to review in {loop_name}"),
        text,
        html: Some(html.into_string()),
    }
}

/// The email with a link to set a new password.
pub(crate) fn password_reset_email(reset_url: &str, valid_hours: i64) -> Message {
    let text = format!(
        "Someone asked to reset the password of your reviewloop account.\n\n\
         Set a new password: {reset_url}\n\n\
         The link works once, for {valid_hours} hours. If you did not ask, \
         ignore this email: your password stays as it is.\n"
    );
    let html = html! {
        p { "Someone asked to reset the password of your reviewloop account." }
        p { a href=(reset_url) { "Set a new password" } }
        p style="color: #666; font-size: 13px" {
            "The link works once, for " (valid_hours) " hours. "
            "If you did not ask, ignore this email: your password stays as it is."
        }
    };
    Message {
        subject: "Reset your reviewloop password".into(),
        text,
        html: Some(html.into_string()),
    }
}

/// The email reminding a member of a request still waiting near its deadline.
pub(crate) fn reminder_email(request: &ReviewRequest, lp: &Loop, links: &Links) -> Message {
    let (loop_name, priority) = (lp.name.as_str(), request.priority.as_str());
    let quoted = excerpt(&request.request_text);
    let due = deadline(request);
    let fallback = request.default_response.is_some();
    let ending = if fallback {
        "If nobody answers by then, the default answer is used."
    } else {
        "If nobody answers by then, it times out."
    };
    let text = format!(
        "A {priority} request in {loop_name} is still waiting for an answer.\n\n\
         Answer by: {due}\n\
         {ending}\n\n\
         {quoted}\n\n\
         Review it: {review}\n\n\
         Choose which requests you hear about on the loop's page: {preferences}\n",
        review = links.review,
        preferences = links.preferences,
    );
    let html = html! {
        p { "A " strong { (priority) } " request in " strong { (loop_name) } " is still waiting for an answer." }
        p { "Answer by: " (due) br; (ending) }
        blockquote style="white-space: pre-wrap; border-left: 3px solid #ccc; margin: 0; padding-left: 12px" {
            (quoted)
        }
        p { a href=(links.review) { "Review it" } }
        p style="color: #666; font-size: 13px" {
            a href=(links.preferences) { "Choose which requests you hear about" } "."
        }
    };
    Message {
        subject: format!(
            "[{loop_name}] Reminder, answer by {due}: {}",
            headline(&request.request_text)
        ),
        text,
        html: Some(html.into_string()),
    }
}

/// The email telling a reviewer of a new review: `team` names the team it
/// reached them through, `None` when they were assigned by name.
pub(crate) fn new_review_email(review: &Review, team: Option<&str>, link: &str) -> Message {
    let r = review.record();
    let priority = r.priority.as_str();
    let why = match team {
        Some(name) => format!("A new {priority} review is waiting in {name}."),
        None => format!("You are assigned a new {priority} review."),
    };
    let due = r
        .due_date
        .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string());
    let quoted = r.content_text.as_deref().map(excerpt).unwrap_or_default();
    let mut text = format!("{why}\n\n");
    if let Some(due) = &due {
        text.push_str(&format!("Due: {due}\n\n"));
    }
    if !quoted.is_empty() {
        text.push_str(&format!("{quoted}\n\n"));
    }
    text.push_str(&format!("Review it: {link}\n"));
    let html = html! {
        p { (why) }
        @if let Some(due) = &due { p { "Due: " (due) } }
        @if !quoted.is_empty() {
            blockquote style="white-space: pre-wrap; border-left: 3px solid #ccc; margin: 0; padding-left: 12px" {
                (quoted)
            }
        }
        p { a href=(link) { "Review it" } }
    };
    let about = r
        .content_text
        .as_deref()
        .map(headline)
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "a review is waiting".into());
    Message {
        subject: match team {
            Some(name) => format!("[{name}] New {priority} review: {about}"),
            None => format!("New {priority} review for you: {about}"),
        },
        text,
        html: Some(html.into_string()),
    }
}

/// Slack shows at most this many answer buttons on a request's message;
/// more options get an "Open in reviewloop" button only.
pub(crate) const SLACK_BUTTONS: usize = 5;

/// The text and Block Kit blocks of a new request posted by a loop's
/// Slack app: the request, its priority and deadline, a button per answer
/// when there are few (`answers`), and a button to open it.
pub(crate) fn new_request_slack_app(
    request: &ReviewRequest,
    lp: &Loop,
    links: &Links,
    answers: &[(serde_json::Value, String)],
) -> (String, serde_json::Value) {
    let headline = format!(
        "New {} request in {}",
        request.priority.as_str(),
        slack_escape(lp.name.as_str())
    );
    let quoted = slack_quote(&request.request_text);
    let mut buttons: Vec<serde_json::Value> = if answers.len() <= SLACK_BUTTONS {
        answers
            .iter()
            .enumerate()
            .map(|(i, (answer, label))| {
                let label: String = label.chars().take(crate::slack::BUTTON_CHARS).collect();
                serde_json::json!({
                    "type": "button",
                    "action_id": format!("answer:{i}"),
                    "text": {"type": "plain_text", "text": label, "emoji": true},
                    // Where the answer is, and what it is: a click after the
                    // options changed is refused, not taken as another one.
                    "value": format!("{}:{i}:{}", request.id, crate::slack::answer_tag(answer)),
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    buttons.push(serde_json::json!({
        "type": "button",
        "action_id": "open",
        "text": {"type": "plain_text", "text": "Open in reviewloop"},
        "url": links.review,
    }));
    let blocks = serde_json::json!([
        {"type": "section", "text": {"type": "mrkdwn", "text": format!("*{headline}*\n{quoted}")}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
            "Priority: *{}* · Answer by {}", request.priority.as_str(), deadline(request)
        )}]},
        {"type": "actions", "block_id": "answer", "elements": buttons},
    ]);
    (headline, blocks)
}

/// The text and blocks a Slack app's message is changed to once the
/// request ended: what was decided, by whom.
pub(crate) fn ended_request_slack_app(
    request: &ReviewRequest,
    lp: &Loop,
    links: &Links,
) -> (String, serde_json::Value) {
    let answer = |value: &Option<serde_json::Value>| match value {
        Some(value) => slack_escape(&request.answer_words(value)),
        None => "nothing".into(),
    };
    let by = request
        .response_by
        .and_then(|who| request.broadcasted_to.iter().find(|b| b.user_id == who))
        .map(|b| slack_escape(b.email.as_str()));
    let outcome = match request.status {
        reviewloop_domain::RequestStatus::Completed => match by {
            Some(by) => format!("Answered *{}* by {by}", answer(&request.response_data)),
            None => format!("Answered *{}*", answer(&request.response_data)),
        },
        reviewloop_domain::RequestStatus::Timeout => format!(
            "Timed out: the default answer *{}* stands",
            answer(&request.response_data)
        ),
        reviewloop_domain::RequestStatus::Cancelled => "Cancelled by the requester".into(),
        _ => "Still open".into(),
    };
    let quoted = slack_quote(&request.request_text);
    let text = format!("{outcome} in {}", slack_escape(lp.name.as_str()));
    let blocks = serde_json::json!([
        {"type": "section", "text": {"type": "mrkdwn", "text": format!("{quoted}")}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
            "{outcome} · <{}|Open in reviewloop>", links.review
        )}]},
    ]);
    (text, blocks)
}
