//! Web Push: the server's VAPID key pair and people's devices.

use async_trait::async_trait;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use reviewloop_domain::{PushSubscription, PushSubscriptionId, UserId, VapidKey};
use reviewloop_ports::{PushStore, StoreError};

use super::convert::{corrupt, from_db_time, parse, to_db_time};
use super::schema::{push_subscriptions, vapid_keys};
use super::{Conn, DbError, SqlStore};

/// The one row of `vapid_keys`.
const THE_KEY: i32 = 1;

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = vapid_keys)]
struct VapidKeyRow {
    id: i32,
    public_key: String,
    secret_key: String,
    created_at: NaiveDateTime,
}

impl VapidKeyRow {
    fn from_domain(key: &VapidKey) -> Self {
        Self {
            id: THE_KEY,
            public_key: hex::encode(&key.public_key),
            secret_key: hex::encode(&key.secret_key),
            created_at: to_db_time(key.created_at),
        }
    }

    fn into_domain(self) -> Result<VapidKey, DbError> {
        let bytes = |what: &str, text: &str, len: usize| {
            hex::decode(text)
                .ok()
                .filter(|b| b.len() == len)
                .ok_or_else(|| corrupt(what, "(not shown)"))
        };
        Ok(VapidKey {
            public_key: bytes("VAPID public key", &self.public_key, 65)?,
            secret_key: bytes("VAPID secret key", &self.secret_key, 32)?,
            created_at: from_db_time(self.created_at),
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = push_subscriptions)]
struct SubscriptionRow {
    id: String,
    user_id: String,
    endpoint: String,
    p256dh: String,
    auth: String,
    device: String,
    created_at: NaiveDateTime,
}

impl SubscriptionRow {
    fn from_domain(sub: &PushSubscription) -> Self {
        Self {
            id: sub.id.to_string(),
            user_id: sub.user_id.to_string(),
            endpoint: sub.endpoint.clone(),
            p256dh: hex::encode(&sub.p256dh),
            auth: hex::encode(&sub.auth),
            device: sub.device.clone(),
            created_at: to_db_time(sub.created_at),
        }
    }

    fn into_domain(self) -> Result<PushSubscription, DbError> {
        let bytes = |what: &str, text: &str| hex::decode(text).map_err(|_| corrupt(what, &self.id));
        Ok(PushSubscription {
            id: parse("push subscription id", &self.id)?,
            user_id: parse("user id", &self.user_id)?,
            p256dh: bytes("push subscription key", &self.p256dh)?,
            auth: bytes("push subscription secret", &self.auth)?,
            endpoint: self.endpoint,
            device: self.device,
            created_at: from_db_time(self.created_at),
        })
    }
}

/// Keeps `row`, or gives the kept row of its endpoint (and that row's id)
/// to `row`'s person, keys and device.
fn upsert(conn: &mut Conn, mut row: SubscriptionRow) -> Result<PushSubscription, DbError> {
    let existing: Option<(String, NaiveDateTime)> = push_subscriptions::table
        .filter(push_subscriptions::endpoint.eq(&row.endpoint))
        .select((push_subscriptions::id, push_subscriptions::created_at))
        .first(conn)
        .optional()?;
    if let Some((id, created_at)) = existing {
        let changed = diesel::update(push_subscriptions::table.find(&id))
            .set((
                push_subscriptions::user_id.eq(&row.user_id),
                push_subscriptions::p256dh.eq(&row.p256dh),
                push_subscriptions::auth.eq(&row.auth),
                push_subscriptions::device.eq(&row.device),
            ))
            .execute(conn)?;
        // Removed since it was read: kept anew below, under the new id.
        if changed > 0 {
            row.id = id;
            row.created_at = created_at;
            return row.into_domain();
        }
    }
    diesel::insert_into(push_subscriptions::table)
        .values(&row)
        .execute(conn)?;
    row.into_domain()
}

#[async_trait]
impl PushStore for SqlStore {
    async fn vapid_key(&self) -> Result<Option<VapidKey>, StoreError> {
        self.db
            .run(|conn| {
                vapid_keys::table
                    .filter(vapid_keys::id.eq(THE_KEY))
                    .select(VapidKeyRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(VapidKeyRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn insert_first_vapid_key(&self, key: &VapidKey) -> Result<(), StoreError> {
        let row = VapidKeyRow::from_domain(key);
        let written = self
            .db
            .write(move |conn| {
                diesel::insert_into(vapid_keys::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await;
        match written {
            // Another instance made the first pair: it is the one.
            Err(StoreError::Conflict(_)) => Ok(()),
            other => other,
        }
    }

    async fn replace_vapid_key(&self, key: &VapidKey) -> Result<u64, StoreError> {
        let row = VapidKeyRow::from_domain(key);
        self.db
            .write(move |conn| {
                let replaced = diesel::update(vapid_keys::table.filter(vapid_keys::id.eq(THE_KEY)))
                    .set(&row)
                    .execute(conn)?;
                if replaced == 0 {
                    diesel::insert_into(vapid_keys::table)
                        .values(&row)
                        .execute(conn)?;
                }
                let removed = diesel::delete(push_subscriptions::table).execute(conn)?;
                Ok(u64::try_from(removed).unwrap_or(u64::MAX))
            })
            .await
    }

    async fn save_push_subscription(
        &self,
        subscription: &PushSubscription,
    ) -> Result<PushSubscription, StoreError> {
        // Two browsers' tabs subscribing one endpoint at once may both find
        // it new; the one whose insert loses finds it kept the second time.
        let mut tries = 0;
        loop {
            let row = SubscriptionRow::from_domain(subscription);
            match self.db.write(move |conn| upsert(conn, row)).await {
                Err(StoreError::Conflict(_)) if tries == 0 => tries += 1,
                other => return other,
            }
        }
    }

    async fn push_subscriptions_of(
        &self,
        users: &[UserId],
    ) -> Result<Vec<PushSubscription>, StoreError> {
        if users.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = users.iter().map(ToString::to_string).collect();
        self.db
            .run(move |conn| {
                push_subscriptions::table
                    .filter(push_subscriptions::user_id.eq_any(&ids))
                    .order((push_subscriptions::created_at, push_subscriptions::id))
                    .select(SubscriptionRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(SubscriptionRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn push_subscription(
        &self,
        id: &PushSubscriptionId,
    ) -> Result<Option<PushSubscription>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                push_subscriptions::table
                    .find(&id)
                    .select(SubscriptionRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(SubscriptionRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn delete_push_subscription(&self, id: &PushSubscriptionId) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.db
            .write(move |conn| {
                Ok(diesel::delete(push_subscriptions::table.find(&id)).execute(conn)? > 0)
            })
            .await
    }
}
