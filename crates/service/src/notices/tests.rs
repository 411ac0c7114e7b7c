use std::sync::{Arc, Mutex};

use reviewloop_domain::{BroadcastEntry, NoticeRecord, Priority, RequestId, ReviewRequest};
use reviewloop_ports::{MockMailer, PushFailure, SendOutcome};

use super::*;
use crate::testkit::Kit;

fn loop_with_slack(kit: &Kit, slack: Option<&str>) -> reviewloop_domain::Loop {
    let mut lp = kit.a_loop(&[2, 3], &[]);
    lp.set_notifications(Some(slack.map(str::to_owned)), None, None, kit.now);
    lp
}

/// A request of `lp` whose entries say: user 1 waits for an email, user 2
/// asked for urgent requests only.
fn request(kit: &Kit, lp: &reviewloop_domain::Loop) -> ReviewRequest {
    let mut record = crate::requests::tests::a_request(kit).into_record();
    record.loop_id = lp.id;
    record.request_text = "Refund <b>order</b> #1042?\nSecond line".into();
    record.priority = Priority::Medium;
    record.broadcasted_to = vec![
        BroadcastEntry {
            user_id: kit.user_id(1),
            email: Kit::email(1),
            role: "member".into(),
            notification_sent: false,
            notification_error: None,
            answer: None,
        },
        BroadcastEntry {
            user_id: kit.user_id(2),
            email: Kit::email(2),
            role: "member".into(),
            notification_sent: false,
            notification_error: Some("not notified: urgent only".into()),
            answer: None,
        },
    ];
    ReviewRequest::restore(record)
}

fn created(kit: &Kit, request: &ReviewRequest) -> Event {
    Event::for_request(
        reviewloop_domain::EventId::new(kit.oid(90)),
        EventType::RequestCreated,
        request,
        serde_json::Value::Null,
        kit.now,
    )
}

/// Makes the stores answer `request` and `lp` as they stand.
fn stands(kit: &mut Kit, request: &ReviewRequest, lp: &reviewloop_domain::Loop) {
    let (request, lp) = (request.clone(), lp.clone());
    kit.requests()
        .expect_request_by_id()
        .returning(move |_| Ok(Some(request.clone())));
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
}

/// Keeps every state the service records of a notice, in order.
fn recorded(kit: &mut Kit) -> Arc<Mutex<Vec<NoticeRecord>>> {
    let states: Arc<Mutex<Vec<NoticeRecord>>> = Arc::default();
    let seen = states.clone();
    kit.notices().expect_record_notice().returning(move |n, _| {
        seen.lock().unwrap().push(n.record().clone());
        Ok(())
    });
    states
}

fn service(kit: Kit) -> NoticeService {
    NoticeService::new(kit.ports(), "https://review.example.com/", vec![10, 60])
}

