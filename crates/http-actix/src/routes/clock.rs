//! `/test/clock`: a test-mode key's account clock, read and moved ahead so
//! a workflow's timeout branch can be tried in milliseconds.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_service::TestClock;
use reviewloop_wire::account::{ClockAdvanceIn, TestClockOut};

use crate::auth::Caller;
use crate::body::Body;
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

fn shown(clock: &TestClock) -> TestClockOut {
    TestClockOut {
        now: clock.now,
        offset_seconds: clock.offset_seconds,
        answered: clock.answered,
        timed_out: clock.timed_out,
    }
}

pub(super) async fn get(state: web::Data<AppState>, caller: Caller) -> Result<Reply, ApiError> {
    let clock = state.requests.test_clock(&caller.principal).await?;
    Ok(Reply::new(StatusCode::OK, "Test clock", shown(&clock)))
}

pub(super) async fn advance(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<ClockAdvanceIn>,
) -> Result<Reply, ApiError> {
    let clock = state
        .requests
        .advance_test_clock(&caller.principal, body.advance_seconds)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Test clock advanced",
        shown(&clock),
    ))
}
