//! Parsing of the request-list query: filters, order and page.

use reviewloop_domain::{LoopId, Priority, RequestStatus, ValidationError};
use reviewloop_ports::{RequestQuery, RequestSort};

use crate::principal::Principal;

const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 200;

/// The list query as the client sent it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListRequestsInput {
    /// A request status.
    pub status: Option<String>,
    /// A priority.
    pub priority: Option<String>,
    /// A loop id.
    pub loop_id: Option<String>,
    /// 1 to 200; 50 by default.
    pub limit: Option<String>,
    /// 0 or more.
    pub offset: Option<String>,
    /// `created_at_desc` (default), `created_at_asc`, `priority_desc`, `status_asc`.
    pub sort: Option<String>,
    /// `key` (default): the requests made with the calling key; `account`:
    /// the whole account's. A person in the web application has no key and
    /// always sees the account's.
    pub scope: Option<String>,
}

fn whole(
    field: &str,
    raw: &str,
    range: std::ops::RangeInclusive<u32>,
) -> Result<u32, ValidationError> {
    raw.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            ValidationError::field(
                field,
                format!(
                    "{field} must be a whole number from {} to {}",
                    range.start(),
                    range.end()
                ),
            )
        })
}

impl ListRequestsInput {
    /// Validates every parameter; unknown values are refused, not ignored.
    /// `test` says which requests: a test-mode key's or live ones.
    pub fn into_query(self, caller: &Principal) -> Result<RequestQuery, ValidationError> {
        let mut errors = ValidationError::default();
        let api_key = match self.scope.as_deref().map(str::trim) {
            None | Some("") | Some("key") => caller.api_key_id,
            Some("account") => None,
            Some(_) => {
                errors.extend(ValidationError::field(
                    "scope",
                    "scope must be key (the requests made with this key) or account",
                ));
                None
            }
        };
        let status = self
            .status
            .as_deref()
            .and_then(|s| errors.collect(RequestStatus::parse(s)));
        let priority = self
            .priority
            .as_deref()
            .and_then(|p| errors.collect(Priority::parse(p)));
        let loop_id = self.loop_id.as_deref().and_then(|id| {
            errors.collect(LoopId::parse(id).map_err(|_| {
                ValidationError::field("loop_id", "loop_id must be 24 hexadecimal characters")
            }))
        });
        let limit = self
            .limit
            .as_deref()
            .and_then(|l| errors.collect(whole("limit", l, 1..=MAX_LIMIT)));
        let offset = self
            .offset
            .as_deref()
            .and_then(|o| errors.collect(whole("offset", o, 0..=u32::MAX)));
        let sort = match self.sort.as_deref() {
            None | Some("created_at_desc") => RequestSort::CreatedAtDesc,
            Some("created_at_asc") => RequestSort::CreatedAtAsc,
            Some("priority_desc") => RequestSort::PriorityDesc,
            Some("status_asc") => RequestSort::StatusAsc,
            Some(_) => {
                errors.extend(ValidationError::field(
                    "sort",
                    "sort must be one of created_at_desc, created_at_asc, priority_desc, status_asc",
                ));
                RequestSort::CreatedAtDesc
            }
        };
        errors.into_result()?;
        Ok(RequestQuery {
            creator: caller.user_id,
            api_key,
            status,
            priority,
            loop_id,
            limit: limit.unwrap_or(DEFAULT_LIMIT),
            offset: offset.unwrap_or(0),
            sort,
            test: caller.test,
        })
    }
}