#[tokio::test]
async fn a_new_request_emails_each_waiting_member_and_posts_to_slack() {
    let mut kit = Kit::new();
    kit.mailer = Some(MockMailer::new());
    let lp = loop_with_slack(&kit, Some("https://hooks.slack.example/T1"));
    let req = request(&kit, &lp);
    let event = created(&kit, &req);
    stands(&mut kit, &req, &lp);
    kit.push()
        .expect_push_subscriptions_of()
        .returning(|_| Ok(vec![]));
    let planned = service(kit).plan(&event).await.unwrap();
    let notices = planned.notices;
    assert_eq!(
        notices.len(),
        2,
        "one email (user 2 opted out) and one Slack post"
    );
    // One one-click link per option, for the one member emailed, each
    // kept only as the hash of the token its email carries.
    let links = planned.answer_links;
    assert_eq!(links.len(), 2);
    assert!(links
        .iter()
        .all(|l| l.user_id == req.broadcasted_to[0].user_id && l.request_id == req.id));
    assert_eq!(
        links.iter().map(|l| l.answer.clone()).collect::<Vec<_>>(),
        [serde_json::json!("yes"), serde_json::json!("no")]
    );
    let text = &notices[0].message.text;
    let tokens: Vec<&str> = text
        .split("https://review.example.com/answer/")
        .skip(1)
        .map(|rest| rest.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(tokens.len(), 2, "{text}");
    for (token, link) in tokens.iter().zip(&links) {
        assert_eq!(
            reviewloop_domain::sha256_hex(token.as_bytes()),
            link.token_hash
        );
        assert!(!text.contains(&link.token_hash), "the hash is never sent");
    }
    let email = &notices[0];
    assert_eq!(
        (email.channel, email.to.as_deref(), email.recipient_id),
        (
            Channel::Email,
            Some("u1@x.io"),
            Some(req.broadcasted_to[0].user_id)
        )
    );
    let link = format!("https://review.example.com/app/requests/{}", req.id);
    assert!(email.message.text.contains(&link));
    assert!(email
        .message
        .subject
        .contains("New medium request: Refund <b>order</b> #1042?"));
    let html = email.message.html.as_deref().unwrap();
    assert!(html.contains("Refund &lt;b&gt;order&lt;/b&gt;"), "{html}");
    assert!(!html.contains("<b>order"));
    let slack = &notices[1];
    assert_eq!((slack.channel, slack.to.clone()), (Channel::Slack, None));
    assert!(slack
        .message
        .text
        .contains("> Refund &lt;b&gt;order&lt;/b&gt; #1042?"));
    assert!(slack.message.text.contains(&format!("<{link}|Review it>")));
}

#[tokio::test]
async fn without_smtp_or_slack_a_new_request_causes_no_notice() {
    let mut kit = Kit::new();
    let lp = loop_with_slack(&kit, None);
    let req = request(&kit, &lp);
    let event = created(&kit, &req);
    stands(&mut kit, &req, &lp);
    kit.push()
        .expect_push_subscriptions_of()
        .times(1)
        .returning(|_| Ok(vec![]));
    assert!(service(kit).plan(&event).await.unwrap().notices.is_empty());
}

fn device(kit: &Kit, n: u8, user: u8) -> reviewloop_domain::PushSubscription {
    let mut p256dh = vec![4u8];
    p256dh.extend([n; 64]);
    reviewloop_domain::PushSubscription {
        id: reviewloop_domain::PushSubscriptionId::new(kit.oid(120 + n)),
        user_id: kit.user_id(user),
        endpoint: format!("https://push.example/{n}"),
        p256dh,
        auth: vec![n; 16],
        device: format!("Device {n}"),
        created_at: kit.now,
    }
}

#[tokio::test]
async fn a_new_request_is_pushed_to_each_device_of_each_member_who_wants_it() {
    let mut kit = Kit::new();
    let mut lp = loop_with_slack(&kit, None);
    let mut quiet = lp.member(&kit.user_id(2)).unwrap().clone();
    quiet.set_notify(reviewloop_domain::NotifyLevel::Urgent);
    lp.put_member(quiet).unwrap();
    let req = request(&kit, &lp);
    let event = created(&kit, &req);
    stands(&mut kit, &req, &lp);
    let devices = [device(&kit, 1, 1), device(&kit, 2, 1), device(&kit, 3, 2)];
    let asked: Arc<Mutex<Vec<Vec<UserId>>>> = Arc::default();
    let seen = asked.clone();
    kit.push()
        .expect_push_subscriptions_of()
        .returning(move |users| {
            seen.lock().unwrap().push(users.to_vec());
            Ok(devices
                .iter()
                .filter(|d| users.contains(&d.user_id))
                .cloned()
                .collect())
        });
    let kit_ids = (device(&Kit::new(), 1, 1).id, device(&Kit::new(), 2, 1).id);
    let notices = service(kit).plan(&event).await.unwrap().notices;
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "the devices found while deciding whether to plan at all are the ones pushed"
    );
    let pushes: Vec<(Channel, Option<String>, Option<UserId>)> = notices
        .iter()
        .map(|n| (n.channel, n.to.clone(), n.recipient_id))
        .collect();
    let user1 = Some(req.broadcasted_to[0].user_id);
    assert_eq!(
        pushes,
        [
            (Channel::Push, Some(kit_ids.0.to_string()), user1),
            (Channel::Push, Some(kit_ids.1.to_string()), user1),
        ],
        "one notice per device; user 2 asked for urgent requests only: their device is not pushed"
    );
    assert_eq!(
        notices[0].message.subject,
        "New medium request in Reviewers"
    );
    assert_eq!(
        notices[0].message.text, "Refund <b>order</b> #1042? Second line",
        "plain text: the device shows it as text"
    );
}

