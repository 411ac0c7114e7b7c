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
    Clock, IdSource, MockAccountStore, MockDeliveryQueue, MockEventFeed, MockIdempotencyStore,
    MockLoopStore, MockMailer, MockNoticeQueue, MockPasswordHasher, MockPeopleStore,
    MockQrRenderer, MockRateLimiter, MockReceiptKeyStore, MockRequestStore, MockReviewStore,
    MockTargetGuard, MockTemplateStore, MockWebhookSender, MockWebhookStore, ReceiptKey,
};

use crate::ports::Ports;

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

pub(crate) struct Kit {
    pub accounts: MockAccountStore,
    pub loops: MockLoopStore,
    pub requests: MockRequestStore,
    pub idempotency: MockIdempotencyStore,
    pub webhooks: MockWebhookStore,
    pub templates: MockTemplateStore,
    pub reviews: MockReviewStore,
    pub deliveries: MockDeliveryQueue,
    pub sender: MockWebhookSender,
    pub notices: MockNoticeQueue,
    /// `None` is a service without SMTP.
    pub mailer: Option<MockMailer>,
    pub feed: MockEventFeed,
    pub guard: MockTargetGuard,
    pub limiter: MockRateLimiter,
    pub qr: MockQrRenderer,
    pub people: MockPeopleStore,
    pub passwords: MockPasswordHasher,
    pub operations: reviewloop_ports::MockOperationsStore,
    /// `NoMeter` unless a test watches what is counted.
    pub meter: Arc<dyn reviewloop_ports::Meter>,
    pub now: DateTime<Utc>,
    pub codes: Vec<&'static str>,
    pub changes: Arc<crate::ChangeHub>,
    /// Holds one active key, [`Kit::receipt_key`], unless a test says otherwise.
    pub receipt_keys: MockReceiptKeyStore,
    pub audit: reviewloop_ports::MockAuditStore,
}

impl Kit {
    pub fn new() -> Self {
        Self {
            accounts: MockAccountStore::new(),
            loops: MockLoopStore::new(),
            requests: MockRequestStore::new(),
            idempotency: MockIdempotencyStore::new(),
            webhooks: MockWebhookStore::new(),
            templates: MockTemplateStore::new(),
            reviews: MockReviewStore::new(),
            deliveries: MockDeliveryQueue::new(),
            sender: MockWebhookSender::new(),
            notices: MockNoticeQueue::new(),
            mailer: None,
            feed: MockEventFeed::new(),
            guard: MockTargetGuard::new(),
            limiter: MockRateLimiter::new(),
            qr: MockQrRenderer::new(),
            people: MockPeopleStore::new(),
            passwords: MockPasswordHasher::new(),
            operations: reviewloop_ports::MockOperationsStore::new(),
            meter: Arc::new(reviewloop_ports::NoMeter),
            now: DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default(),
            codes: vec!["ABCDEF"],
            changes: crate::ChangeHub::new(),
            audit: reviewloop_ports::MockAuditStore::new(),
            receipt_keys: {
                let mut store = MockReceiptKeyStore::new();
                store
                    .expect_receipt_keys()
                    .returning(|| Ok(vec![Kit::receipt_key()]));
                store
            },
        }
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

    pub fn ports(self) -> Ports {
        let clock: Arc<dyn Clock> = Arc::new(FixedClock(self.now));
        let ids: Arc<dyn IdSource> = Arc::new(SeqIds {
            next: AtomicU8::new(100),
            codes: self.codes,
            next_code: AtomicU8::new(0),
        });
        Ports {
            accounts: Arc::new(self.accounts),
            loops: Arc::new(self.loops),
            requests: Arc::new(self.requests),
            idempotency: Arc::new(self.idempotency),
            webhooks: Arc::new(self.webhooks),
            templates: Arc::new(self.templates),
            reviews: Arc::new(self.reviews),
            deliveries: Arc::new(self.deliveries),
            sender: Arc::new(self.sender),
            notices: Arc::new(self.notices),
            mailer: self
                .mailer
                .map(|m| Arc::new(m) as Arc<dyn reviewloop_ports::Mailer>),
            feed: Arc::new(self.feed),
            guard: Arc::new(self.guard),
            audit: Arc::new(self.audit),
            receipts: Arc::new(crate::ReceiptKeys::new(
                Arc::new(self.receipt_keys),
                clock.clone(),
                ids.clone(),
            )),
            clock,
            ids,
            qr: Arc::new(self.qr),
            people: Arc::new(self.people),
            passwords: Arc::new(self.passwords),
            changes: self.changes,
            limiter: Arc::new(self.limiter),
            operations: Arc::new(self.operations),
            meter: self.meter,
        }
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
