//! User accounts, API keys and the permissions a key carries.

use std::fmt;

use chrono::{DateTime, Utc};

use crate::error::ValidationError;
use crate::id::{ApiKeyId, UserId};
use crate::text::char_len;

/// An email address, trimmed and lower-cased so that one person is one account.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    /// Accepts `local@domain.tld`-shaped addresses of at most 254 characters.
    /// Deliberately lenient: the only real check of an address is mail reaching it.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let email = raw.trim().to_lowercase();
        let invalid = || ValidationError::field("email", "email must be a valid email address");
        if email.is_empty()
            || char_len(&email) > 254
            || email.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(invalid());
        }
        let (local, domain) = email.split_once('@').ok_or_else(invalid)?;
        let domain_ok = !domain.is_empty()
            && !domain.contains('@')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..");
        if local.is_empty() || !domain_ok {
            return Err(invalid());
        }
        Ok(Self(email))
    }

    /// The address as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether an account may use the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountStatus {
    /// Normal use.
    Active,
    /// Keys of a suspended account are refused.
    Suspended,
}

impl AccountStatus {
    /// The stored name, which the API also uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Suspended => "suspended",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "suspended" => Some(Self::Suspended),
            _ => None,
        }
    }
}

/// What an account is, as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct UserRecord {
    /// The account's id.
    pub id: UserId,
    /// The account's email address.
    pub email: Email,
    /// Whether the account may use the service.
    pub status: AccountStatus,
    /// Secret that signs callbacks of this account's requests.
    pub signing_secret: String,
    /// When the account was created.
    pub created_at: DateTime<Utc>,
}

/// A user account: the owner of loops, requests and API keys, and a
/// reviewer. Facts are read through `Deref` to [`UserRecord`].
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    record: UserRecord,
}

kept_in_record!(User, UserRecord);

impl User {
    /// A new, active account with its own callback signing secret.
    pub fn create(id: UserId, email: Email, signing_secret: String, now: DateTime<Utc>) -> Self {
        Self::restore(UserRecord {
            id,
            email,
            status: AccountStatus::Active,
            signing_secret,
            created_at: now,
        })
    }

    /// True while the account may use the service.
    pub fn is_active(&self) -> bool {
        self.status == AccountStatus::Active
    }
}

/// What an API key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permission {
    /// Read loops and their members.
    LoopsRead,
    /// Create, change and delete loops; join, invite, remove members.
    LoopsWrite,
    /// Read requests and the inbox.
    RequestsRead,
    /// Create, change, cancel, claim, release, answer and rate requests.
    RequestsWrite,
}

impl Permission {
    /// Every permission, in a stable order.
    pub const ALL: [Permission; 4] = [
        Self::LoopsRead,
        Self::LoopsWrite,
        Self::RequestsRead,
        Self::RequestsWrite,
    ];

    /// The permission's name, as the API shows it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::LoopsRead => "loops:read",
            Self::LoopsWrite => "loops:write",
            Self::RequestsRead => "requests:read",
            Self::RequestsWrite => "requests:write",
        }
    }

    /// Parses one permission name.
    pub fn parse(s: &str) -> Result<Self, ValidationError> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s.trim())
            .ok_or_else(|| {
                ValidationError::field(
                    "permissions",
                    format!(
                        "unknown permission '{}': use loops:read, loops:write, requests:read or requests:write",
                        s.trim()
                    ),
                )
            })
    }

    /// Parses a comma-separated list; the result is sorted and without repeats.
    pub fn parse_list(s: &str) -> Result<Vec<Self>, ValidationError> {
        let mut list = s
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(Self::parse)
            .collect::<Result<Vec<_>, _>>()?;
        list.sort();
        list.dedup();
        if list.is_empty() {
            return Err(ValidationError::field(
                "permissions",
                "permissions must name at least one permission",
            ));
        }
        Ok(list)
    }

    /// The comma-separated form used in storage.
    pub fn join(list: &[Self]) -> String {
        list.iter()
            .map(Permission::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an API key is, as a store keeps it: its hash, never the key itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKeyRecord {
    /// The key's id.
    pub id: ApiKeyId,
    /// The account the key acts for.
    pub user_id: UserId,
    /// Optional label chosen at creation.
    pub name: Option<String>,
    /// Hex SHA-256 of the key.
    pub key_hash: String,
    /// First characters of the key, so a person can recognise it in a list.
    pub prefix: String,
    /// What the key may do.
    pub permissions: Vec<Permission>,
    /// Requests allowed per hour (the request surface).
    pub rate_limit: u32,
    /// Its plan: requests allowed per minute on the alternate surface.
    pub plan: Plan,
    /// A test-mode key: its requests are answered by the request's
    /// `test_response` on its account's test clock, never by people, and it
    /// sees only test data.
    pub test: bool,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// When the key was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A key's plan, which sets how many calls a minute it may make on the
/// alternate surface (reviews, templates, webhooks, teams).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Plan {
    /// 1,000 calls a minute (the default).
    #[default]
    Standard,
    /// 10,000 calls a minute.
    Professional,
    /// 100,000 calls a minute.
    Enterprise,
}

impl Plan {
    /// Every plan, smallest first.
    pub const ALL: [Plan; 3] = [Self::Standard, Self::Professional, Self::Enterprise];

    /// The stored and shown name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Professional => "professional",
            Self::Enterprise => "enterprise",
        }
    }

    /// Parses a plan's name.
    pub fn parse(s: &str) -> Result<Self, ValidationError> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s.trim())
            .ok_or_else(|| {
                ValidationError::field(
                    "plan",
                    "plan must be one of standard, professional, enterprise",
                )
            })
    }

    /// Calls a minute the plan allows on the alternate surface.
    pub fn per_minute(&self) -> u32 {
        match self {
            Self::Standard => 1_000,
            Self::Professional => 10_000,
            Self::Enterprise => 100_000,
        }
    }
}