fn pushed_notice(kit: &Kit, lp: &reviewloop_domain::Loop, device_id: &str) -> LeasedNotice {
    let mut leased = leased(kit, Channel::Push, lp);
    let mut record = leased.notice.record().clone();
    record.to = Some(device_id.into());
    record.message.html = None;
    leased.notice = Notice::restore(record);
    leased
}

#[tokio::test]
async fn a_push_carries_ttl_urgency_and_the_page_and_a_forgotten_device_is_removed() {
    let mut kit = Kit::new();
    let lp = loop_with_slack(&kit, None);
    let mut record = crate::requests::tests::a_request(&kit).into_record();
    record.id = RequestId::new(kit.oid(50));
    record.priority = Priority::High;
    record.timeout_at = kit.now + Duration::hours(1);
    let req = ReviewRequest::restore(record);
    let request_id = req.id;
    stands(&mut kit, &req, &lp);
    let mine = device(&kit, 1, 2);
    let mine_id = mine.id;
    kit.push()
        .expect_push_subscription()
        .returning(move |_| Ok(Some(mine.clone())));
    let key = reviewloop_domain::VapidKey {
        public_key: vec![4; 65],
        secret_key: vec![1; 32],
        created_at: kit.now,
    };
    kit.push()
        .expect_vapid_key()
        .times(1)
        .returning(move || Ok(Some(key.clone())));
    let mut answers = vec![Err(PushFailure::Gone("HTTP 410".into())), Ok(())];
    kit.push_gateway()
        .expect_push()
        .withf(move |_, push| {
            let payload: serde_json::Value = serde_json::from_slice(&push.payload).unwrap();
            push.ttl == 3600
                && push.urgency == "high"
                && payload["url"] == format!("https://review.example.com/app/requests/{request_id}")
                && payload["request_id"] == request_id.to_string()
                && payload["priority"] == "high"
                && payload["title"] == "New request"
                && payload["body"] == "Look"
        })
        .times(2)
        .returning(move |_, _| answers.pop().unwrap());
    kit.push()
        .expect_delete_push_subscription()
        .withf(move |id| *id == mine_id)
        .times(1)
        .returning(|_| Ok(true));
    let states = recorded(&mut kit);
    let notice = pushed_notice(&kit, &lp, &mine_id.to_string());
    let service = service(kit);
    assert_eq!(
        service.attempt(notice.clone()).await.unwrap(),
        NoticeStatus::Sent
    );
    assert_eq!(
        service.attempt(notice).await.unwrap(),
        NoticeStatus::Failed,
        "a device its push service forgot is not tried again"
    );
    let last = states.lock().unwrap()[1].last_error.clone().unwrap();
    assert!(last.contains("it was removed"), "{last}");
}

#[tokio::test]
async fn a_device_given_to_someone_else_is_not_pushed_their_predecessors_request() {
    let kit = Kit::new();
    let lp = loop_with_slack(&kit, None);
    let taken_over = device(&kit, 1, 3);
    assert_eq!(
        refused_push(kit, &lp, taken_over).await,
        "the device was removed"
    );
}

/// Attempts a push to `device` that must not go out; why it did not.
async fn refused_push(
    mut kit: Kit,
    lp: &reviewloop_domain::Loop,
    device: reviewloop_domain::PushSubscription,
) -> String {
    let id = device.id;
    kit.push()
        .expect_push_subscription()
        .returning(move |_| Ok(Some(device.clone())));
    kit.push_gateway().expect_push().never();
    let states = recorded(&mut kit);
    let notice = pushed_notice(&kit, lp, &id.to_string());
    assert_eq!(
        service(kit).attempt(notice).await.unwrap(),
        NoticeStatus::Failed
    );
    let why = states.lock().unwrap()[0].last_error.clone();
    why.unwrap_or_default()
}

