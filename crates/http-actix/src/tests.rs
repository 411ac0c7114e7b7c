//! In-process tests of the HTTP edge: envelopes, status codes and headers
//! for the failures the framework and the auth layer produce. The services
//! run over mocked ports; the black-box tests in `tests/` cover the rest.

use std::sync::Arc;

use actix_web::http::header::{ContentType, AUTHORIZATION, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::test::{self, TestRequest};
use chrono::{DateTime, Utc};
use reviewloop_domain::{
    ApiKey, ApiKeyId, Email, InviteCode, NewApiKey, ObjectId, Permission, User, UserId,
};
use reviewloop_ports::{
    Clock, IdSource, MockAccountStore, MockDeliveryQueue, MockIdempotencyStore, MockLoopStore,
    MockQrRenderer, MockRateLimiter, MockRequestStore, MockTargetGuard, MockWebhookSender,
    MockWebhookStore, RateLimitStatus,
};
use reviewloop_service::Ports;
use serde_json::Value;

use super::*;

const KEY: &str = "rl_test";

struct Fixed;
impl Clock for Fixed {
    fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }
}
struct Ids;
impl IdSource for Ids {
    fn object_id(&self, now: DateTime<Utc>) -> ObjectId {
        ObjectId::from_parts(now.timestamp(), [1; 8])
    }
    fn invite_code(&self) -> InviteCode {
        InviteCode::from_random([1; 6])
    }
    fn jitter(&self) -> f64 {
        0.0
    }
    fn secret_hex(&self, bytes: usize) -> String {
        "0".repeat(bytes * 2)
    }
}

fn hash(key: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(key.as_bytes()))
}

/// Ports where `rl_test` is a valid key with `permissions`, allowed while `allowed`.
fn ports(permissions: Vec<Permission>, allowed: bool) -> Ports {
    let user = User::create(
        UserId::new(ObjectId::from_parts(1, [2; 8])),
        Email::parse("a@x.io").unwrap(),
        String::new(),
        Fixed.now(),
    );
    let key = ApiKey::issue(
        ApiKeyId::new(ObjectId::from_parts(1, [3; 8])),
        user.id,
        NewApiKey {
            name: None,
            key_hash: hash(KEY),
            prefix: "rl_tes".into(),
            permissions,
            rate_limit: 10,
            plan: reviewloop_domain::Plan::Standard,
            test: false,
        },
        Fixed.now(),
    );
    let mut accounts = MockAccountStore::new();
    accounts
        .expect_api_key_by_hash()
        .returning(move |h| Ok((h == key.key_hash).then(|| (key.clone(), user.clone()))));
    let mut limiter = MockRateLimiter::new();
    limiter.expect_hit().returning(move |_, _, limit, now| {
        Ok(RateLimitStatus {
            limit,
            remaining: if allowed { limit - 1 } else { 0 },
            reset_at: now + chrono::Duration::seconds(1800),
            allowed,
        })
    });
    let mut loops = MockLoopStore::new();
    loops.expect_loop_by_id().returning(|_| Ok(None));
    loops.expect_loop_by_invite_code().returning(|_| Ok(None));
    Ports {
        accounts: Arc::new(accounts),
        loops: Arc::new(loops),
        requests: Arc::new(MockRequestStore::new()),
        idempotency: Arc::new(MockIdempotencyStore::new()),
        webhooks: Arc::new(MockWebhookStore::new()),
        templates: Arc::new(reviewloop_ports::MockTemplateStore::new()),
        reviews: Arc::new(reviewloop_ports::MockReviewStore::new()),
        deliveries: Arc::new(MockDeliveryQueue::new()),
        sender: Arc::new(MockWebhookSender::new()),
        notices: Arc::new(reviewloop_ports::MockNoticeQueue::new()),
        answer_links: Arc::new(reviewloop_ports::MockAnswerLinkStore::new()),
        slack: Arc::new(reviewloop_ports::MockSlackApi::new()),
        slack_posts: Arc::new(reviewloop_ports::MockSlackStore::new()),
        push: Arc::new(reviewloop_ports::MockPushStore::new()),
        push_gateway: Arc::new(reviewloop_ports::MockPushGateway::new()),
        mailer: None,
        feed: Arc::new(reviewloop_ports::MockEventFeed::new()),
        guard: Arc::new(MockTargetGuard::new()),
        clock: Arc::new(Fixed),
        ids: Arc::new(Ids),
        qr: Arc::new(MockQrRenderer::new()),
        people: Arc::new(reviewloop_ports::MockPeopleStore::new()),
        passwords: Arc::new(reviewloop_ports::MockPasswordHasher::new()),
        limiter: Arc::new(limiter),
        changes: reviewloop_service::ChangeHub::new(),
        operations: Arc::new(reviewloop_ports::MockOperationsStore::new()),
        meter: Arc::new(reviewloop_ports::NoMeter),
        audit: Arc::new(reviewloop_ports::MockAuditStore::new()),
        receipts: Arc::new(reviewloop_service::ReceiptKeys::new(
            Arc::new(reviewloop_ports::MockReceiptKeyStore::new()),
            Arc::new(Fixed),
            Arc::new(Ids),
        )),
    }
}

