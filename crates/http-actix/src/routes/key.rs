//! `GET /v1/test`: who am I, and how much of my hourly allowance is left.

use actix_web::http::StatusCode;
use reviewloop_wire::account::{KeyCheckOut, PlanLimitOut, RateLimitOut};

use crate::auth::Caller;
use crate::envelope::Reply;

pub(super) async fn check(caller: Caller) -> Reply {
    let p = &caller.principal;
    let data = KeyCheckOut {
        api_key_id: p.api_key_id,
        user_id: p.user_id,
        email: p.email.as_str(),
        account_status: p.account_status.as_str(),
        permissions: p.permissions.iter().map(|p| p.as_str()).collect(),
        rate_limit: RateLimitOut {
            limit: caller.rate_limit.limit,
            remaining: caller.rate_limit.remaining,
            reset_at: caller.rate_limit.reset_at,
        },
        // The alternate surface counts calls per minute by plan.
        plan: p.plan.as_str(),
        // Test-mode keys make and see test data only.
        test: p.test,
        plan_rate_limit: PlanLimitOut {
            per_minute: p.plan.per_minute(),
        },
    };
    Reply::new(StatusCode::OK, "API key is valid", data)
}
