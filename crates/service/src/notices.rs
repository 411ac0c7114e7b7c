//! Telling reviewers: which notices an event causes, and sending them.

mod compose;

use chrono::Duration;
use reviewloop_domain::{
    AnswerLink, Channel, Email, Event, EventType, Loop, Member, Message, NewNotice, Notice,
    NoticeId, NoticeKind, NoticeStatus, RequestId, ReviewId, ReviewRequest, User, UserId,
};
use reviewloop_ports::{
    AttemptResult, Clock, IdSource, LeasedNotice, Mail, Outgoing, PushFailure, SlackPost,
    StoreError, WebPush,
};
use serde_json::json;

use crate::loops::LoopCache;
use crate::people::RESET_LINK_HOURS;
use crate::ports::NoticePorts;
use crate::principal::Principal;
use crate::push::VapidKeys;
use crate::reviews::NEWLY_ASSIGNED;

use compose::Links;

/// How long a worker holds a notice: the 15-second SMTP limit and room to
/// record the outcome.
const LEASE_SECONDS: i64 = 60;

/// What an event causes: notices, and the one-click answer links their
/// emails carry (written with them, in one transaction).
#[derive(Debug, Default)]
pub struct Planned {
    /// The notices.
    pub notices: Vec<Notice>,
    /// The links in their emails.
    pub answer_links: Vec<AnswerLink>,
}

impl Planned {
    fn notices(notices: Vec<Notice>) -> Self {
        Self {
            notices,
            answer_links: Vec::new(),
        }
    }
}

/// Plans notices from events and sends them.
#[derive(Clone)]
pub struct NoticeService {
    ports: NoticePorts,
    public_url: String,
    schedule: Vec<i64>,
    vapid: std::sync::Arc<VapidKeys>,
}

impl NoticeService {
    /// A service whose links start with `public_url` and whose failed
    /// notices are tried again after the pauses of `schedule` (seconds).
    pub fn new(ports: NoticePorts, public_url: &str, schedule: Vec<i64>) -> Self {
        Self {
            ports,
            public_url: public_url.trim_end_matches('/').to_owned(),
            schedule,
            vapid: std::sync::Arc::new(VapidKeys::new()),
        }
    }

    fn notice(&self, fields: NewNotice) -> Notice {
        new_notice(&*self.ports.clock, &*self.ports.ids, fields)
    }

    /// The notices `event` causes: for a new request, an email to each
    /// member whose broadcast entry is waiting for one, and a message to the
    /// loop's Slack channel if it has one; for an escalated request, the
    /// same for the reviewers and the Slack channel of the loop it
    /// escalated to; for an ended one, a change of each Slack app message
    /// about it. A request a rule answered at once asks nobody. Other
    /// events cause none.
    pub async fn plan(&self, event: &Event) -> Result<Planned, StoreError> {
        let mut planned = self.plan_all(std::slice::from_ref(event)).await?;
        Ok(planned.pop().unwrap_or_default())
    }

