//! People in the web application: passwords, sign-in, sessions, sign-up by
//! invitation and one-time password links. A signed-in person acts as its
//! account with every permission, exactly as the account's owner would
//! through the API: the pages call the same services with a [`Principal`].

mod throttle;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use reviewloop_domain::{
    AccountStatus, Email, Loop, MemberStatus, Password, Permission, User, UserId, ValidationError,
};
use reviewloop_ports::{Session, StoreError};

use crate::accounts::{hash_key, new_user};
use crate::error::{
    use_case_error, AccountRule, Bug, Busy, Denied, Missing, OverLimit, Unauthenticated,
};
use crate::loops::{InviteCodeError, JoinLoopError};

use_case_error! {
    /// Why a person could not sign in ([`PeopleService::sign_in`]).
    pub enum SignInError {
        Unauthenticated(Unauthenticated),
        Denied(Denied),
        OverLimit(OverLimit),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a password could not be set ([`PeopleService::change_password`],
    /// [`PeopleService::set_password`], [`PeopleService::redeem_password_link`]).
    pub enum PasswordError {
        Invalid(ValidationError),
        NotFound(Missing),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a password link led nowhere ([`PeopleService::password_link_account`]).
    pub enum PasswordLinkError {
        NotFound(Missing),
        Store(StoreError),
    }

    /// Why a reset link could not be sent ([`PeopleService::request_password_reset`]).
    pub enum PasswordResetError {
        Rule(AccountRule),
        Invalid(ValidationError),
        OverLimit(OverLimit),
        Store(StoreError),
    }

    /// Why a person could not sign up ([`PeopleService::sign_up`]).
    pub enum SignUpError {
        Invalid(ValidationError),
        Rule(AccountRule),
        NotFound(Missing),
        Denied(Denied),
        Refused(reviewloop_domain::TransitionError),
        Busy(Busy),
        Store(StoreError),
        Bug(Bug),
    }
}

impl From<PasswordLinkError> for PasswordError {
    fn from(error: PasswordLinkError) -> Self {
        match error {
            PasswordLinkError::NotFound(e) => Self::NotFound(e),
            PasswordLinkError::Store(e) => Self::Store(e),
        }
    }
}

impl From<InviteCodeError> for SignUpError {
    fn from(error: InviteCodeError) -> Self {
        match error {
            InviteCodeError::NotFound(e) => Self::NotFound(e),
            InviteCodeError::Store(e) => Self::Store(e),
            InviteCodeError::Bug(e) => Self::Bug(e),
        }
    }
}

impl From<JoinLoopError> for SignUpError {
    fn from(error: JoinLoopError) -> Self {
        match error {
            JoinLoopError::Denied(e) => Self::Denied(e),
            JoinLoopError::NotFound(e) => Self::NotFound(e),
            JoinLoopError::Refused(e) => Self::Refused(e),
            JoinLoopError::Busy(e) => Self::Busy(e),
            JoinLoopError::Store(e) => Self::Store(e),
        }
    }
}
use crate::loops::LoopService;
use crate::notices;
use crate::ports::{LoopPorts, PeoplePorts};
use crate::principal::Principal;

pub use throttle::SignInThrottle;

/// How long a session lasts without use.
pub const SESSION_DAYS: i64 = 30;
/// How long the first-start password link stays valid.
pub const SETUP_LINK_DAYS: i64 = 7;
/// How long an emailed password reset link stays valid.
pub const RESET_LINK_HOURS: i64 = 1;
/// Asking for a reset link on a server that cannot send it.
pub const NO_EMAIL: &str =
    "This server sends no email, so it cannot send a reset link: ask its administrator to set a new password for you";
/// The answer to every failed sign-in, whether the email is unknown, has
/// no password or the password is wrong: no account enumeration.
pub const WRONG_CREDENTIALS: &str = "Email or password is incorrect";
/// Sign-up with an email that already has an account.
pub const ACCOUNT_EXISTS: &str =
    "An account with this email already exists: sign in with it instead";

/// Who may create an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignupPolicy {
    /// Only with a loop's invite code (the default).
    #[default]
    InviteOnly,
    /// Anyone (`REVIEWLOOP_SIGNUP=open`).
    Open,
}

/// A browser just signed in: the token goes into its cookie, once.
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// The session token (only its hash is stored).
    pub token: String,
    /// The account.
    pub user: User,
}

/// A live session: who it is, and the token its forms must carry.
#[derive(Debug, Clone)]
pub struct WebSession {
    /// The account, with every permission.
    pub principal: Principal,
    /// Anti-CSRF token of this session.
    pub csrf_token: String,
}

/// The cookie that carries a web session's token, read by the pages and by
/// the API routes a signed-in page calls.
pub const SESSION_COOKIE: &str = "rl_session";

/// Whether an anti-forgery token `given` is `expected`, compared without
/// stopping at the first difference, so timing does not reveal how much of
/// a guess was right. An empty token is never right.
pub fn same_token(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && !expected.is_empty()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The session behind a cookie's token (see [`PeopleService::session`]);
/// the API's session-authenticated routes read it too.
pub(crate) async fn find_session(
    people: &dyn reviewloop_ports::PeopleStore,
    clock: &dyn reviewloop_ports::Clock,
    token: &str,
) -> Result<Option<WebSession>, StoreError> {
    if token.is_empty() || token.len() > 128 {
        return Ok(None);
    }
    let now = clock.now();
    let hash = hash_key(token);
    let Some((session, user)) = people.session(&hash, now).await? else {
        return Ok(None);
    };
    if user.status == AccountStatus::Suspended {
        return Ok(None);
    }
    let full = now + Duration::days(SESSION_DAYS);
    if full - session.expires_at > Duration::days(1) {
        people.extend_session(&hash, full).await?;
    }
    Ok(Some(WebSession {
        principal: PeopleService::principal(user),
        csrf_token: session.csrf_token,
    }))
}

/// What sign-up produced: the session and the loop joined, if any.
#[derive(Debug, Clone)]
pub struct SignedUp {
    /// The new session.
    pub signed_in: SignedIn,
    /// The loop whose code was used, with the person now active in it.
    pub joined: Option<Loop>,
}

/// People use cases.
#[derive(Clone)]
pub struct PeopleService {
    ports: PeoplePorts,
    loops: LoopService,
    throttle: Arc<SignInThrottle>,
    /// Reset links asked for, counted like failed sign-ins.
    resets: Arc<SignInThrottle>,
    signup: SignupPolicy,
}

impl PeopleService {
    /// A service whose join links start with `public_url`.
    pub fn new(ports: PeoplePorts, public_url: &str, signup: SignupPolicy) -> Self {
        Self {
            loops: LoopService::new(LoopPorts::from(&ports), public_url),
            ports,
            throttle: Arc::new(SignInThrottle::default()),
            resets: Arc::new(SignInThrottle::default()),
            signup,
        }
    }

    /// A fresh random token for a form shown before sign-in (its
    /// anti-forgery token lives in a cookie until there is a session).
    pub fn form_token(&self) -> String {
        self.ports.ids.secret_hex(32)
    }

    /// Whether anyone may sign up without a code.
    pub fn signup_is_open(&self) -> bool {
        self.signup == SignupPolicy::Open
    }

    fn principal(user: User) -> Principal {
        Principal::person(user, Permission::ALL.to_vec())
    }

    async fn hash(&self, password: &Password) -> Result<String, Bug> {
        let (hasher, password) = (self.ports.passwords.clone(), password.expose().to_owned());
        tokio::task::spawn_blocking(move || hasher.hash(&password))
            .await
            .map_err(|e| Bug::new(format!("hashing task failed: {e}")))?
            .map_err(|e| Bug::new(e.to_string()))
    }

    async fn verify(&self, password: &str, hash: Option<String>) -> Result<bool, Bug> {
        let (hasher, password) = (self.ports.passwords.clone(), password.to_owned());
        tokio::task::spawn_blocking(move || match hash {
            Some(hash) => hasher.verify(&password, &hash),
            // No account or no password: spend the same time on a hash
            // anyway, so timing does not tell which it was.
            None => {
                let _ = hasher.hash(&password);
                false
            }
        })
        .await
        .map_err(|e| Bug::new(format!("hashing task failed: {e}")))
    }

    async fn start_session(&self, user: User) -> Result<SignedIn, StoreError> {
        let now = self.ports.clock.now();
        let token = self.ports.ids.secret_hex(32);
        let session = Session {
            token_hash: hash_key(&token),
            user_id: user.id,
            csrf_token: self.ports.ids.secret_hex(32),
            created_at: now,
            expires_at: now + Duration::days(SESSION_DAYS),
        };
        self.ports.people.insert_session(&session).await?;
        Ok(SignedIn { token, user })
    }

    /// Signs a person in. Every failure reads the same; failures are
    /// throttled per email and per client address.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_in(
        &self,
        email: &str,
        password: &str,
        client: &str,
    ) -> Result<SignedIn, SignInError> {
        let now = self.ports.clock.now();
        let email_key = email.trim().to_lowercase();
        self.throttle.check(&email_key, client, now)?;
        let user = match Email::parse(email) {
            Ok(email) => self.ports.accounts.user_by_email(&email).await?,
            Err(_) => None,
        };
        let hash = match &user {
            Some(user) => self.ports.people.password_hash(&user.id).await?,
            None => None,
        };
        let matches = self.verify(password, hash).await?;
        let Some(user) = user.filter(|_| matches) else {
            self.throttle.failed(&email_key, client, now);
            return Err(Unauthenticated::WrongCredentials.into());
        };
        self.throttle.succeeded(&email_key);
        if user.status == AccountStatus::Suspended {
            return Err(Denied::AccountSuspended.into());
        }
        Ok(self.start_session(user).await?)
    }

    /// The session behind a cookie's token, or `None` when it is unknown,
    /// expired or its account is suspended. Use slides its end forward
    /// (written at most once a day).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn session(&self, token: &str) -> Result<Option<WebSession>, StoreError> {
        find_session(&*self.ports.people, &*self.ports.clock, token).await
    }

    /// Whether `who` sends requests of its own (owns a loop or a live API
    /// key), so that its pages offer the owner's pages; someone who only
    /// reviews sees the inbox and the account.
    pub async fn sends_requests(&self, who: &Principal) -> Result<bool, StoreError> {
        self.ports.people.sends_requests(&who.user_id).await
    }

    /// Ends the session behind a cookie's token.
    pub async fn sign_out(&self, token: &str) -> Result<(), StoreError> {
        self.ports.people.delete_session(&hash_key(token)).await
    }

    /// Changes the signed-in person's password after checking the current
    /// one; every session of the account ends, and a new one starts here.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn change_password(
        &self,
        who: &Principal,
        current: &str,
        new: &str,
    ) -> Result<SignedIn, PasswordError> {
        let new = Password::parse(new)?;
        let hash = self.ports.people.password_hash(&who.user_id).await?;
        if !self.verify(current, hash).await? {
            return Err(ValidationError::field(
                "current_password",
                "current password is incorrect",
            )
            .into());
        }
        let user = self.user::<PasswordError>(&who.user_id).await?;
        let hash = self.hash(&new).await?;
        self.ports.people.set_password(&user.id, &hash).await?;
        Ok(self.start_session(user).await?)
    }

    async fn user<E>(&self, id: &UserId) -> Result<User, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        self.ports
            .accounts
            .user_by_id(id)
            .await?
            .ok_or(Missing::User.into())
    }

    /// Sets an account's password from the command line (ends its sessions).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn set_password(&self, email: &str, password: &str) -> Result<User, PasswordError> {
        let email = Email::parse(email)?;
        let password = Password::parse(password)?;
        let user =
            crate::accounts::existing_user::<PasswordError>(&*self.ports.accounts, &email).await?;
        let hash = self.hash(&password).await?;
        self.ports.people.set_password(&user.id, &hash).await?;
        Ok(user)
    }

    /// A one-time link token that lets its holder set the account's
    /// password within [`SETUP_LINK_DAYS`].
    pub async fn password_link(&self, user: &UserId) -> Result<String, StoreError> {
        let now = self.ports.clock.now();
        let token = self.ports.ids.secret_hex(32);
        self.ports
            .people
            .insert_password_token(
                &hash_key(&token),
                user,
                now + Duration::days(SETUP_LINK_DAYS),
                &[],
            )
            .await?;
        Ok(token)
    }

    /// Emails a link to set a new password to the account of `email`, if
    /// there is one and it is not suspended. The answer is the same either
    /// way, so the form tells nobody who has an account; every request
    /// counts against the email and the client address, so the form
    /// cannot be used to flood someone's mailbox.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn request_password_reset(
        &self,
        email: &str,
        client: &str,
    ) -> Result<(), PasswordResetError> {
        if self.ports.mailer.is_none() {
            return Err(AccountRule::NoEmail.into());
        }
        let email = Email::parse(email)?;
        let now = self.ports.clock.now();
        let key = email.as_str().to_owned();
        self.resets.check(&key, client, now)?;
        self.resets.failed(&key, client, now);
        let Some(user) = self.ports.accounts.user_by_email(&email).await? else {
            return Ok(());
        };
        if user.status == AccountStatus::Suspended {
            return Ok(());
        }
        let token = self.ports.ids.secret_hex(32);
        let url = format!("{}/setup/{token}", self.loops.public_url());
        let notice = notices::password_reset(
            self.ports.mailer.is_some(),
            &*self.ports.clock,
            &*self.ports.ids,
            &user,
            &url,
            RESET_LINK_HOURS,
        );
        self.ports
            .people
            .insert_password_token(
                &hash_key(&token),
                &user.id,
                now + Duration::hours(RESET_LINK_HOURS),
                notice.as_slice(),
            )
            .await?;
        Ok(())
    }

    /// The account a password link is for, if the link is still good.
    pub async fn password_link_account(&self, token: &str) -> Result<User, PasswordLinkError> {
        let now = self.ports.clock.now();
        let user = self
            .ports
            .people
            .password_token(&hash_key(token), now)
            .await?
            .ok_or(Missing::Link)?;
        self.user(&user).await
    }

    /// Uses a password link: sets the password and signs the person in.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn redeem_password_link(
        &self,
        token: &str,
        password: &str,
    ) -> Result<SignedIn, PasswordError> {
        let password = Password::parse(password)?;
        // Checked before the slow hash, so a dead link answers at once.
        self.password_link_account(token).await?;
        let hash = self.hash(&password).await?;
        let now = self.ports.clock.now();
        let user = self
            .ports
            .people
            .redeem_password_token(&hash_key(token), &hash, now)
            .await?
            .ok_or(Missing::Link)?;
        let user = self.user::<PasswordError>(&user).await?;
        Ok(self.start_session(user).await?)
    }

    /// Creates an account (or claims one a loop owner invited by email)
    /// and signs it in. With a code, the person lands in that loop,
    /// active. Without one, only when sign-up is open.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_up(
        &self,
        email: &str,
        password: &str,
        code: Option<&str>,
    ) -> Result<SignedUp, SignUpError> {
        let code = code.map(str::trim).filter(|c| !c.is_empty());
        if code.is_none() && !self.signup_is_open() {
            return Err(ValidationError::field(
                "invite_code",
                "an invite code is needed to sign up: ask a loop owner for its join link",
            )
            .into());
        }
        let mut errors = ValidationError::default();
        let email = errors.collect(Email::parse(email));
        let password = errors.collect(Password::parse(password));
        errors.into_result()?;
        let (Some(email), Some(password)) = (email, password) else {
            return Err(Bug::new("validated input missing").into());
        };
        let lp = match code {
            Some(code) => Some(self.loops.loop_for_code(code).await?),
            None => None,
        };
        let user = match self.ports.accounts.user_by_email(&email).await? {
            None => {
                let user = new_user(&*self.ports.clock, &*self.ports.ids, email);
                match self.ports.accounts.insert_user(&user).await {
                    Ok(()) => user,
                    Err(StoreError::Conflict(_)) => return Err(AccountRule::AccountExists.into()),
                    Err(e) => return Err(e.into()),
                }
            }
            // An account a loop owner invited by email has no password
            // yet; the invitation's own code lets that person claim it.
            // Only an account that is nothing but an invitation: one with
            // API keys is someone's working account, and the code is
            // shared, so claiming it would hand that account to anyone
            // holding the code. Any other existing account is refused.
            Some(user) => {
                let invited_here = match &lp {
                    Some(lp) => lp
                        .member(&user.id)
                        .is_some_and(|m| m.status == MemberStatus::Pending),
                    None => false,
                };
                let has_password = self.ports.people.password_hash(&user.id).await?.is_some();
                let has_keys = !self.ports.accounts.api_keys_of(&user.id).await?.is_empty();
                if has_password || has_keys || !invited_here {
                    return Err(AccountRule::AccountExists.into());
                }
                user
            }
        };
        let hash = self.hash(&password).await?;
        self.ports.people.set_password(&user.id, &hash).await?;
        let principal = Self::principal(user.clone());
        let joined = match lp {
            Some(lp) => Some(
                self.loops
                    .join(&principal, lp.invite_code.as_str())
                    .await?
                    .0,
            ),
            None => None,
        };
        Ok(SignedUp {
            signed_in: self.start_session(user).await?,
            joined,
        })
    }

    /// Deletes expired sessions and password links.
    pub async fn purge_expired(&self) -> Result<u64, StoreError> {
        let now: DateTime<Utc> = self.ports.clock.now();
        self.ports.people.purge_expired_sessions(now).await
    }
}

#[cfg(test)]
mod tests;
