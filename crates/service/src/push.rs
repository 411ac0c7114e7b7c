//! Web Push: the server's VAPID key, the devices people subscribe, and a
//! test push to one of them. Pushes about requests travel through the
//! notices outbox ([`crate::NoticeService`]).

use chrono::{DateTime, Utc};
use reviewloop_domain::{
    device_name, NewPushSubscription, Permission, PushPayload, PushSubscription,
    PushSubscriptionId, ValidationError, VapidKey,
};
use reviewloop_ports::{PushFailure, PushGateway, PushStore, StoreError, WebPush};
use serde_json::Value;

use crate::error::{use_case_error, Bug, Missing};
use crate::fresh::Fresh;
use crate::ports::PushPorts;
use crate::principal::Principal;

/// How long an instance signs with the key it read before reading it
/// again: a key rotated from the command line reaches running instances
/// within this time.
const KEY_REFRESH: std::time::Duration = std::time::Duration::from_secs(60);

/// The most devices one person keeps: enough for every browser they use,
/// few enough that a new request is never a storm of pushes.
pub const MAX_DEVICES: usize = 20;

use_case_error! {
    /// Why the VAPID key could not be read or made.
    pub enum VapidKeyError {
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a device could not be subscribed.
    pub enum SubscribeError {
        Denied(crate::error::Denied),
        Invalid(ValidationError),
        Store(StoreError),
    }

    /// Why a device could not be removed or tested (`NotFound`: it is not
    /// one of the caller's).
    pub enum DeviceError {
        Denied(crate::error::Denied),
        NotFound(Missing),
        Store(StoreError),
        Bug(Bug),
    }
}

/// What came of a test push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestPush {
    /// The push service took it.
    Sent,
    /// The push service no longer knows the device; it was removed.
    Removed,
    /// It failed, for this reason.
    Failed(String),
}

/// The key pair, read from the store (and made there when there is none)
/// and kept in memory for a minute.
pub(crate) struct VapidKeys {
    loaded: Fresh<VapidKey>,
}

impl VapidKeys {
    pub(crate) fn new() -> Self {
        Self {
            loaded: Fresh::new(KEY_REFRESH),
        }
    }

    /// The key to sign with at `now`.
    pub(crate) async fn get(
        &self,
        store: &dyn PushStore,
        gateway: &dyn PushGateway,
        now: DateTime<Utc>,
    ) -> Result<VapidKey, VapidKeyError> {
        if let Some(key) = self.loaded.get(now) {
            return Ok(key);
        }
        // Two instances starting on one empty database may both make a
        // pair; the first one written is the one both read back.
        for _ in 0..2 {
            if let Some(key) = store.vapid_key().await? {
                self.loaded.keep(key.clone(), now);
                return Ok(key);
            }
            let key = gateway.new_vapid_key().map_err(Bug::new)?;
            store.insert_first_vapid_key(&key).await?;
        }
        Err(Bug::new("no VAPID key could be made").into())
    }

    fn forget(&self) {
        self.loaded.forget();
    }
}

/// Devices and the key they subscribe with.
#[derive(Clone)]
pub struct PushService {
    ports: PushPorts,
    keys: std::sync::Arc<VapidKeys>,
    public_url: String,
}