    /// [`Self::plan`] of an event that does not end a request.
    async fn plan_open(&self, event: &Event) -> Result<Planned, StoreError> {
        if matches!(
            event.event_type,
            EventType::ReviewCreated | EventType::ReviewAssigned
        ) {
            return Ok(Planned::notices(self.plan_review(event).await?));
        }
        // The reviewers each event tells: those a new request went to,
        // those it reached by escalation, or those it was offered to next.
        let (role, escalated) = match event.event_type {
            EventType::RequestCreated => ("member", false),
            EventType::RequestEscalated => (reviewloop_domain::ESCALATION_ROLE, true),
            EventType::RequestReassigned => (reviewloop_domain::REASSIGNED_ROLE, false),
            _ => return Ok(Planned::default()),
        };
        let created = event.event_type == EventType::RequestCreated;
        // An offer to more members tells only those it reached: the ones
        // offered before were told by the offer that reached them.
        let offered_to: Option<Vec<UserId>> = (event.event_type == EventType::RequestReassigned)
            .then(|| {
                event.data["offered_to"]
                    .as_array()
                    .map(|ids| {
                        ids.iter()
                            .filter_map(|v| v.as_str().and_then(|id| UserId::parse(id).ok()))
                            .collect()
                    })
                    .unwrap_or_default()
            });
        let told_now = |user: &UserId| offered_to.as_ref().is_none_or(|ids| ids.contains(user));
        let Some(request_id) = event.request_id else {
            return Ok(Planned::default());
        };
        // Without email, only a loop with a Slack channel or a member with
        // a device is told of a new request: most loops need no read of the
        // request at all. The devices found then are the ones pushed below.
        let mut members_devices = None;
        if created && self.ports.mailer.is_none() {
            let lp = match event.loop_id {
                Some(id) => self.ports.loops.loop_by_id(&id).await?,
                None => None,
            };
            let Some(lp) = lp else {
                return Ok(Planned::default());
            };
            // Whether its channel hears of it depends on whom it was
            // offered to, which the full plan below reads.
            let slack = lp.slack_webhook_url.is_some() || lp.slack_app.is_some();
            if !slack {
                let members: Vec<UserId> = lp.active_members().map(|m| m.user_id).collect();
                let devices = self.ports.push.push_subscriptions_of(&members).await?;
                if devices.is_empty() {
                    return Ok(Planned::default());
                }
                members_devices = Some(devices);
            }
        }
        let Some(request) = self.ports.requests.request_by_id(&request_id).await? else {
            return Ok(Planned::default());
        };
        // Decided at once, test data, or joined to an open request that
        // asks the same question: nobody is to be told.
        if !request.status.is_open() || request.test || request.coalesced_into.is_some() {
            return Ok(Planned::default());
        }
        // The loop whose members are told: the request's own, or the one it
        // escalated to.
        let told = if escalated {
            request.escalated_to()
        } else {
            Some(request.loop_id)
        };
        let Some(lp) = (match told {
            Some(id) => self.ports.loops.loop_by_id(&id).await?,
            None => None,
        }) else {
            return Ok(Planned::default());
        };
        let links = Links::new(&self.public_url, &request);
        let about = |channel, recipient_id, to: Option<String>, message| NewNotice {
            kind: NoticeKind::NewRequest,
            channel,
            account_id: request.creator_id,
            loop_id: Some(lp.id),
            request_id: Some(request.id),
            recipient_id,
            to,
            message,
        };
        let mut planned = Planned::default();
        if self.ports.mailer.is_some() {
            let offered = reviewloop_domain::one_click_answers(&request);
            let now = self.ports.clock.now();
            // An entry with an error already says why its member is not told.
            for entry in request
                .broadcasted_to
                .iter()
                .filter(|b| !b.notification_sent && b.notification_error.is_none())
                // Each event tells only its own reviewers, however late it
                // is planned.
                .filter(|b| b.role == role && told_now(&b.user_id))
            {
                // Each member's links are their own: a forwarded email
                // answers as its first recipient, and only once.
                let mut answers = Vec::with_capacity(offered.len());
                for (answer, label) in &offered {
                    let token = self.ports.ids.secret_hex(32);
                    planned.answer_links.push(AnswerLink {
                        token_hash: reviewloop_domain::sha256_hex(token.as_bytes()),
                        request_id: request.id,
                        user_id: entry.user_id,
                        answer: answer.clone(),
                        label: label.clone(),
                        created_at: now,
                        used_at: None,
                    });
                    answers.push(compose::OneClick {
                        label: label.clone(),
                        url: format!("{}/answer/{token}", self.public_url),
                    });
                }
                let message = compose::new_request_email(&request, &lp, &links, &answers);
                planned.notices.push(self.notice(about(
                    Channel::Email,
                    Some(entry.user_id),
                    Some(entry.email.as_str().to_owned()),
                    message,
                )));
            }
        }
        // A channel is read by everyone in it: a request offered to only a
        // few of the loop's members (however the loop is set now) is
        // posted to none, and an offer to the next few is no new request
        // for the channel.
        let to_channel = event.event_type != EventType::RequestReassigned
            && lp.active_members().all(|m| {
                // Those who joined since it was made were never passed over.
                request.was_broadcast_to(&m.user_id)
                    || m.joined_at.is_none_or(|at| at >= request.created_at)
            });
        if to_channel && lp.slack_webhook_url.is_some() {
            let message = compose::new_request_slack(&request, &lp, &links);
            planned
                .notices
                .push(self.notice(about(Channel::Slack, None, None, message)));
        }
        if to_channel && lp.slack_app.is_some() {
            // The blocks are made when it is sent, from the request as it
            // stands then; the notice keeps the words.
            let (text, _) = compose::new_request_slack_app(&request, &lp, &links, &[]);
            let message = Message {
                subject: text.clone(),
                text,
                html: None,
            };
            planned
                .notices
                .push(self.notice(about(Channel::SlackApp, None, None, message)));
        }
        // Each active member the notification preference selects is pushed
        // on each of their devices: one notice per device, so a device that
        // failed is tried again without pushing twice to the others.
        let pushed: Vec<UserId> = request
            .broadcasted_to
            .iter()
            .filter(|b| b.role == role && told_now(&b.user_id))
            .filter(|b| {
                lp.is_active_member(&b.user_id)
                    && lp
                        .member(&b.user_id)
                        .is_some_and(|m| m.notify.wants(request.priority))
            })
            .map(|b| b.user_id)
            .collect();
        if !pushed.is_empty() {
            let message = compose::new_request_push(&request, &lp);
            let devices = match members_devices {
                // Read above, of this loop's active members: these are theirs.
                Some(devices) => devices
                    .into_iter()
                    .filter(|d| pushed.contains(&d.user_id))
                    .collect(),
                None => self.ports.push.push_subscriptions_of(&pushed).await?,
            };
            for device in devices {
                planned.notices.push(self.notice(about(
                    Channel::Push,
                    Some(device.user_id),
                    Some(device.id.to_string()),
                    message.clone(),
                )));
            }
        }
        Ok(planned)
    }

