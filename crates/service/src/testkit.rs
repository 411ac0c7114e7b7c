//! Test doubles shared by the services' unit tests: mocked stores, a fixed
//! clock and predictable ids.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use reviewloop_domain::NewLoop;
use reviewloop_domain::{
    AccountStatus, Email, InviteCode, Loop, LoopId, Member, ObjectId, User, UserId,
};
use reviewloop_ports::{
    AccountStore, AnswerLinkStore, AuditStore, Clock, DeliveryQueue, EventFeed, IdSource,
    IdempotencyStore, LoopStore, MockAccountStore, MockAnswerLinkStore, MockAuditStore,
    MockDeliveryQueue, MockEventFeed, MockIdempotencyStore, MockLoopStore, MockMailer,
    MockNoticeQueue, MockOperationsStore, MockPasswordHasher, MockPeopleStore, MockPushGateway,
    MockPushStore, MockQrRenderer, MockRateLimiter, MockReceiptKeyStore, MockRequestStore,
    MockReviewStore, MockSlackApi, MockSlackStore, MockTargetGuard, MockTemplateStore,
    MockWebhookSender, MockWebhookStore, NoticeQueue, OperationsStore, PasswordHasher, PeopleStore,
    PushGateway, PushStore, QrRenderer, RateLimiter, ReceiptKey, RequestStore, ReviewStore,
    SlackApi, SlackStore, TargetGuard, TemplateStore, WebhookSender, WebhookStore,
};

pub(crate) struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

/// Ids 0x64.., 0x65.., … in order of creation; invite codes from a script.
pub(crate) struct SeqIds {
    next: AtomicU8,
    codes: Vec<&'static str>,
    next_code: AtomicU8,
}

impl IdSource for SeqIds {
    fn object_id(&self, now: DateTime<Utc>) -> ObjectId {
        ObjectId::from_parts(
            now.timestamp(),
            [self.next.fetch_add(1, Ordering::SeqCst); 8],
        )
    }

    fn invite_code(&self) -> InviteCode {
        let i = usize::from(self.next_code.fetch_add(1, Ordering::SeqCst));
        let code = self
            .codes
            .get(i)
            .or(self.codes.last())
            .copied()
            .unwrap_or("ABCDEF");
        InviteCode::parse(code).unwrap_or_else(|| InviteCode::from_random([0; 6]))
    }

    fn jitter(&self) -> f64 {
        0.0
    }

    fn secret_hex(&self, bytes: usize) -> String {
        "ab".repeat(bytes)
    }
}

/// Mocks of the ports and fixed facts (time, ids) for the services' unit
/// tests. A mock is made only when a test sets an expectation on it or the
/// service under test holds its port, so a test builds the mocks of what
/// its service uses and no others.
pub(crate) struct Kit {
    accounts: Option<MockAccountStore>,
    loops: Option<MockLoopStore>,
    requests: Option<MockRequestStore>,
    idempotency: Option<MockIdempotencyStore>,
    webhooks: Option<MockWebhookStore>,
    templates: Option<MockTemplateStore>,
    reviews: Option<MockReviewStore>,
    deliveries: Option<MockDeliveryQueue>,
    sender: Option<MockWebhookSender>,
    notices: Option<MockNoticeQueue>,
    answer_links: Option<MockAnswerLinkStore>,
    slack: Option<MockSlackApi>,
    slack_posts: Option<MockSlackStore>,
    push: Option<MockPushStore>,
    push_gateway: Option<MockPushGateway>,
    feed: Option<MockEventFeed>,
    guard: Option<MockTargetGuard>,
    limiter: Option<MockRateLimiter>,
    qr: Option<MockQrRenderer>,
    people: Option<MockPeopleStore>,
    passwords: Option<MockPasswordHasher>,
    operations: Option<MockOperationsStore>,
    audit: Option<MockAuditStore>,
    /// `None` is a service without SMTP.
    pub mailer: Option<MockMailer>,
    /// Holds one active key, [`Kit::receipt_key`], unless a test says otherwise.
    pub receipt_keys: Option<MockReceiptKeyStore>,
    /// `NoMeter` unless a test watches what is counted.
    pub meter: Arc<dyn reviewloop_ports::Meter>,
    pub now: DateTime<Utc>,
    pub codes: Vec<&'static str>,
    pub changes: Arc<crate::ChangeHub>,
}

/// Ports a service holds, made from the kit's mocks.
pub(crate) trait FromKit {
    fn from_kit(kit: &mut Wiring) -> Self;
}

