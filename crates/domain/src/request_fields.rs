//! The enumerated fields of a request, and the bounds of its timeout.
//! Below `request`, so that what reads a request's facts (rules, notices,
//! loops) does not depend on the request itself.

/// Timeout of a deferred request that names none: 30 days.
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 30 * 24 * 60 * 60;
/// The longest timeout a request may ask for: 30 days.
pub(crate) const MAX_TIMEOUT_SECONDS: i64 = DEFAULT_TIMEOUT_SECONDS;

api_enum!(
    /// How the request is processed.
    ProcessingType, "processing_type" {
        /// Needs an answer within `timeout_seconds`.
        TimeSensitive => "time-sensitive",
        /// Can wait; times out after 30 days unless told otherwise.
        Deferred => "deferred",
    }
);

api_enum!(
    /// What the reviewers look at.
    ContentType, "type" {
        /// Markdown text.
        Markdown => "markdown",
        /// An image at `image_url`.
        Image => "image",
    }
);

api_enum!(
    /// How urgent a request is.
    Priority, "priority" {
        /// Whenever.
        Low => "low",
        /// Normal.
        Medium => "medium",
        /// Soon.
        High => "high",
        /// Now.
        Critical => "critical",
    }
);

impl Priority {
    /// Orders priorities: higher is more urgent.
    pub fn rank(&self) -> i32 {
        match self {
            Self::Low => 0,
            Self::Medium => 1,
            Self::High => 2,
            Self::Critical => 3,
        }
    }

    /// One step more urgent; critical stays critical.
    pub fn raised(&self) -> Self {
        match self {
            Self::Low => Self::Medium,
            Self::Medium => Self::High,
            Self::High | Self::Critical => Self::Critical,
        }
    }
}

api_enum!(
    /// Where a request came from.
    Platform, "platform" {
        /// The web portal.
        WebPortal => "web_portal",
        /// The API directly (the default).
        Api => "api",
        /// A mobile app.
        Mobile => "mobile",
        /// A webhook integration.
        Webhook => "webhook",
        /// An n8n workflow.
        N8n => "n8n",
        /// A Zapier zap.
        Zapier => "zapier",
    }
);

api_enum!(
    /// Where a request stands.
    RequestStatus, "status" {
        /// Waiting for a reviewer.
        Pending => "pending",
        /// A reviewer holds it.
        Claimed => "claimed",
        /// A reviewer answered.
        Completed => "completed",
        /// Nobody answered in time; the default response stands.
        Timeout => "timeout",
        /// The requester cancelled it.
        Cancelled => "cancelled",
    }
);

impl RequestStatus {
    /// Pending and claimed requests can still change; the rest are final.
    pub fn is_open(&self) -> bool {
        matches!(self, Self::Pending | Self::Claimed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for p in Priority::ALL {
            assert_eq!(Priority::parse(p.as_str()).unwrap(), *p);
        }
        assert_eq!(
            Priority::parse("urgent").unwrap_err().to_string(),
            "priority must be one of low, medium, high, critical"
        );
        assert_eq!(
            ProcessingType::parse("later").unwrap_err().to_string(),
            "processing_type must be one of time-sensitive, deferred"
        );
        assert_eq!(
            ContentType::parse("video").unwrap_err().to_string(),
            "type must be one of markdown, image"
        );
        assert!(Platform::parse("n8n").is_ok() && Platform::parse("zapier").is_ok());
        assert!(Platform::parse("make").is_err());
    }

    #[test]
    fn priority_ranks_follow_urgency() {
        let ranks: Vec<i32> = Priority::ALL.iter().map(Priority::rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
    }

    #[test]
    fn only_pending_and_claimed_are_open() {
        let open: Vec<_> = RequestStatus::ALL.iter().filter(|s| s.is_open()).collect();
        assert_eq!(open, [&RequestStatus::Pending, &RequestStatus::Claimed]);
    }

    #[test]
    fn names_are_the_api_names() {
        assert_eq!(ProcessingType::TimeSensitive.as_str(), "time-sensitive");
        assert_eq!(Platform::WebPortal.as_str(), "web_portal");
    }
}
