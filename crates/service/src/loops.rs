//! Loop use cases: creating and changing loops, membership, invite codes.

use reviewloop_domain::{parse_slack_webhook_url, NewLoop};
use reviewloop_domain::{
    Email, EventType, Icon, InviteCode, Loop, LoopDescription, LoopId, LoopName, Member,
    MemberStatus, NotifyLevel, ObjectId, Permission, UserId, ValidationError,
};
use reviewloop_ports::{LoopStore, StoreError};

use crate::accounts::find_or_create_user;
use crate::error::{Bug, Busy, Denied, EditError, ListError, LoopRule, Missing, ReadError};

mod errors;
mod patch;

use crate::notices;
use crate::ports::{check_target, event_id, LoopPorts};
use crate::principal::Principal;
pub use errors::{
    CreateLoopError, DeleteLoopError, InviteCodeError, InviteMemberError, JoinLoopError,
    NewInviteCodeError, RemoveMemberError, SetNotifyError,
};
pub use patch::LoopPatch;
use reviewloop_wire::events as wire;

/// How many fresh invite codes to try before giving up on a collision.
const CODE_ATTEMPTS: usize = 8;
/// How often a membership change is retried after losing a race.
const WRITE_ATTEMPTS: usize = 5;

/// A write that found its loop gone (deleted meanwhile) is a 404.
fn loop_gone<E: From<Missing> + From<StoreError>>(error: StoreError) -> E {
    match error {
        StoreError::NotFound => Missing::Loop.into(),
        other => other.into(),
    }
}

/// A loop with what reviewers need to join it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopInvite {
    /// The loop.
    pub lp: Loop,
    /// `PUBLIC_URL/join/CODE`.
    pub join_url: String,
    /// `PUBLIC_URL/v1/qr/CODE.png`.
    pub qr_code_url: String,
    /// The QR code of `join_url`, as PNG.
    pub qr_png: Vec<u8>,
}

/// The outcome of removing a member.
#[derive(Debug, Clone, PartialEq)]
pub struct RemovedMember {
    /// The loop.
    pub loop_id: LoopId,
    /// Who was removed.
    pub user_id: UserId,
    /// When.
    pub removed_at: chrono::DateTime<chrono::Utc>,
}

/// Loop use cases.
#[derive(Clone)]
pub struct LoopService {
    ports: LoopPorts,
    public_url: String,
}

/// A loop `caller` may see and send to (its creator or an active member),
/// else 404: one rule for every use case that starts from a loop.
pub(crate) async fn visible_loop<E>(
    loops: &dyn LoopStore,
    caller: &Principal,
    id: &LoopId,
) -> Result<Loop, E>
where
    E: From<Missing> + From<StoreError>,
{
    loops
        .loop_by_id(id)
        .await?
        .filter(|lp| lp.is_visible_to(&caller.user_id))
        .ok_or(Missing::Loop.into())
}

/// Whether `caller` may send requests to loop `id` (its creator or an
/// active member): the rule `visible_loop` applies, for a target named in
/// a body, where a missing loop is bad input rather than a 404.
pub(crate) async fn may_use(
    loops: &dyn LoopStore,
    caller: &UserId,
    id: &LoopId,
) -> Result<bool, StoreError> {
    Ok(loops
        .loop_by_id(id)
        .await?
        .is_some_and(|lp| lp.is_visible_to(caller)))
}

/// The 400 for a `field` naming a loop its sender may not use.
pub(crate) fn unusable(field: &str) -> ValidationError {
    ValidationError::field(field, format!("{field} names no loop you may use"))
}

/// Loops read at most once in a pass over many requests: `load` reads one
/// the first time it is asked for, `get` lends what was read.
#[derive(Default)]
pub(crate) struct LoopCache(std::collections::HashMap<LoopId, Option<Loop>>);

impl LoopCache {
    /// Reads loop `id` unless this pass already did.
    pub(crate) async fn load(
        &mut self,
        loops: &dyn LoopStore,
        id: LoopId,
    ) -> Result<(), StoreError> {
        if let std::collections::hash_map::Entry::Vacant(entry) = self.0.entry(id) {
            entry.insert(loops.loop_by_id(&id).await?);
        }
        Ok(())
    }