impl Kit {
    pub fn new() -> Self {
        Self {
            accounts: None,
            loops: None,
            requests: None,
            idempotency: None,
            webhooks: None,
            templates: None,
            reviews: None,
            deliveries: None,
            sender: None,
            notices: None,
            answer_links: None,
            slack: None,
            slack_posts: None,
            push: None,
            push_gateway: None,
            feed: None,
            guard: None,
            limiter: None,
            qr: None,
            people: None,
            passwords: None,
            operations: None,
            audit: None,
            mailer: None,
            receipt_keys: None,
            meter: Arc::new(reviewloop_ports::NoMeter),
            now: DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default(),
            codes: vec!["ABCDEF"],
            changes: crate::ChangeHub::new(),
        }
    }

    /// The accounts mock, made when a test first sets an expectation on it.
    pub fn accounts(&mut self) -> &mut MockAccountStore {
        self.accounts.get_or_insert_with(MockAccountStore::new)
    }

    /// The loops mock, made when a test first sets an expectation on it.
    pub fn loops(&mut self) -> &mut MockLoopStore {
        self.loops.get_or_insert_with(MockLoopStore::new)
    }

    /// The requests mock, made when a test first sets an expectation on it.
    pub fn requests(&mut self) -> &mut MockRequestStore {
        self.requests.get_or_insert_with(MockRequestStore::new)
    }

    /// The idempotency mock, made when a test first sets an expectation on it.
    pub fn idempotency(&mut self) -> &mut MockIdempotencyStore {
        self.idempotency
            .get_or_insert_with(MockIdempotencyStore::new)
    }

    /// The webhooks mock, made when a test first sets an expectation on it.
    pub fn webhooks(&mut self) -> &mut MockWebhookStore {
        self.webhooks.get_or_insert_with(MockWebhookStore::new)
    }

    /// The templates mock, made when a test first sets an expectation on it.
    pub fn templates(&mut self) -> &mut MockTemplateStore {
        self.templates.get_or_insert_with(MockTemplateStore::new)
    }

    /// The reviews mock, made when a test first sets an expectation on it.
    pub fn reviews(&mut self) -> &mut MockReviewStore {
        self.reviews.get_or_insert_with(MockReviewStore::new)
    }

    /// The deliveries mock, made when a test first sets an expectation on it.
    pub fn deliveries(&mut self) -> &mut MockDeliveryQueue {
        self.deliveries.get_or_insert_with(MockDeliveryQueue::new)
    }

    /// The sender mock, made when a test first sets an expectation on it.
    pub fn sender(&mut self) -> &mut MockWebhookSender {
        self.sender.get_or_insert_with(MockWebhookSender::new)
    }

    /// The notices mock, made when a test first sets an expectation on it.
    pub fn notices(&mut self) -> &mut MockNoticeQueue {
        self.notices.get_or_insert_with(MockNoticeQueue::new)
    }

    /// The Slack Web API mock, made when a test first sets an expectation on it.
    pub fn slack(&mut self) -> &mut MockSlackApi {
        self.slack.get_or_insert_with(MockSlackApi::new)
    }

    /// The Slack posts mock, made when a test first sets an expectation on it.
    pub fn slack_posts(&mut self) -> &mut MockSlackStore {
        self.slack_posts.get_or_insert_with(MockSlackStore::new)
    }

    pub fn push(&mut self) -> &mut MockPushStore {
        self.push.get_or_insert_with(MockPushStore::new)
    }

    pub fn push_gateway(&mut self) -> &mut MockPushGateway {
        self.push_gateway.get_or_insert_with(MockPushGateway::new)
    }

    /// The answer links mock, made when a test first sets an expectation on it.
    pub fn answer_links(&mut self) -> &mut MockAnswerLinkStore {
        self.answer_links
            .get_or_insert_with(MockAnswerLinkStore::new)
    }

    /// The feed mock, made when a test first sets an expectation on it.
    pub fn feed(&mut self) -> &mut MockEventFeed {
        self.feed.get_or_insert_with(MockEventFeed::new)
    }

    /// The guard mock, made when a test first sets an expectation on it.
    pub fn guard(&mut self) -> &mut MockTargetGuard {
        self.guard.get_or_insert_with(MockTargetGuard::new)
    }

    /// The limiter mock, made when a test first sets an expectation on it.
    pub fn limiter(&mut self) -> &mut MockRateLimiter {
        self.limiter.get_or_insert_with(MockRateLimiter::new)
    }

    /// The qr mock, made when a test first sets an expectation on it.
    pub fn qr(&mut self) -> &mut MockQrRenderer {
        self.qr.get_or_insert_with(MockQrRenderer::new)
    }

    /// The people mock, made when a test first sets an expectation on it.
    pub fn people(&mut self) -> &mut MockPeopleStore {
        self.people.get_or_insert_with(MockPeopleStore::new)
    }