    /// For a request that ended: a change of each message a loop's Slack
    /// app posted about it, to say how it ended.
    /// `posts` may hold other requests' posts too: the ones about this
    /// event's request are taken.
    fn plan_ended(&self, event: &Event, posts: &[SlackPost]) -> Planned {
        let Some(request_id) = event.request_id else {
            return Planned::default();
        };
        let notices = posts
            .iter()
            .filter(|post| post.request_id == request_id)
            .map(|post| {
                self.notice(NewNotice {
                    kind: NoticeKind::RequestEnded,
                    channel: Channel::SlackApp,
                    account_id: event.account_id,
                    loop_id: Some(post.loop_id),
                    request_id: Some(request_id),
                    recipient_id: None,
                    to: None,
                    message: Message {
                        subject: event.event_type.as_str().to_owned(),
                        text: format!(
                            "{} in Slack channel {}",
                            event.event_type.as_str(),
                            post.channel
                        ),
                        html: None,
                    },
                })
            })
            .collect();
        Planned::notices(notices)
    }

    /// What [`Self::plan`] gives each of a dispatch pass's events, in
    /// their order, with one read of the Slack posts of every request that
    /// ended in the pass rather than one per request.
    pub async fn plan_all(&self, events: &[Event]) -> Result<Vec<Planned>, StoreError> {
        let ended: Vec<RequestId> = events
            .iter()
            .filter(|e| ends_a_request(e.event_type))
            .filter_map(|e| e.request_id)
            .collect();
        let posts = if ended.is_empty() {
            Vec::new()
        } else {
            self.ports.slack_posts.slack_posts_of(&ended).await?
        };
        let mut planned = Vec::with_capacity(events.len());
        for event in events {
            planned.push(if ends_a_request(event.event_type) {
                self.plan_ended(event, &posts)
            } else {
                self.plan_open(event).await?
            });
        }
        Ok(planned)
    }

