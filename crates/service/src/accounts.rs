//! Accounts and API keys: what the CLI administers and the first start
//! bootstraps. Keys are random, shown once, and stored only as a SHA-256
//! hash; a fast hash is enough because a key carries 192 random bits.

use reviewloop_domain::{
    ApiKey, ApiKeyId, Email, NewApiKey, Permission, Plan, User, UserId, ValidationError,
};
use std::sync::Arc;

use reviewloop_ports::{AccountStore, Clock, IdSource, StoreError};
use sha2::{Digest, Sha256};

use crate::auth::KeyCache;
use crate::error::{use_case_error, AccountRule, Bug, Denied, Missing};

use crate::ports::AccountPorts;
use crate::principal::Principal;

use_case_error! {
    /// Why an account could not be created ([`AccountService::create_user`]).
    pub enum CreateUserError {
        Invalid(ValidationError),
        Rule(AccountRule),
        Store(StoreError),
    }

    /// Why a key could not be created ([`AccountService::create_key`],
    /// [`AccountService::create_own_key`]).
    pub enum CreateKeyError {
        Denied(Denied),
        Invalid(ValidationError),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why an account's keys could not be listed
    /// ([`AccountService::list_keys`], [`AccountService::own_keys`]).
    pub enum ListKeysError {
        Denied(Denied),
        Invalid(ValidationError),
        NotFound(Missing),
        Store(StoreError),
    }

    /// Why a key could not be revoked ([`AccountService::revoke_key`],
    /// [`AccountService::revoke_own_key`]).
    pub enum RevokeKeyError {
        Denied(Denied),
        Rule(AccountRule),
        NotFound(Missing),
        Store(StoreError),
    }

    /// Why a callback signing secret could not be read or replaced
    /// ([`AccountService::signing_secret`],
    /// [`AccountService::rotate_signing_secret`],
    /// [`AccountService::signing_secret_of`]).
    pub enum SigningSecretError {
        Denied(Denied),
        Invalid(ValidationError),
        NotFound(Missing),
        Store(StoreError),
    }

    /// Why the first account could not be made ([`AccountService::bootstrap`]).
    pub enum BootstrapError {
        Store(StoreError),
        Bug(Bug),
    }
}

/// The email of the account created on first start.
pub const BOOTSTRAP_EMAIL: &str = "admin@localhost";
/// Calls per hour a key gets when none is given.
pub const DEFAULT_RATE_LIMIT: u32 = 100;
const MAX_RATE_LIMIT: u32 = 10_000_000;
const KEY_PREFIX: &str = "rl_";

/// Hex SHA-256 of a plain API key: what the store keeps and looks up.
pub(crate) fn hash_key(plain: &str) -> String {
    hex::encode(Sha256::digest(plain.as_bytes()))
}

/// A new active account with its own callback signing secret.
pub(crate) fn new_user(clock: &dyn Clock, ids: &dyn IdSource, email: Email) -> User {
    let now = clock.now();
    User::create(
        UserId::new(ids.object_id(now)),
        email,
        crate::signing::new_secret(&ids.secret_hex(24)),
        now,
    )
}

/// The account of `email`; 404 when there is none.
pub(crate) async fn existing_user<E>(accounts: &dyn AccountStore, email: &Email) -> Result<User, E>
where
    E: From<Missing> + From<StoreError>,
{
    accounts
        .user_by_email(email)
        .await?
        .ok_or(Missing::User.into())
}

/// The account of `email`, created if it has none yet.
pub(crate) async fn find_or_create_user<E>(
    accounts: &dyn AccountStore,
    clock: &dyn Clock,
    ids: &dyn IdSource,
    email: Email,
) -> Result<User, E>
where
    E: From<StoreError> + From<Bug>,
{
    if let Some(user) = accounts.user_by_email(&email).await? {
        return Ok(user);
    }
    let user = new_user(clock, ids, email.clone());
    match accounts.insert_user(&user).await {
        Ok(()) => Ok(user),
        // Someone created it in the meantime: use theirs.
        Err(StoreError::Conflict(_)) => accounts
            .user_by_email(&email)
            .await?
            .ok_or_else(|| Bug::new("user vanished after email conflict").into()),
        Err(e) => Err(e.into()),
    }
}

/// What to create a key with.
#[derive(Debug, Clone, PartialEq)]
pub struct NewKey {
    /// The account, created if missing.
    pub email: String,
    /// Comma-separated permissions; all four when `None`.
    pub permissions: Option<String>,
    /// Calls per hour; 100 when `None`.
    pub rate_limit: Option<u32>,
    /// A label.
    pub name: Option<String>,
    /// `standard` (the default), `professional` or `enterprise`.
    pub plan: Option<String>,
    /// A test-mode key.
    pub test: bool,
}

/// A key just created: the only time its plain text exists.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedKey {
    /// The key to put in `Authorization: Bearer`.
    pub plain: String,
    /// The stored key.
    pub key: ApiKey,
    /// Its account.
    pub user: User,
}