fn leased(kit: &Kit, channel: Channel, lp: &reviewloop_domain::Loop) -> LeasedNotice {
    let notice = Notice::create(
        NoticeId::new(kit.oid(60)),
        NewNotice {
            kind: NoticeKind::NewRequest,
            channel,
            account_id: kit.user_id(1),
            loop_id: Some(lp.id),
            request_id: Some(RequestId::new(kit.oid(50))),
            recipient_id: Some(kit.user_id(2)),
            to: Some("u2@x.io".into()),
            message: reviewloop_domain::Message {
                subject: "New request".into(),
                text: "Look".into(),
                html: Some("<p>Look</p>".into()),
            },
        },
        kit.now,
    );
    LeasedNotice {
        notice,
        leased_until: kit.now + Duration::seconds(60),
    }
}

#[tokio::test]
async fn a_refused_email_is_retried_with_its_error_and_then_sent() {
    let mut kit = Kit::new();
    let lp = loop_with_slack(&kit, None);
    let mut mailer = MockMailer::new();
    let mut answers = vec![Ok(()), Err("421 try later".to_owned())];
    mailer
        .expect_send()
        .withf(|m| m.to == "u2@x.io" && m.html.as_deref() == Some("<p>Look</p>"))
        .times(2)
        .returning(move |_| answers.pop().unwrap());
    kit.mailer = Some(mailer);
    let recorded = recorded(&mut kit);
    let first = leased(&kit, Channel::Email, &lp);
    let service = service(kit);
    assert_eq!(
        service.attempt(first.clone()).await.unwrap(),
        NoticeStatus::Pending
    );
    let mut again = first;
    again.notice = Notice::restore(recorded.lock().unwrap()[0].clone());
    assert_eq!(service.attempt(again).await.unwrap(), NoticeStatus::Sent);
    let states = recorded.lock().unwrap();
    assert_eq!(states[0].last_error.as_deref(), Some("421 try later"));
    assert_eq!(
        states[0].next_attempt_at,
        states[0].created_at + Duration::seconds(10)
    );
    assert_eq!(
        (states[1].attempts, states[1].last_error.clone()),
        (2, None)
    );
}

#[tokio::test]
async fn slack_posts_to_the_loops_current_url_and_gives_up_when_it_is_gone() {
    let mut kit = Kit::new();
    let lp = loop_with_slack(&kit, Some("https://hooks.slack.example/NEW"));
    let mut loops = vec![loop_with_slack(&kit, None), lp.clone()];
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(loops.pop()));
    kit.sender()
        .expect_send()
        .withf(|o| o.url == "https://hooks.slack.example/NEW" && o.body == r#"{"text":"Look"}"#)
        .times(1)
        .returning(|_| SendOutcome {
            status: Some(200),
            latency_ms: 3,
            error: None,
        });
    let states = recorded(&mut kit);
    let service = service(kit);
    let notice = leased(&Kit::new(), Channel::Slack, &lp);
    assert_eq!(
        service.attempt(notice.clone()).await.unwrap(),
        NoticeStatus::Sent
    );
    assert_eq!(
        service.attempt(notice).await.unwrap(),
        NoticeStatus::Failed,
        "no URL any more: trying again cannot help"
    );
    assert_eq!(
        states.lock().unwrap()[1].last_error.as_deref(),
        Some("the loop no longer posts to Slack")
    );
}

#[tokio::test]
async fn without_smtp_an_email_notice_fails_at_once() {
    let mut kit = Kit::new();
    let lp = loop_with_slack(&kit, None);
    kit.notices()
        .expect_record_notice()
        .returning(|_, _| Ok(()));
    let notice = leased(&kit, Channel::Email, &lp);
    assert_eq!(
        service(kit).attempt(notice).await.unwrap(),
        NoticeStatus::Failed
    );
}