/// An API key: its hash, never the key itself. Facts are read through
/// `Deref` to [`ApiKeyRecord`].
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    record: ApiKeyRecord,
}

kept_in_record!(ApiKey, ApiKeyRecord);

/// What a new key is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApiKey {
    /// Optional label; blank means none.
    pub name: Option<String>,
    /// Hex SHA-256 of the key.
    pub key_hash: String,
    /// First characters of the key.
    pub prefix: String,
    /// What the key may do.
    pub permissions: Vec<Permission>,
    /// Requests allowed per hour.
    pub rate_limit: u32,
    /// Its plan.
    pub plan: Plan,
    /// A test-mode key.
    pub test: bool,
}

impl ApiKey {
    /// A new key of `user_id`, not revoked. A blank name is no name.
    pub fn issue(id: ApiKeyId, user_id: UserId, fields: NewApiKey, now: DateTime<Utc>) -> Self {
        Self::restore(ApiKeyRecord {
            id,
            user_id,
            name: fields
                .name
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty()),
            key_hash: fields.key_hash,
            prefix: fields.prefix,
            permissions: fields.permissions,
            rate_limit: fields.rate_limit,
            plan: fields.plan,
            test: fields.test,
            created_at: now,
            revoked_at: None,
        })
    }

    /// True until the key is revoked.
    pub fn is_live(&self) -> bool {
        self.revoked_at.is_none()
    }

    /// True when the key carries `permission`.
    pub fn allows(&self, permission: Permission) -> bool {
        self.permissions.contains(&permission)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_name_their_per_minute_allowance() {
        let allowances: Vec<(&str, u32)> = Plan::ALL
            .iter()
            .map(|p| (p.as_str(), p.per_minute()))
            .collect();
        assert_eq!(
            allowances,
            [
                ("standard", 1_000),
                ("professional", 10_000),
                ("enterprise", 100_000)
            ]
        );
        assert_eq!(Plan::parse(" enterprise ").unwrap(), Plan::Enterprise);
        assert_eq!(Plan::default(), Plan::Standard);
        assert!(Plan::parse("gold").is_err());
    }

    #[test]
    fn email_is_trimmed_and_lowercased() {
        assert_eq!(
            Email::parse("  Ann@Example.COM ").unwrap().as_str(),
            "ann@example.com"
        );
    }

    #[test]
    fn email_refuses_malformed_addresses() {
        for bad in [
            "",
            "ann",
            "@example.com",
            "ann@",
            "ann@@example.com",
            "a b@example.com",
            "ann@.example.com",
            "ann@example.com.",
            "ann@example..com",
        ] {
            let err = Email::parse(bad).unwrap_err();
            assert_eq!(
                err.to_string(),
                "email must be a valid email address",
                "{bad:?}"
            );
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(Email::parse(&long).is_err());
    }

    #[test]
    fn permissions_parse_as_a_sorted_set() {
        let list = Permission::parse_list("requests:write, loops:read,loops:read").unwrap();
        assert_eq!(list, vec![Permission::LoopsRead, Permission::RequestsWrite]);
        assert_eq!(Permission::join(&list), "loops:read,requests:write");
    }

    #[test]
    fn permissions_refuse_unknown_and_empty() {
        let err = Permission::parse_list("loops:read,admin").unwrap_err();
        assert!(err.to_string().contains("unknown permission 'admin'"));
        assert!(Permission::parse_list(" , ").is_err());
    }

    #[test]
    fn permissions_have_their_api_names() {
        let names: Vec<_> = Permission::ALL.iter().map(Permission::as_str).collect();
        assert_eq!(
            names,
            [
                "loops:read",
                "loops:write",
                "requests:read",
                "requests:write"
            ]
        );
    }

    #[test]
    fn account_status_round_trips() {
        for status in [AccountStatus::Active, AccountStatus::Suspended] {
            assert_eq!(AccountStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(AccountStatus::parse("gone"), None);
    }
}
