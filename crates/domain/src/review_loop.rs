//! Loops: named groups of human reviewers, and the values that describe them.

use chrono::{DateTime, Utc};

use crate::error::{TransitionError, ValidationError};
use crate::id::{LoopId, UserId};
use crate::member::{Member, MemberStatus};
use crate::request::{BroadcastEntry, Escalation, Priority, Quorum, ReviewRequest};
use crate::rules::Rules;
use crate::text::{char_len, check_line, check_prose};

/// What a broadcast entry says when the service has no SMTP server.
pub const EMAIL_NOT_CONFIGURED: &str = "not notified: email is not configured";

/// Checks the form of a Slack incoming webhook URL (http or https, with a
/// host); whether it may be called is the caller's to check.
pub fn parse_slack_webhook_url(raw: &str) -> Result<String, ValidationError> {
    crate::text::parse_http_url("slack_webhook_url", raw)
}

/// A loop's name: 1 to 100 characters after trimming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopName(String);

impl LoopName {
    /// Validates and trims a name.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let name = raw.trim();
        if name.is_empty() || char_len(name) > 100 {
            return Err(ValidationError::field(
                "name",
                "name must be 1 to 100 characters",
            ));
        }
        check_line("name", name)?;
        Ok(Self(name.to_owned()))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A loop's description: at most 500 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDescription(String);

impl LoopDescription {
    /// Validates a description; surrounding white space is dropped.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let description = raw.trim();
        if char_len(description) > 500 {
            return Err(ValidationError::field(
                "description",
                "description must be at most 500 characters",
            ));
        }
        check_prose("description", description)?;
        Ok(Self(description.to_owned()))
    }

    /// The description as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A loop's icon: an icon identifier or emoji text, 1 to 64 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon(String);

impl Icon {
    /// The icon a loop gets when none is given.
    pub const DEFAULT: &'static str = "🔁";

    /// Validates an icon.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let icon = raw.trim();
        if icon.is_empty() || char_len(icon) > 64 {
            return Err(ValidationError::field(
                "icon",
                "icon must be 1 to 64 characters",
            ));
        }
        check_line("icon", icon)?;
        Ok(Self(icon.to_owned()))
    }

    /// The default icon.
    pub(crate) fn default_icon() -> Self {
        Self(Self::DEFAULT.to_owned())
    }

    /// The icon as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The 6-character code reviewers use to join a loop. Its alphabet leaves out
/// characters that are easily confused when read aloud or off a screen
/// (0/O, 1/I/L), and it is case-insensitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InviteCode(String);

impl InviteCode {
    /// The characters a code is made of.
    pub const ALPHABET: &'static [u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    /// A code's length.
    pub const LENGTH: usize = 6;

    /// Makes a code from 6 random bytes.
    pub fn from_random(bytes: [u8; 6]) -> Self {
        let code = bytes
            .iter()
            .map(|b| char::from(Self::ALPHABET[usize::from(*b) % Self::ALPHABET.len()]))
            .collect();
        Self(code)
    }

