//! Ports of the web application's people: passwords, sign-in sessions and
//! one-time password links.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::{Notice, User, UserId};

use crate::StoreError;

/// A signed-in browser. The token itself is only in the person's cookie;
/// the store keeps its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 of the cookie's token, hex.
    pub token_hash: String,
    /// Whose session.
    pub user_id: UserId,
    /// The token every form of this session must carry (CSRF).
    pub csrf_token: String,
    /// When the person signed in.
    pub created_at: DateTime<Utc>,
    /// When it ends unless used again.
    pub expires_at: DateTime<Utc>,
}

/// Passwords, sessions and password links.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PeopleStore: Send + Sync {
    /// The account's password hash; `None` when it has no password yet.
    async fn password_hash(&self, user: &UserId) -> Result<Option<String>, StoreError>;
    /// Sets the account's password hash and ends every one of its sessions,
    /// in one transaction. `NotFound` when the account is gone.
    async fn set_password(&self, user: &UserId, hash: &str) -> Result<(), StoreError>;
    /// Adds a session.
    async fn insert_session(&self, session: &Session) -> Result<(), StoreError>;
    /// The session with this token hash and its account, if it has not
    /// expired at `now`.
    async fn session(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(Session, User)>, StoreError>;
    /// Whether the account sends requests of its own: it created a loop or
    /// holds an API key that is not revoked. (The pages show owner pages
    /// to such accounts only.)
    async fn sends_requests(&self, user: &UserId) -> Result<bool, StoreError>;
    /// Moves a session's end to `until`.
    async fn extend_session(
        &self,
        token_hash: &str,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Ends a session (nothing happens when there is none).
    async fn delete_session(&self, token_hash: &str) -> Result<(), StoreError>;
    /// Adds a one-time link that lets its holder set the account's
    /// password, with the notices that carry it (queued in the same
    /// transaction).
    async fn insert_password_token(
        &self,
        token_hash: &str,
        user: &UserId,
        expires_at: DateTime<Utc>,
        notices: &[Notice],
    ) -> Result<(), StoreError>;
    /// The account of an unexpired password link, without using it up.
    async fn password_token(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<UserId>, StoreError>;
    /// Uses up a password link: sets the password of its account (ending
    /// its sessions) and deletes the link, in one transaction. Returns the
    /// account, or `None` when the link is unknown, expired or already used.
    async fn redeem_password_token(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<UserId>, StoreError>;
    /// Deletes expired sessions and links; returns how many.
    async fn purge_expired_sessions(&self, now: DateTime<Utc>) -> Result<u64, StoreError>;
}

/// A password hasher failed (never for a wrong password: that is `false`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot hash password: {0}")]
pub struct HashError(pub String);

/// Slow, salted password hashing. Calls are CPU-bound for tens of
/// milliseconds: callers run them off the async threads.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait PasswordHasher: Send + Sync {
    /// A self-describing hash of `password` (algorithm, parameters, salt).
    fn hash(&self, password: &str) -> Result<String, HashError>;
    /// Whether `password` matches `hash`; `false` for a malformed hash.
    fn verify(&self, password: &str, hash: &str) -> bool;
}