async fn call(
    ports: Ports,
    req: TestRequest,
) -> (StatusCode, actix_web::http::header::HeaderMap, Value) {
    let app = test::init_service(build_app(
        AppState::new(ports, "http://localhost:8080"),
        |_| {},
    ))
    .await;
    let response = test::call_service(&app, req.to_request()).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body = test::read_body(response).await;
    let json = serde_json::from_slice(&body).unwrap_or_else(|_| panic!("not JSON: {body:?}"));
    (status, headers, json)
}

fn authed(req: TestRequest) -> TestRequest {
    req.insert_header((AUTHORIZATION, format!("Bearer {KEY}")))
}

fn all() -> Ports {
    ports(Permission::ALL.to_vec(), true)
}

#[actix_web::test]
async fn unknown_routes_are_404_in_the_envelope_of_their_surface() {
    let (status, _, body) = call(all(), authed(TestRequest::get().uri("/v1/api/nothing"))).await;
    assert_eq!(
        (status, body["error"].as_bool(), body["msg"].as_str()),
        (StatusCode::NOT_FOUND, Some(true), Some("Not found"))
    );
    let (status, _, body) = call(all(), TestRequest::get().uri("/nowhere")).await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (StatusCode::NOT_FOUND, Some("Not found"))
    );
    let (status, _, body) = call(
        all(),
        authed(TestRequest::get().uri("/v1/reviews/123/nowhere")),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"]["code"], "not_found");
    assert!(body["meta"]["timestamp"].is_string());
}

#[actix_web::test]
async fn wrong_method_is_405_with_allow_and_rate_limit_headers() {
    let (status, headers, body) = call(all(), authed(TestRequest::patch().uri("/v1/loops"))).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body["msg"], "Method not allowed");
    assert!(headers.contains_key("x-ratelimit-limit"));
    assert!(headers.contains_key("x-request-id"));
}

#[actix_web::test]
async fn malformed_json_wrong_types_and_wrong_content_type_are_client_errors() {
    let req = authed(TestRequest::post().uri("/v1/api/loops"))
        .insert_header(ContentType::json())
        .set_payload("{\"name\": ");
    let (status, _, body) = call(all(), req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["msg"].as_str().unwrap().starts_with("Malformed JSON"),
        "{body}"
    );

    let req =
        authed(TestRequest::post().uri("/v1/api/loops")).set_json(serde_json::json!({"name": 5}));
    let (status, _, body) = call(all(), req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["msg"]
            .as_str()
            .unwrap()
            .contains("invalid type: integer `5`"),
        "{body}"
    );

    let req = authed(TestRequest::post().uri("/v1/api/loops"))
        .insert_header((CONTENT_TYPE, "text/plain"))
        .set_payload("name=x");
    let (status, _, body) = call(all(), req).await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("Content-Type must be application/json")
        )
    );
}

#[actix_web::test]
async fn bodies_over_one_mebibyte_are_413() {
    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(MAX_BODY_BYTES));
    let req = authed(TestRequest::post().uri("/v1/loops"))
        .insert_header(ContentType::json())
        .set_payload(big);
    let (status, _, body) = call(all(), req).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(body["msg"]
        .as_str()
        .unwrap()
        .starts_with("Request body too large"));
}

#[actix_web::test]
async fn path_ids_must_be_24_hex() {
    let (status, _, body) = call(
        all(),
        authed(TestRequest::get().uri("/v1/api/loops/not-an-id")),
    )
    .await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (StatusCode::BAD_REQUEST, Some("Invalid ID format"))
    );
    let (status, _, body) = call(
        all(),
        authed(TestRequest::get().uri("/v1/requests/0123456789abcdef0123456g")),
    )
    .await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (StatusCode::BAD_REQUEST, Some("Invalid ID format"))
    );
}