    /// Parses a code typed by a person: case and surrounding space are ignored.
    /// `None` when it cannot be a code at all.
    pub fn parse(raw: &str) -> Option<Self> {
        let code = raw.trim().to_uppercase();
        let valid = code.len() == Self::LENGTH && code.bytes().all(|c| Self::ALPHABET.contains(&c));
        valid.then_some(Self(code))
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A loop's facts as a store keeps them: readable by anyone (through
/// [`Loop`], which dereferences to them), changed only through [`Loop`]'s
/// methods. `members` holds everyone who has not been removed: the
/// creator, active members and pending invitations.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopRecord {
    /// The loop's id.
    pub id: LoopId,
    /// Its name.
    pub name: LoopName,
    /// Its description, if any.
    pub description: Option<LoopDescription>,
    /// Its icon.
    pub icon: Icon,
    /// The account that created it.
    pub creator_id: UserId,
    /// The current code to join it.
    pub invite_code: InviteCode,
    /// Members that have not been removed.
    pub members: Vec<Member>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When its name, description, icon, notification settings or invite
    /// code last changed.
    pub updated_at: DateTime<Utc>,
    /// The Slack incoming webhook that hears of every new request.
    pub slack_webhook_url: Option<String>,
    /// The Slack app that posts new requests with answer buttons.
    pub slack_app: Option<crate::SlackApp>,
    /// Whether members who have not answered are reminded when a quarter of
    /// a request's time is left.
    pub reminders: bool,
    /// The quorum of new requests that ask for none.
    pub quorum: Option<Quorum>,
    /// Where new requests that name none escalate.
    pub escalation: Option<Escalation>,
    /// The rules tried on each new request, in order.
    pub rules: Rules,
    /// How long an open request takes in new ones that ask the same
    /// question; none: only requests that name a `coalesce_key` join.
    pub coalesce: Option<crate::request::Window>,
    /// How old a person's answer to the same question may be for a new
    /// request to take it at once; none: answers are not reused.
    pub reuse_answers: Option<crate::request::Window>,
    /// Who its requests are offered to; none: every active member.
    pub assignment: Option<crate::Assignment>,
}

/// A named group of human reviewers: its record, which only its methods
/// change. Facts are read through `Deref` to [`LoopRecord`]; there is no
/// `DerefMut`, so the creator stays its creator and a member appears once.
#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    record: LoopRecord,
}

kept_in_record!(Loop, LoopRecord);

/// The fields of a new loop, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLoop {
    /// Its name.
    pub name: LoopName,
    /// Its description, if any.
    pub description: Option<LoopDescription>,
    /// Its icon.
    pub icon: Icon,
}

impl NewLoop {
    /// Validates the fields of a create-loop body; every failure is reported.
    pub fn parse(
        name: Option<&str>,
        description: Option<&str>,
        icon: Option<&str>,
    ) -> Result<Self, ValidationError> {
        let mut errors = ValidationError::default();
        let name = match name {
            Some(name) => errors.collect(LoopName::parse(name)),
            None => {
                errors.extend(ValidationError::field("name", "name is required"));
                None
            }
        };
        let description = description
            .and_then(|d| errors.collect(LoopDescription::parse(d)))
            .filter(|d| !d.as_str().is_empty());
        let icon = match icon {
            Some(icon) => errors.collect(Icon::parse(icon)),
            None => Some(Icon::default_icon()),
        };
        errors.into_result()?;
        match (name, icon) {
            (Some(name), Some(icon)) => Ok(Self {
                name,
                description,
                icon,
            }),
            _ => Err(ValidationError::field("name", "name is required")),
        }
    }
}

impl Loop {
    /// A new loop whose creator is its first, active member.
    pub fn create(
        id: LoopId,
        fields: NewLoop,
        creator: Member,
        invite_code: InviteCode,
        now: DateTime<Utc>,
    ) -> Self {
        Self::restore(LoopRecord {
            id,
            name: fields.name,
            description: fields.description,
            icon: fields.icon,
            creator_id: creator.user_id,
            invite_code,
            members: vec![creator],
            created_at: now,
            updated_at: now,
            slack_webhook_url: None,
            slack_app: None,
            reminders: false,
            quorum: None,
            escalation: None,
            rules: Rules::default(),
            coalesce: None,
            reuse_answers: None,
            assignment: None,
        })
    }

    /// Sets (or, with `None`, clears) the quorum of new requests that ask
    /// for none. Every requester is an active member, so a quorum that
    /// excludes its requester must be reachable by the others.
    pub fn set_default_quorum(
        &mut self,
        quorum: Option<Quorum>,
        now: DateTime<Utc>,
    ) -> Result<(), ValidationError> {
        if let Some(q) = &quorum {
            let others = usize::from(q.exclude_requester);
            q.check_reachable(self.active_count().saturating_sub(others))?;
        }
        self.record.quorum = quorum;
        self.record.updated_at = now;
        Ok(())
    }

