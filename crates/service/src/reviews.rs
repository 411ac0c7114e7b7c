//! Reviews: requests of the alternate surface, answered with a form. The
//! account that sends one manages it; its assignees and the active members
//! of its team start and complete it. Every change is written with its
//! `review.*` events in one transaction.

use reviewloop_domain::parse_assignees;
use reviewloop_domain::{
    AssigneeRef, ChangeError, Event, EventType, LoopId, MemberStatus, Permission, Priority, Review,
    ReviewId, ReviewInput, ReviewPatch, ReviewStatus, Reviewer, TemplateId, TransitionError,
    UserId, ValidationError,
};
use reviewloop_ports::{ReviewPage, ReviewQuery, ReviewScope, StoreError};
use serde_json::{json, Value};

use crate::accounts::find_or_create_user;
use crate::error::{
    use_case_error, Bug, Busy, Denied, Missing, QueryError, ReadError, ReviewState,
};
use crate::ports::{check_target, event_id, ReviewPorts};
use crate::principal::Principal;
use reviewloop_wire::alternate::ReviewEventOut;

/// The most reviews one page lists.
pub const MAX_REVIEW_PAGE: u32 = 200;
const WRITE_ATTEMPTS: usize = 5;
/// Where a `review.assigned` event names the assignees it added.
pub(crate) const NEWLY_ASSIGNED: &str = "newly_assigned";

use_case_error! {
    /// Why a review could not be sent ([`ReviewService::create`]).
    pub enum SendReviewError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a review could not be changed, cancelled, started or completed
    /// ([`ReviewService::update`], [`ReviewService::cancel`],
    /// [`ReviewService::start`], [`ReviewService::complete`]).
    pub enum ChangeReviewError {
        Denied(Denied),
        NotFound(Missing),
        Invalid(ValidationError),
        State(ReviewState),
        Busy(Busy),
        Store(StoreError),
        Bug(Bug),
    }
}

impl From<ChangeError> for ChangeReviewError {
    fn from(error: ChangeError) -> Self {
        match error {
            ChangeError::Transition(e) => Self::State(e.into()),
            ChangeError::Invalid(e) => Self::Invalid(e),
        }
    }
}

impl From<TransitionError> for ChangeReviewError {
    fn from(error: TransitionError) -> Self {
        Self::State(error.into())
    }
}

/// Filters of a review listing, as a client gave them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListReviewsInput {
    /// `sent` (default): the caller's reviews; `reviewer`: those it may answer.
    pub role: Option<String>,
    /// A status name.
    pub status: Option<String>,
    /// A template id.
    pub template_id: Option<String>,
    /// An assignee's email or user id.
    pub assignee: Option<String>,
    /// A team id.
    pub team_id: Option<String>,
    /// A priority name.
    pub priority: Option<String>,
    /// `true`: only open reviews past their due date.
    pub overdue: Option<bool>,
    /// Page size, 1 to 200 (default 50).
    pub limit: Option<u32>,
    /// Reviews to skip.
    pub offset: Option<u32>,
}

/// Review use cases.
#[derive(Clone)]
pub struct ReviewService {
    ports: ReviewPorts,
}

impl ReviewService {
    /// A service over `ports`.
    pub fn new(ports: ReviewPorts) -> Self {
        Self { ports }
    }

    /// An event of `kind` about `review`; `review.assigned` also names, for
    /// the notice planner only (receivers get `review`), the assignees who
    /// were not assigned `before`, so a reassignment emails only them.
    fn event_after(&self, kind: EventType, review: &Review, before: &[UserId]) -> Event {
        let mut event = self.event(kind, review);
        if kind == EventType::ReviewAssigned {
            let added: Vec<UserId> = review
                .record()
                .assignees
                .iter()
                .map(|a| a.user_id)
                .filter(|id| !before.contains(id))
                .collect();
            event.data[NEWLY_ASSIGNED] = json!(added);
        }
        event
    }

    fn event(&self, kind: EventType, review: &Review) -> Event {
        let now = self.ports.clock.now();
        let mut data = json!({"review": ReviewEventOut::of(review)});
        if let (EventType::ReviewCompleted, Some(url)) = (kind, &review.record().callback_url) {
            data["callback_url"] = json!(url);
        }
        Event::for_account(
            event_id(&*self.ports.ids, now),
            kind,
            review.record().account_id,
            data,
            now,
        )
        .about_review(review)
    }

