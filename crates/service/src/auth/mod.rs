//! Authentication and rate limiting of API calls.

mod key_cache;

pub use key_cache::KeyCache;

use std::sync::Arc;

use reviewloop_domain::AccountStatus;
use reviewloop_ports::{RateLimitStatus, RateWindow, StoreError};

use crate::accounts::hash_key;
use crate::error::{use_case_error, Bug, Denied, OverLimit, Unauthenticated};

use_case_error! {
    /// Why a call's API key was not accepted ([`Authenticator::authenticate`]).
    pub enum AuthError {
        Unauthenticated(Unauthenticated),
        Denied(Denied),
        OverLimit(OverLimit),
        Store(StoreError),
        Bug(Bug),
    }
}
use crate::ports::AuthPorts;
use crate::principal::Principal;

/// Which allowance a call is counted against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowance {
    /// The key's own hourly limit: the request surface.
    Hourly,
    /// The key's plan's per-minute limit: the alternate surface (reviews,
    /// templates, webhooks, teams).
    PerMinute,
}

/// Turns a bearer token into a [`Principal`] and counts the call.
#[derive(Clone)]
pub struct Authenticator {
    ports: AuthPorts,
    keys: Arc<KeyCache>,
}

impl Authenticator {
    /// An authenticator over `ports`, with an empty key cache.
    pub fn new(ports: AuthPorts) -> Self {
        Self {
            ports,
            keys: Arc::new(KeyCache::default()),
        }
    }

    /// The cache of recently seen keys, for whoever revokes keys in this
    /// process ([`crate::AccountService::forgetting_revoked_keys_in`]).
    pub fn key_cache(&self) -> Arc<KeyCache> {
        self.keys.clone()
    }

    /// A signed-in person calling from one of the web application's pages:
    /// the session behind the cookie's `token`, proven by the session's
    /// anti-forgery token in `csrf` (cookies ride along on other sites'
    /// requests; the token does not). Not counted against any allowance,
    /// like the pages themselves.
    pub async fn authenticate_session(
        &self,
        token: &str,
        csrf: Option<&str>,
    ) -> Result<Principal, AuthError> {
        let session = crate::people::find_session(&*self.ports.people, &*self.ports.clock, token)
            .await?
            .ok_or(Unauthenticated::MissingKeyOrSession)?;
        if !crate::people::same_token(csrf.unwrap_or_default(), &session.csrf_token) {
            return Err(Unauthenticated::BadCsrfToken.into());
        }
        Ok(session.principal)
    }