    /// Sets (or clears) where new requests that name no escalation go
    /// when nobody claims them in time. The target is a loop the caller
    /// has found the loop's creator may use; it may not be this loop.
    pub fn set_default_escalation(
        &mut self,
        escalation: Option<Escalation>,
        now: DateTime<Utc>,
    ) -> Result<(), ValidationError> {
        if let Some(e) = &escalation {
            e.check_target(&self.id, "escalation")?;
        }
        self.record.escalation = escalation;
        self.record.updated_at = now;
        Ok(())
    }

    /// Sets (or clears) how the loop spares its people repeated
    /// questions: joining them while one is open (`coalesce`) and taking
    /// a recent answer (`reuse_answers`). `None` leaves a setting as it is.
    pub fn set_repeats(
        &mut self,
        coalesce: Option<Option<crate::request::Window>>,
        reuse_answers: Option<Option<crate::request::Window>>,
        now: DateTime<Utc>,
    ) {
        if let Some(coalesce) = coalesce {
            self.record.coalesce = coalesce;
            self.record.updated_at = now;
        }
        if let Some(reuse) = reuse_answers {
            self.record.reuse_answers = reuse;
            self.record.updated_at = now;
        }
    }

    /// Sets (or, with `None`, clears) who new requests are offered to. A
    /// quorum default of the loop then needs that many offered, which the
    /// offer's size takes care of.
    pub fn set_assignment(&mut self, assignment: Option<crate::Assignment>, now: DateTime<Utc>) {
        self.record.assignment = assignment;
        self.record.updated_at = now;
    }

    /// Whether new requests here get the hash of their question as their
    /// key, for joining open ones or reusing answers.
    pub fn keys_questions(&self) -> bool {
        self.coalesce.is_some() || self.reuse_answers.is_some()
    }

    /// Replaces the loop's rules. A rule may not route into this loop
    /// itself; longer cycles through other loops are the caller's to find,
    /// since it can read those loops.
    pub fn set_rules(&mut self, rules: Rules, now: DateTime<Utc>) -> Result<(), ValidationError> {
        self.check_rules(&rules)?;
        self.record.rules = rules;
        self.record.updated_at = now;
        Ok(())
    }

    /// What this loop refuses in `rules` on its own: a route back into
    /// itself. (Saving and trying rules both ask.)
    pub fn check_rules(&self, rules: &Rules) -> Result<(), ValidationError> {
        let mut errors = ValidationError::default();
        for (i, to) in rules.routes() {
            if to == self.id {
                errors.extend(ValidationError::field(
                    format!("rules[{i}].then.route_to_loop_id"),
                    format!("rules[{i}].then.route_to_loop_id routes into this same loop"),
                ));
            }
        }
        errors.into_result()
    }

    /// Points new-request messages at a Slack incoming webhook or a Slack
    /// app (`Some(None)` stops them) or turns reminders on or off; what is
    /// `None` stays. The URL is one the caller has found safe to call.
    pub fn set_notifications(
        &mut self,
        slack_webhook_url: Option<Option<String>>,
        slack_app: Option<Option<crate::SlackApp>>,
        reminders: Option<bool>,
        now: DateTime<Utc>,
    ) {
        if let Some(url) = slack_webhook_url {
            self.record.slack_webhook_url = url;
        }
        if let Some(app) = slack_app {
            self.record.slack_app = app;
        }
        if let Some(reminders) = reminders {
            self.record.reminders = reminders;
        }
        self.record.updated_at = now;
    }

    /// Renames it, describes it (`Some(None)` clears the description) or
    /// gives it another icon; what is `None` stays.
    pub fn change(
        &mut self,
        name: Option<LoopName>,
        description: Option<Option<LoopDescription>>,
        icon: Option<Icon>,
        now: DateTime<Utc>,
    ) {
        if let Some(name) = name {
            self.record.name = name;
        }
        if let Some(description) = description {
            self.record.description = description;
        }
        if let Some(icon) = icon {
            self.record.icon = icon;
        }
        self.record.updated_at = now;
    }

