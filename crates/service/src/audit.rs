//! The audit chain, read: an account's own log through the API, and every
//! log checked by `reviewloop audit verify`.

use reviewloop_domain::{verify_chain, AuditEntry, ChainBreak, Email, Permission, UserId};

use reviewloop_ports::StoreError;

use crate::error::{use_case_error, Missing, QueryError};

use_case_error! {
    /// Why audit chains could not be checked ([`AuditService::verify`]).
    pub enum VerifyAuditError {
        Invalid(reviewloop_domain::ValidationError),
        NotFound(Missing),
        Store(StoreError),
    }
}
use crate::ports::AuditPorts;
use crate::principal::Principal;

/// Entries per page when none is asked for, and the most allowed.
pub const AUDIT_DEFAULT_LIMIT: u32 = 100;
/// The largest page.
pub const AUDIT_MAX_LIMIT: u32 = 1000;
/// Entries read at a time while checking a log.
const VERIFY_BATCH: u32 = 5000;
/// Entries linked per pass.
pub const LINK_BATCH: u32 = 1000;

/// One page of an account's log.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditPage {
    /// The entries, oldest first.
    pub entries: Vec<AuditEntry>,
    /// How many entries the log holds (the number of its last).
    pub total: i64,
}

/// What checking one account's log found.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainVerdict {
    /// The account.
    pub account_id: UserId,
    /// Its email, when the account still exists.
    pub email: Option<Email>,
    /// Entries that fit before the first break (all of them when intact).
    pub entries: u64,
    /// The hash of the last entry: keep it elsewhere to catch a rewrite of
    /// the whole tail later.
    pub head: Option<String>,
    /// Where the chain breaks; `None` when it is intact.
    pub broken: Option<ChainBreak>,
}

/// Audit use cases.
#[derive(Clone)]
pub struct AuditService {
    ports: AuditPorts,
}

impl AuditService {
    /// The service over `ports`.
    pub fn new(ports: AuditPorts) -> Self {
        Self { ports }
    }

    /// Links entries written since the last pass into their accounts'
    /// chains, up to `batch`; returns how many.
    pub async fn link(&self, batch: u32) -> Result<usize, StoreError> {
        self.ports.audit.link_audit(batch).await
    }

    /// Links everything written so far, so a read sees every change that
    /// committed before it.
    async fn link_all(&self) -> Result<(), StoreError> {
        while self.link(LINK_BATCH).await? >= LINK_BATCH as usize {}
        Ok(())
    }

    /// The caller's own log, from entry `offset + 1` on.
    pub async fn entries(
        &self,
        caller: &Principal,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> Result<AuditPage, QueryError> {
        caller.require_live("the audit log")?;
        caller.require(Permission::RequestsRead)?;
        let limit = limit.unwrap_or(AUDIT_DEFAULT_LIMIT);
        if !(1..=AUDIT_MAX_LIMIT).contains(&limit) {
            return Err(reviewloop_domain::ValidationError::field(
                "limit",
                format!("limit must be a whole number from 1 to {AUDIT_MAX_LIMIT}"),
            )
            .into());
        }
        self.link_all().await?;
        let after = i64::from(offset.unwrap_or(0));
        let entries = self
            .ports
            .audit
            .audit_entries(&caller.user_id, after, limit)
            .await?;
        let total = self
            .ports
            .audit
            .audit_head(&caller.user_id)
            .await?
            .map_or(0, |head| head.seq);
        Ok(AuditPage { entries, total })
    }

    /// Checks the log of the account with `email`, or of every account.
    pub async fn verify(&self, email: Option<&str>) -> Result<Vec<ChainVerdict>, VerifyAuditError> {
        self.link_all().await?;
        let accounts = match email {
            Some(email) => {
                vec![
                    crate::accounts::existing_user::<VerifyAuditError>(
                        &*self.ports.accounts,
                        &Email::parse(email)?,
                    )
                    .await?
                    .id,
                ]
            }
            None => self.ports.audit.audit_accounts().await?,
        };
        let mut verdicts = Vec::with_capacity(accounts.len());
        for account in accounts {
            verdicts.push(self.verify_one(account).await?);
        }
        Ok(verdicts)
    }

    async fn verify_one(&self, account: UserId) -> Result<ChainVerdict, StoreError> {
        let mut log = Vec::new();
        let mut after = 0;
        loop {
            let batch = self
                .ports
                .audit
                .audit_entries(&account, after, VERIFY_BATCH)
                .await?;
            let Some(last) = batch.last() else { break };
            after = last.seq;
            let full = batch.len() == VERIFY_BATCH as usize;
            log.extend(batch);
            if !full {
                break;
            }
        }
        let email = self
            .ports
            .accounts
            .user_by_id(&account)
            .await?
            .map(|u| u.email.clone());
        let (entries, broken) = match verify_chain(&log) {
            Ok(n) => (n, None),
            Err(at) => (fit_before(&at), Some(at)),
        };
        Ok(ChainVerdict {
            account_id: account,
            email,
            entries,
            head: log.last().map(|e| e.hash.clone()),
            broken,
        })
    }
}

/// How many entries fit before the break.
fn fit_before(at: &ChainBreak) -> u64 {
    u64::try_from(at.seq() - 1).unwrap_or(0)
}

#[cfg(test)]
mod tests;