#[tokio::test]
async fn a_due_reminder_emails_who_should_hear_once_and_marks_every_request() {
    let mut kit = Kit::new();
    kit.mailer = Some(MockMailer::new());
    let mut reminding = kit.a_loop(&[2, 3], &[]);
    reminding.set_notifications(None, None, Some(true), kit.now);
    let mut quiet_member = reminding.member(&kit.user_id(2)).cloned().unwrap();
    quiet_member.set_notify(reviewloop_domain::NotifyLevel::Urgent);
    reminding.put_member(quiet_member).unwrap();
    let silent = {
        let mut record = reminding.clone().into_record();
        record.id = reviewloop_domain::LoopId::new(kit.oid(51));
        record.reminders = false;
        reviewloop_domain::Loop::restore(record)
    };
    let first = request(&kit, &reminding);
    let mut other = request(&kit, &silent).into_record();
    other.id = RequestId::new(kit.oid(71));
    let other = ReviewRequest::restore(other);
    let due = vec![first.clone(), other.clone()];
    kit.notices()
        .expect_requests_to_remind()
        .withf(|_, limit| *limit == 50)
        .times(1)
        .returning(move |_, _| Ok(due.clone()));
    let loops = [reminding.clone(), silent.clone()];
    kit.loops()
        .expect_loop_by_id()
        .times(2)
        .returning(move |id| Ok(loops.iter().find(|l| &l.id == id).cloned()));
    let marked = Arc::new(Mutex::new(Vec::new()));
    let seen = marked.clone();
    kit.notices()
        .expect_record_reminder()
        .times(2)
        .returning(move |id, _, notices| {
            seen.lock().unwrap().push((*id, notices.to_vec()));
            Ok(true)
        });
    let handled = service(kit).remind(50).await.unwrap();
    assert_eq!(handled, 2);
    let marked = marked.lock().unwrap();
    assert_eq!(marked[0].0, first.id);
    let reminders = &marked[0].1;
    assert_eq!(
        reminders.len(),
        1,
        "user 1 only: user 2 wants urgent requests, user 3 never got it"
    );
    let email = &reminders[0];
    assert_eq!(
        (email.kind, email.to.as_deref()),
        (NoticeKind::Reminder, Some("u1@x.io"))
    );
    assert!(email
        .message
        .subject
        .starts_with("[Reviewers] Reminder, answer by "));
    assert!(email
        .message
        .text
        .contains("https://review.example.com/app/requests/"));
    assert!(
        email
            .message
            .html
            .as_deref()
            .unwrap()
            .contains("Refund &lt;b&gt;order&lt;/b&gt;"),
        "request text is escaped in HTML"
    );
    assert_eq!(
        (marked[1].0, marked[1].1.len()),
        (other.id, 0),
        "a loop without reminders: marked, nobody emailed"
    );
}

#[tokio::test]
async fn a_review_emails_its_assignees_and_the_rest_of_its_team() {
    let mut kit = Kit::new();
    kit.mailer = Some(MockMailer::new());
    let review = crate::reviews::tests::stored(&kit);
    let team = kit.a_loop(&[2, 3], &[4]);
    let found = review.clone();
    kit.reviews()
        .expect_review_by_id()
        .returning(move |_| Ok(Some(found.clone())));
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(team.clone())));
    let event = |kind| {
        Event::for_account(
            reviewloop_domain::EventId::new(kit.oid(91)),
            kind,
            kit.user_id(1),
            serde_json::json!({"review": {"id": review.record().id}, "newly_assigned": [kit.user_id(2)]}),
            kit.now,
        )
    };
    let mut unchanged = event(EventType::ReviewAssigned);
    unchanged.data["newly_assigned"] = serde_json::json!([]);
    let (created, assigned, completed) = (
        event(EventType::ReviewCreated),
        event(EventType::ReviewAssigned),
        event(EventType::ReviewCompleted),
    );
    let svc = service(kit);
    let to = |notices: Vec<Notice>| -> Vec<String> {
        notices.into_iter().map(|n| n.to.clone().unwrap()).collect()
    };
    assert_eq!(
        to(svc.plan(&assigned).await.unwrap().notices),
        ["u2@x.io"],
        "the assignee"
    );
    let team_mail = svc.plan(&created).await.unwrap().notices;
    assert_eq!(
        to(team_mail.clone()),
        ["u1@x.io", "u3@x.io"],
        "active team members but the assignee (2) and the invited (4)"
    );
    assert_eq!(team_mail[0].kind, NoticeKind::NewReview);
    assert_eq!(
        team_mail[0].message.subject,
        "[Reviewers] New medium review: Post"
    );
    assert!(team_mail[0]
        .message
        .text
        .contains("Review it: https://review.example.com/app/reviews/"));
    assert!(svc.plan(&completed).await.unwrap().notices.is_empty());
    assert!(
        svc.plan(&unchanged).await.unwrap().notices.is_empty(),
        "a reassignment that added nobody emails nobody"
    );
}