    /// Checks the `Authorization` header's value and counts one call against
    /// `allowance`: the key's hourly limit, or its plan's per-minute one.
    /// Unknown, revoked or malformed keys get 401, suspended accounts 403,
    /// keys over their limit 429 (with the limit's state, so the caller can
    /// say when to retry).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(
        &self,
        authorization: Option<&str>,
        allowance: Allowance,
    ) -> Result<(Principal, RateLimitStatus), AuthError> {
        let token = authorization
            .and_then(|h| {
                let (scheme, token) = h.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|t| !t.is_empty())
            .ok_or(Unauthenticated::MissingKey)?;
        let hash = hash_key(token);
        let now = self.ports.clock.now();
        let principal = match self.keys.get(&hash, now) {
            Some(principal) => principal,
            None => {
                let (key, user) = self
                    .ports
                    .accounts
                    .api_key_by_hash(&hash)
                    .await?
                    .filter(|(key, _)| key.is_live())
                    .ok_or(Unauthenticated::InvalidKey)?;
                let (key, user) = (key.into_record(), user.into_record());
                let principal = Principal {
                    user_id: user.id,
                    email: user.email,
                    account_status: user.status,
                    api_key_id: Some(key.id),
                    permissions: key.permissions,
                    rate_limit: key.rate_limit,
                    plan: key.plan,
                    test: key.test,
                };
                self.keys.put(hash, principal.clone(), now);
                principal
            }
        };
        if principal.account_status == AccountStatus::Suspended {
            return Err(Denied::AccountSuspended.into());
        }
        let key = principal
            .api_key_id
            .ok_or_else(|| Bug::new("a key's principal without its key"))?;
        let (window, limit) = match allowance {
            Allowance::Hourly => (RateWindow::Hour, principal.rate_limit),
            Allowance::PerMinute => (RateWindow::Minute, principal.plan.per_minute()),
        };
        let status = self.ports.limiter.hit(&key, window, limit, now).await?;
        if !status.allowed {
            return Err(OverLimit(status).into());
        }
        Ok((principal, status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Kit;
    use reviewloop_domain::{ApiKey, ApiKeyId, ApiKeyRecord, Permission, User, UserRecord};

    fn key_for(kit: &Kit, revoked: bool) -> ApiKey {
        ApiKey::restore(ApiKeyRecord {
            id: ApiKeyId::new(kit.oid(40)),
            user_id: kit.user(1, "a@x.io").id,
            name: None,
            key_hash: hash_key("rl_good"),
            prefix: "rl_goo".into(),
            permissions: vec![Permission::LoopsRead],
            rate_limit: 2,
            plan: reviewloop_domain::Plan::Standard,
            test: false,
            created_at: kit.now,
            revoked_at: revoked.then_some(kit.now),
        })
    }

    fn allowing(kit: &mut Kit, allowed: bool) {
        let now = kit.now;
        kit.limiter().expect_hit().returning(move |_, _, limit, _| {
            Ok(RateLimitStatus {
                limit,
                remaining: 0,
                reset_at: now,
                allowed,
            })
        });
    }

    #[tokio::test]
    async fn the_alternate_surface_counts_the_plans_per_minute_allowance() {
        let mut kit = Kit::new();
        let key = ApiKey::restore(ApiKeyRecord {
            plan: reviewloop_domain::Plan::Professional,
            ..key_for(&kit, false).into_record()
        });
        let user = kit.user(1, "a@x.io");
        kit.accounts()
            .expect_api_key_by_hash()
            .returning(move |_| Ok(Some((key.clone(), user.clone()))));
        let now = kit.now;
        kit.limiter()
            .expect_hit()
            .withf(|_, window, limit, _| match window {
                RateWindow::Minute => *limit == 10_000,
                RateWindow::Hour => *limit == 2,
            })
            .times(2)
            .returning(move |_, _, limit, _| {
                Ok(RateLimitStatus {
                    limit,
                    remaining: limit - 1,
                    reset_at: now,
                    allowed: true,
                })
            });
        let auth = Authenticator::new(kit.ports());
        let (_, per_minute) = auth
            .authenticate(Some("Bearer rl_good"), Allowance::PerMinute)
            .await
            .unwrap();
        assert_eq!(per_minute.limit, 10_000);
        let (_, hourly) = auth
            .authenticate(Some("Bearer rl_good"), Allowance::Hourly)
            .await
            .unwrap();
        assert_eq!(hourly.limit, 2);
    }

    #[tokio::test]
    async fn a_good_key_yields_its_account_and_permissions() {
        let mut kit = Kit::new();
        let key = key_for(&kit, false);
        let user = kit.user(1, "a@x.io");
        kit.accounts()
            .expect_api_key_by_hash()
            .withf(|h| h == hash_key("rl_good"))
            .returning(move |_| Ok(Some((key.clone(), user.clone()))));
        allowing(&mut kit, true);
        let (principal, status) = Authenticator::new(kit.ports())
            .authenticate(Some("Bearer rl_good"), Allowance::Hourly)
            .await
            .unwrap();
        assert_eq!(principal.email.as_str(), "a@x.io");
        assert_eq!(principal.permissions, [Permission::LoopsRead]);
        assert_eq!(status.limit, 2);
        assert!(principal.require(Permission::LoopsRead).is_ok());
        assert_eq!(
            principal
                .require(Permission::LoopsWrite)
                .unwrap_err()
                .to_string(),
            "Insufficient permissions: requires loops:write"
        );
    }

    #[tokio::test]
    async fn missing_malformed_unknown_and_revoked_keys_are_401() {
        let mut kit = Kit::new();
        let revoked = key_for(&kit, true);
        let user = kit.user(1, "a@x.io");
        kit.accounts().expect_api_key_by_hash().returning(move |h| {
            Ok((h == hash_key("rl_good")).then(|| (revoked.clone(), user.clone())))
        });
        let auth = Authenticator::new(kit.ports());
        for header in [
            None,
            Some(""),
            Some("Basic abc"),
            Some("Bearer "),
            Some("Bearer rl_bad"),
            Some("Bearer rl_good"),
        ] {
            let err = auth
                .authenticate(header, Allowance::Hourly)
                .await
                .unwrap_err();
            assert!(matches!(err, AuthError::Unauthenticated(_)), "{header:?}");
        }
    }

    #[tokio::test]
    async fn over_the_limit_is_429_with_the_limit_state() {
        let mut kit = Kit::new();
        let key = key_for(&kit, false);
        let user = kit.user(1, "a@x.io");
        kit.accounts()
            .expect_api_key_by_hash()
            .returning(move |_| Ok(Some((key.clone(), user.clone()))));
        allowing(&mut kit, false);
        let err = Authenticator::new(kit.ports())
            .authenticate(Some("bearer rl_good"), Allowance::Hourly)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::OverLimit(OverLimit(s)) if s.limit == 2 && !s.allowed));
    }

    #[tokio::test]
    async fn a_key_seen_within_the_ttl_needs_no_store_trip_and_a_revoked_one_is_forgotten() {
        let mut kit = Kit::new();
        let key = key_for(&kit, false);
        let user = kit.user(1, "a@x.io");
        // One lookup only, though the key is used three times within the TTL.
        kit.accounts()
            .expect_api_key_by_hash()
            .times(1)
            .returning(move |_| Ok(Some((key.clone(), user.clone()))));
        allowing(&mut kit, true);
        let key_id = key_for(&kit, false).id;
        let auth = Authenticator::new(kit.ports());
        for _ in 0..3 {
            auth.authenticate(Some("Bearer rl_good"), Allowance::Hourly)
                .await
                .unwrap();
        }
        assert_eq!(auth.key_cache().len(), 1);
        auth.key_cache().forget_key(&key_id);
        assert!(auth.key_cache().is_empty());
    }

    #[tokio::test]
    async fn an_entry_older_than_the_ttl_is_looked_up_again() {
        let kit = Kit::new();
        let cache = KeyCache::with_capacity(2);
        let principal = Principal {
            user_id: kit.user(1, "a@x.io").id,
            email: kit.user(1, "a@x.io").email.clone(),
            account_status: AccountStatus::Active,
            api_key_id: Some(key_for(&kit, false).id),
            permissions: vec![],
            rate_limit: 1,
            plan: reviewloop_domain::Plan::Standard,
            test: false,
        };
        cache.put("h1".into(), principal.clone(), kit.now);
        assert!(cache.get("h1", kit.now + KeyCache::TTL / 2).is_some());
        assert!(cache.get("h1", kit.now + KeyCache::TTL).is_none());
        // Full: a new entry first drops the expired ones, then everything.
        cache.put("h2".into(), principal.clone(), kit.now);
        cache.put("h3".into(), principal.clone(), kit.now + KeyCache::TTL * 2);
        assert_eq!(cache.len(), 1, "h1 and h2 had expired");
        cache.put("h4".into(), principal.clone(), kit.now + KeyCache::TTL * 2);
        cache.put("h5".into(), principal, kit.now + KeyCache::TTL * 2);
        assert!(cache.len() <= 2, "never more than the capacity");
    }

    #[tokio::test]
    async fn suspended_accounts_are_refused() {
        let mut kit = Kit::new();
        let key = key_for(&kit, false);
        let user = User::restore(UserRecord {
            status: AccountStatus::Suspended,
            ..kit.user(1, "a@x.io").into_record()
        });
        kit.accounts()
            .expect_api_key_by_hash()
            .returning(move |_| Ok(Some((key.clone(), user.clone()))));
        let err = Authenticator::new(kit.ports())
            .authenticate(Some("Bearer rl_good"), Allowance::Hourly)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Denied(Denied::AccountSuspended)));
        assert_eq!(err.to_string(), "Account suspended");
    }
}
