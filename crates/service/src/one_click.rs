//! One-click answers from a member's email. Following a link only shows
//! what it would do (mail scanners fetch links); confirming answers as the
//! member the link was made for, who must still be one of the request's
//! reviewers. A request that ended, or that no longer waits for this
//! member, is shown as it is and left unchanged.

use reviewloop_domain::{sha256_hex, AccountStatus, AnswerLink, Loop, Permission, ReviewRequest};
use reviewloop_ports::StoreError;

use crate::error::{use_case_error, Bug, Busy, Denied, Missing};
use crate::ports::OneClickPorts;
use crate::principal::Principal;
use crate::requests::{ChangeRequestError, RequestService};

use_case_error! {
    /// Why a one-click link could not be shown or used (`NotFound`: it is
    /// unknown or spent, or its member is no longer a reviewer of it).
    pub enum OneClickError {
        NotFound(Missing),
        Denied(Denied),
        Busy(Busy),
        Store(StoreError),
        Bug(Bug),
    }
}

/// What a link leads to.
#[derive(Debug, Clone, PartialEq)]
pub struct OneClick {
    /// The link: its answer in words and as JSON.
    pub link: AnswerLink,
    /// The request as it stands (after the answer, once answered).
    pub request: ReviewRequest,
    /// The request's loop.
    pub lp: Loop,
    /// Where things stand.
    pub state: OneClickState,
}

/// Where a one-click answer stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OneClickState {
    /// It can answer: the page asks to confirm.
    Ready,
    /// It answered just now.
    Answered,
    /// The request no longer waits for this answer: it ended, or another
    /// reviewer holds it, or this member answered already.
    Settled,
}

/// One-click answers by email.
#[derive(Clone)]
pub struct OneClickService {
    ports: OneClickPorts,
    requests: RequestService,
}

impl OneClickService {
    /// A service that answers through `requests`.
    pub fn new(ports: OneClickPorts, requests: RequestService) -> Self {
        Self { ports, requests }
    }

    /// The live link behind `token`, with its request and loop.
    async fn find(&self, token: &str) -> Result<(AnswerLink, ReviewRequest, Loop), OneClickError> {
        // Tokens are 64 hex characters; anything else is not one.
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Missing::Link.into());
        }
        let link = self
            .ports
            .answer_links
            .answer_link(&sha256_hex(token.as_bytes()))
            .await?
            .filter(|l| l.used_at.is_none())
            .ok_or(Missing::Link)?;
        let request = self
            .ports
            .requests
            .request_by_id(&link.request_id)
            .await?
            .ok_or(Missing::Link)?;
        let lp = self
            .ports
            .loops
            .loop_by_id(&request.loop_id)
            .await?
            .ok_or(Missing::Link)?;
        Ok((link, request, lp))
    }

    /// What following the link shows; it changes nothing.
    pub async fn open(&self, token: &str) -> Result<OneClick, OneClickError> {
        let (link, request, lp) = self.find(token).await?;
        // A member who left, or was removed, no longer reads the request.
        let member_here = lp.is_active_member(&link.user_id);
        let member_there = match request.escalated_to() {
            Some(to) if !member_here => self
                .ports
                .loops
                .loop_by_id(&to)
                .await?
                .is_some_and(|l| l.is_active_member(&link.user_id)),
            _ => false,
        };
        if !(member_here || member_there) {
            return Err(Missing::Link.into());
        }
        let state = if waits_for(&request, &link) {
            OneClickState::Ready
        } else {
            OneClickState::Settled
        };
        Ok(OneClick {
            link,
            request,
            lp,
            state,
        })
    }

    /// Gives the link's answer as its member (claiming the request first
    /// when one reviewer decides it), then spends the link. A request that
    /// no longer waits for this answer is shown as it is.
    pub async fn answer(&self, token: &str) -> Result<OneClick, OneClickError> {
        let (link, request, lp) = self.find(token).await?;
        let settled = |request| OneClick {
            link: link.clone(),
            request,
            lp: lp.clone(),
            state: OneClickState::Settled,
        };
        if !waits_for(&request, &link) {
            return Ok(settled(request));
        }
        let member = self.member(&link).await?;
        // An answer to a pending request records its claim in the same
        // write, so a refused answer leaves no claim behind.
        match self
            .requests
            .respond(&member, &request.id, Some(link.answer.clone()), None)
            .await
        {
            Ok(answered) => {
                // Spent only once it answered: a try that found the request
                // taken leaves the link to show what happened.
                self.ports
                    .answer_links
                    .use_answer_link(&link.token_hash, self.ports.clock.now())
                    .await?;
                Ok(OneClick {
                    link,
                    request: answered,
                    lp,
                    state: OneClickState::Answered,
                })
            }
            // Taken, ended, or its options changed since the email: shown
            // as it stands, nothing changed.
            Err(ChangeRequestError::Refused(_)) => Ok(settled(self.reread(&request).await?)),
            Err(other) => Err(from_change(other)),
        }
    }

    async fn reread(&self, request: &ReviewRequest) -> Result<ReviewRequest, OneClickError> {
        Ok(self
            .ports
            .requests
            .request_by_id(&request.id)
            .await?
            .ok_or(Missing::Link)?)
    }

    /// The link's member, acting as a person would in the web application.
    async fn member(&self, link: &AnswerLink) -> Result<Principal, OneClickError> {
        let user = self
            .ports
            .accounts
            .user_by_id(&link.user_id)
            .await?
            .ok_or(Missing::Link)?;
        if user.status == AccountStatus::Suspended {
            return Err(Denied::AccountSuspended.into());
        }
        Ok(Principal::person(
            user,
            vec![Permission::RequestsRead, Permission::RequestsWrite],
        ))
    }
}

/// Whether `request` still waits for the link's member to answer: open,
/// not held by another reviewer, and (with a quorum) not answered by them.
fn waits_for(request: &ReviewRequest, link: &AnswerLink) -> bool {
    if !request.status.is_open() {
        return false;
    }
    if request.quorum.is_some() {
        return !request.has_answered(&link.user_id);
    }
    request
        .claimed_by
        .is_none_or(|holder| holder == link.user_id)
}

/// A failed answer as this use case tells it: a member who may no longer
/// answer finds the link gone, like a stranger would.
fn from_change(error: ChangeRequestError) -> OneClickError {
    match error {
        ChangeRequestError::NotFound(_) => Missing::Link.into(),
        ChangeRequestError::Denied(e) => e.into(),
        ChangeRequestError::Busy(e) => e.into(),
        ChangeRequestError::Store(e) => e.into(),
        ChangeRequestError::Bug(e) => e.into(),
        ChangeRequestError::Refused(e) => Bug::new(format!("unexpected refusal: {e}")).into(),
    }
}

#[cfg(test)]
mod tests;