#[tokio::test]
async fn a_reset_link_not_sent_within_its_hour_is_given_up_and_forgotten() {
    let mut kit = Kit::new();
    // No expectation: the mail server must not be asked.
    kit.mailer = Some(MockMailer::new());
    let lp = loop_with_slack(&kit, None);
    let mut leased = leased(&kit, Channel::Email, &lp);
    let mut record = leased.notice.clone().into_record();
    record.kind = NoticeKind::PasswordReset;
    record.created_at = kit.now - Duration::minutes(61);
    record.message.text = "Set a new password: https://x/setup/secret".into();
    leased.notice = Notice::restore(record);
    let recorded = Arc::new(Mutex::new(None));
    let seen = recorded.clone();
    kit.notices().expect_record_notice().returning(move |n, _| {
        *seen.lock().unwrap() = Some(n.clone());
        Ok(())
    });
    assert_eq!(
        service(kit).attempt(leased).await.unwrap(),
        NoticeStatus::Failed
    );
    let notice = recorded.lock().unwrap().clone().unwrap();
    assert_eq!(
        notice.last_error.as_deref(),
        Some("the reset link expired before it could be sent")
    );
    assert!(!notice.message.text.contains("secret"));
}

#[tokio::test]
async fn one_request_that_cannot_be_reminded_does_not_hold_up_the_rest() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    let first = request(&kit, &lp);
    let mut other = request(&kit, &lp).into_record();
    other.id = RequestId::new(kit.oid(71));
    other.loop_id = reviewloop_domain::LoopId::new(kit.oid(52));
    let other = ReviewRequest::restore(other);
    let due = vec![first.clone(), other.clone()];
    kit.notices()
        .expect_requests_to_remind()
        .returning(move |_, _| Ok(due.clone()));
    let readable = lp.id;
    kit.loops().expect_loop_by_id().returning(move |id| {
        if *id == readable {
            Err(StoreError::Unavailable("the disk is gone".into()))
        } else {
            Ok(None)
        }
    });
    let other_id = other.id;
    kit.notices()
        .expect_record_reminder()
        .withf(move |id, _, notices| *id == other_id && notices.is_empty())
        .times(1)
        .returning(|_, _, _| Ok(true));
    assert_eq!(
        service(kit).remind(10).await.unwrap(),
        1,
        "only the second is marked"
    );
}

