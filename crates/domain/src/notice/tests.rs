use super::*;
use crate::id::ObjectId;

fn t(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

fn email() -> Notice {
    Notice::create(
        NoticeId::new(ObjectId::from_parts(1, [1; 8])),
        NewNotice {
            kind: NoticeKind::NewRequest,
            channel: Channel::Email,
            account_id: UserId::new(ObjectId::from_parts(1, [2; 8])),
            loop_id: None,
            request_id: None,
            recipient_id: None,
            to: Some("rev@example.com".into()),
            message: Message {
                subject: "New request".into(),
                text: "Please look".into(),
                html: None,
            },
        },
        t(0),
    )
}

#[test]
fn preferences_decide_which_priorities_are_announced() {
    for p in [
        Priority::Low,
        Priority::Medium,
        Priority::High,
        Priority::Critical,
    ] {
        assert!(NotifyLevel::All.wants(p));
        assert!(!NotifyLevel::Off.wants(p));
    }
    assert!(!NotifyLevel::Urgent.wants(Priority::Medium));
    assert!(NotifyLevel::Urgent.wants(Priority::High));
    assert!(NotifyLevel::Urgent.wants(Priority::Critical));
    assert_eq!(NotifyLevel::parse("urgent"), Ok(NotifyLevel::Urgent));
    let refused = NotifyLevel::parse("sometimes").unwrap_err();
    assert_eq!(refused.errors[0].field, "notify");
}

#[test]
fn a_failed_attempt_waits_then_gives_up_keeping_a_short_error() {
    let mut n = email();
    let long = format!("421 {}\nsecond line", "x".repeat(400));
    n.record_attempt(t(0), Some(&long), &[10, 60], 0.0);
    assert_eq!(n.status, NoticeStatus::Pending);
    assert_eq!(n.next_attempt_at, t(10));
    let kept = n.last_error.clone().unwrap();
    assert_eq!(kept.chars().count(), 200);
    assert!(kept.starts_with("421 x") && kept.ends_with('…'));
    assert_eq!(n.outcome(), (false, Some(kept)));
    n.record_attempt(t(10), Some("connection refused"), &[10, 60], 0.0);
    assert_eq!(n.next_attempt_at, t(70));
    n.record_attempt(t(70), Some("connection refused"), &[10, 60], 0.0);
    assert_eq!((n.status, n.attempts), (NoticeStatus::Failed, 3));
}

#[test]
fn a_success_is_sent_and_clears_the_error() {
    let mut n = email();
    n.record_attempt(t(0), Some("connection refused"), &[10], 0.0);
    n.record_attempt(t(10), None, &[10], 0.0);
    assert_eq!((n.status, n.sent_at), (NoticeStatus::Sent, Some(t(10))));
    assert_eq!(n.outcome(), (true, None));
}

#[test]
fn one_time_links_are_forgotten_once_they_went_out_or_never_will() {
    let reset = || {
        let mut record = email().into_record();
        record.kind = NoticeKind::PasswordReset;
        record.message.text = "Set a new password: https://x/setup/secret".into();
        record.message.html = Some("<a href=\"https://x/setup/secret\">".into());
        Notice::restore(record)
    };
    let mut failing = reset();
    failing.record_attempt(t(1), Some("refused"), &[10], 0.0);
    assert!(
        failing.message.text.contains("secret"),
        "kept while it may still be sent"
    );
    failing.record_attempt(t(20), Some("refused"), &[10], 0.0);
    assert_eq!(failing.status, NoticeStatus::Failed);
    assert_eq!(
        (
            failing.message.text.as_str(),
            failing.message.html.as_deref()
        ),
        (FORGOTTEN, None)
    );
    let mut sent = reset();
    sent.record_attempt(t(1), None, &[10], 0.0);
    assert_eq!(sent.message.text, FORGOTTEN);
    // A new request's email holds its member's one-click answer links.
    let mut new_request = email();
    new_request.record_attempt(t(1), None, &[10], 0.0);
    assert_eq!(new_request.message.text, FORGOTTEN);
    let mut other = {
        let mut record = email().into_record();
        record.kind = NoticeKind::Invitation;
        Notice::restore(record)
    };
    other.record_attempt(t(1), None, &[10], 0.0);
    assert_ne!(other.message.text, FORGOTTEN, "other notices keep theirs");
}
