//! What the handlers of the alternate surface share. They are mounted only
//! under `/v1`, so their surface is fixed by the route table: every error
//! they return is rendered in envelope B.

use actix_web::HttpResponse;
use reviewloop_service::{messages, ServiceError};

use crate::envelope::Surface;
use crate::error::{ApiError, TEAM_NOT_FOUND};

/// An error of this surface.
pub(super) struct AltError(ApiError);

impl From<ServiceError> for AltError {
    fn from(error: ServiceError) -> Self {
        Self(ApiError::new(error, Surface::Alternate))
    }
}

impl From<AltError> for actix_web::Error {
    fn from(error: AltError) -> Self {
        error.0.into()
    }
}

pub(super) type Result = std::result::Result<HttpResponse, AltError>;

/// The services speak of loops; this surface of teams.
pub(super) fn as_team(error: ServiceError) -> ServiceError {
    match error {
        ServiceError::NotFound(messages::LOOP_NOT_FOUND) => ServiceError::NotFound(TEAM_NOT_FOUND),
        other => other,
    }
}

/// Parses a path id; anything but 24 hexadecimal characters is a 400.
pub(super) fn parse_id<T: std::str::FromStr>(raw: &str) -> std::result::Result<T, AltError> {
    crate::body::id_in(raw, Surface::Alternate).map_err(AltError)
}
