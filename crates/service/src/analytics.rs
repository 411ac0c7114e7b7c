//! How an account's requests fared: counts by status, response times,
//! the timeout rate and answers per reviewer, over the last days.

use std::collections::HashMap;

use chrono::{Duration, NaiveDate};
use reviewloop_domain::{Email, LoopId, Permission, RequestStatus, UserId, ValidationError};
use reviewloop_ports::RequestFacts;

use reviewloop_ports::StoreError;

use crate::error::{use_case_error, Denied, Missing};

use_case_error! {
    /// Why the figures could not be computed ([`AnalyticsService::of`]).
    pub enum AnalyticsError {
        Denied(Denied),
        Invalid(ValidationError),
        NotFound(Missing),
        Store(StoreError),
    }
}
use crate::ports::AnalyticsPorts;
use crate::principal::Principal;

/// The windows analytics are offered over, in days.
pub const ANALYTICS_WINDOWS: [u32; 2] = [7, 30];

/// The figures of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct Analytics {
    /// The window, in days.
    pub days: u32,
    /// Requests created in it.
    pub total: usize,
    /// How many of them stand in each status (every status, in order).
    pub by_status: Vec<(RequestStatus, usize)>,
    /// Median seconds from creation to a reviewer's answer.
    pub median_response_seconds: Option<f64>,
    /// 90th percentile of the same.
    pub p90_response_seconds: Option<f64>,
    /// Timed-out share of the requests that ended by answer or timeout.
    pub timeout_rate: Option<f64>,
    /// Answers per reviewer, most first.
    pub answers_by_reviewer: Vec<(Email, usize)>,
    /// Requests created per day, oldest day first, every day of the window.
    pub per_day: Vec<(NaiveDate, usize)>,
    /// Requests nobody was asked: joined to an open one with the same
    /// question, or answered with a person's recent answer.
    pub questions_saved: usize,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// The figures of `facts` (all created within the window ending `today`).
pub(crate) fn summarise(
    facts: &[RequestFacts],
    days: u32,
    today: NaiveDate,
    emails: &HashMap<UserId, Email>,
) -> Analytics {
    let by_status = RequestStatus::ALL
        .iter()
        .map(|s| (*s, facts.iter().filter(|f| f.status == *s).count()))
        .collect();
    // A request that took another's answer is not a reviewer's work: its
    // answer is counted once, with the request that was asked.
    let mut times: Vec<f64> = facts
        .iter()
        .filter(|f| f.status == RequestStatus::Completed && !f.saved)
        .filter_map(|f| f.response_time_seconds)
        .filter(|t| t.is_finite())
        .collect();
    times.sort_by(f64::total_cmp);
    let ended = facts
        .iter()
        .filter(|f| matches!(f.status, RequestStatus::Completed | RequestStatus::Timeout))
        .count();
    let timeouts = facts
        .iter()
        .filter(|f| f.status == RequestStatus::Timeout)
        .count();
    let mut answers: HashMap<UserId, usize> = HashMap::new();
    for f in facts
        .iter()
        .filter(|f| f.status == RequestStatus::Completed && !f.saved)
    {
        if let Some(by) = f.response_by {
            *answers.entry(by).or_default() += 1;
        }
    }
    let mut answers_by_reviewer: Vec<(Email, usize)> = answers
        .into_iter()
        .filter_map(|(user, n)| emails.get(&user).map(|e| (e.clone(), n)))
        .collect();
    answers_by_reviewer.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.as_str().cmp(b.0.as_str())));
    let first = today - Duration::days(i64::from(days) - 1);
    let per_day = (0..i64::from(days))
        .map(|d| first + Duration::days(d))
        .map(|day| {
            (
                day,
                facts
                    .iter()
                    .filter(|f| f.created_at.date_naive() == day)
                    .count(),
            )
        })
        .collect();
    Analytics {
        days,
        total: facts.len(),
        by_status,
        median_response_seconds: percentile(&times, 50.0),
        p90_response_seconds: percentile(&times, 90.0),
        timeout_rate: (ended > 0).then(|| timeouts as f64 / ended as f64),
        answers_by_reviewer,
        per_day,
        questions_saved: facts.iter().filter(|f| f.saved).count(),
    }
}

/// Analytics of the caller's requests.
#[derive(Clone)]
pub struct AnalyticsService {
    ports: AnalyticsPorts,
}