    /// Replaces its invite code; the old one stops working.
    pub fn replace_invite_code(&mut self, code: InviteCode, now: DateTime<Utc>) {
        self.record.invite_code = code;
        self.record.updated_at = now;
    }

    /// Records `member` as it now stands: replaces that person's entry, or
    /// adds one. A member of another loop is refused.
    pub fn put_member(&mut self, member: Member) -> Result<(), TransitionError> {
        if member.loop_id != self.record.id {
            return Err(TransitionError::ForeignMember);
        }
        self.record.members.retain(|m| m.user_id != member.user_id);
        self.record.members.push(member);
        Ok(())
    }

    /// True for the account that created the loop.
    pub fn is_creator(&self, user: &UserId) -> bool {
        &self.creator_id == user
    }

    /// The member entry of `user`, if it has one that was not removed.
    pub fn member(&self, user: &UserId) -> Option<&Member> {
        self.members.iter().find(|m| &m.user_id == user)
    }

    /// True for an active member (the creator always is one).
    pub fn is_active_member(&self, user: &UserId) -> bool {
        self.member(user)
            .is_some_and(|m| m.status == MemberStatus::Active)
    }

    /// Who may see the loop: its creator and its active members.
    pub fn is_visible_to(&self, user: &UserId) -> bool {
        self.is_creator(user) || self.is_active_member(user)
    }

    /// Members who receive new requests.
    pub fn active_members(&self) -> impl Iterator<Item = &Member> {
        self.members
            .iter()
            .filter(|m| m.status == MemberStatus::Active)
    }

    /// Who a request of `priority` created now is sent to: every active
    /// member, the creator included. Each entry starts out saying what will
    /// become of its member's email: nothing sent yet and no error when one
    /// will be (`email` says whether email is configured); the reason when
    /// the member asked not to be told or there is no way to tell them.
    pub fn broadcast_entries(&self, priority: Priority, email: bool) -> Vec<BroadcastEntry> {
        self.entries_for(priority, email, |_| true)
    }

    /// [`Loop::broadcast_entries`] for the active members `offered` picks.
    pub fn entries_for(
        &self,
        priority: Priority,
        email: bool,
        offered: impl Fn(&UserId) -> bool,
    ) -> Vec<BroadcastEntry> {
        self.active_members()
            .filter(|m| offered(&m.user_id))
            .map(|m| BroadcastEntry {
                user_id: m.user_id,
                email: m.email.clone(),
                role: "member".into(),
                notification_sent: false,
                notification_error: if !m.notify.wants(priority) {
                    Some(m.notify.refusal().into())
                } else if !email {
                    Some(EMAIL_NOT_CONFIGURED.into())
                } else {
                    None
                },
                answer: None,
            })
            .collect()
    }

