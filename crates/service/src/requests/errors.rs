//! What can go wrong with each request use case.

use reviewloop_domain::{ChangeError, ValidationError};
use reviewloop_ports::StoreError;

use crate::error::{use_case_error, Bug, Busy, Denied, Missing};

use_case_error! {
    /// Why a request could not be created ([`super::RequestService::create`]).
    pub enum CreateRequestError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Refused(ChangeError),
        Busy(Busy),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a loop's rules could not be tried on a sample
    /// ([`super::RequestService::test_rules`]).
    pub enum TestRulesError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Store(StoreError),
    }

    /// Why a loop's requests could not be listed
    /// ([`super::RequestService::list_in_loop`]).
    pub enum ListLoopRequestsError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Store(StoreError),
    }

    /// Why a change of a request did not land: a reviewer's claim, release
    /// or answer, or a requester's update, cancel, feedback or rating.
    pub enum ChangeRequestError {
        Denied(Denied),
        NotFound(Missing),
        Refused(ChangeError),
        Busy(Busy),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why the test clock could not be read or moved
    /// ([`super::RequestService::test_clock`],
    /// [`super::RequestService::advance_test_clock`]).
    pub enum TestClockError {
        Denied(Denied),
        Invalid(ValidationError),
        Store(StoreError),
    }
}

impl From<ValidationError> for ChangeRequestError {
    fn from(error: ValidationError) -> Self {
        Self::Refused(error.into())
    }
}

impl From<reviewloop_domain::TransitionError> for ChangeRequestError {
    fn from(error: reviewloop_domain::TransitionError) -> Self {
        Self::Refused(error.into())
    }
}

impl From<reviewloop_domain::TransitionError> for CreateRequestError {
    fn from(error: reviewloop_domain::TransitionError) -> Self {
        Self::Refused(error.into())
    }
}

impl From<crate::receipts::ReceiptKeyError> for ChangeRequestError {
    fn from(error: crate::receipts::ReceiptKeyError) -> Self {
        match error {
            crate::receipts::ReceiptKeyError::Store(e) => Self::Store(e),
            crate::receipts::ReceiptKeyError::Bug(e) => Self::Bug(e),
        }
    }
}

impl From<crate::receipts::ReceiptKeyError> for CreateRequestError {
    fn from(error: crate::receipts::ReceiptKeyError) -> Self {
        match error {
            crate::receipts::ReceiptKeyError::Store(e) => Self::Store(e),
            crate::receipts::ReceiptKeyError::Bug(e) => Self::Bug(e),
        }
    }
}