impl AnalyticsService {
    /// A service over `ports`.
    pub fn new(ports: AnalyticsPorts) -> Self {
        Self { ports }
    }

    /// The figures of the caller's requests over the last `days` (7 or
    /// 30), in one loop of theirs or in all of them.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn of(
        &self,
        caller: &Principal,
        loop_id: Option<LoopId>,
        days: u32,
    ) -> Result<Analytics, AnalyticsError> {
        caller.require(Permission::RequestsRead)?;
        if !ANALYTICS_WINDOWS.contains(&days) {
            return Err(ValidationError::field("days", "days must be 7 or 30").into());
        }
        let loops = self.ports.loops.loops_created_by(&caller.user_id).await?;
        if let Some(id) = loop_id {
            if !loops.iter().any(|l| l.id == id) {
                return Err(Missing::Loop.into());
            }
        }
        let now = self.ports.clock.now();
        let today = now.date_naive();
        let since = (today - Duration::days(i64::from(days) - 1))
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc())
            .unwrap_or(now);
        let facts = self
            .ports
            .requests
            .request_facts(&caller.user_id, loop_id, since)
            .await?;
        // Reviewers are named by their membership of the caller's loops.
        let emails: HashMap<UserId, Email> = loops
            .iter()
            .flat_map(|l| l.members.iter())
            .map(|m| (m.user_id, m.email.clone()))
            .collect();
        Ok(summarise(&facts, days, today, &emails))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use reviewloop_domain::ObjectId;

    fn fact(status: RequestStatus, by: Option<u8>, secs: Option<f64>, day: i64) -> RequestFacts {
        RequestFacts {
            saved: false,
            loop_id: LoopId::new(ObjectId::from_parts(1, [1; 8])),
            status,
            response_by: by.map(|n| UserId::new(ObjectId::from_parts(1, [n; 8]))),
            response_time_seconds: secs,
            created_at: DateTime::<Utc>::from_timestamp(1_800_000_000 + day * 86_400, 0).unwrap(),
        }
    }

    #[test]
    fn figures_are_what_a_person_would_count() {
        use RequestStatus::*;
        let facts = vec![
            fact(Completed, Some(2), Some(10.0), 0),
            fact(Completed, Some(2), Some(20.0), 0),
            fact(Completed, Some(3), Some(30.0), 1),
            fact(Completed, Some(3), Some(40.0), 1),
            fact(Completed, Some(2), Some(100.0), 2),
            fact(Timeout, None, None, 2),
            fact(Pending, None, None, 2),
            // Joined to another and answered with it: saved, and not
            // counted as the reviewer's answer again.
            RequestFacts {
                saved: true,
                ..fact(Completed, Some(2), Some(1.0), 2)
            },
        ];
        let emails = HashMap::from([
            (
                UserId::new(ObjectId::from_parts(1, [2; 8])),
                Email::parse("b@x.io").unwrap(),
            ),
            (
                UserId::new(ObjectId::from_parts(1, [3; 8])),
                Email::parse("c@x.io").unwrap(),
            ),
        ]);
        let today = fact(Pending, None, None, 2).created_at.date_naive();
        let a = summarise(&facts, 7, today, &emails);
        assert_eq!(a.total, 8);
        assert_eq!(a.questions_saved, 1);
        assert_eq!(a.by_status[0], (Pending, 1));
        assert_eq!(a.by_status[2], (Completed, 6));
        assert_eq!(a.median_response_seconds, Some(30.0));
        assert_eq!(a.p90_response_seconds, Some(100.0));
        assert_eq!(a.timeout_rate, Some(1.0 / 7.0));
        assert_eq!(a.answers_by_reviewer[0].0.as_str(), "b@x.io");
        assert_eq!(a.answers_by_reviewer[0].1, 3);
        assert_eq!(a.per_day.len(), 7);
        assert_eq!(a.per_day[6], (today, 4));
        assert_eq!(a.per_day[4].1, 2);
    }

    #[test]
    fn nothing_yet_means_no_figures_not_zeros() {
        let today = DateTime::<Utc>::from_timestamp(1_800_000_000, 0)
            .unwrap()
            .date_naive();
        let a = summarise(&[], 30, today, &HashMap::new());
        assert_eq!(a.median_response_seconds, None);
        assert_eq!(a.timeout_rate, None);
        assert_eq!(a.per_day.len(), 30);
    }
}