/// Account and key administration.
#[derive(Clone)]
pub struct AccountService {
    ports: AccountPorts,
    keys: Option<Arc<KeyCache>>,
}

impl AccountService {
    /// A service over `ports`.
    pub fn new(ports: AccountPorts) -> Self {
        Self { ports, keys: None }
    }

    /// Makes keys revoked through this service stop working at once in
    /// the authenticator that owns `keys`, instead of within its TTL.
    pub fn forgetting_revoked_keys_in(mut self, keys: Arc<KeyCache>) -> Self {
        self.keys = Some(keys);
        self
    }

    fn new_key(
        &self,
        user: &User,
        permissions: Vec<Permission>,
        (rate_limit, plan, test): (u32, Plan, bool),
        name: Option<String>,
    ) -> (String, ApiKey) {
        let now = self.ports.clock.now();
        let plain = format!("{KEY_PREFIX}{}", self.ports.ids.secret_hex(24));
        let key = ApiKey::issue(
            ApiKeyId::new(self.ports.ids.object_id(now)),
            user.id,
            NewApiKey {
                name,
                key_hash: hash_key(&plain),
                prefix: plain.chars().take(KEY_PREFIX.len() + 6).collect(),
                permissions,
                rate_limit,
                plan,
                test,
            },
            now,
        );
        (plain, key)
    }

    /// Creates an account; refuses an email that already has one.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_user(&self, email: &str) -> Result<User, CreateUserError> {
        let email = Email::parse(email)?;
        let user = new_user(&*self.ports.clock, &*self.ports.ids, email);
        match self.ports.accounts.insert_user(&user).await {
            Ok(()) => Ok(user),
            Err(StoreError::Conflict(_)) => Err(AccountRule::EmailTaken(user.email.clone()).into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates a key, and its account if the email has none yet.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_key(&self, new: NewKey) -> Result<CreatedKey, CreateKeyError> {
        let email = Email::parse(&new.email)?;
        let permissions = match new.permissions.as_deref() {
            Some(list) => Permission::parse_list(list)?,
            None => Permission::ALL.to_vec(),
        };
        let rate_limit = new.rate_limit.unwrap_or(DEFAULT_RATE_LIMIT);
        if !(1..=MAX_RATE_LIMIT).contains(&rate_limit) {
            return Err(reviewloop_domain::ValidationError::field(
                "rate_limit",
                format!("rate_limit must be from 1 to {MAX_RATE_LIMIT} calls per hour"),
            )
            .into());
        }
        let plan = new
            .plan
            .as_deref()
            .map(Plan::parse)
            .transpose()?
            .unwrap_or_default();
        let user = find_or_create_user::<CreateKeyError>(
            &*self.ports.accounts,
            &*self.ports.clock,
            &*self.ports.ids,
            email,
        )
        .await?;
        let (plain, key) = self.new_key(&user, permissions, (rate_limit, plan, new.test), new.name);
        self.ports.accounts.insert_api_key(&key).await?;
        Ok(CreatedKey { plain, key, user })
    }

    /// The keys of an account, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_keys(&self, email: &str) -> Result<(User, Vec<ApiKey>), ListKeysError> {
        let user =
            existing_user::<ListKeysError>(&*self.ports.accounts, &Email::parse(email)?).await?;
        let keys = self.ports.accounts.api_keys_of(&user.id).await?;
        Ok((user, keys))
    }

    /// Revokes a key; it stops working at once.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn revoke_key(&self, id: &str) -> Result<ApiKey, RevokeKeyError> {
        let id = ApiKeyId::parse(id).map_err(|e| AccountRule::BadKeyId(e.to_string()))?;
        let now = self.ports.clock.now();
        let key = self
            .ports
            .accounts
            .revoke_api_key(&id, now)
            .await?
            .ok_or(Missing::ApiKey)?;
        if let Some(keys) = &self.keys {
            keys.forget_key(&key.id);
        }
        Ok(key)
    }

