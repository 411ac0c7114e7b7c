use mockall::predicate::eq;
use reviewloop_domain::MemberStatus;

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

const URL: &str = "https://review.example.com";

fn service(kit: Kit, signup: SignupPolicy) -> PeopleService {
    PeopleService::new(kit.ports(), URL, signup)
}

/// A hasher that "hashes" by prefixing, so tests can see what was stored.
fn plain_hasher(kit: &mut Kit) {
    kit.passwords()
        .expect_hash()
        .returning(|p| Ok(format!("hashed:{p}")));
    kit.passwords()
        .expect_verify()
        .returning(|p, h| h == format!("hashed:{p}"));
}

#[tokio::test]
async fn unknown_email_and_wrong_password_read_the_same_and_are_throttled() {
    let mut kit = Kit::new();
    plain_hasher(&mut kit);
    let user = kit.user(1, "a@x.io");
    kit.accounts()
        .expect_user_by_email()
        .returning(move |e| Ok((e.as_str() == "a@x.io").then(|| user.clone())));
    kit.people()
        .expect_password_hash()
        .returning(|_| Ok(Some("hashed:right password".into())));
    let people = service(kit, SignupPolicy::InviteOnly);

    let unknown = people.sign_in("nobody@x.io", "whatever1", "1.1.1.1").await;
    let wrong = people.sign_in("a@x.io", "wrong password", "1.1.1.1").await;
    for result in [unknown, wrong] {
        match result {
            Err(e @ SignInError::Unauthenticated(Unauthenticated::WrongCredentials)) => {
                assert_eq!(e.to_string(), WRONG_CREDENTIALS)
            }
            other => panic!("expected the one refusal, got {other:?}"),
        }
    }
    for _ in 0..4 {
        let _ = people.sign_in("a@x.io", "wrong password", "1.1.1.1").await;
    }
    assert!(
        matches!(
            people
                .sign_in("a@x.io", "right password", "9.9.9.9")
                .await
                .classed(),
            Err(ServiceError::RateLimited(_))
        ),
        "five failures lock the email, even for the right password"
    );
}

#[tokio::test]
async fn a_right_password_starts_a_session_whose_token_is_stored_hashed() {
    let mut kit = Kit::new();
    plain_hasher(&mut kit);
    let user = kit.user(1, "a@x.io");
    kit.accounts()
        .expect_user_by_email()
        .returning(move |_| Ok(Some(user.clone())));
    kit.people()
        .expect_password_hash()
        .returning(|_| Ok(Some("hashed:right password".into())));
    let now = kit.now;
    kit.people()
        .expect_insert_session()
        .withf(move |s| {
            s.token_hash.len() == 64 && s.expires_at == now + Duration::days(SESSION_DAYS)
        })
        .times(1)
        .returning(|_| Ok(()));
    let signed = service(kit, SignupPolicy::InviteOnly)
        .sign_in(" A@x.io ", "right password", "1.1.1.1")
        .await
        .unwrap();
    assert_eq!(signed.user.email.as_str(), "a@x.io");
    assert_ne!(signed.token, hash_key(&signed.token));
}

#[tokio::test]
async fn a_session_acts_with_every_permission_and_slides_at_most_daily() {
    let mut kit = Kit::new();
    let user = kit.user(1, "a@x.io");
    let now = kit.now;
    let fresh = Session {
        token_hash: hash_key("tok"),
        user_id: user.id,
        csrf_token: "c".into(),
        created_at: now,
        expires_at: now + Duration::days(SESSION_DAYS) - Duration::hours(2),
    };
    let mut old = fresh.clone();
    old.expires_at = now + Duration::days(3);
    let sessions = [fresh, old];
    let u = user.clone();
    kit.people().expect_session().returning(move |hash, _| {
        Ok(sessions
            .iter()
            .find(|s| s.token_hash == hash)
            .map(|s| (s.clone(), u.clone())))
    });
    kit.people()
        .expect_extend_session()
        .with(eq(hash_key("old")), eq(now + Duration::days(SESSION_DAYS)))
        .times(0)
        .returning(|_, _| Ok(()));
    let people = service(kit, SignupPolicy::InviteOnly);
    let s = people.session("tok").await.unwrap().unwrap();
    assert_eq!(s.principal.permissions, Permission::ALL.to_vec());
    assert_eq!(s.principal.api_key_id, None);
    assert_eq!(s.csrf_token, "c");
    assert!(people.session("").await.unwrap().is_none());
}

