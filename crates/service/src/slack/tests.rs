use hmac::{Hmac, Mac};
use reviewloop_domain::SlackApp;
use serde_json::{json, Value};
use sha2::Sha256;

use super::*;
use crate::testkit::Kit;

const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

fn app() -> SlackApp {
    SlackApp::parse(&json!({
        "bot_token": "xoxb-1-2-abc", "signing_secret": SECRET, "channel": "C1"
    }))
    .unwrap()
}

fn sign(secret: &str, timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{timestamp}:{body}").as_bytes());
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

/// The service over `kit`; the request service it would answer through
/// has no expectations, so a test fails if anything is answered.
fn service(mut kit: Kit, lp: &reviewloop_domain::Loop) -> SlackService {
    let found = (lp.id, app());
    kit.slack_posts()
        .expect_slack_apps()
        .returning(move || Ok(vec![found.clone()]));
    let requests = RequestService::new(Kit::new().ports(), "http://127.0.0.1");
    SlackService::new(kit.ports(), requests)
}

/// A request of `lp` (options yes/no) that the store serves; its id.
fn serve_request(kit: &mut Kit, lp: &reviewloop_domain::Loop) -> RequestId {
    let mut request = crate::requests::tests::a_request(kit).into_record();
    request.loop_id = lp.id;
    let request = reviewloop_domain::ReviewRequest::restore(request);
    let id = request.id;
    kit.requests()
        .expect_request_by_id()
        .returning(move |_| Ok(Some(request.clone())));
    id
}

/// Slack user U7's click, in channel C9, on the first button, whose value is `value`.
fn click(value: &str) -> Value {
    json!({
        "type": "block_actions",
        "user": {"id": "U7"},
        "channel": {"id": "C9"},
        "actions": [{"action_id": "answer:0", "value": value}],
    })
}

#[tokio::test]
async fn only_a_fresh_click_signed_with_a_loops_secret_is_taken() {
    let kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    let now = kit.now.timestamp();
    let svc = service(kit, &lp);
    let body = "payload=%7B%7D";
    let signed = svc
        .verify(
            Some(&now.to_string()),
            Some(&sign(SECRET, now, body)),
            body.as_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(signed.loop_id(), lp.id);
    for (timestamp, signature, why) in [
        (
            now,
            sign("another secret entirely", now, body),
            SlackSignature::Forged,
        ),
        (
            now,
            sign(SECRET, now, "payload=%7B%22x%22%7D"),
            SlackSignature::Forged,
        ),
        (
            now - 301,
            sign(SECRET, now - 301, body),
            SlackSignature::Stale,
        ),
        (now, "v1=abc".into(), SlackSignature::Forged),
    ] {
        let refused = svc
            .verify(
                Some(&timestamp.to_string()),
                Some(&signature),
                body.as_bytes(),
            )
            .await;
        assert!(
            matches!(&refused, Err(SlackError::Signature(s)) if *s == why),
            "{refused:?}"
        );
    }
    assert!(matches!(
        svc.verify(None, Some("v0=00"), body.as_bytes()).await,
        Err(SlackError::Signature(SlackSignature::Missing))
    ));
}

#[tokio::test]
async fn a_click_from_someone_who_is_no_member_is_refused_to_them_alone() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    let id = serve_request(&mut kit, &lp);
    kit.slack()
        .expect_user_email()
        .times(1)
        .returning(|_, _| Ok(Some("stranger@x.io".into())));
    kit.accounts()
        .expect_user_by_email()
        .returning(|_| Ok(None));
    kit.slack()
        .expect_post_ephemeral()
        .withf(|token, channel, user, text| {
            token == "xoxb-1-2-abc"
                && channel == "C9"
                && user == "U7"
                && text.contains("Only active members")
        })
        .times(2)
        .returning(|_, _, _, _| Ok(()));
    let svc = service(kit, &lp);
    let signed = SignedBy {
        apps: vec![(lp.id, app())],
    };
    let yes = answer_tag(&json!("yes"));
    let click = click(&format!("{id}:0:{yes}"));
    for _ in 0..2 {
        // The second click reads the email Slack gave from memory.
        assert!(matches!(
            svc.act(&signed, &click).await.unwrap(),
            SlackOutcome::Refused(_)
        ));
    }
    for bad in [
        json!({"type": "view_submission"}),
        json!({"type": "block_actions", "actions": [{"action_id": "other"}]}),
        json!({"type": "block_actions", "user": {"id": "U7"}, "channel": {"id": "C9"},
               "actions": [{"action_id": "answer:9", "value": format!("{id}:9:{yes}")}]}),
        json!({"type": "block_actions", "user": {"id": "U7"}, "channel": {"id": "C9"},
               "actions": [{"action_id": "answer:0", "value": "nonsense"}]}),
    ] {
        assert!(
            matches!(svc.act(&signed, &bad).await, Err(SlackError::Invalid(_))),
            "{bad}"
        );
    }
    assert_eq!(
        svc.act(
            &signed,
            &json!({"type": "block_actions", "actions": [{"action_id": "open"}]})
        )
        .await
        .unwrap(),
        SlackOutcome::Ignored
    );
}

#[tokio::test]
async fn a_button_whose_answer_changed_since_it_was_posted_answers_nothing() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[]);
    let id = serve_request(&mut kit, &lp);
    // Posted when option 0 was "approve"; it is "yes" now.
    kit.slack().expect_user_email().never();
    kit.slack()
        .expect_post_ephemeral()
        .withf(|_, _, _, text| text.contains("answers changed"))
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let svc = service(kit, &lp);
    let signed = SignedBy {
        apps: vec![(lp.id, app())],
    };
    let stale = answer_tag(&json!("approve"));
    let click = click(&format!("{id}:0:{stale}"));
    assert!(matches!(
        svc.act(&signed, &click).await.unwrap(),
        SlackOutcome::Refused(_)
    ));
}