#[actix_web::test]
async fn missing_and_invalid_keys_are_401_without_rate_limit_headers() {
    for req in [
        TestRequest::get().uri("/v1/test"),
        TestRequest::get()
            .uri("/v1/test")
            .insert_header((AUTHORIZATION, "Bearer rl_wrong")),
        TestRequest::get()
            .uri("/v1/api/loops")
            .insert_header((AUTHORIZATION, "Token abc")),
    ] {
        let (status, headers, body) = call(all(), req).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body["error"], true);
        assert!(!headers.contains_key("x-ratelimit-limit"));
    }
}

#[actix_web::test]
async fn failures_before_the_handler_take_the_envelope_of_the_route() {
    // No key, and a key over its limit: refused by the key middleware,
    // answered in the envelope of the scope around it.
    let (status, _, body) = call(all(), TestRequest::get().uri("/v1/templates")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, headers, body) = call(
        ports(Permission::ALL.to_vec(), false),
        authed(TestRequest::get().uri("/v1/webhooks")),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    assert!(headers.contains_key("retry-after"));
    // The same resource under `/v1/api` is the request surface's.
    let (status, _, body) = call(all(), TestRequest::get().uri("/v1/api/webhooks")).await;
    assert_eq!(
        (status, body["error"].as_bool()),
        (StatusCode::UNAUTHORIZED, Some(true))
    );
    // A bad id of either surface.
    let (_, _, body) = call(all(), authed(TestRequest::get().uri("/v1/teams/xyz"))).await;
    assert_eq!(body["error"]["details"][0]["field"], "id");
    let (_, _, body) = call(all(), authed(TestRequest::get().uri("/v1/loops/xyz"))).await;
    assert_eq!(body["msg"], "Invalid ID format");
}

#[actix_web::test]
async fn over_the_limit_is_429_with_retry_after() {
    let (status, headers, body) = call(
        ports(Permission::ALL.to_vec(), false),
        authed(TestRequest::get().uri("/v1/test")),
    )
    .await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("Rate limit exceeded"))
    );
    assert_eq!(headers.get("x-ratelimit-remaining").unwrap(), "0");
    let retry: i64 = headers
        .get("retry-after")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
}

#[actix_web::test]
async fn key_check_reports_identity_permissions_and_limit() {
    let (status, headers, body) = call(all(), authed(TestRequest::get().uri("/v1/test"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"], false);
    let data = &body["data"];
    assert_eq!(data["email"], "a@x.io");
    assert_eq!(data["account_status"], "active");
    assert_eq!(data["permissions"].as_array().unwrap().len(), 4);
    assert_eq!(
        (
            data["rate_limit"]["limit"].as_u64(),
            data["rate_limit"]["remaining"].as_u64()
        ),
        (Some(10), Some(9))
    );
    assert!(data["rate_limit"]["reset_at"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    assert_eq!(headers.get("x-ratelimit-limit").unwrap(), "10");
    assert_eq!(headers.get("x-ratelimit-remaining").unwrap(), "9");
}

#[actix_web::test]
async fn missing_permission_is_403_with_its_name() {
    let ports = ports(vec![Permission::LoopsRead], true);
    let req =
        authed(TestRequest::post().uri("/v1/api/loops")).set_json(serde_json::json!({"name": "x"}));
    let (status, _, body) = call(ports, req).await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (
            StatusCode::FORBIDDEN,
            Some("Insufficient permissions: requires loops:write")
        )
    );
}

#[actix_web::test]
async fn public_routes_need_no_key_and_unknown_codes_are_404() {
    let (status, _, body) = call(all(), TestRequest::get().uri("/v1/qr/ABCDEF.png")).await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (StatusCode::NOT_FOUND, Some("Invalid invite code"))
    );
    let (status, _, body) = call(all(), TestRequest::get().uri("/health")).await;
    assert_eq!(
        (status, body["data"]["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
}

#[actix_web::test]
async fn public_routes_are_limited_per_client() {
    // Windows are whole minutes; stay inside one.
    let into_minute = Utc::now().timestamp() % 60;
    if into_minute > 57 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - into_minute as u64)).await;
    }
    let app = test::init_service(build_app(
        AppState::new(all(), "http://localhost:8080"),
        |_| {},
    ))
    .await;
    let from = |ip: &str| {
        TestRequest::get()
            .uri("/v1/qr/ABCDEF.png")
            .peer_addr(format!("{ip}:4000").parse().unwrap())
            .to_request()
    };
    for _ in 0..PUBLIC_CALLS_PER_MINUTE {
        let response = test::call_service(&app, from("192.0.2.1")).await;
        assert_eq!(
            response.status(),
            StatusCode::NOT_FOUND,
            "unknown code, but counted"
        );
    }
    let refused = test::call_service(&app, from("192.0.2.1")).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    let other = test::call_service(&app, from("192.0.2.2")).await;
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}