#[tokio::test]
async fn sign_up_needs_a_code_unless_open() {
    let mut kit = Kit::new();
    plain_hasher(&mut kit);
    let refused = service(kit, SignupPolicy::InviteOnly)
        .sign_up("new@x.io", "long enough", None)
        .await
        .classed();
    match refused {
        Err(ServiceError::Invalid(e)) => assert_eq!(e.errors[0].field, "invite_code"),
        other => panic!("expected a refusal, got {other:?}"),
    }

    let mut kit = Kit::new();
    plain_hasher(&mut kit);
    kit.accounts()
        .expect_user_by_email()
        .returning(|_| Ok(None));
    kit.accounts()
        .expect_insert_user()
        .times(1)
        .returning(|_| Ok(()));
    kit.people()
        .expect_set_password()
        .withf(|_, h| h == "hashed:long enough")
        .times(1)
        .returning(|_, _| Ok(()));
    kit.people().expect_insert_session().returning(|_| Ok(()));
    let done = service(kit, SignupPolicy::Open)
        .sign_up("new@x.io", "long enough", None)
        .await
        .unwrap();
    assert_eq!(done.signed_in.user.email.as_str(), "new@x.io");
    assert!(done.joined.is_none());
}

#[tokio::test]
async fn sign_up_reports_every_bad_field_at_once() {
    let kit = Kit::new();
    let Err(SignUpError::Invalid(e)) = service(kit, SignupPolicy::Open)
        .sign_up("not an email", "short", None)
        .await
    else {
        panic!("expected a validation error");
    };
    let fields: Vec<_> = e.errors.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["email", "password"]);
}

