//! The account store: users and API keys.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use reviewloop_domain::{ApiKey, ApiKeyId, Email, User, UserId};
use reviewloop_ports::{AccountStore, StoreError};

use super::convert::to_db_time;
use super::models::{ApiKeyRow, UserRow};
use super::schema::{api_keys, users};
use super::SqlStore;

#[async_trait]
impl AccountStore for SqlStore {
    async fn user_by_email(&self, email: &Email) -> Result<Option<User>, StoreError> {
        let email = email.to_string();
        self.db
            .run(move |conn| {
                users::table
                    .filter(users::email.eq(email))
                    .select(UserRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(UserRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn user_by_id(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                users::table
                    .find(id)
                    .select(UserRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(UserRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn insert_user(&self, user: &User) -> Result<(), StoreError> {
        let row = UserRow::from_domain(user);
        self.db
            .write(move |conn| {
                diesel::insert_into(users::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn insert_first_user(&self, user: &User, key: &ApiKey) -> Result<bool, StoreError> {
        let (user, key) = (UserRow::from_domain(user), ApiKeyRow::from_domain(key));
        self.db
            .write(move |conn| {
                let existing: i64 = users::table.count().get_result(conn)?;
                if existing > 0 {
                    return Ok(false);
                }
                diesel::insert_into(users::table)
                    .values(&user)
                    .execute(conn)?;
                diesel::insert_into(api_keys::table)
                    .values(&key)
                    .execute(conn)?;
                Ok(true)
            })
            .await
    }

    async fn insert_api_key(&self, key: &ApiKey) -> Result<(), StoreError> {
        let row = ApiKeyRow::from_domain(key);
        self.db
            .write(move |conn| {
                diesel::insert_into(api_keys::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn set_signing_secret(&self, user: &UserId, secret: &str) -> Result<(), StoreError> {
        let (user, secret) = (user.to_string(), secret.to_owned());
        self.db
            .write(move |conn| {
                let changed = diesel::update(users::table.find(user))
                    .set(users::signing_secret.eq(secret))
                    .execute(conn)?;
                if changed == 0 {
                    return Err(StoreError::NotFound.into());
                }
                Ok(())
            })
            .await
    }

    async fn api_key_by_hash(&self, hash: &str) -> Result<Option<(ApiKey, User)>, StoreError> {
        let hash = hash.to_owned();
        self.db
            .run(move |conn| {
                let found = api_keys::table
                    .inner_join(users::table)
                    .filter(api_keys::key_hash.eq(hash))
                    .select((ApiKeyRow::as_select(), UserRow::as_select()))
                    .first::<(ApiKeyRow, UserRow)>(conn)
                    .optional()?;
                match found {
                    Some((key, user)) => Ok(Some((key.into_domain()?, user.into_domain()?))),
                    None => Ok(None),
                }
            })
            .await
    }

    async fn api_keys_of(&self, user: &UserId) -> Result<Vec<ApiKey>, StoreError> {
        let user = user.to_string();
        self.db
            .run(move |conn| {
                api_keys::table
                    .filter(api_keys::user_id.eq(user))
                    .order((api_keys::created_at.desc(), api_keys::id.desc()))
                    .select(ApiKeyRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(ApiKeyRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn revoke_api_key(
        &self,
        id: &ApiKeyId,
        at: DateTime<Utc>,
    ) -> Result<Option<ApiKey>, StoreError> {
        let id = id.to_string();
        self.db
            .write(move |conn| {
                // Revoking twice keeps the first revocation time.
                diesel::update(
                    api_keys::table
                        .find(&id)
                        .filter(api_keys::revoked_at.is_null()),
                )
                .set(api_keys::revoked_at.eq(to_db_time(at)))
                .execute(conn)?;
                api_keys::table
                    .find(&id)
                    .select(ApiKeyRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(ApiKeyRow::into_domain)
                    .transpose()
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdb::{fixtures, on_every_backend, TestDb};
    use super::*;

    async fn users_and_keys_round_trip(db: TestDb) {
        let store = db.store();
        let user = fixtures::user(1, "ann@x.io");
        store.insert_user(&user).await.unwrap();
        assert_eq!(
            store.user_by_email(&user.email).await.unwrap(),
            Some(user.clone())
        );
        assert_eq!(
            store.user_by_id(&user.id).await.unwrap(),
            Some(user.clone())
        );
        let key = fixtures::key(2, &user, "hash-a");
        store.insert_api_key(&key).await.unwrap();
        assert_eq!(
            store.api_key_by_hash("hash-a").await.unwrap(),
            Some((key.clone(), user.clone()))
        );
        assert_eq!(store.api_key_by_hash("hash-b").await.unwrap(), None);
        assert_eq!(store.api_keys_of(&user.id).await.unwrap(), vec![key]);
    }

    async fn the_signing_secret_can_be_replaced(db: TestDb) {
        let store = db.store();
        let user = fixtures::user(1, "ann@x.io");
        store.insert_user(&user).await.unwrap();
        store
            .set_signing_secret(&user.id, "whsec_new")
            .await
            .unwrap();
        assert_eq!(
            store
                .user_by_id(&user.id)
                .await
                .unwrap()
                .unwrap()
                .signing_secret,
            "whsec_new"
        );
        let nobody = UserId::new(fixtures::oid(9));
        assert!(matches!(
            store.set_signing_secret(&nobody, "x").await,
            Err(StoreError::NotFound)
        ));
    }

    async fn duplicate_email_or_key_hash_is_a_conflict(db: TestDb) {
        let store = db.store();
        let user = fixtures::user(1, "ann@x.io");
        store.insert_user(&user).await.unwrap();
        let twin = fixtures::user(2, "ann@x.io");
        assert!(matches!(
            store.insert_user(&twin).await,
            Err(StoreError::Conflict(_))
        ));
        store
            .insert_api_key(&fixtures::key(3, &user, "h"))
            .await
            .unwrap();
        let same_hash = fixtures::key(4, &user, "h");
        assert!(matches!(
            store.insert_api_key(&same_hash).await,
            Err(StoreError::Conflict(_))
        ));
    }

    async fn first_user_is_inserted_only_into_an_empty_database(db: TestDb) {
        let store = db.store();
        let admin = fixtures::user(1, "admin@localhost");
        assert!(store
            .insert_first_user(&admin, &fixtures::key(2, &admin, "k1"))
            .await
            .unwrap());
        let other = fixtures::user(3, "other@localhost");
        assert!(!store
            .insert_first_user(&other, &fixtures::key(4, &other, "k2"))
            .await
            .unwrap());
        assert!(store.user_by_email(&other.email).await.unwrap().is_none());
        assert!(store.api_key_by_hash("k2").await.unwrap().is_none());
    }

    async fn revocation_keeps_its_first_time_and_unknown_keys_are_none(db: TestDb) {
        let store = db.store();
        let user = fixtures::user(1, "ann@x.io");
        store.insert_user(&user).await.unwrap();
        let key = fixtures::key(2, &user, "h");
        store.insert_api_key(&key).await.unwrap();
        let first = store
            .revoke_api_key(&key.id, fixtures::at(10))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first.revoked_at, Some(fixtures::at(10)));
        let again = store
            .revoke_api_key(&key.id, fixtures::at(20))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(again.revoked_at, Some(fixtures::at(10)));
        let unknown = ApiKeyId::new(fixtures::oid(99));
        assert_eq!(
            store
                .revoke_api_key(&unknown, fixtures::at(0))
                .await
                .unwrap(),
            None
        );
    }

    on_every_backend!(
        users_and_keys_round_trip,
        the_signing_secret_can_be_replaced,
        duplicate_email_or_key_hash_is_a_conflict,
        first_user_is_inserted_only_into_an_empty_database,
        revocation_keeps_its_first_time_and_unknown_keys_are_none,
    );
}
