//! Loop membership and its state machine:
//! invited → `pending`; joining → `active`; removal → `removed`.
//! A removed member may be invited again or rejoin with the current code.

use chrono::{DateTime, Utc};

use crate::account::Email;
use crate::error::TransitionError;
use crate::id::{LoopId, UserId};
use crate::notice::NotifyLevel;

/// Where a member stands in a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberStatus {
    /// Invited, has not joined; receives no requests.
    Pending,
    /// Receives every request created after joining.
    Active,
    /// Removed by the loop's creator; sees nothing of the loop.
    Removed,
}

impl MemberStatus {
    /// The stored name, which the API also uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Active => "active",
            Self::Removed => "removed",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "active" => Some(Self::Active),
            "removed" => Some(Self::Removed),
            _ => None,
        }
    }
}

/// A membership's facts as a store keeps them: readable through
/// [`Member`], changed only by its methods.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberRecord {
    /// The loop.
    pub loop_id: LoopId,
    /// The member's account.
    pub user_id: UserId,
    /// The member's email.
    pub email: Email,
    /// Pending, active or removed.
    pub status: MemberStatus,
    /// When the member was invited (or, for the creator, when the loop was created).
    pub invited_at: DateTime<Utc>,
    /// When the member joined; `None` while pending.
    pub joined_at: Option<DateTime<Utc>>,
    /// When the member was removed, if it was.
    pub removed_at: Option<DateTime<Utc>>,
    /// Which of the loop's requests the member is told of.
    pub notify: NotifyLevel,
}

/// One account's membership of one loop, moved only along its state
/// machine. Facts are read through `Deref` to [`MemberRecord`].
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    record: MemberRecord,
}

kept_in_record!(Member, MemberRecord);

impl Member {
    /// The creator of a loop: active from the start.
    pub fn creator(loop_id: LoopId, user_id: UserId, email: Email, now: DateTime<Utc>) -> Self {
        Self::restore(MemberRecord {
            loop_id,
            user_id,
            email,
            status: MemberStatus::Active,
            invited_at: now,
            joined_at: Some(now),
            removed_at: None,
            notify: NotifyLevel::All,
        })
    }

    /// An invitation by email: pending until the user joins.
    pub fn invited(loop_id: LoopId, user_id: UserId, email: Email, now: DateTime<Utc>) -> Self {
        Self::restore(MemberRecord {
            loop_id,
            user_id,
            email,
            status: MemberStatus::Pending,
            invited_at: now,
            joined_at: None,
            removed_at: None,
            notify: NotifyLevel::All,
        })
    }

    /// Someone with no entry yet joins with the code: active at once.
    pub fn joined(loop_id: LoopId, user_id: UserId, email: Email, now: DateTime<Utc>) -> Self {
        let mut member = Self::invited(loop_id, user_id, email, now);
        member.record.joined_at = Some(now);
        member.record.status = MemberStatus::Active;
        member
    }

    /// Joining with the code. Returns whether anything changed: joining
    /// again while active is harmless and changes nothing.
    pub fn join(&mut self, now: DateTime<Utc>) -> Result<bool, TransitionError> {
        match self.status {
            MemberStatus::Active => Ok(false),
            MemberStatus::Pending | MemberStatus::Removed => {
                self.record.status = MemberStatus::Active;
                self.record.joined_at = Some(now);
                self.record.removed_at = None;
                Ok(true)
            }
        }
    }

    /// Inviting again. A removed member becomes pending; an existing
    /// invitation or an active member is left as it is (returns false).
    pub fn reinvite(&mut self, now: DateTime<Utc>) -> bool {
        match self.status {
            MemberStatus::Removed => {
                self.record.status = MemberStatus::Pending;
                self.record.invited_at = now;
                self.record.joined_at = None;
                self.record.removed_at = None;
                true
            }
            MemberStatus::Pending | MemberStatus::Active => false,
        }
    }

    /// Chooses which of the loop's requests the member is told of.
    pub fn set_notify(&mut self, level: NotifyLevel) {
        self.record.notify = level;
    }

    /// Removal by the loop's creator.
    pub fn remove(&mut self, now: DateTime<Utc>) -> Result<(), TransitionError> {
        match self.status {
            MemberStatus::Pending | MemberStatus::Active => {
                self.record.status = MemberStatus::Removed;
                self.record.removed_at = Some(now);
                Ok(())
            }
            MemberStatus::Removed => Err(TransitionError::Member {
                from: "removed",
                to: "removed",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ObjectId;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn invited() -> Member {
        Member::invited(
            LoopId::new(ObjectId::from_parts(1, [1; 8])),
            UserId::new(ObjectId::from_parts(1, [2; 8])),
            Email::parse("r@x.io").unwrap(),
            t(0),
        )
    }

    #[test]
    fn pending_member_joins_and_gets_joined_at() {
        let mut m = invited();
        assert_eq!(m.joined_at, None);
        assert_eq!(m.join(t(5)), Ok(true));
        assert_eq!(m.status, MemberStatus::Active);
        assert_eq!(m.joined_at, Some(t(5)));
    }

    #[test]
    fn joining_twice_changes_nothing() {
        let mut m = invited();
        m.join(t(5)).unwrap();
        assert_eq!(m.join(t(9)), Ok(false));
        assert_eq!(m.joined_at, Some(t(5)));
    }

    #[test]
    fn pending_and_active_members_can_be_removed_once() {
        let mut pending = invited();
        pending.remove(t(1)).unwrap();
        assert_eq!(pending.status, MemberStatus::Removed);
        assert_eq!(pending.removed_at, Some(t(1)));
        assert_eq!(
            pending.remove(t(2)),
            Err(TransitionError::Member {
                from: "removed",
                to: "removed"
            })
        );

        let mut active = invited();
        active.join(t(1)).unwrap();
        active.remove(t(2)).unwrap();
        assert_eq!(active.status, MemberStatus::Removed);
    }

    #[test]
    fn removed_member_may_rejoin_or_be_reinvited() {
        let mut m = invited();
        m.remove(t(1)).unwrap();
        assert!(m.reinvite(t(2)));
        assert_eq!(
            (m.status, m.joined_at, m.removed_at),
            (MemberStatus::Pending, None, None)
        );
        m.remove(t(3)).unwrap();
        assert_eq!(m.join(t(4)), Ok(true));
        assert_eq!((m.status, m.removed_at), (MemberStatus::Active, None));
    }

    #[test]
    fn reinviting_a_live_member_changes_nothing() {
        let mut m = invited();
        assert!(!m.reinvite(t(1)));
        m.join(t(2)).unwrap();
        assert!(!m.reinvite(t(3)));
        assert_eq!(m.status, MemberStatus::Active);
    }

    #[test]
    fn status_names_round_trip() {
        for s in [
            MemberStatus::Pending,
            MemberStatus::Active,
            MemberStatus::Removed,
        ] {
            assert_eq!(MemberStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(MemberStatus::parse("x"), None);
    }
}