#[tokio::test]
async fn an_invited_email_claims_its_account_with_the_code_and_joins() {
    let mut kit = Kit::new();
    plain_hasher(&mut kit);
    let invited = kit.user(3, "u3@x.io");
    let lp = kit.a_loop(&[2], &[3]);
    let code = lp.invite_code.as_str().to_owned();
    let by_code = lp.clone();
    kit.loops()
        .expect_loop_by_invite_code()
        .returning(move |_| Ok(Some(by_code.clone())));
    let pending = lp.member(&invited.id).cloned();
    kit.loops()
        .expect_member()
        .returning(move |_, _| Ok(pending.clone()));
    kit.loops()
        .expect_save_member()
        .withf(|m, prev, _, _| {
            m.status == MemberStatus::Active && *prev == Some(MemberStatus::Pending)
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let u = invited.clone();
    kit.accounts()
        .expect_user_by_email()
        .returning(move |_| Ok(Some(u.clone())));
    kit.people().expect_password_hash().returning(|_| Ok(None));
    kit.accounts()
        .expect_api_keys_of()
        .returning(|_| Ok(vec![]));
    kit.people()
        .expect_set_password()
        .times(1)
        .returning(|_, _| Ok(()));
    kit.people().expect_insert_session().returning(|_| Ok(()));
    let done = service(kit, SignupPolicy::InviteOnly)
        .sign_up("u3@x.io", "long enough", Some(&code))
        .await
        .unwrap();
    assert_eq!(done.signed_in.user.id, invited.id);
    let joined = done.joined.unwrap();
    assert!(joined.is_active_member(&invited.id));
}

#[tokio::test]
async fn an_existing_account_cannot_be_taken_over_by_sign_up() {
    // Not invited to this loop, already has a password, or has API keys
    // (a working account, not only an invitation): refused.
    for (pending, has_password, has_key) in [
        (false, false, false),
        (true, true, false),
        (true, false, true),
    ] {
        let mut kit = Kit::new();
        plain_hasher(&mut kit);
        let user = kit.user(3, "u3@x.io");
        let lp = if pending {
            kit.a_loop(&[2], &[3])
        } else {
            kit.a_loop(&[2], &[])
        };
        kit.loops()
            .expect_loop_by_invite_code()
            .returning(move |_| Ok(Some(lp.clone())));
        kit.accounts()
            .expect_user_by_email()
            .returning(move |_| Ok(Some(user.clone())));
        kit.people()
            .expect_password_hash()
            .returning(move |_| Ok(has_password.then(|| "hashed:x".to_owned())));
        let key = has_key.then(|| {
            let user = Kit::new().user(3, "u3@x.io");
            reviewloop_domain::ApiKey::restore(reviewloop_domain::ApiKeyRecord {
                id: reviewloop_domain::ApiKeyId::new(Kit::new().oid(9)),
                user_id: user.id,
                name: None,
                key_hash: "h".into(),
                prefix: "rl_".into(),
                permissions: reviewloop_domain::Permission::ALL.to_vec(),
                rate_limit: 100,
                plan: reviewloop_domain::Plan::Standard,
                test: false,
                created_at: Kit::new().now,
                revoked_at: None,
            })
        });
        kit.accounts()
            .expect_api_keys_of()
            .returning(move |_| Ok(key.clone().into_iter().collect()));
        kit.people().expect_set_password().times(0);
        let result = service(kit, SignupPolicy::Open)
            .sign_up("u3@x.io", "long enough", Some("ABCDEF"))
            .await
            .classed();
        assert!(
            matches!(result, Err(ServiceError::Conflict(ref m)) if m == ACCOUNT_EXISTS),
            "{result:?}"
        );
    }
}

#[tokio::test]
async fn a_password_change_needs_the_current_password() {
    let mut kit = Kit::new();
    plain_hasher(&mut kit);
    let principal = kit.principal(1);
    kit.people()
        .expect_password_hash()
        .returning(|_| Ok(Some("hashed:old password".into())));
    kit.people().expect_set_password().times(0);
    let Err(PasswordError::Invalid(e)) = service(kit, SignupPolicy::InviteOnly)
        .change_password(&principal, "not it at all", "new password")
        .await
    else {
        panic!("expected a refusal");
    };
    assert_eq!(e.errors[0].field, "current_password");
}

#[tokio::test]
async fn a_reset_link_is_emailed_to_known_accounts_and_the_answer_never_tells() {
    let mut kit = Kit::new();
    kit.mailer = Some(reviewloop_ports::MockMailer::new());
    let user = kit.user(1, "a@x.io");
    let id = user.id;
    kit.accounts()
        .expect_user_by_email()
        .returning(move |e| Ok((e.as_str() == "a@x.io").then(|| user.clone())));
    let now = kit.now;
    kit.people()
        .expect_insert_password_token()
        .withf(move |hash, who, expires, notices| {
            let [email] = notices else { return false };
            // The link holds the token; only its hash is stored.
            let link = email
                .message
                .text
                .lines()
                .find_map(|l| l.strip_prefix("Set a new password: "))
                .unwrap_or_default();
            let token = link.rsplit('/').next().unwrap_or_default();
            *who == id
                && *expires == now + chrono::Duration::hours(RESET_LINK_HOURS)
                && link.starts_with("https://review.example.com/setup/")
                && crate::accounts::hash_key(token) == *hash
                && hash != token
                && email.to.as_deref() == Some("a@x.io")
                && email.kind == reviewloop_domain::NoticeKind::PasswordReset
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let people = service(kit, SignupPolicy::InviteOnly);
    assert!(people
        .request_password_reset("A@x.io ", "1.1.1.1")
        .await
        .is_ok());
    assert!(
        people
            .request_password_reset("nobody@x.io", "1.1.1.1")
            .await
            .is_ok(),
        "an unknown email gets the same answer and no email"
    );
    assert!(matches!(
        people
            .request_password_reset("not an email", "1.1.1.1")
            .await
            .classed(),
        Err(ServiceError::Invalid(_))
    ));
    for _ in 0..4 {
        assert!(people
            .request_password_reset("nobody@x.io", "2.2.2.2")
            .await
            .is_ok());
    }
    assert!(
        matches!(
            people
                .request_password_reset("nobody@x.io", "3.3.3.3")
                .await
                .classed(),
            Err(ServiceError::RateLimited(_))
        ),
        "five requests for one email are the most in a window, from any address"
    );
}

#[tokio::test]
async fn without_email_a_reset_is_refused_with_advice() {
    let kit = Kit::new();
    let people = service(kit, SignupPolicy::InviteOnly);
    match people
        .request_password_reset("a@x.io", "1.1.1.1")
        .await
        .classed()
    {
        Err(ServiceError::Refused(m)) => assert_eq!(m, NO_EMAIL),
        other => panic!("{other:?}"),
    }
}
