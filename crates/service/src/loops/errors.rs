//! What can go wrong with each loop use case.

use reviewloop_domain::{TransitionError, ValidationError};
use reviewloop_ports::StoreError;

use crate::error::{use_case_error, Bug, Busy, Denied, LoopRule, Missing};

use_case_error! {
    /// Why a loop could not be created ([`super::LoopService::create`]).
    pub enum CreateLoopError {
        Denied(Denied),
        Invalid(ValidationError),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a loop could not be deleted ([`super::LoopService::delete`]).
    pub enum DeleteLoopError {
        Denied(Denied),
        NotFound(Missing),
        Rule(LoopRule),
        Refused(TransitionError),
        Store(StoreError),
    }

    /// Why a member could not be removed
    /// ([`super::LoopService::remove_member`]).
    pub enum RemoveMemberError {
        Denied(Denied),
        NotFound(Missing),
        Rule(LoopRule),
        Refused(TransitionError),
        Busy(Busy),
        Store(StoreError),
    }

    /// Why the caller could not join a loop ([`super::LoopService::join`]).
    pub enum JoinLoopError {
        Denied(Denied),
        NotFound(Missing),
        Refused(TransitionError),
        Busy(Busy),
        Store(StoreError),
    }

    /// Why someone could not be invited ([`super::LoopService::invite`]).
    pub enum InviteMemberError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Rule(LoopRule),
        Busy(Busy),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why the caller's notification level could not be set
    /// ([`super::LoopService::set_notify`]).
    pub enum SetNotifyError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Busy(Busy),
        Store(StoreError),
    }

    /// Why a loop could not get a new invite code
    /// ([`super::LoopService::regenerate_code`]).
    pub enum NewInviteCodeError {
        Denied(Denied),
        NotFound(Missing),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why an invite code led nowhere ([`super::LoopService::loop_for_code`],
    /// [`super::LoopService::qr_png`]).
    pub enum InviteCodeError {
        NotFound(Missing),
        Store(StoreError),
        Bug(Bug),
    }
}