impl PushService {
    /// A service whose pushes link to pages under `public_url`.
    pub fn new(ports: PushPorts, public_url: &str) -> Self {
        Self {
            ports,
            keys: std::sync::Arc::new(VapidKeys::new()),
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    async fn key(&self) -> Result<VapidKey, VapidKeyError> {
        self.keys
            .get(
                &*self.ports.push,
                &*self.ports.push_gateway,
                self.ports.clock.now(),
            )
            .await
    }

    /// Makes the key pair when there is none: at the first start, so the
    /// first browser to subscribe finds it.
    pub async fn ensure_key(&self) -> Result<(), VapidKeyError> {
        self.key().await.map(|_| ())
    }

    /// The public key browsers subscribe with (base64url, uncompressed),
    /// read afresh: a browser must never subscribe with a key rotated away.
    pub async fn public_key(&self) -> Result<String, VapidKeyError> {
        self.keys.forget();
        Ok(self.key().await?.public_key_base64url())
    }

    /// Replaces the key pair; every subscription goes with the old one
    /// (push services refuse pushes signed by another key than the one a
    /// device subscribed with). Answers how many were removed.
    pub async fn rotate_key(&self) -> Result<u64, VapidKeyError> {
        let key = self.ports.push_gateway.new_vapid_key().map_err(Bug::new)?;
        let removed = self.ports.push.replace_vapid_key(&key).await?;
        self.keys.forget();
        Ok(removed)
    }

    /// Subscribes a device of the caller's from the browser's
    /// `PushSubscription.toJSON()`; its name comes from the body's
    /// `device` or else the browser's `User-Agent`. The endpoint must pass
    /// the outgoing-target guard, and its key must be a P-256 point.
    pub async fn subscribe(
        &self,
        principal: &Principal,
        body: &Value,
        user_agent: Option<&str>,
    ) -> Result<PushSubscription, SubscribeError> {
        principal.require_live("Web Push")?;
        // A device reads the requests pushed to it.
        principal.require(Permission::RequestsRead)?;
        let new = NewPushSubscription::parse(body)?;
        if !self.ports.push_gateway.is_device_key(&new.p256dh) {
            return Err(ValidationError::field(
                "keys.p256dh",
                "keys.p256dh is not a point on the P-256 curve",
            )
            .into());
        }
        if let Err(why) = self.ports.guard.check(&new.endpoint).await {
            return Err(ValidationError::field(
                "endpoint",
                format!("endpoint is not allowed: {why}"),
            )
            .into());
        }
        let mine = self
            .ports
            .push
            .push_subscriptions_of(&[principal.user_id])
            .await?;
        let known = mine.iter().any(|s| s.endpoint == new.endpoint);
        if !known && mine.len() >= MAX_DEVICES {
            return Err(ValidationError::field(
                "endpoint",
                format!("at most {MAX_DEVICES} devices are kept: remove one first"),
            )
            .into());
        }
        let now = self.ports.clock.now();
        let device = new
            .device
            .unwrap_or_else(|| device_name(user_agent.unwrap_or_default()));
        let subscription = PushSubscription {
            id: PushSubscriptionId::new(self.ports.ids.object_id(now)),
            user_id: principal.user_id,
            endpoint: new.endpoint,
            p256dh: new.p256dh,
            auth: new.auth,
            device,
            created_at: now,
        };
        Ok(self
            .ports
            .push
            .save_push_subscription(&subscription)
            .await?)
    }

    /// The caller's devices, oldest first.
    pub async fn devices(
        &self,
        principal: &Principal,
    ) -> Result<Vec<PushSubscription>, SubscribeError> {
        principal.require_live("Web Push")?;
        principal.require(Permission::RequestsRead)?;
        Ok(self
            .ports
            .push
            .push_subscriptions_of(&[principal.user_id])
            .await?)
    }

    /// One of the caller's devices; someone else's is not found.
    async fn own(
        &self,
        principal: &Principal,
        id: &PushSubscriptionId,
    ) -> Result<PushSubscription, DeviceError> {
        principal.require_live("Web Push")?;
        principal.require(Permission::RequestsRead)?;
        match self.ports.push.push_subscription(id).await? {
            Some(sub) if sub.user_id == principal.user_id => Ok(sub),
            _ => Err(Missing::PushSubscription.into()),
        }
    }

    /// Removes one of the caller's devices.
    pub async fn unsubscribe(
        &self,
        principal: &Principal,
        id: &PushSubscriptionId,
    ) -> Result<(), DeviceError> {
        let sub = self.own(principal, id).await?;
        self.ports.push.delete_push_subscription(&sub.id).await?;
        Ok(())
    }

    /// Pushes a test notification to one of the caller's devices at once
    /// (not through the outbox: the person is waiting to see it arrive).
    /// A device its push service no longer knows is removed.
    pub async fn test(
        &self,
        principal: &Principal,
        id: &PushSubscriptionId,
    ) -> Result<TestPush, DeviceError> {
        let sub = self.own(principal, id).await?;
        let key = self.key().await.map_err(|e| match e {
            VapidKeyError::Store(e) => DeviceError::Store(e),
            VapidKeyError::Bug(e) => DeviceError::Bug(e),
        })?;
        let payload = PushPayload {
            title: "reviewloop: test notification".into(),
            body: format!("Notifications reach {}.", sub.device),
            url: format!("{}/app/account", self.public_url),
            request_id: None,
            priority: None,
        };
        let push = WebPush {
            payload: payload.to_json().to_string().into_bytes(),
            ttl: 60,
            urgency: "normal",
            topic: None,
            subscription: sub,
        };
        match self.ports.push_gateway.push(&key, &push).await {
            Ok(()) => Ok(TestPush::Sent),
            Err(PushFailure::Gone(_)) => {
                self.ports
                    .push
                    .delete_push_subscription(&push.subscription.id)
                    .await?;
                Ok(TestPush::Removed)
            }
            Err(failure) => Ok(TestPush::Failed(failure.to_string())),
        }
    }
}

#[cfg(test)]
mod tests;
