//! The errors of use cases that can fail in the same few ways: reading,
//! listing, creating and editing a resource the caller owns or may see.
//! A use case with a failure of its own has an enum of its own instead.

use reviewloop_domain::ValidationError;
use reviewloop_ports::StoreError;

use super::{Denied, Missing};

use_case_error! {
    /// Why a list could not be read: the key may not, or the store failed.
    pub enum ListError {
        Denied(Denied),
        Store(StoreError),
    }

    /// Why a filtered list could not be read: the key may not, a filter is
    /// invalid, or the store failed.
    pub enum QueryError {
        Denied(Denied),
        Invalid(ValidationError),
        Store(StoreError),
    }

    /// Why one resource could not be read: the key may not, it is absent
    /// or invisible to the caller, or the store failed.
    pub enum ReadError {
        Denied(Denied),
        NotFound(Missing),
        Store(StoreError),
    }

    /// Why a resource could not be created: the key may not, the input is
    /// invalid, or the store failed.
    pub enum CreateError {
        Denied(Denied),
        Invalid(ValidationError),
        Store(StoreError),
    }

    /// Why a resource could not be changed or deleted: the key may not, it
    /// is absent or invisible, the input is invalid, or the store failed.
    pub enum EditError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Store(StoreError),
    }
}
