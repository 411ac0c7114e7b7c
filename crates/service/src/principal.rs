//! Who is calling: the account and key behind an authenticated request.

use reviewloop_domain::{AccountStatus, ApiKeyId, Email, Permission, UserId};

use crate::error::Denied;

/// The caller, as established by its API key.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    /// The account.
    pub user_id: UserId,
    /// The account's email.
    pub email: Email,
    /// The account's status.
    pub account_status: AccountStatus,
    /// The key used; `None` for a person signed in to the web application.
    pub api_key_id: Option<ApiKeyId>,
    /// What the key may do.
    pub permissions: Vec<Permission>,
    /// The key's hourly limit (0 for a web session, which has none).
    pub rate_limit: u32,
    /// The key's plan: its per-minute limit on the alternate surface.
    pub plan: reviewloop_domain::Plan,
    /// A test-mode key: it makes and sees test data only (a person in the
    /// web application is always live).
    pub test: bool,
}

impl Principal {
    /// A person acting as themselves (in the web application, or through a
    /// link or a chat app made for them): live data, no key, no hourly
    /// limit, allowed `permissions`.
    pub fn person(user: reviewloop_domain::User, permissions: Vec<Permission>) -> Self {
        let user = user.into_record();
        Self {
            user_id: user.id,
            email: user.email,
            account_status: user.status,
            api_key_id: None,
            permissions,
            rate_limit: 0,
            plan: reviewloop_domain::Plan::Standard,
            test: false,
        }
    }

    /// Refuses a test-mode key (403): `what` involves people or live data
    /// that test data must not mix with.
    pub fn require_live(&self, what: &'static str) -> Result<(), Denied> {
        if self.test {
            return Err(Denied::TestKey(what));
        }
        Ok(())
    }

    /// Refuses with 403 unless the key carries `permission`.
    pub fn require(&self, permission: Permission) -> Result<(), Denied> {
        if self.permissions.contains(&permission) {
            Ok(())
        } else {
            Err(Denied::Permission(permission))
        }
    }
}
