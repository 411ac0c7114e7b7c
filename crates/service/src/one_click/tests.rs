use reviewloop_domain::sha256_hex;
use serde_json::json;

use super::*;
use crate::testkit::Kit;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn link(kit: &Kit, request: &ReviewRequest, used: bool) -> AnswerLink {
    AnswerLink {
        token_hash: sha256_hex(TOKEN.as_bytes()),
        request_id: request.id,
        user_id: kit.user_id(2),
        answer: json!("yes"),
        label: "yes".into(),
        created_at: kit.now,
        used_at: used.then_some(kit.now),
    }
}

/// The service over `kit`; the request service it would answer through
/// has no expectations, so a test fails if anything is answered.
fn service(kit: Kit) -> OneClickService {
    let requests = RequestService::new(Kit::new().ports(), "http://127.0.0.1");
    OneClickService::new(kit.ports(), requests)
}

fn serving(kit: &mut Kit, request: ReviewRequest, used: bool) {
    let found = link(kit, &request, used);
    kit.answer_links()
        .expect_answer_link()
        .returning(move |_| Ok(Some(found.clone())));
    kit.answer_links().expect_use_answer_link().never();
    let lp = kit.a_loop(&[2, 3], &[]);
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.requests()
        .expect_request_by_id()
        .returning(move |_| Ok(Some(request.clone())));
}

#[tokio::test]
async fn a_token_that_is_not_one_is_not_looked_up() {
    let mut kit = Kit::new();
    kit.answer_links().expect_answer_link().never();
    let svc = service(kit);
    for bad in ["", "xyz", &"g".repeat(64), &"a".repeat(63)] {
        assert!(matches!(
            svc.open(bad).await,
            Err(OneClickError::NotFound(Missing::Link))
        ));
    }
}

#[tokio::test]
async fn following_a_link_asks_to_confirm_and_changes_nothing() {
    let mut kit = Kit::new();
    let request = crate::requests::tests::a_request(&kit);
    serving(&mut kit, request.clone(), false);
    kit.requests().expect_update_request().never();
    let shown = service(kit).open(TOKEN).await.unwrap();
    assert_eq!(shown.state, OneClickState::Ready);
    assert_eq!(shown.request, request);
    assert_eq!(shown.link.answer, json!("yes"));
}

#[tokio::test]
async fn a_spent_link_is_gone() {
    let mut kit = Kit::new();
    let request = crate::requests::tests::a_request(&kit);
    serving(&mut kit, request, true);
    let svc = service(kit);
    assert!(matches!(
        svc.open(TOKEN).await,
        Err(OneClickError::NotFound(Missing::Link))
    ));
    assert!(matches!(
        svc.answer(TOKEN).await,
        Err(OneClickError::NotFound(Missing::Link))
    ));
}

#[tokio::test]
async fn a_request_someone_else_holds_or_that_ended_is_shown_and_left_alone() {
    let held = {
        let kit = Kit::new();
        let mut request = crate::requests::tests::a_request(&kit);
        request.claim(kit.user_id(3), kit.now).unwrap();
        request
    };
    let ended = {
        let kit = Kit::new();
        let mut request = crate::requests::tests::a_request(&kit);
        request.cancel(kit.now).unwrap();
        request
    };
    for request in [held, ended] {
        let mut kit = Kit::new();
        serving(&mut kit, request.clone(), false);
        let svc = service(kit);
        assert_eq!(svc.open(TOKEN).await.unwrap().state, OneClickState::Settled);
        // The request service has no expectations: nothing is answered.
        let tried = svc.answer(TOKEN).await.unwrap();
        assert_eq!(tried.state, OneClickState::Settled);
        assert_eq!(tried.request, request);
    }
}