    /// Loop `id` as read (`None`: not loaded, or gone).
    pub(crate) fn get(&self, id: &LoopId) -> Option<&Loop> {
        self.0.get(id).and_then(Option::as_ref)
    }
}

impl LoopService {
    /// A service whose join links start with `public_url`.
    pub fn new(ports: LoopPorts, public_url: &str) -> Self {
        Self {
            ports,
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    /// The base URL users reach the service at.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The join link of a code.
    pub fn join_url(&self, code: &InviteCode) -> String {
        format!("{}/join/{}", self.public_url, code.as_str())
    }

    fn invite_for(&self, lp: Loop) -> Result<LoopInvite, Bug> {
        let join_url = self.join_url(&lp.invite_code);
        let qr_png = self
            .ports
            .qr
            .png(&join_url)
            .map_err(|e| Bug::new(e.to_string()))?;
        Ok(LoopInvite {
            qr_code_url: format!("{}/v1/qr/{}.png", self.public_url, lp.invite_code.as_str()),
            join_url,
            qr_png,
            lp,
        })
    }

    /// A loop the caller may see (creator or active member), else 404.
    async fn visible_loop<E>(&self, caller: &Principal, id: &LoopId) -> Result<Loop, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        visible_loop(&*self.ports.loops, caller, id).await
    }

    /// A loop the caller created: 404 if invisible, 403 with `denied` if
    /// the caller is only a member.
    async fn own_loop<E>(&self, caller: &Principal, id: &LoopId, denied: Denied) -> Result<Loop, E>
    where
        E: From<Missing> + From<StoreError> + From<Denied>,
    {
        let lp = self.visible_loop::<E>(caller, id).await?;
        if lp.is_creator(&caller.user_id) {
            Ok(lp)
        } else {
            Err(denied.into())
        }
    }

    /// Creates a loop whose creator is its first active member. With `id`
    /// (an idempotent retry), a loop the caller already created under that
    /// id is answered instead of a new one.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        caller: &Principal,
        name: Option<&str>,
        description: Option<&str>,
        icon: Option<&str>,
        id: Option<ObjectId>,
    ) -> Result<LoopInvite, CreateLoopError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        let fields = NewLoop::parse(name, description, icon)?;
        let now = self.ports.clock.now();
        let given = id.is_some();
        let id = LoopId::new(id.unwrap_or_else(|| self.ports.ids.object_id(now)));
        let creator = Member::creator(id, caller.user_id, caller.email.clone(), now);
        for _ in 0..CODE_ATTEMPTS {
            let lp = Loop::create(
                id,
                fields.clone(),
                creator.clone(),
                self.ports.ids.invite_code(),
                now,
            );
            match self.ports.loops.insert_loop(&lp, &[]).await {
                Ok(()) => return Ok(self.invite_for(lp)?),
                Err(StoreError::Conflict(_)) if given => {
                    // Either the invite code is taken, or an earlier attempt
                    // under the same idempotency key created this loop.
                    if let Some(existing) = self.ports.loops.loop_by_id(&id).await? {
                        if existing.is_creator(&caller.user_id) {
                            return Ok(self.invite_for(existing)?);
                        }
                    }
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(Bug::new("no free invite code after several attempts").into())
    }

    /// The loops the caller created, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(&self, caller: &Principal) -> Result<Vec<Loop>, ListError> {
        caller.require(Permission::LoopsRead)?;
        Ok(self.ports.loops.loops_created_by(&caller.user_id).await?)
    }

    /// The loops where the caller reviews (is an active member), by name.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn joined(&self, caller: &Principal) -> Result<Vec<Loop>, ListError> {
        caller.require(Permission::LoopsRead)?;
        Ok(self.ports.loops.loops_joined_by(&caller.user_id).await?)
    }