    /// Who is reminded of `request`, still open near its deadline: the
    /// reviewer holding it, or, while nobody does, every active member it
    /// went to; in both cases only members who want to hear of requests of
    /// its priority.
    pub fn to_remind<'a>(&'a self, request: &ReviewRequest) -> Vec<&'a Member> {
        let wanted = |m: &&Member| m.notify.wants(request.priority);
        match request.claimed_by {
            Some(holder) => self
                .active_members()
                .filter(|m| m.user_id == holder)
                .filter(wanted)
                .collect(),
            None => self
                .active_members()
                .filter(|m| request.was_broadcast_to(&m.user_id))
                .filter(wanted)
                .collect(),
        }
    }

    /// Number of members, active and pending.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// Number of pending invitations.
    pub fn pending_count(&self) -> usize {
        self.members
            .iter()
            .filter(|m| m.status == MemberStatus::Pending)
            .count()
    }

    /// Number of active members.
    pub fn active_count(&self) -> usize {
        self.active_members().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ObjectId;
    use crate::notice::NotifyLevel;
    use crate::Email;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    fn user(n: u8) -> UserId {
        UserId::new(ObjectId::from_parts(1, [n; 8]))
    }

    fn sample_loop() -> Loop {
        let id = LoopId::new(ObjectId::from_parts(1, [9; 8]));
        let creator = Member::creator(id, user(1), Email::parse("c@x.io").unwrap(), now());
        let fields = NewLoop::parse(Some("Legal"), None, None).unwrap();
        Loop::create(id, fields, creator, InviteCode::from_random([0; 6]), now())
    }

    #[test]
    fn name_limits() {
        assert!(LoopName::parse("a").is_ok());
        assert!(LoopName::parse(&"é".repeat(100)).is_ok());
        assert_eq!(
            LoopName::parse(&"a".repeat(101)).unwrap_err().to_string(),
            "name must be 1 to 100 characters"
        );
        assert!(LoopName::parse("   ").is_err());
        assert_eq!(LoopName::parse("  Legal  ").unwrap().as_str(), "Legal");
    }

    #[test]
    fn description_limits() {
        assert!(LoopDescription::parse(&"d".repeat(500)).is_ok());
        assert_eq!(
            LoopDescription::parse(&"d".repeat(501))
                .unwrap_err()
                .to_string(),
            "description must be at most 500 characters"
        );
    }

    #[test]
    fn icon_defaults_and_limits() {
        let fields = NewLoop::parse(Some("n"), None, None).unwrap();
        assert_eq!(fields.icon.as_str(), "🔁");
        assert!(Icon::parse("").is_err());
        assert!(Icon::parse(&"x".repeat(65)).is_err());
        assert_eq!(Icon::parse("📝").unwrap().as_str(), "📝");
    }

    #[test]
    fn new_loop_reports_every_failure() {
        let err = NewLoop::parse(None, Some(&"d".repeat(501)), Some("")).unwrap_err();
        let fields: Vec<_> = err.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "description", "icon"]);
        assert_eq!(
            err.to_string(),
            "name is required; description must be at most 500 characters; icon must be 1 to 64 characters"
        );
    }

    #[test]
    fn empty_description_is_no_description() {
        let fields = NewLoop::parse(Some("n"), Some("  "), None).unwrap();
        assert_eq!(fields.description, None);
    }

    #[test]
    fn invite_codes_use_the_unambiguous_alphabet() {
        let code = InviteCode::from_random([0, 30, 31, 255, 7, 100]);
        assert_eq!(code.as_str().len(), 6);
        for c in code.as_str().bytes() {
            assert!(InviteCode::ALPHABET.contains(&c));
        }
        for banned in [b'0', b'O', b'1', b'I', b'L'] {
            assert!(!InviteCode::ALPHABET.contains(&banned));
        }
    }

    #[test]
    fn invite_code_parse_ignores_case_and_refuses_junk() {
        assert_eq!(InviteCode::parse(" abc234 ").unwrap().as_str(), "ABC234");
        assert!(InviteCode::parse("ABC23").is_none());
        assert!(InviteCode::parse("ABC2345").is_none());
        assert!(InviteCode::parse("ABCDE0").is_none());
    }

    #[test]
    fn creator_is_an_active_member_and_sees_the_loop() {
        let lp = sample_loop();
        assert!(lp.is_creator(&user(1)));
        assert!(lp.is_active_member(&user(1)));
        assert!(lp.is_visible_to(&user(1)));
        assert!(!lp.is_visible_to(&user(2)));
        assert_eq!(
            (lp.member_count(), lp.pending_count(), lp.active_count()),
            (1, 0, 1)
        );
    }

    #[test]
    fn pending_members_do_not_see_the_loop_until_they_join() {
        let mut lp = sample_loop();
        let mut invited = Member::invited(lp.id, user(2), Email::parse("r@x.io").unwrap(), now());
        lp.put_member(invited.clone()).unwrap();
        assert!(!lp.is_visible_to(&user(2)));
        assert_eq!(lp.pending_count(), 1);
        assert_eq!(lp.active_members().count(), 1);
        invited.join(now()).unwrap();
        lp.put_member(invited).unwrap();
        assert!(lp.is_visible_to(&user(2)));
        assert_eq!(lp.active_members().count(), 2);
        assert_eq!(lp.member_count(), 2, "the entry was replaced, not added");
        let stranger = Member::invited(
            LoopId::new(ObjectId::from_parts(1, [8; 8])),
            user(3),
            Email::parse("s@x.io").unwrap(),
            now(),
        );
        assert_eq!(lp.put_member(stranger), Err(TransitionError::ForeignMember));
        let sent: Vec<_> = lp
            .broadcast_entries(Priority::Medium, true)
            .iter()
            .map(|b| b.user_id)
            .collect();
        assert_eq!(sent, [user(1), user(2)]);
    }

    #[test]
    fn each_entry_says_what_will_become_of_its_members_email() {
        let mut lp = sample_loop();
        let mut quiet = Member::joined(lp.id, user(2), Email::parse("q@x.io").unwrap(), now());
        quiet.set_notify(NotifyLevel::Urgent);
        lp.put_member(quiet).unwrap();
        let told = |priority, email| -> Vec<(bool, Option<String>)> {
            lp.broadcast_entries(priority, email)
                .into_iter()
                .map(|b| (b.notification_sent, b.notification_error))
                .collect()
        };
        let urgent_only = Some(NotifyLevel::Urgent.refusal().to_owned());
        assert_eq!(
            told(Priority::Low, true),
            [(false, None), (false, urgent_only)],
            "the creator's email is coming; the other asked for urgent ones only"
        );
        assert_eq!(
            told(Priority::Critical, true),
            [(false, None), (false, None)]
        );
        let unconfigured = Some(EMAIL_NOT_CONFIGURED.to_owned());
        assert_eq!(
            told(Priority::Critical, false),
            [(false, unconfigured.clone()), (false, unconfigured)]
        );
    }

    #[test]
    fn reminders_go_to_the_holder_or_to_everyone_it_reached_who_wants_them() {
        let mut lp = sample_loop();
        for (n, level) in [
            (2, NotifyLevel::All),
            (3, NotifyLevel::Urgent),
            (4, NotifyLevel::Off),
        ] {
            let mut m = Member::joined(
                lp.id,
                user(n),
                Email::parse(&format!("u{n}@x.io")).unwrap(),
                now(),
            );
            m.set_notify(level);
            lp.put_member(m).unwrap();
        }
        let late = Member::joined(lp.id, user(5), Email::parse("late@x.io").unwrap(), now());
        let entries = lp.broadcast_entries(Priority::Medium, true);
        lp.put_member(late).unwrap();
        let input = crate::request::RequestInput {
            request_text: Some("Ship it?".into()),
            content_type: Some("markdown".into()),
            response_type: Some("boolean".into()),
            priority: Some("medium".into()),
            processing_type: Some("time-sensitive".into()),
            timeout_seconds: Some(serde_json::json!(60)),
            ..Default::default()
        };
        let mut request = ReviewRequest::create(
            crate::RequestId::new(ObjectId::from_parts(1, [7; 8])),
            lp.id,
            user(1),
            None,
            input.validate().unwrap(),
            entries,
            now(),
        );
        let names =
            |members: Vec<&Member>| -> Vec<UserId> { members.iter().map(|m| m.user_id).collect() };
        assert_eq!(
            names(lp.to_remind(&request)),
            [user(1), user(2)],
            "not the urgent-only or silent members, nor one who joined after"
        );
        request.claim(user(4), now()).unwrap();
        assert!(
            lp.to_remind(&request).is_empty(),
            "the holder asked for silence"
        );
        request.release(user(4), now()).unwrap();
        request.claim(user(2), now()).unwrap();
        assert_eq!(names(lp.to_remind(&request)), [user(2)]);
    }
}
