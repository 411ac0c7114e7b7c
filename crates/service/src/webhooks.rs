//! Webhook subscriptions: an account's own, managed through the API.

use reviewloop_domain::{parse_description, parse_secret, parse_target_url};
use reviewloop_domain::{
    Delivery, DeliveryAttempt, DeliveryId, EventFilter, NewWebhook, Permission, TransitionError,
    ValidationError, Webhook, WebhookChange, WebhookId,
};
use reviewloop_ports::{Outgoing, SendOutcome, StoreError};

use crate::error::{
    use_case_error, CreateError, Denied, EditError, ListError, Missing, ReadError, WebhookRule,
};

use_case_error! {
    /// Why a delivery could not be sent again ([`WebhookService::redeliver`]).
    pub enum RedeliverError {
        Denied(Denied),
        NotFound(Missing),
        Rule(WebhookRule),
        Refused(TransitionError),
        Store(StoreError),
    }
}
use crate::ports::{check_target, event_id, WebhookPorts};
use crate::principal::Principal;
use crate::signing::{delivery_headers, new_secret};

/// The event name of a test delivery (never stored, never in the outbox).
pub const TEST_EVENT: &str = "webhook.test";

/// Deliveries listed per subscription.
const DELIVERIES_LISTED: u32 = 100;

/// A create-webhook body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebhookInput {
    /// Where to POST (required).
    pub url: Option<String>,
    /// Event names or `*`; all events when absent.
    pub events: Option<Vec<String>>,
    /// A secret of one's own; generated when absent.
    pub secret: Option<String>,
    /// A note.
    pub description: Option<String>,
}

/// A change to a subscription.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebhookPatch {
    /// New target.
    pub url: Option<String>,
    /// New event list.
    pub events: Option<Vec<String>>,
    /// Turn deliveries on or off.
    pub active: Option<bool>,
    /// A secret of one's own.
    pub secret: Option<String>,
    /// Generate a new secret.
    pub rotate_secret: bool,
    /// New note; `Some(None)` clears it.
    pub description: Option<Option<String>>,
}

/// A subscription, with its secret when it was just made or changed.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookView {
    /// The subscription.
    pub webhook: Webhook,
    /// The signing secret, shown only at creation and rotation.
    pub secret: Option<String>,
}

/// Webhook use cases.
#[derive(Clone)]
pub struct WebhookService {
    ports: WebhookPorts,
}

impl WebhookService {
    /// A service over `ports`.
    pub fn new(ports: WebhookPorts) -> Self {
        Self { ports }
    }

    async fn checked_url(&self, raw: &str) -> Result<String, ValidationError> {
        let url = parse_target_url(raw)?;
        check_target(&*self.ports.guard, "url", &url).await?;
        Ok(url)
    }