    /// One loop, with its members.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(&self, caller: &Principal, id: &LoopId) -> Result<Loop, ReadError> {
        caller.require(Permission::LoopsRead)?;
        self.visible_loop(caller, id).await
    }

    /// Changes name, description or icon (creator only).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        caller: &Principal,
        id: &LoopId,
        patch: LoopPatch,
    ) -> Result<Loop, EditError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        // Who may act is settled before what they sent is judged, so a
        // stranger learns nothing from validation messages.
        let mut lp = self
            .own_loop::<EditError>(caller, id, Denied::LoopAccess)
            .await?;
        if patch == LoopPatch::default() {
            return Err(ValidationError::field(
                "body",
                "nothing to update: send name, description, icon, slack_webhook_url, slack_app, reminders, quorum, escalation, rules, coalesce, reuse_answers or assignment",
            )
            .into());
        }
        let mut errors = ValidationError::default();
        let name = patch
            .name
            .as_deref()
            .and_then(|n| errors.collect(LoopName::parse(n)));
        let description = patch.description.map(|d| {
            d.and_then(|d| errors.collect(LoopDescription::parse(&d)))
                .filter(|d| !d.as_str().is_empty())
        });
        let icon = patch
            .icon
            .as_deref()
            .and_then(|i| errors.collect(Icon::parse(i)));
        let slack = match patch.slack_webhook_url {
            Some(Some(url)) if !url.trim().is_empty() => {
                match errors.collect(parse_slack_webhook_url(&url)) {
                    Some(url) => {
                        // The guard of webhooks keeps Slack posts off
                        // internal addresses too.
                        check_target(&*self.ports.guard, "slack_webhook_url", &url).await?;
                        Some(Some(url))
                    }
                    None => None,
                }
            }
            Some(_) => Some(None),
            None => None,
        };
        // Whoever holds an app's signing secret can sign a click as any
        // member, so only a person sets one up, never an automation's key.
        if matches!(&patch.slack_app, Some(app) if !app.is_null()) && caller.api_key_id.is_some() {
            return Err(Denied::SlackAppNeedsPerson.into());
        }
        let slack_app = match &patch.slack_app {
            Some(serde_json::Value::Null) => Some(None),
            Some(app) => errors
                .collect(reviewloop_domain::SlackApp::parse(app))
                .map(Some),
            None => None,
        };
        let quorum = patch
            .quorum
            .as_ref()
            .and_then(|q| errors.collect(reviewloop_domain::Quorum::parse(Some(q), None)));
        let now = self.ports.clock.now();
        if let Some(quorum) = quorum {
            errors.collect(lp.set_default_quorum(quorum, now));
        }
        let escalation = patch.escalation.as_ref().and_then(|e| {
            errors.collect(reviewloop_domain::Escalation::parse(Some(e), "escalation"))
        });
        if let Some(escalation) = escalation {
            if let Some(e) = &escalation {
                if !may_use(&*self.ports.loops, &caller.user_id, &e.to_loop_id).await? {
                    errors.extend(unusable("escalation.to_loop_id"));
                }
            }
            errors.collect(lp.set_default_escalation(escalation, now));
        }
        let rules = patch
            .rules
            .as_ref()
            .and_then(|r| errors.collect(reviewloop_domain::Rules::parse(Some(r))));
        if let Some(rules) = rules {
            let problems = rules_problems(&*self.ports.loops, &caller.user_id, &lp, &rules).await?;
            if problems.is_empty() {
                errors.collect(lp.set_rules(rules, now));
            } else {
                errors.extend(problems);
            }
        }
        let window = |raw: &Option<serde_json::Value>, field: &str| {
            raw.as_ref()
                .map(|w| reviewloop_domain::Window::parse(Some(w), field))
        };
        let coalesce = window(&patch.coalesce, "coalesce").and_then(|w| errors.collect(w));
        let reuse_answers =
            window(&patch.reuse_answers, "reuse_answers").and_then(|w| errors.collect(w));
        let assignment = patch
            .assignment
            .as_ref()
            .and_then(|a| errors.collect(reviewloop_domain::Assignment::parse(Some(a))));
        errors.into_result()?;
        lp.set_repeats(coalesce, reuse_answers, now);
        if let Some(assignment) = assignment {
            lp.set_assignment(assignment, now);
        }
        lp.change(name, description, icon, now);
        lp.set_notifications(slack, slack_app, patch.reminders, now);
        self.ports
            .loops
            .update_loop(&lp)
            .await
            .map_err(loop_gone::<EditError>)?;
        Ok(lp)
    }
    /// Deletes a loop with its members and requests (creator only). Open
    /// requests refuse the deletion unless `force`, which cancels them first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete(
        &self,
        caller: &Principal,
        id: &LoopId,
        force: bool,
    ) -> Result<LoopId, DeleteLoopError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        let lp = self
            .own_loop::<DeleteLoopError>(caller, id, Denied::LoopAccess)
            .await?;
        let now = self.ports.clock.now();
        let mut events = Vec::new();
        if force {
            for mut request in self.ports.requests.open_requests_in_loop(id).await? {
                request.cancel(now)?;
                events.push(wire::request_event(
                    event_id(&*self.ports.ids, now),
                    EventType::RequestCancelled,
                    &request,
                    &lp,
                    None,
                    now,
                ));
            }
        }
        events.push(wire::loop_event(
            event_id(&*self.ports.ids, now),
            EventType::LoopDeleted,
            &lp,
            None,
            now,
        ));
        match self.ports.loops.delete_loop(id, !force, &events).await {
            Ok(()) => {
                // Its requests went with it: their waiters get their 404 now.
                self.ports.changes.wake_everyone();
                self.ports.changes.outbox_written();
                Ok(lp.id)
            }
            Err(StoreError::Conflict(_)) => Err(LoopRule::HasActiveRequests.into()),
            Err(StoreError::NotFound) => Err(Missing::Loop.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// The loop with its members (any member may look).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn members(&self, caller: &Principal, id: &LoopId) -> Result<Loop, ReadError> {
        self.get(caller, id).await
    }

    /// Removes a member (creator only; the creator stays). Claims the
    /// member held in the loop are released, so its requests go back to
    /// the other reviewers instead of waiting for their timeout.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn remove_member(
        &self,
        caller: &Principal,
        id: &LoopId,
        user: &UserId,
    ) -> Result<RemovedMember, RemoveMemberError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        let now = self.ports.clock.now();
        for _ in 0..WRITE_ATTEMPTS {
            let lp = self
                .own_loop::<RemoveMemberError>(caller, id, Denied::OnlyCreatorRemoves)
                .await?;
            if lp.is_creator(user) {
                return Err(LoopRule::CreatorStays.into());
            }
            let mut member = lp.member(user).cloned().ok_or(Missing::Member)?;
            let previous = member.status;
            member.remove(now)?;
            let event = wire::loop_event(
                event_id(&*self.ports.ids, now),
                EventType::LoopMemberLeft,
                &lp,
                Some(&member),
                now,
            );
            match self
                .ports
                .loops
                .save_member(&member, Some(previous), &[event], &[])
                .await
            {
                Ok(()) => {
                    self.release_claims_of(&lp.id, user, now).await?;
                    return Ok(RemovedMember {
                        loop_id: lp.id,
                        user_id: *user,
                        removed_at: now,
                    });
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(loop_gone(e)),
            }
        }
        Err(Busy::Loop.into())
    }

    /// Puts the loop's requests claimed by `user` back to pending. A claim
    /// that loses a race here was changed by someone else, which is fine;
    /// and a claim this misses (a crash in between) is voided on its next
    /// use, because only active members' claims count.
    async fn release_claims_of(
        &self,
        loop_id: &LoopId,
        user: &UserId,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), StoreError> {
        let mut open = self.ports.requests.open_requests_in_loop(loop_id).await?;
        open.extend(
            self.ports
                .requests
                .open_requests_escalated_to(loop_id)
                .await?,
        );
        for mut request in open {
            if request.claimed_by != Some(*user) {
                continue;
            }
            // An escalated request is also the work of the other loop's
            // members: the claim stands while its holder is active there.
            let other = if request.loop_id == *loop_id {
                request.escalated_to()
            } else {
                Some(request.loop_id)
            };
            if let Some(other) = other {
                let still = self
                    .ports
                    .loops
                    .loop_by_id(&other)
                    .await?
                    .is_some_and(|lp| lp.is_active_member(user));
                if still {
                    continue;
                }
            }
            if request.release(*user, now).is_err() {
                continue;
            }
            match self.ports.requests.update_request(&request, &[]).await {
                Ok(()) => {
                    request.written();
                    self.ports.changes.request_written(&request);
                }
                Err(StoreError::Conflict(_) | StoreError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Joins the loop of an invite code: a new or pending member becomes
    /// active; joining again changes nothing.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn join(
        &self,
        caller: &Principal,
        code: &str,
    ) -> Result<(Loop, Member), JoinLoopError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        for _ in 0..WRITE_ATTEMPTS {
            let mut lp = self.code_loop::<JoinLoopError>(code).await?;
            let now = self.ports.clock.now();
            let existing = self.ports.loops.member(&lp.id, &caller.user_id).await?;
            let previous = existing.as_ref().map(|m| m.status);
            let mut member = existing.unwrap_or_else(|| {
                Member::invited(lp.id, caller.user_id, caller.email.clone(), now)
            });
            if !member.join(now)? {
                return Ok((lp, member));
            }
            let event = wire::loop_event(
                event_id(&*self.ports.ids, now),
                EventType::LoopMemberJoined,
                &lp,
                Some(&member),
                now,
            );
            match self
                .ports
                .loops
                .save_member(&member, previous, &[event], &[])
                .await
            {
                Ok(()) => {
                    lp.put_member(member.clone())?;
                    return Ok((lp, member));
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(StoreError::NotFound) => return Err(Missing::InviteCode.into()),
                Err(e) => return Err(e.into()),
            }
        }
        Err(Busy::Loop.into())
    }

    /// Invites someone by email (creator only): a pending member who turns
    /// active on joining with the code. Their account is created if needed.
    /// `email` is what the client sent, if anything.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn invite(
        &self,
        caller: &Principal,
        id: &LoopId,
        email: Option<&str>,
    ) -> Result<Member, InviteMemberError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        let email = email.ok_or_else(|| ValidationError::field("email", "email is required"))?;
        let email = Email::parse(email)?;
        let lp = self
            .own_loop::<InviteMemberError>(caller, id, Denied::LoopAccess)
            .await?;
        let user = find_or_create_user::<InviteMemberError>(
            &*self.ports.accounts,
            &*self.ports.clock,
            &*self.ports.ids,
            email,
        )
        .await?;
        for _ in 0..WRITE_ATTEMPTS {
            let now = self.ports.clock.now();
            let existing = self.ports.loops.member(&lp.id, &user.id).await?;
            let previous = existing.as_ref().map(|m| m.status);
            let member = match existing {
                Some(member) if member.status == MemberStatus::Active => {
                    return Err(LoopRule::AlreadyMember.into())
                }
                Some(mut member) => {
                    if !member.reinvite(now) {
                        return Ok(member);
                    }
                    member
                }
                None => Member::invited(lp.id, user.id, user.email.clone(), now),
            };
            // The email is queued with the membership, so neither exists
            // without the other.
            let email = notices::invitation(
                self.ports.mailer.is_some(),
                (&*self.ports.clock, &*self.ports.ids),
                &lp,
                &member,
                caller,
                &self.join_url(&lp.invite_code),
            );
            match self
                .ports
                .loops
                .save_member(&member, previous, &[], email.as_slice())
                .await
            {
                Ok(()) => return Ok(member),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(loop_gone(e)),
            }
        }
        Err(Busy::Loop.into())
    }

    /// Sets which of the loop's requests the caller hears about. Only an
    /// active member has a say; it is their own choice, nobody else's.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn set_notify(
        &self,
        caller: &Principal,
        id: &LoopId,
        level: Option<&str>,
    ) -> Result<Member, SetNotifyError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        let level = level.ok_or_else(|| {
            ValidationError::field("notify", "notify is required: all, urgent or none")
        })?;
        let level = NotifyLevel::parse(level)?;
        for _ in 0..WRITE_ATTEMPTS {
            let lp = self.visible_loop::<SetNotifyError>(caller, id).await?;
            let mut member = lp
                .member(&caller.user_id)
                .filter(|m| m.status == MemberStatus::Active)
                .cloned()
                .ok_or(Missing::Member)?;
            if member.notify == level {
                return Ok(member);
            }
            member.set_notify(level);
            let status = member.status;
            match self
                .ports
                .loops
                .save_member(&member, Some(status), &[], &[])
                .await
            {
                Ok(()) => return Ok(member),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(loop_gone(e)),
            }
        }
        Err(Busy::Loop.into())
    }

    /// Gives the loop a new invite code (creator only); the old one stops working.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn regenerate_code(
        &self,
        caller: &Principal,
        id: &LoopId,
    ) -> Result<LoopInvite, NewInviteCodeError> {
        caller.require_live("loop changes")?;
        caller.require(Permission::LoopsWrite)?;
        let mut lp = self
            .own_loop::<NewInviteCodeError>(caller, id, Denied::LoopAccess)
            .await?;
        let now = self.ports.clock.now();
        for _ in 0..CODE_ATTEMPTS {
            lp.replace_invite_code(self.ports.ids.invite_code(), now);
            match self
                .ports
                .loops
                .set_invite_code(&lp.id, &lp.invite_code, lp.updated_at)
                .await
            {
                Ok(()) => return Ok(self.invite_for(lp)?),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(loop_gone(e)),
            }
        }
        Err(Bug::new("no free invite code after several attempts").into())
    }
    /// The QR code PNG of a live invite code (public: the code is the secret).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn qr_png(&self, code: &str) -> Result<Vec<u8>, InviteCodeError> {
        let lp = self.loop_for_code(code).await?;
        Ok(self.invite_for(lp)?.qr_png)
    }

    /// The loop behind a live invite code, for the public join page.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn loop_for_code(&self, code: &str) -> Result<Loop, InviteCodeError> {
        self.code_loop(code).await
    }

    async fn code_loop<E>(&self, code: &str) -> Result<Loop, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        let code = InviteCode::parse(code).ok_or(Missing::InviteCode)?;
        self.ports
            .loops
            .loop_by_invite_code(&code)
            .await?
            .ok_or(Missing::InviteCode.into())
    }
}