    /// The emails of a review still open: on `review.assigned`, to each
    /// assignee; on `review.created`, to its team's members who want to
    /// hear of it and are not assignees.
    async fn plan_review(&self, event: &Event) -> Result<Vec<Notice>, StoreError> {
        if self.ports.mailer.is_none() {
            return Ok(Vec::new());
        }
        let Some(id) = event.data["review"]["id"]
            .as_str()
            .and_then(|id| ReviewId::parse(id).ok())
        else {
            return Ok(Vec::new());
        };
        let Some(review) = self.ports.reviews.review_by_id(&id).await? else {
            return Ok(Vec::new());
        };
        let r = review.record();
        if !r.status.is_open() {
            return Ok(Vec::new());
        }
        let link = format!("{}/app/reviews/{}", self.public_url, r.id);
        let team = match r.team_id {
            Some(team) => self.ports.loops.loop_by_id(&team).await?,
            None => None,
        };
        // Assignees are asked by name, not as members of the team.
        let (recipients, message, loop_id): (Vec<(UserId, Email)>, _, _) = match event.event_type {
            EventType::ReviewAssigned => (
                r.assignees
                    .iter()
                    .filter(|a| newly_assigned(event, &a.user_id))
                    .map(|a| (a.user_id, a.email.clone()))
                    .collect(),
                compose::new_review_email(&review, None, &link),
                None,
            ),
            _ => match &team {
                Some(team) => (
                    review
                        .team_audience(team)
                        .into_iter()
                        .map(|m| (m.user_id, m.email.clone()))
                        .collect(),
                    compose::new_review_email(&review, Some(team.name.as_str()), &link),
                    Some(team.id),
                ),
                None => return Ok(Vec::new()),
            },
        };
        Ok(recipients
            .into_iter()
            .map(|(user, to)| {
                self.notice(NewNotice {
                    loop_id,
                    ..NewNotice::email(
                        NoticeKind::NewReview,
                        r.account_id,
                        user,
                        &to,
                        message.clone(),
                    )
                })
            })
            .collect())
    }