    /// Turns named assignees into accounts. An email without an account
    /// becomes an invitation (an account that signs up later); a user id
    /// must name an account.
    async fn resolve<E>(&self, named: Vec<AssigneeRef>) -> Result<Vec<Reviewer>, E>
    where
        E: From<StoreError> + From<Bug> + From<ValidationError>,
    {
        let mut resolved = Vec::with_capacity(named.len());
        for (index, one) in named.into_iter().enumerate() {
            let user = match one {
                AssigneeRef::Email(email) => {
                    find_or_create_user::<E>(
                        &*self.ports.accounts,
                        &*self.ports.clock,
                        &*self.ports.ids,
                        email,
                    )
                    .await?
                }
                AssigneeRef::User(id) => {
                    self.ports.accounts.user_by_id(&id).await?.ok_or_else(|| {
                        let path = format!("assignees[{index}]");
                        ValidationError::field(path.clone(), format!("{path} names no account"))
                    })?
                }
            };
            let reviewer = Reviewer {
                user_id: user.id,
                email: user.into_record().email,
            };
            if !resolved.contains(&reviewer) {
                resolved.push(reviewer);
            }
        }
        Ok(resolved)
    }

    /// The team, if the caller may send reviews to it (its creator or an
    /// active member).
    async fn usable_team(&self, caller: &Principal, id: &LoopId) -> Result<(), SendReviewError> {
        self.ports
            .loops
            .loop_by_id(id)
            .await?
            .filter(|lp| lp.is_visible_to(&caller.user_id))
            .map(drop)
            .ok_or(Missing::Loop.into())
    }

    /// Whether `user` may start and complete `review`: a named assignee, or
    /// an active member of its team.
    pub async fn may_answer(&self, review: &Review, user: &UserId) -> Result<bool, StoreError> {
        if review.is_assigned_to(user) {
            return Ok(true);
        }
        let Some(team) = review.record().team_id else {
            return Ok(false);
        };
        Ok(self
            .ports
            .loops
            .member(&team, user)
            .await?
            .is_some_and(|m| m.status == MemberStatus::Active))
    }