#[tokio::test]
async fn reviewers_a_request_escalated_to_are_reminded_too() {
    let mut kit = Kit::new();
    kit.mailer = Some(MockMailer::new());
    let mut home = kit.a_loop(&[2], &[]);
    home.set_notifications(None, None, Some(true), kit.now);
    let leads = {
        let mut record = kit.a_loop(&[4], &[]).into_record();
        record.id = reviewloop_domain::LoopId::new(kit.oid(51));
        reviewloop_domain::Loop::restore(record)
    };
    let mut record = request(&kit, &home).into_record();
    record.escalation = Some(reviewloop_domain::Escalation {
        after_seconds: 1,
        to_loop_id: leads.id,
        raise_priority: false,
    });
    let mut escalated = ReviewRequest::restore(record);
    let entry = BroadcastEntry {
        user_id: kit.user_id(4),
        email: Kit::email(4),
        role: "member".into(),
        notification_sent: true,
        notification_error: None,
        answer: None,
    };
    escalated
        .escalate(vec![entry], kit.now + chrono::Duration::seconds(2))
        .unwrap();
    kit.notices()
        .expect_requests_to_remind()
        .returning(move |_, _| Ok(vec![escalated.clone()]));
    let loops = [home, leads];
    kit.loops()
        .expect_loop_by_id()
        .returning(move |id| Ok(loops.iter().find(|l| &l.id == id).cloned()));
    let u4 = kit.user_id(4);
    kit.notices()
        .expect_record_reminder()
        .withf(move |_, _, notices| notices.iter().any(|n| n.recipient_id == Some(u4)))
        .times(1)
        .returning(|_, _, _| Ok(true));
    assert_eq!(service(kit).remind(10).await.unwrap(), 1);
}

#[tokio::test]
async fn a_member_who_turned_notifications_off_since_is_not_pushed() {
    let mut kit = Kit::new();
    let mut lp = loop_with_slack(&kit, None);
    let mut quiet = lp.member(&kit.user_id(2)).unwrap().clone();
    quiet.set_notify(reviewloop_domain::NotifyLevel::Off);
    lp.put_member(quiet).unwrap();
    let mut record = crate::requests::tests::a_request(&kit).into_record();
    record.priority = Priority::Critical;
    let req = ReviewRequest::restore(record);
    stands(&mut kit, &req, &lp);
    let mine = device(&kit, 1, 2);
    assert_eq!(
        refused_push(kit, &lp, mine).await,
        "not pushed: the member no longer hears of this request"
    );
}

/// A dispatch pass reads the Slack posts of all its ended requests at
/// once, and each ended request gets a change of its own posts only.
#[tokio::test]
async fn a_pass_reads_the_slack_posts_of_its_ended_requests_once() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2, 3], &[]);
    let first = request(&kit, &lp);
    let mut record = first.clone().into_record();
    record.id = RequestId::new(kit.oid(61));
    let second = ReviewRequest::restore(record);
    let event_of = |kind, r: &ReviewRequest, n| {
        Event::for_request(
            reviewloop_domain::EventId::new(kit.oid(n)),
            kind,
            r,
            serde_json::Value::Null,
            kit.now,
        )
    };
    let events = [
        event_of(EventType::RequestCompleted, &first, 90),
        event_of(EventType::RequestClaimed, &second, 91),
        event_of(EventType::RequestCancelled, &second, 92),
    ];
    let post = |r: &ReviewRequest, channel: &str| SlackPost {
        request_id: r.id,
        loop_id: lp.id,
        channel: channel.into(),
        ts: "1.2".into(),
    };
    let posts = vec![post(&first, "C-first"), post(&second, "C-second")];
    let (a, b) = (first.id, second.id);
    kit.slack_posts()
        .expect_slack_posts_of()
        .withf(move |ids| ids == [a, b])
        .times(1)
        .returning(move |_| Ok(posts.clone()));
    let planned = service(kit).plan_all(&events).await.unwrap();
    let said: Vec<Vec<String>> = planned
        .iter()
        .map(|p| p.notices.iter().map(|n| n.message.text.clone()).collect())
        .collect();
    assert_eq!(
        said,
        [
            vec!["request.completed in Slack channel C-first".to_owned()],
            vec![],
            vec!["request.cancelled in Slack channel C-second".to_owned()],
        ]
    );
}

