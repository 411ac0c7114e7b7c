//! The caller's own account: the secret that signs its callbacks.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_wire::account::SigningSecretOut;

use crate::auth::Caller;
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) async fn signing_secret(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<Reply, ApiError> {
    let secret = state.accounts.signing_secret(&caller.principal).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Signing secret retrieved successfully",
        SigningSecretOut {
            signing_secret: &secret,
        },
    ))
}

pub(super) async fn rotate_signing_secret(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<Reply, ApiError> {
    let secret = state
        .accounts
        .rotate_signing_secret(&caller.principal)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Signing secret rotated successfully",
        SigningSecretOut {
            signing_secret: &secret,
        },
    ))
}