    /// The review, if the caller sent it or may answer it.
    async fn visible<E>(&self, caller: &Principal, id: &ReviewId) -> Result<Review, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        let review = self
            .ports
            .reviews
            .review_by_id(id)
            .await?
            .ok_or(Missing::Review)?;
        if review.is_sent_by(&caller.user_id) || self.may_answer(&review, &caller.user_id).await? {
            Ok(review)
        } else {
            Err(Missing::Review.into())
        }
    }

    /// Sends a review: checks the body, the template (the caller's own),
    /// the team and the assignees, then writes it with `review.created`
    /// (and `review.assigned` when it names assignees).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        caller: &Principal,
        input: ReviewInput,
    ) -> Result<Review, SendReviewError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsWrite)?;
        let parsed = input.parse()?;
        let template = self
            .ports
            .templates
            .template_by_id(&parsed.template_id)
            .await?
            .filter(|t| t.account_id() == caller.user_id)
            .ok_or(Missing::Template)?;
        if let Some(team) = &parsed.team_id {
            self.usable_team(caller, team).await?;
        }
        if let Some(url) = &parsed.callback_url {
            check_target(&*self.ports.guard, "callback_url", url).await?;
        }
        // Every check before the assignees are resolved: resolving may
        // create invitations, which a refused review should not leave.
        template.form().prefill(&parsed.metadata)?;
        let assignees = self
            .resolve::<SendReviewError>(parsed.assignees.clone())
            .await?;
        let now = self.ports.clock.now();
        let id = ReviewId::new(self.ports.ids.object_id(now));
        let review = Review::create(id, caller.user_id, &template, parsed, assignees, now)?;
        let mut events = vec![self.event(EventType::ReviewCreated, &review)];
        if !review.record().assignees.is_empty() {
            events.push(self.event_after(EventType::ReviewAssigned, &review, &[]));
        }
        self.ports.reviews.insert_review(&review, &events).await?;
        self.ports.changes.outbox_written();
        Ok(review)
    }

    /// One review the caller sent or may answer.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(&self, caller: &Principal, id: &ReviewId) -> Result<Review, ReadError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsRead)?;
        self.visible(caller, id).await
    }

    /// A filtered page of the reviews the caller sent (or, with
    /// `role=reviewer`, of those it may answer), newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(
        &self,
        caller: &Principal,
        input: ListReviewsInput,
    ) -> Result<(ReviewPage, u32, u32), QueryError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsRead)?;
        let mut errors = ValidationError::default();
        let scope = match input.role.as_deref() {
            None | Some("sent") => Some(ReviewScope::SentBy(caller.user_id)),
            Some("reviewer") => Some(ReviewScope::For(caller.user_id)),
            Some(_) => {
                errors.extend(ValidationError::field(
                    "role",
                    "role must be sent or reviewer",
                ));
                None
            }
        };
        let status = input
            .status
            .as_deref()
            .and_then(|s| errors.collect(ReviewStatus::parse("status", s)));
        let template_id = input
            .template_id
            .as_deref()
            .and_then(|t| errors.collect(TemplateId::parse_field("template_id", t)));
        let team_id = input
            .team_id
            .as_deref()
            .and_then(|t| errors.collect(LoopId::parse_field("team_id", t)));
        let priority = input
            .priority
            .as_deref()
            .and_then(|p| errors.collect(Priority::parse(p)));
        let assignee = input
            .assignee
            .as_deref()
            .and_then(|a| errors.collect(AssigneeRef::parse("assignee", a)));
        let limit = input.limit.unwrap_or(50);
        if !(1..=MAX_REVIEW_PAGE).contains(&limit) {
            errors.extend(ValidationError::field(
                "limit",
                format!("limit must be from 1 to {MAX_REVIEW_PAGE}"),
            ));
        }
        errors.into_result()?;
        let offset = input.offset.unwrap_or(0);
        let empty = || {
            Ok((
                ReviewPage {
                    reviews: Vec::new(),
                    total: 0,
                },
                limit,
                offset,
            ))
        };
        let assignee = match assignee {
            None => None,
            Some(AssigneeRef::User(id)) => Some(id),
            Some(AssigneeRef::Email(email)) => {
                match self.ports.accounts.user_by_email(&email).await? {
                    Some(user) => Some(user.id),
                    // Nobody has that address: nothing is assigned to it.
                    None => return empty(),
                }
            }
        };
        let Some(scope) = scope else { return empty() };
        let query = ReviewQuery {
            scope,
            status,
            template_id,
            assignee,
            team_id,
            priority,
            overdue_at: input
                .overdue
                .unwrap_or(false)
                .then(|| self.ports.clock.now()),
            limit,
            offset,
        };
        Ok((
            self.ports.reviews.list_reviews(&query).await?,
            limit,
            offset,
        ))
    }

    /// Reads the review, applies `change` and writes it with the events it
    /// names (`None`: nothing changed, nothing to write), again from a
    /// fresh read when another writer got there first.
    async fn write<F>(
        &self,
        caller: &Principal,
        id: &ReviewId,
        change: F,
    ) -> Result<Review, ChangeReviewError>
    where
        F: Fn(&mut Review) -> Result<Option<Vec<EventType>>, ChangeReviewError>,
    {
        for _ in 0..WRITE_ATTEMPTS {
            let mut review = self.visible::<ChangeReviewError>(caller, id).await?;
            let before: Vec<UserId> = review
                .record()
                .assignees
                .iter()
                .map(|a| a.user_id)
                .collect();
            let Some(kinds) = change(&mut review)? else {
                return Ok(review);
            };
            let events: Vec<Event> = kinds
                .iter()
                .map(|k| self.event_after(*k, &review, &before))
                .collect();
            match self.ports.reviews.update_review(&review, &events).await {
                Ok(()) => {
                    review.written();
                    if !events.is_empty() {
                        self.ports.changes.outbox_written();
                    }
                    return Ok(review);
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(StoreError::NotFound) => return Err(Missing::Review.into()),
                Err(e) => return Err(e.into()),
            }
        }
        Err(Busy::Review.into())
    }

    fn sender_only(caller: &Principal, review: &Review) -> Result<(), Denied> {
        if review.is_sent_by(&caller.user_id) {
            Ok(())
        } else {
            Err(Denied::NotReviewSender)
        }
    }

    /// Changes priority, due date or assignees of an open review (its
    /// sender only); new assignees emit `review.assigned`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        caller: &Principal,
        id: &ReviewId,
        patch: ReviewPatch,
    ) -> Result<Review, ChangeReviewError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsWrite)?;
        if patch == ReviewPatch::default() {
            return Err(ValidationError::field(
                "body",
                "nothing to update: send priority, due_date or assignees",
            )
            .into());
        }
        let now = self.ports.clock.now();
        // Every check before the assignees are resolved (which may create
        // invitations): who may change it, its state, the other fields.
        let mut probe = self.visible::<ChangeReviewError>(caller, id).await?;
        Self::sender_only(caller, &probe)?;
        probe.change(&patch, None, now)?;
        let assignees = match &patch.assignees {
            Some(raw) => Some(
                self.resolve::<ChangeReviewError>(parse_assignees(raw)?)
                    .await?,
            ),
            None => None,
        };
        self.write(caller, id, |review| {
            Self::sender_only(caller, review)?;
            let reassigned = review.change(&patch, assignees.clone(), now)?;
            Ok(Some(if reassigned {
                vec![EventType::ReviewAssigned]
            } else {
                Vec::new()
            }))
        })
        .await
    }

    /// Cancels an open review (its sender only) with `review.cancelled`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn cancel(
        &self,
        caller: &Principal,
        id: &ReviewId,
    ) -> Result<Review, ChangeReviewError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsWrite)?;
        let now = self.ports.clock.now();
        self.write(caller, id, |review| {
            Self::sender_only(caller, review)?;
            review.cancel(now)?;
            Ok(Some(vec![EventType::ReviewCancelled]))
        })
        .await
    }

    /// The caller as a reviewer of the review, and whoever started it if
    /// that person may no longer answer it (reassigned away, or gone from
    /// the team): such a start is released rather than left to block
    /// everyone.
    async fn reviewer(
        &self,
        caller: &Principal,
        id: &ReviewId,
    ) -> Result<(Reviewer, Option<UserId>), ChangeReviewError> {
        let review = self.visible::<ChangeReviewError>(caller, id).await?;
        if !self.may_answer(&review, &caller.user_id).await? {
            return Err(Denied::NotReviewAnswerer.into());
        }
        let mut stale = None;
        if let (ReviewStatus::Started, Some(starter)) =
            (review.record().status, &review.record().reviewer)
        {
            if starter.user_id != caller.user_id
                && !self.may_answer(&review, &starter.user_id).await?
            {
                stale = Some(starter.user_id);
            }
        }
        let me = Reviewer {
            user_id: caller.user_id,
            email: caller.email.clone(),
        };
        Ok((me, stale))
    }

    /// Releases the review if `stale` still holds it.
    fn release_stale(
        review: &mut Review,
        stale: Option<UserId>,
        now: chrono::DateTime<chrono::Utc>,
    ) {
        let held = review.record().reviewer.as_ref().map(|r| r.user_id);
        if stale.is_some() && held == stale {
            review.release(now);
        }
    }

    /// A reviewer starts it (`review.started`); starting it again changes nothing.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn start(
        &self,
        caller: &Principal,
        id: &ReviewId,
    ) -> Result<Review, ChangeReviewError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsWrite)?;
        let (by, stale) = self.reviewer(caller, id).await?;
        let now = self.ports.clock.now();
        self.write(caller, id, |review| {
            Self::release_stale(review, stale, now);
            let started = review.start(by.clone(), now)?;
            Ok(started.then(|| vec![EventType::ReviewStarted]))
        })
        .await
    }

    /// A reviewer submits the result (`review.completed`, and the callback;
    /// `review.started` first when nobody had started it).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn complete(
        &self,
        caller: &Principal,
        id: &ReviewId,
        result: &Value,
    ) -> Result<Review, ChangeReviewError> {
        caller.require_live("reviews")?;
        caller.require(Permission::RequestsWrite)?;
        let (by, stale) = self.reviewer(caller, id).await?;
        let now = self.ports.clock.now();
        self.write(caller, id, |review| {
            Self::release_stale(review, stale, now);
            let from_created = review.record().status == ReviewStatus::Created;
            review.complete(by.clone(), result, now)?;
            // Completing at once starts it too, and says so.
            Ok(Some(if from_created {
                vec![EventType::ReviewStarted, EventType::ReviewCompleted]
            } else {
                vec![EventType::ReviewCompleted]
            }))
        })
        .await
    }
}

#[cfg(test)]
pub(crate) mod tests;