    /// Refuses unless the caller is a person signed in (not a program with
    /// a key): a key must not mint or revoke keys.
    fn require_person(caller: &Principal) -> Result<(), Denied> {
        match caller.api_key_id {
            None => Ok(()),
            Some(_) => Err(Denied::KeysNeedPerson),
        }
    }

    /// The signed-in person's own keys, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn own_keys(&self, caller: &Principal) -> Result<Vec<ApiKey>, ListKeysError> {
        Self::require_person(caller)?;
        Ok(self.ports.accounts.api_keys_of(&caller.user_id).await?)
    }

    /// A new key of the signed-in person's account.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_own_key(
        &self,
        caller: &Principal,
        mut new: NewKey,
    ) -> Result<CreatedKey, CreateKeyError> {
        Self::require_person(caller)?;
        new.email = caller.email.to_string();
        self.create_key(new).await
    }

    /// Revokes one of the signed-in person's keys; another account's key
    /// is "not found", as if it did not exist.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn revoke_own_key(
        &self,
        caller: &Principal,
        id: &str,
    ) -> Result<ApiKey, RevokeKeyError> {
        Self::require_person(caller)?;
        let mine = ApiKeyId::parse(id).map_err(|_| Missing::ApiKey)?;
        let keys = self.ports.accounts.api_keys_of(&caller.user_id).await?;
        if !keys.iter().any(|k| k.id == mine) {
            return Err(Missing::ApiKey.into());
        }
        self.revoke_key(id).await
    }

    /// The secret that signs the caller's callbacks.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn signing_secret(&self, caller: &Principal) -> Result<String, SigningSecretError> {
        caller.require(Permission::RequestsRead)?;
        self.secret_of(&caller.user_id).await
    }

    /// Replaces the secret that signs the caller's callbacks; returns the new one.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn rotate_signing_secret(
        &self,
        caller: &Principal,
    ) -> Result<String, SigningSecretError> {
        caller.require_live("the signing secret")?;
        caller.require(Permission::RequestsWrite)?;
        self.rotate_secret_of(&caller.user_id).await
    }

    /// The callback signing secret of an account, by email (CLI).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn signing_secret_of(
        &self,
        email: &str,
        rotate: bool,
    ) -> Result<(User, String), SigningSecretError> {
        let user =
            existing_user::<SigningSecretError>(&*self.ports.accounts, &Email::parse(email)?)
                .await?;
        let secret = if rotate {
            self.rotate_secret_of(&user.id).await?
        } else {
            user.signing_secret.clone()
        };
        Ok((user, secret))
    }

    async fn secret_of(&self, user: &UserId) -> Result<String, SigningSecretError> {
        let user = self
            .ports
            .accounts
            .user_by_id(user)
            .await?
            .ok_or(Missing::User)?;
        Ok(user.into_record().signing_secret)
    }

    async fn rotate_secret_of(&self, user: &UserId) -> Result<String, SigningSecretError> {
        let secret = crate::signing::new_secret(&self.ports.ids.secret_hex(24));
        match self.ports.accounts.set_signing_secret(user, &secret).await {
            Ok(()) => Ok(secret),
            Err(StoreError::NotFound) => Err(Missing::User.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// On a database with no account at all, creates `admin@localhost` with
    /// every permission and returns its key; otherwise `None`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn bootstrap(&self) -> Result<Option<CreatedKey>, BootstrapError> {
        let email = Email::parse(BOOTSTRAP_EMAIL).map_err(|e| Bug::new(e.to_string()))?;
        let user = new_user(&*self.ports.clock, &*self.ports.ids, email);
        let (plain, key) = self.new_key(
            &user,
            Permission::ALL.to_vec(),
            (DEFAULT_RATE_LIMIT, Plan::Standard, false),
            Some("bootstrap".into()),
        );
        match self.ports.accounts.insert_first_user(&user, &key).await {
            Ok(true) => Ok(Some(CreatedKey { plain, key, user })),
            Ok(false) => Ok(None),
            // Another instance starting at the same moment bootstrapped first.
            Err(StoreError::Conflict(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Kit;
    use mockall::predicate::eq;

    #[tokio::test]
    async fn create_key_makes_the_account_and_stores_only_a_hash() {
        let mut kit = Kit::new();
        kit.accounts()
            .expect_user_by_email()
            .returning(|_| Ok(None));
        kit.accounts()
            .expect_insert_user()
            .times(1)
            .returning(|_| Ok(()));
        kit.accounts()
            .expect_insert_api_key()
            .withf(|k| {
                k.permissions == Permission::ALL && k.rate_limit == 100 && k.key_hash.len() == 64
            })
            .times(1)
            .returning(|_| Ok(()));
        let created = AccountService::new(kit.ports())
            .create_key(NewKey {
                email: "Ann@X.io".into(),
                permissions: None,
                rate_limit: None,
                name: None,
                plan: None,
                test: false,
            })
            .await
            .unwrap();
        assert!(created.plain.starts_with("rl_"));
        assert_eq!(created.key.key_hash, hash_key(&created.plain));
        assert_ne!(created.key.key_hash, created.plain);
        assert_eq!(created.user.email.as_str(), "ann@x.io");
        assert!(created.plain.starts_with(&created.key.prefix));
    }

    #[tokio::test]
    async fn create_key_reuses_an_existing_account() {
        let mut kit = Kit::new();
        let existing = kit.user(5, "bob@x.io");
        let id = existing.id;
        kit.accounts()
            .expect_user_by_email()
            .returning(move |_| Ok(Some(existing.clone())));
        kit.accounts().expect_insert_user().never();
        kit.accounts()
            .expect_insert_api_key()
            .withf(move |k| k.user_id == id)
            .returning(|_| Ok(()));
        let created = AccountService::new(kit.ports())
            .create_key(NewKey {
                email: "bob@x.io".into(),
                permissions: Some("loops:read".into()),
                rate_limit: Some(7),
                name: Some(" ci ".into()),
                plan: None,
                test: false,
            })
            .await
            .unwrap();
        assert_eq!(created.key.permissions, [Permission::LoopsRead]);
        assert_eq!(
            (created.key.rate_limit, created.key.name.as_deref()),
            (7, Some("ci"))
        );
    }

    #[tokio::test]
    async fn create_key_refuses_bad_input_before_touching_the_store() {
        let kit = Kit::new();
        let service = AccountService::new(kit.ports());
        for new in [
            NewKey {
                email: "nope".into(),
                permissions: None,
                rate_limit: None,
                name: None,
                plan: None,
                test: false,
            },
            NewKey {
                email: "a@x.io".into(),
                permissions: Some("root".into()),
                rate_limit: None,
                name: None,
                plan: None,
                test: false,
            },
            NewKey {
                email: "a@x.io".into(),
                permissions: None,
                rate_limit: Some(0),
                name: None,
                plan: None,
                test: false,
            },
        ] {
            assert!(matches!(
                service.create_key(new).await,
                Err(CreateKeyError::Invalid(_))
            ));
        }
    }

    #[tokio::test]
    async fn create_user_refuses_a_taken_email() {
        let mut kit = Kit::new();
        kit.accounts()
            .expect_insert_user()
            .returning(|_| Err(StoreError::Conflict("email".into())));
        let err = AccountService::new(kit.ports())
            .create_user("a@x.io")
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "A user with email a@x.io already exists");
    }

    #[tokio::test]
    async fn bootstrap_only_on_an_empty_database() {
        let mut kit = Kit::new();
        kit.accounts()
            .expect_insert_first_user()
            .withf(|u, k| u.email.as_str() == BOOTSTRAP_EMAIL && k.permissions == Permission::ALL)
            .times(1)
            .returning(|_, _| Ok(true));
        let created = AccountService::new(kit.ports())
            .bootstrap()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(created.user.email.as_str(), BOOTSTRAP_EMAIL);

        let mut kit = Kit::new();
        kit.accounts()
            .expect_insert_first_user()
            .returning(|_, _| Ok(false));
        assert!(AccountService::new(kit.ports())
            .bootstrap()
            .await
            .unwrap()
            .is_none());
    }

    #[tokio::test]
    async fn revoke_unknown_or_malformed_key() {
        let mut kit = Kit::new();
        let id = ApiKeyId::parse("0123456789abcdef01234567").unwrap();
        kit.accounts()
            .expect_revoke_api_key()
            .with(eq(id), mockall::predicate::always())
            .returning(|_, _| Ok(None));
        let service = AccountService::new(kit.ports());
        assert!(matches!(
            service.revoke_key("0123456789abcdef01234567").await,
            Err(RevokeKeyError::NotFound(Missing::ApiKey))
        ));
        assert!(matches!(
            service.revoke_key("xyz").await,
            Err(RevokeKeyError::Rule(AccountRule::BadKeyId(_)))
        ));
    }
}