    /// The passwords mock, made when a test first sets an expectation on it.
    pub fn passwords(&mut self) -> &mut MockPasswordHasher {
        self.passwords.get_or_insert_with(MockPasswordHasher::new)
    }

    /// The operations mock, made when a test first sets an expectation on it.
    pub fn operations(&mut self) -> &mut MockOperationsStore {
        self.operations.get_or_insert_with(MockOperationsStore::new)
    }

    /// The audit mock, made when a test first sets an expectation on it.
    pub fn audit(&mut self) -> &mut MockAuditStore {
        self.audit.get_or_insert_with(MockAuditStore::new)
    }

    /// The receipt key the kit's store holds: the Ed25519 key of seed 7s.
    pub fn receipt_key() -> ReceiptKey {
        let seed = [7u8; 32];
        let public = ed25519_dalek::SigningKey::from_bytes(&seed)
            .verifying_key()
            .to_bytes();
        ReceiptKey {
            key_id: "rk_test".into(),
            public_key: public.to_vec(),
            secret_key: seed.to_vec(),
            created_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
            retired_at: None,
        }
    }

    /// The ports of the service under test (its type says which).
    pub fn ports<P: FromKit>(self) -> P {
        let clock: Arc<dyn Clock> = Arc::new(FixedClock(self.now));
        let ids: Arc<dyn IdSource> = Arc::new(SeqIds {
            next: AtomicU8::new(100),
            codes: self.codes.clone(),
            next_code: AtomicU8::new(0),
        });
        P::from_kit(&mut Wiring(self, clock, ids))
    }

    pub fn oid(&self, n: u8) -> ObjectId {
        ObjectId::from_parts(1, [n; 8])
    }

    pub fn user_id(&self, n: u8) -> UserId {
        UserId::new(self.oid(n))
    }

    pub fn user(&self, n: u8, email: &str) -> User {
        User::create(
            self.user_id(n),
            Email::parse(email).unwrap_or_else(|_| panic!("bad test email {email}")),
            "whsec_test".into(),
            self.now,
        )
    }

    pub fn email(n: u8) -> Email {
        Email::parse(&format!("u{n}@x.io")).unwrap_or_else(|_| panic!("bad email"))
    }

    /// A loop created by user 1, with active members `active` and pending `pending`.
    pub fn a_loop(&self, active: &[u8], pending: &[u8]) -> Loop {
        let id = LoopId::new(self.oid(50));
        let creator = Member::creator(id, self.user_id(1), Self::email(1), self.now);
        let fields =
            NewLoop::parse(Some("Reviewers"), None, None).unwrap_or_else(|_| panic!("name"));
        let mut lp = Loop::create(
            id,
            fields,
            creator,
            InviteCode::from_random([3; 6]),
            self.now,
        );
        for n in active {
            lp.put_member(Member::joined(
                id,
                self.user_id(*n),
                Self::email(*n),
                self.now,
            ))
            .unwrap_or_else(|_| panic!("member of this loop"));
        }
        for n in pending {
            lp.put_member(Member::invited(
                id,
                self.user_id(*n),
                Self::email(*n),
                self.now,
            ))
            .unwrap_or_else(|_| panic!("member of this loop"));
        }
        lp
    }

    pub fn principal(&self, n: u8) -> crate::Principal {
        crate::Principal {
            user_id: self.user_id(n),
            email: Self::email(n),
            account_status: AccountStatus::Active,
            api_key_id: Some(reviewloop_domain::ApiKeyId::new(self.oid(200 + n))),
            permissions: reviewloop_domain::Permission::ALL.to_vec(),
            rate_limit: 100,
            plan: reviewloop_domain::Plan::Standard,
            test: false,
        }
    }
}

impl FromKit for Arc<crate::ReceiptKeys> {
    fn from_kit(kit: &mut Wiring) -> Self {
        kit.receipts()
    }
}

impl FromKit for Arc<dyn IdSource> {
    fn from_kit(kit: &mut Wiring) -> Self {
        kit.ids()
    }
}

impl FromKit for Arc<dyn LoopStore> {
    fn from_kit(kit: &mut Wiring) -> Self {
        kit.loops()
    }
}

/// Hands out the kit's mocks as ports, each once.
pub(crate) struct Wiring(Kit, Arc<dyn Clock>, Arc<dyn IdSource>);

impl Wiring {
    pub fn accounts(&mut self) -> Arc<dyn AccountStore> {
        Arc::new(self.0.accounts.take().unwrap_or_default())
    }

    pub fn loops(&mut self) -> Arc<dyn LoopStore> {
        Arc::new(self.0.loops.take().unwrap_or_default())
    }

    pub fn requests(&mut self) -> Arc<dyn RequestStore> {
        Arc::new(self.0.requests.take().unwrap_or_default())
    }

