//! A request offered to a few of its loop's members (see
//! [`crate::Assignment`]) is offered to the next few when nobody claims it
//! in time.

use chrono::{DateTime, Duration, Utc};

use super::{BroadcastEntry, RequestStatus, ReviewRequest};
use crate::error::TransitionError;

/// The role of a reviewer a request reached because those offered it
/// first did not claim it in time.
pub const REASSIGNED_ROLE: &str = "reassigned";

impl ReviewRequest {
    /// A request just made, offered to a few members, is offered to the
    /// next ones after `seconds` unclaimed.
    pub fn reassign_after(&mut self, seconds: i64) {
        self.record.reassign_after_seconds = Some(seconds);
    }

    /// When it is next offered to more members: while it is pending and
    /// unclaimed, its last offer plus `reassign_after_seconds`.
    pub fn reassign_at(&self) -> Option<DateTime<Utc>> {
        let seconds = self.reassign_after_seconds?;
        if self.status != RequestStatus::Pending || self.test || self.coalesced_into.is_some() {
            return None;
        }
        let offered = self.offered_at.or(self.broadcasted_at)?;
        Some(offered + Duration::seconds(seconds))
    }

    /// Nobody claimed it in time: it is also offered to `reviewers` (those
    /// it went to already are left out). With nobody left to offer it to,
    /// it stops being reassigned. Returns how many reviewers were added.
    pub fn reassign(
        &mut self,
        reviewers: Vec<BroadcastEntry>,
        now: DateTime<Utc>,
    ) -> Result<usize, TransitionError> {
        if self.reassign_at().is_none_or(|at| at > now) {
            return Err(TransitionError::NotDue);
        }
        let before = self.broadcasted_to.len();
        for mut entry in reviewers {
            if !self.was_broadcast_to(&entry.user_id) {
                entry.role = REASSIGNED_ROLE.into();
                self.record.broadcasted_to.push(entry);
            }
        }
        let added = self.broadcasted_to.len() - before;
        if added == 0 {
            self.record.reassign_after_seconds = None;
        }
        self.record.offered_at = Some(now);
        self.record.updated_at = now;
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use serde_json::json;

    use super::*;
    use crate::id::{LoopId, ObjectId, RequestId, UserId};
    use crate::request::RequestInput;
    use crate::Email;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn entry(n: u8) -> BroadcastEntry {
        BroadcastEntry {
            user_id: UserId::new(ObjectId::from_parts(1, [n; 8])),
            email: Email::parse(&format!("u{n}@x.io")).unwrap(),
            role: "member".into(),
            notification_sent: false,
            notification_error: None,
            answer: None,
        }
    }

    fn offered_to_one() -> ReviewRequest {
        let input = RequestInput {
            request_text: Some("Ship it?".into()),
            content_type: Some("markdown".into()),
            response_type: Some("boolean".into()),
            priority: Some("medium".into()),
            processing_type: Some("time-sensitive".into()),
            timeout_seconds: Some(json!(600)),
            ..RequestInput::default()
        };
        let mut r = ReviewRequest::create(
            RequestId::new(ObjectId::from_parts(1, [7; 8])),
            LoopId::new(ObjectId::from_parts(1, [8; 8])),
            UserId::new(ObjectId::from_parts(1, [1; 8])),
            None,
            input.validate().unwrap(),
            vec![entry(2)],
            t(0),
        );
        r.reassign_after(60);
        r
    }

    #[test]
    fn unclaimed_in_time_it_is_offered_to_the_next_and_then_waits_again() {
        let mut r = offered_to_one();
        assert_eq!(r.reassign_at(), Some(t(60)));
        assert_eq!(
            r.reassign(vec![entry(3)], t(59)),
            Err(TransitionError::NotDue)
        );
        assert_eq!(r.reassign(vec![entry(2), entry(3)], t(61)), Ok(1));
        assert_eq!(r.broadcasted_to[1].role, REASSIGNED_ROLE);
        assert_eq!(r.reassign_at(), Some(t(121)), "counted from the new offer");
        // Nobody left: it stops.
        assert_eq!(r.reassign(vec![entry(3)], t(121)), Ok(0));
        assert_eq!(r.reassign_at(), None);
    }

    #[test]
    fn a_claimed_or_ended_request_is_not_reassigned() {
        let mut r = offered_to_one();
        let holder = r.broadcasted_to[0].user_id;
        r.claim(holder, t(10)).unwrap();
        assert_eq!(r.reassign_at(), None);
        assert!(r.reassign(vec![entry(3)], t(100)).is_err());
        r.release(holder, t(20)).unwrap();
        assert_eq!(r.reassign_at(), Some(t(60)), "released: waiting again");
        r.cancel(t(30)).unwrap();
        assert_eq!(r.reassign_at(), None);
    }
}