#[tokio::test]
async fn a_loop_that_assigns_posts_nothing_to_its_channel_and_an_offer_tells_only_the_next() {
    let mut kit = Kit::new();
    kit.mailer = Some(MockMailer::new());
    let mut lp = loop_with_slack(&kit, Some("https://hooks.slack.example/T1"));
    lp.set_assignment(
        Some(reviewloop_domain::Assignment {
            strategy: reviewloop_domain::Strategy::RoundRobin,
            per_request: 1,
            reassign_after_seconds: Some(60),
        }),
        kit.now,
    );
    let mut record = request(&kit, &lp).into_record();
    // Made after everyone joined, so user 2 was passed over.
    record.created_at = kit.now + chrono::Duration::seconds(60);
    // User 1 was offered it first (and emailed); user 3 is offered it next.
    record.broadcasted_to[0].notification_sent = true;
    record.broadcasted_to.truncate(1);
    record.broadcasted_to.push(BroadcastEntry {
        user_id: kit.user_id(3),
        email: Kit::email(3),
        role: reviewloop_domain::REASSIGNED_ROLE.into(),
        notification_sent: false,
        notification_error: None,
        answer: None,
    });
    let req = ReviewRequest::restore(record);
    let created_event = created(&kit, &req);
    let reassigned = Event::for_request(
        reviewloop_domain::EventId::new(kit.oid(91)),
        EventType::RequestReassigned,
        &req,
        serde_json::json!({"offered_to": [kit.user_id(3)]}),
        kit.now,
    );
    // A later offer, to someone else, does not tell user 3 again.
    let later = Event::for_request(
        reviewloop_domain::EventId::new(kit.oid(92)),
        EventType::RequestReassigned,
        &req,
        serde_json::json!({"offered_to": [kit.user_id(4)]}),
        kit.now,
    );
    stands(&mut kit, &req, &lp);
    kit.push()
        .expect_push_subscriptions_of()
        .returning(|_| Ok(vec![]));
    let svc = service(kit);
    let planned = svc.plan(&created_event).await.unwrap();
    assert!(
        planned.notices.iter().all(|n| n.channel != Channel::Slack),
        "no channel post while only a few are asked"
    );
    let planned = svc.plan(&reassigned).await.unwrap();
    assert_eq!(planned.notices.len(), 1, "{:?}", planned.notices);
    assert_eq!(planned.notices[0].to.as_deref(), Some("u3@x.io"));
    assert!(svc.plan(&later).await.unwrap().notices.is_empty());
}

#[tokio::test]
async fn a_request_that_joined_another_tells_nobody() {
    let mut kit = Kit::new();
    kit.mailer = Some(MockMailer::new());
    let lp = loop_with_slack(&kit, Some("https://hooks.slack.example/T1"));
    let open = {
        let mut r = request(&kit, &lp);
        r.take_followers(reviewloop_domain::QuestionKey::parse("k").unwrap());
        r
    };
    let mut record = open.clone().into_record();
    record.id = RequestId::new(kit.oid(61));
    record.coalesce_key = None;
    record.coalescing = false;
    let mut follower = ReviewRequest::restore(record);
    follower.keep_key(reviewloop_domain::QuestionKey::parse("k").unwrap());
    follower.join(&open).unwrap();
    let event = created(&kit, &follower);
    stands(&mut kit, &follower, &lp);
    kit.push()
        .expect_push_subscriptions_of()
        .returning(|_| Ok(vec![]));
    assert!(service(kit).plan(&event).await.unwrap().notices.is_empty());
}

#[tokio::test]
async fn a_request_sent_to_everyone_is_posted_though_the_loop_assigns_since() {
    let mut kit = Kit::new();
    let mut lp = loop_with_slack(&kit, Some("https://hooks.slack.example/T1"));
    let req = request(&kit, &lp);
    // Made while the loop offered requests to everyone; set to assign
    // before the notice is planned.
    lp.set_assignment(
        Some(reviewloop_domain::Assignment {
            strategy: reviewloop_domain::Strategy::RoundRobin,
            per_request: 1,
            reassign_after_seconds: None,
        }),
        kit.now,
    );
    let event = created(&kit, &req);
    stands(&mut kit, &req, &lp);
    kit.push()
        .expect_push_subscriptions_of()
        .returning(|_| Ok(vec![]));
    let planned = service(kit).plan(&event).await.unwrap();
    assert_eq!(
        planned
            .notices
            .iter()
            .filter(|n| n.channel == Channel::Slack)
            .count(),
        1,
        "{:?}",
        planned.notices
    );
}