    pub fn idempotency(&mut self) -> Arc<dyn IdempotencyStore> {
        Arc::new(self.0.idempotency.take().unwrap_or_default())
    }

    pub fn webhooks(&mut self) -> Arc<dyn WebhookStore> {
        Arc::new(self.0.webhooks.take().unwrap_or_default())
    }

    pub fn templates(&mut self) -> Arc<dyn TemplateStore> {
        Arc::new(self.0.templates.take().unwrap_or_default())
    }

    pub fn reviews(&mut self) -> Arc<dyn ReviewStore> {
        Arc::new(self.0.reviews.take().unwrap_or_default())
    }

    pub fn deliveries(&mut self) -> Arc<dyn DeliveryQueue> {
        Arc::new(self.0.deliveries.take().unwrap_or_default())
    }

    pub fn sender(&mut self) -> Arc<dyn WebhookSender> {
        Arc::new(self.0.sender.take().unwrap_or_default())
    }

    pub fn notices(&mut self) -> Arc<dyn NoticeQueue> {
        Arc::new(self.0.notices.take().unwrap_or_default())
    }

    pub fn answer_links(&mut self) -> Arc<dyn AnswerLinkStore> {
        Arc::new(self.0.answer_links.take().unwrap_or_default())
    }

    pub fn slack(&mut self) -> Arc<dyn SlackApi> {
        Arc::new(self.0.slack.take().unwrap_or_default())
    }

    pub fn slack_posts(&mut self) -> Arc<dyn SlackStore> {
        Arc::new(self.0.slack_posts.take().unwrap_or_default())
    }

    pub fn push(&mut self) -> Arc<dyn PushStore> {
        Arc::new(self.0.push.take().unwrap_or_default())
    }

    pub fn push_gateway(&mut self) -> Arc<dyn PushGateway> {
        Arc::new(self.0.push_gateway.take().unwrap_or_default())
    }

    pub fn feed(&mut self) -> Arc<dyn EventFeed> {
        Arc::new(self.0.feed.take().unwrap_or_default())
    }

    pub fn guard(&mut self) -> Arc<dyn TargetGuard> {
        Arc::new(self.0.guard.take().unwrap_or_default())
    }

    pub fn limiter(&mut self) -> Arc<dyn RateLimiter> {
        Arc::new(self.0.limiter.take().unwrap_or_default())
    }

    pub fn qr(&mut self) -> Arc<dyn QrRenderer> {
        Arc::new(self.0.qr.take().unwrap_or_default())
    }

    pub fn people(&mut self) -> Arc<dyn PeopleStore> {
        Arc::new(self.0.people.take().unwrap_or_default())
    }

    pub fn passwords(&mut self) -> Arc<dyn PasswordHasher> {
        Arc::new(self.0.passwords.take().unwrap_or_default())
    }

    pub fn operations(&mut self) -> Arc<dyn OperationsStore> {
        Arc::new(self.0.operations.take().unwrap_or_default())
    }

    pub fn audit(&mut self) -> Arc<dyn AuditStore> {
        Arc::new(self.0.audit.take().unwrap_or_default())
    }

    pub fn mailer(&mut self) -> Option<Arc<dyn reviewloop_ports::Mailer>> {
        self.0
            .mailer
            .take()
            .map(|m| Arc::new(m) as Arc<dyn reviewloop_ports::Mailer>)
    }

    pub fn clock(&mut self) -> Arc<dyn Clock> {
        self.1.clone()
    }

    pub fn ids(&mut self) -> Arc<dyn IdSource> {
        self.2.clone()
    }

    pub fn meter(&mut self) -> Arc<dyn reviewloop_ports::Meter> {
        self.0.meter.clone()
    }

    pub fn changes(&mut self) -> Arc<crate::ChangeHub> {
        self.0.changes.clone()
    }

    pub fn receipts(&mut self) -> Arc<crate::ReceiptKeys> {
        let store = self.0.receipt_keys.take().unwrap_or_else(|| {
            let mut store = MockReceiptKeyStore::new();
            store
                .expect_receipt_keys()
                .returning(|| Ok(vec![Kit::receipt_key()]));
            store
        });
        Arc::new(crate::ReceiptKeys::new(
            Arc::new(store),
            self.1.clone(),
            self.2.clone(),
        ))
    }
}

/// What a surface makes of a use case's failure: its class, which tests
/// compare with what a client is told.
pub(crate) trait Classed<T> {
    fn classed(self) -> Result<T, crate::ServiceError>;
}

impl<T, E: crate::Failure> Classed<T> for Result<T, E> {
    fn classed(self) -> Result<T, crate::ServiceError> {
        self.map_err(Into::into)
    }
}