#[cfg(test)]
mod tests;

/// Everything saving `rules` to `lp` would refuse beyond their shape:
/// a route into `lp` itself, routes to loops `user` may not use or that
/// lead back into `lp`, and quorums the loop's members cannot reach.
/// Trying draft rules asks the same, so a test never passes what a save
/// refuses.
pub(crate) async fn rules_problems(
    loops: &dyn LoopStore,
    user: &UserId,
    lp: &Loop,
    rules: &reviewloop_domain::Rules,
) -> Result<ValidationError, StoreError> {
    let mut errors = ValidationError::default();
    for (i, to) in rules.routes() {
        let field = format!("rules[{i}].then.route_to_loop_id");
        if to == lp.id {
            continue; // the loop names this one, below
        }
        if !may_use(loops, user, &to).await? {
            errors.extend(unusable(&field));
        } else if crate::requests::routing::cycle_through(loops, to, lp.id).await? {
            errors.extend(ValidationError::field(
                field.clone(),
                format!("{field} makes a cycle: the rules of loop {to} lead back into this loop"),
            ));
        }
    }
    for (i, rule) in rules.iter().enumerate() {
        if let reviewloop_domain::Action::Quorum(q) = &rule.then {
            let others = usize::from(q.exclude_requester);
            if let Err(e) = q.check_reachable(lp.active_count().saturating_sub(others)) {
                errors.extend(ValidationError::field(
                    format!("rules[{i}].then.quorum.count"),
                    format!("rules[{i}].then.{}", e.errors[0].message),
                ));
            }
        }
    }
    if let Err(e) = lp.check_rules(rules) {
        errors.extend(e);
    }
    Ok(errors)
}