    /// Handles up to `batch` requests whose reminder fell due: in a loop
    /// with reminders on, each member who should hear of it gets one email;
    /// either way the request is marked, so it is never looked at again.
    /// Answers how many requests it marked. One request that cannot be
    /// handled (its loop unreadable, the write refused) is logged and left
    /// for the next pass; it does not stop the others.
    pub async fn remind(&self, batch: u32) -> Result<usize, StoreError> {
        let now = self.ports.clock.now();
        let due = self.ports.notices.requests_to_remind(now, batch).await?;
        let mut marked = 0;
        let mut loops = LoopCache::default();
        for request in due {
            // An escalated request is also the other loop's members' work.
            let read = loops.load(&*self.ports.loops, request.loop_id).await;
            let read = match (read, request.escalated_to()) {
                (Ok(()), Some(other)) => loops.load(&*self.ports.loops, other).await,
                (read, _) => read,
            };
            if let Err(error) = read {
                tracing::warn!(%error, request = %request.id, "no reminder: its loops could not be read");
                continue;
            }
            let lp = loops.get(&request.loop_id);
            let escalated = request.escalated_to().and_then(|id| loops.get(&id));
            let notices = match lp {
                Some(lp) if lp.reminders && self.ports.mailer.is_some() => {
                    let links = Links::new(&self.public_url, &request);
                    let message = compose::reminder_email(&request, lp, &links);
                    let mut members = lp.to_remind(&request);
                    for member in escalated.iter().flat_map(|e| e.to_remind(&request)) {
                        if !members.iter().any(|m| m.user_id == member.user_id) {
                            members.push(member);
                        }
                    }
                    members
                        .into_iter()
                        .map(|member| {
                            self.notice(NewNotice {
                                loop_id: Some(lp.id),
                                request_id: Some(request.id),
                                ..NewNotice::email(
                                    NoticeKind::Reminder,
                                    request.creator_id,
                                    member.user_id,
                                    &member.email,
                                    message.clone(),
                                )
                            })
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            // False when another instance handled it first: fine.
            match self
                .ports
                .notices
                .record_reminder(&request.id, now, &notices)
                .await
            {
                Ok(_) => marked += 1,
                Err(error) => {
                    tracing::warn!(%error, request = %request.id, "could not record a reminder")
                }
            }
        }
        Ok(marked)
    }

    /// Leases up to `batch` due notices to this worker.
    pub async fn lease(&self, batch: u32) -> Result<Vec<LeasedNotice>, StoreError> {
        let now = self.ports.clock.now();
        self.ports
            .notices
            .lease_due_notices(now, now + Duration::seconds(LEASE_SECONDS), batch)
            .await
    }

    /// Makes one attempt at a leased notice and records how it went.
    pub async fn attempt(&self, leased: LeasedNotice) -> Result<NoticeStatus, StoreError> {
        let LeasedNotice {
            mut notice,
            leased_until,
        } = leased;
        let at = self.ports.clock.now();
        let expired = notice.kind == NoticeKind::PasswordReset
            && at - notice.created_at >= Duration::hours(RESET_LINK_HOURS);
        let outcome = match notice.channel {
            // Its link no longer works: sending it would only confuse.
            _ if expired => Err(Attempt::Hopeless(
                "the reset link expired before it could be sent".into(),
            )),
            Channel::Email => self.email(&notice).await,
            Channel::Slack => self.slack(&notice).await,
            Channel::SlackApp => self.slack_app(&notice).await,
            Channel::Push => self.push(&notice).await,
        };
        // Nothing to send to, or nothing to send with: trying again cannot help.
        let (error, schedule) = match &outcome {
            Ok(()) => (None, self.schedule.as_slice()),
            Err(Attempt::Failed(why)) => (Some(why.as_str()), self.schedule.as_slice()),
            Err(Attempt::Hopeless(why)) => (Some(why.as_str()), &[][..]),
        };
        notice.record_attempt(at, error, schedule, self.ports.ids.jitter());
        self.ports.meter.notice_attempt(
            notice.channel.as_str(),
            match notice.status {
                NoticeStatus::Sent => AttemptResult::Succeeded,
                NoticeStatus::Pending => AttemptResult::Retrying,
                NoticeStatus::Failed => AttemptResult::GaveUp,
            },
        );
        match self
            .ports
            .notices
            .record_notice(&notice, leased_until)
            .await
        {
            // Another worker took it over after the lease ran out.
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(notice.status),
            Err(e) => Err(e),
        }
    }

    async fn email(&self, notice: &Notice) -> Result<(), Attempt> {
        let Some(mailer) = &self.ports.mailer else {
            return Err(Attempt::Hopeless("email is not configured".into()));
        };
        let Some(to) = &notice.to else {
            return Err(Attempt::Hopeless("the notice has no address".into()));
        };
        mailer
            .send(&Mail {
                to: to.clone(),
                subject: notice.message.subject.clone(),
                text: notice.message.text.clone(),
                html: notice.message.html.clone(),
            })
            .await
            .map_err(Attempt::Failed)
    }

    /// Posts a new request through the loop's Slack app (and keeps where,
    /// to change it later), or changes what it posted once the request
    /// ended. Both are read now: the app as configured, the request as it
    /// stands.
    async fn slack_app(&self, notice: &Notice) -> Result<(), Attempt> {
        let failed = |e: StoreError| Attempt::Failed(e.to_string());
        let lp = self.loop_of(notice).await?;
        let Some((lp, app)) = lp.and_then(|lp| lp.slack_app.clone().map(|app| (lp, app))) else {
            return Err(Attempt::Hopeless(
                "the loop no longer posts through a Slack app".into(),
            ));
        };
        let request = self.request_of(notice).await?;
        let links = Links::new(&self.public_url, &request);
        match notice.kind {
            NoticeKind::RequestEnded => {
                let posts = self
                    .ports
                    .slack_posts
                    .slack_posts_of(std::slice::from_ref(&request.id))
                    .await
                    .map_err(failed)?;
                let Some(post) = posts.into_iter().find(|p| p.loop_id == lp.id) else {
                    // Its post is still on its way: try again after it.
                    return Err(Attempt::Failed("the request is not posted yet".into()));
                };
                let (text, blocks) = compose::ended_request_slack_app(&request, &lp, &links);
                self.ports
                    .slack
                    .update_message(&app.bot_token, &post.channel, &post.ts, &text, &blocks)
                    .await
                    .map_err(slack_attempt)
            }
            _ => {
                let (text, blocks) = if request.status.is_open() {
                    let answers = reviewloop_domain::one_click_answers(&request);
                    compose::new_request_slack_app(&request, &lp, &links, &answers)
                } else {
                    // Ended before it could be posted: posted as it ended.
                    compose::ended_request_slack_app(&request, &lp, &links)
                };
                let (channel, ts) = self
                    .ports
                    .slack
                    .post_message(&app.bot_token, &app.channel, &text, &blocks)
                    .await
                    .map_err(slack_attempt)?;
                let post = SlackPost {
                    request_id: request.id,
                    loop_id: lp.id,
                    channel,
                    ts,
                };
                self.ports
                    .slack_posts
                    .record_slack_post(&post)
                    .await
                    .map_err(failed)?;
                // It may have ended while it was being posted, before its
                // end could find the post: then it is changed at once.
                let now = self
                    .ports
                    .requests
                    .request_by_id(&request.id)
                    .await
                    .map_err(failed)?;
                if let Some(ended) = now.filter(|r| !r.status.is_open() && request.status.is_open())
                {
                    let (text, blocks) = compose::ended_request_slack_app(&ended, &lp, &links);
                    if let Err(error) = self
                        .ports
                        .slack
                        .update_message(&app.bot_token, &post.channel, &post.ts, &text, &blocks)
                        .await
                    {
                        tracing::warn!(%error, "a Slack post could not be marked ended");
                    }
                }
                Ok(())
            }
        }
    }

    /// The notice's loop as it stands now, if it still exists.
    async fn loop_of(&self, notice: &Notice) -> Result<Option<Loop>, Attempt> {
        match notice.loop_id {
            Some(id) => self
                .ports
                .loops
                .loop_by_id(&id)
                .await
                .map_err(|e| Attempt::Failed(e.to_string())),
            None => Ok(None),
        }
    }

    /// The notice's request as it stands now; a notice whose request is
    /// gone cannot be sent.
    async fn request_of(&self, notice: &Notice) -> Result<ReviewRequest, Attempt> {
        let request = match notice.request_id {
            Some(id) => self
                .ports
                .requests
                .request_by_id(&id)
                .await
                .map_err(|e| Attempt::Failed(e.to_string()))?,
            None => None,
        };
        request.ok_or_else(|| Attempt::Hopeless("the request is gone".into()))
    }

    /// Pushes a new request to one device, as the request stands now: not
    /// at all once it ended (nobody can answer it any more), with a `TTL`
    /// up to its deadline and an `Urgency` from its priority. A device its
    /// push service no longer knows is removed.
    async fn push(&self, notice: &Notice) -> Result<(), Attempt> {
        let failed = |e: StoreError| Attempt::Failed(e.to_string());
        let device = notice
            .to
            .as_deref()
            .and_then(|id| reviewloop_domain::PushSubscriptionId::parse(id).ok());
        let device = match device {
            Some(id) => self
                .ports
                .push
                .push_subscription(&id)
                .await
                .map_err(failed)?,
            None => None,
        };
        // Removed, or given to whoever subscribed the browser since.
        let Some(device) = device.filter(|d| Some(d.user_id) == notice.recipient_id) else {
            return Err(Attempt::Hopeless("the device was removed".into()));
        };
        let request = self.request_of(notice).await?;
        if !request.status.is_open() {
            return Err(Attempt::Hopeless(
                "not pushed: the request ended first".into(),
            ));
        }
        // Who may hear of it is read now too: a member who left the loop,
        // or turned its notifications down since, is not pushed.
        let told = self.loop_of(notice).await?;
        let wanted = told.as_ref().is_some_and(|lp| {
            lp.is_active_member(&device.user_id)
                && lp
                    .member(&device.user_id)
                    .is_some_and(|m| m.notify.wants(request.priority))
        });
        if !wanted {
            return Err(Attempt::Hopeless(
                "not pushed: the member no longer hears of this request".into(),
            ));
        }
        let now = self.ports.clock.now();
        let key = self
            .vapid
            .get(&*self.ports.push, &*self.ports.push_gateway, now)
            .await
            .map_err(|e| Attempt::Failed(format!("no VAPID key: {e}")))?;
        let payload = reviewloop_domain::PushPayload {
            title: notice.message.subject.clone(),
            body: notice.message.text.clone(),
            url: Links::new(&self.public_url, &request).review,
            request_id: Some(request.id),
            priority: Some(request.priority),
        };
        let push = WebPush {
            payload: payload.to_json().to_string().into_bytes(),
            ttl: reviewloop_domain::push_ttl(now, request.timeout_at),
            urgency: reviewloop_domain::push_urgency(request.priority),
            // A retry replaces a copy the push service still holds.
            topic: Some(notice.id.to_string()),
            subscription: device,
        };
        match self.ports.push_gateway.push(&key, &push).await {
            Ok(()) => Ok(()),
            Err(PushFailure::Gone(why)) => {
                if let Err(error) = self
                    .ports
                    .push
                    .delete_push_subscription(&push.subscription.id)
                    .await
                {
                    tracing::warn!(%error, "a device its push service forgot could not be removed");
                }
                Err(Attempt::Hopeless(format!(
                    "the push service no longer knows the device ({why}); it was removed"
                )))
            }
            Err(PushFailure::Refused(why)) => Err(Attempt::Hopeless(why)),
            Err(PushFailure::Unreachable(why)) => Err(Attempt::Failed(why)),
        }
    }

    async fn slack(&self, notice: &Notice) -> Result<(), Attempt> {
        let lp = self.loop_of(notice).await?;
        // The URL is read now, so a changed or removed one is followed.
        let Some(url) = lp.and_then(|lp| lp.slack_webhook_url.clone()) else {
            return Err(Attempt::Hopeless(
                "the loop no longer posts to Slack".into(),
            ));
        };
        let sent = self
            .ports
            .sender
            .send(&Outgoing {
                url,
                headers: vec![("content-type".into(), "application/json".into())],
                body: json!({ "text": notice.message.text }).to_string(),
            })
            .await;
        if sent.succeeded() {
            return Ok(());
        }
        Err(Attempt::Failed(match (sent.error, sent.status) {
            (Some(error), _) => format!("Slack could not be reached: {error}"),
            (None, Some(status)) => format!("Slack answered HTTP {status}"),
            (None, None) => "Slack did not answer".into(),
        }))
    }
}

/// Whether `review.assigned` added `user`: still assigned now and named
/// by the event (an event without the list names everyone).
fn newly_assigned(event: &Event, user: &UserId) -> bool {
    match event.data[NEWLY_ASSIGNED].as_array() {
        Some(added) => added
            .iter()
            .any(|id| id.as_str() == Some(&user.to_string())),
        None => true,
    }
}

/// A notice made now, under a fresh id.
fn new_notice(clock: &dyn Clock, ids: &dyn IdSource, fields: NewNotice) -> Notice {
    let now = clock.now();
    Notice::create(NoticeId::new(ids.object_id(now)), fields, now)
}

/// The email inviting a pending `member` of `lp`, sent in the name of
/// `inviter`; none when the server sends no email.
pub(crate) fn invitation(
    email_enabled: bool,
    (clock, ids): (&dyn Clock, &dyn IdSource),
    lp: &Loop,
    member: &Member,
    inviter: &Principal,
    join_url: &str,
) -> Option<Notice> {
    email_enabled.then(|| {
        new_notice(
            clock,
            ids,
            NewNotice {
                loop_id: Some(lp.id),
                ..NewNotice::email(
                    NoticeKind::Invitation,
                    inviter.user_id,
                    member.user_id,
                    &member.email,
                    compose::invitation_email(lp, inviter.email.as_str(), join_url),
                )
            },
        )
    })
}

/// The email carrying a password link to `user`; none when the server
/// sends no email.
pub(crate) fn password_reset(
    email_enabled: bool,
    clock: &dyn Clock,
    ids: &dyn IdSource,
    user: &User,
    reset_url: &str,
    valid_hours: i64,
) -> Option<Notice> {
    email_enabled.then(|| {
        new_notice(
            clock,
            ids,
            NewNotice::email(
                NoticeKind::PasswordReset,
                user.id,
                user.id,
                &user.email,
                compose::password_reset_email(reset_url, valid_hours),
            ),
        )
    })
}

/// Why an attempt failed.
enum Attempt {
    /// Worth trying again later.
    Failed(String),
    /// Never going to work.
    Hopeless(String),
}

/// A failed Slack call as an attempt: tried again only when that may help.
fn slack_attempt(failure: reviewloop_ports::SlackFailure) -> Attempt {
    if failure.is_transient() {
        Attempt::Failed(failure.to_string())
    } else {
        Attempt::Hopeless(failure.to_string())
    }
}

/// Whether an event of `kind` says a request ended.
fn ends_a_request(kind: EventType) -> bool {
    matches!(
        kind,
        EventType::RequestCompleted | EventType::RequestTimeout | EventType::RequestCancelled
    )
}

#[cfg(test)]
mod tests;