    async fn own<E>(&self, caller: &Principal, id: &WebhookId) -> Result<Webhook, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        self.ports
            .webhooks
            .webhook_by_id(id)
            .await?
            .filter(|w| w.account_id == caller.user_id && w.test == caller.test)
            .ok_or(Missing::Webhook.into())
    }

    /// Creates a subscription for the caller's events.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        caller: &Principal,
        input: WebhookInput,
    ) -> Result<WebhookView, CreateError> {
        caller.require(Permission::RequestsWrite)?;
        let raw_url = input
            .url
            .ok_or_else(|| ValidationError::field("url", "url is required"))?;
        let events = EventFilter::parse(&input.events.unwrap_or_else(|| vec!["*".into()]))?;
        let description = input
            .description
            .as_deref()
            .map(parse_description)
            .transpose()?
            .flatten();
        let secret = match input.secret {
            Some(secret) => parse_secret(&secret)?,
            None => new_secret(&self.ports.ids.secret_hex(24)),
        };
        let url = self.checked_url(&raw_url).await?;
        let now = self.ports.clock.now();
        let webhook = Webhook::create(
            WebhookId::new(self.ports.ids.object_id(now)),
            caller.user_id,
            NewWebhook {
                url,
                events,
                secret: secret.clone(),
                description,
                test: caller.test,
            },
            now,
        );
        self.ports.webhooks.insert_webhook(&webhook).await?;
        Ok(WebhookView {
            webhook,
            secret: Some(secret),
        })
    }

    /// The caller's subscriptions, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(&self, caller: &Principal) -> Result<Vec<Webhook>, ListError> {
        caller.require(Permission::RequestsRead)?;
        let mut webhooks = self.ports.webhooks.webhooks_of(&caller.user_id).await?;
        webhooks.retain(|w| w.test == caller.test);
        Ok(webhooks)
    }

    /// One of the caller's subscriptions.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(&self, caller: &Principal, id: &WebhookId) -> Result<Webhook, ReadError> {
        caller.require(Permission::RequestsRead)?;
        self.own(caller, id).await
    }

    /// Changes a subscription; turning it back on clears why it was disabled.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        caller: &Principal,
        id: &WebhookId,
        patch: WebhookPatch,
    ) -> Result<WebhookView, EditError> {
        caller.require(Permission::RequestsWrite)?;
        let mut webhook = self.own::<EditError>(caller, id).await?;
        if patch == WebhookPatch::default() {
            return Err(ValidationError::field(
                "body",
                "nothing to update: send url, events, active, secret, rotate_secret or description",
            )
            .into());
        }
        if patch.secret.is_some() && patch.rotate_secret {
            return Err(ValidationError::field(
                "secret",
                "send either secret or rotate_secret, not both",
            )
            .into());
        }
        let secret = match (&patch.secret, patch.rotate_secret) {
            (Some(secret), _) => Some(parse_secret(secret)?),
            (None, true) => Some(new_secret(&self.ports.ids.secret_hex(24))),
            (None, false) => None,
        };
        let change = WebhookChange {
            events: patch
                .events
                .as_deref()
                .map(EventFilter::parse)
                .transpose()?,
            description: patch
                .description
                .as_ref()
                .map(|d| d.as_deref().map(parse_description).transpose())
                .transpose()?
                .map(Option::flatten),
            secret: secret.clone(),
            url: match &patch.url {
                Some(url) => Some(self.checked_url(url).await?),
                None => None,
            },
            active: patch.active,
        };
        webhook.change(change, self.ports.clock.now());
        let shown = secret;
        match self.ports.webhooks.update_webhook(&webhook).await {
            Ok(()) => Ok(WebhookView {
                webhook,
                secret: shown,
            }),
            Err(StoreError::NotFound) => Err(Missing::Webhook.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a subscription and its delivery record.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete(&self, caller: &Principal, id: &WebhookId) -> Result<(), ReadError> {
        caller.require(Permission::RequestsWrite)?;
        self.own::<ReadError>(caller, id).await?;
        match self.ports.webhooks.delete_webhook(id).await {
            Ok(()) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// A subscription's latest deliveries with every attempt.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn deliveries(
        &self,
        caller: &Principal,
        id: &WebhookId,
    ) -> Result<Vec<(Delivery, Vec<DeliveryAttempt>)>, ReadError> {
        caller.require(Permission::RequestsRead)?;
        self.own::<ReadError>(caller, id).await?;
        Ok(self
            .ports
            .webhooks
            .deliveries_of(id, DELIVERIES_LISTED)
            .await?)
    }

    /// POSTs a `webhook.test` event to the subscription now, signed like
    /// every delivery, and says what came of it. Nothing is recorded or
    /// retried: it is for checking a receiver while setting it up.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn send_test(
        &self,
        caller: &Principal,
        id: &WebhookId,
    ) -> Result<SendOutcome, ReadError> {
        caller.require(Permission::RequestsWrite)?;
        let webhook = self.own::<ReadError>(caller, id).await?;
        let now = self.ports.clock.now();
        let event_id = event_id(&*self.ports.ids, now).to_string();
        let body = serde_json::json!({
            "id": event_id,
            "event": TEST_EVENT,
            "created_at": now,
            "data": {
                "webhook_id": webhook.id,
                "message": "A test delivery from reviewloop: the receiver is reachable and can check signatures.",
            },
        })
        .to_string();
        let headers = delivery_headers(
            &webhook.secret,
            &event_id,
            TEST_EVENT,
            now.timestamp(),
            &body,
        );
        Ok(self
            .ports
            .sender
            .send(&Outgoing {
                url: webhook.url.clone(),
                headers,
                body,
            })
            .await)
    }

    /// Sends a delivery again, with a fresh retry schedule.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn redeliver(
        &self,
        caller: &Principal,
        id: &WebhookId,
        delivery: &DeliveryId,
    ) -> Result<Delivery, RedeliverError> {
        caller.require(Permission::RequestsWrite)?;
        let webhook = self.own::<RedeliverError>(caller, id).await?;
        let mut found = self
            .ports
            .webhooks
            .delivery_by_id(delivery)
            .await?
            .filter(|d| d.webhook_id == Some(*id))
            .ok_or(Missing::Delivery)?;
        if !webhook.active {
            return Err(WebhookRule::Disabled.into());
        }
        found.redeliver(self.ports.clock.now())?;
        // The store writes it only if no worker has taken it up meanwhile.
        match self.ports.webhooks.redeliver(&found).await {
            Ok(()) => Ok(found),
            Err(StoreError::Conflict(_)) => Err(TransitionError::StillPending.into()),
            Err(StoreError::NotFound) => Err(Missing::Delivery.into()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests;
