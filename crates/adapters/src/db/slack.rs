//! What the service posted through loops' Slack apps, and the apps.

use async_trait::async_trait;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use reviewloop_domain::{LoopId, RequestId, SlackApp};
use reviewloop_ports::{SlackPost, SlackStore, StoreError};

use super::convert::{corrupt, parse};
use super::schema::{loops, slack_posts};
use super::{DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = slack_posts)]
struct SlackPostRow {
    request_id: String,
    loop_id: String,
    channel: String,
    ts: String,
    created_at: NaiveDateTime,
}

impl SlackPostRow {
    fn into_port(self) -> Result<SlackPost, DbError> {
        Ok(SlackPost {
            request_id: parse("request id", &self.request_id)?,
            loop_id: parse("loop id", &self.loop_id)?,
            channel: self.channel,
            ts: self.ts,
        })
    }
}

#[async_trait]
impl SlackStore for SqlStore {
    async fn record_slack_post(&self, post: &SlackPost) -> Result<(), StoreError> {
        let row = SlackPostRow {
            request_id: post.request_id.to_string(),
            loop_id: post.loop_id.to_string(),
            channel: post.channel.clone(),
            ts: post.ts.clone(),
            created_at: chrono::Utc::now().naive_utc(),
        };
        let written = self
            .db
            .write(move |conn| {
                diesel::insert_into(slack_posts::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await;
        match written {
            // A retried post of the same request keeps the first.
            Err(StoreError::Conflict(_)) => Ok(()),
            other => other,
        }
    }

    async fn slack_posts_of(&self, requests: &[RequestId]) -> Result<Vec<SlackPost>, StoreError> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = requests.iter().map(ToString::to_string).collect();
        self.db
            .run(move |conn| {
                slack_posts::table
                    .filter(slack_posts::request_id.eq_any(&ids))
                    .select(SlackPostRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(SlackPostRow::into_port)
                    .collect()
            })
            .await
    }

    async fn slack_apps(&self) -> Result<Vec<(LoopId, SlackApp)>, StoreError> {
        self.db
            .run(|conn| {
                let apps = loops::table
                    .filter(loops::slack_app.is_not_null())
                    .select((loops::id, loops::slack_app))
                    .load::<(String, Option<String>)>(conn)?
                    .into_iter()
                    .filter_map(|(id, app)| {
                        let found = serde_json::from_str(&app.unwrap_or_default())
                            .ok()
                            .and_then(|v| SlackApp::parse(&v).ok())
                            .zip(id.parse::<LoopId>().ok());
                        // One damaged row must not stop every other loop's
                        // clicks; it is logged, and its loop's clicks fail.
                        if found.is_none() {
                            tracing::error!(loop_id = %id, "{}", corrupt("loop slack app", &id));
                        }
                        found.map(|(app, id)| (id, app))
                    })
                    .collect::<Vec<_>>();
                Ok(apps)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use reviewloop_domain::{LoopId, RequestId};
    use reviewloop_ports::{SlackPost, SlackStore};

    use crate::db::testdb::{fixtures, on_every_backend, TestDb};

    async fn posts_are_read_for_many_requests_at_once(db: TestDb) {
        let store = db.store();
        let (first, _) = fixtures::created_request(&store).await;
        let lp = fixtures::loop_with_members(&store, 11, "MNPQRS").await;
        let (second, _) = fixtures::stored_request(&store, &lp, 21, "high", 91).await;
        let post = |request: RequestId, loop_id: LoopId, channel: &str| SlackPost {
            request_id: request,
            loop_id,
            channel: channel.into(),
            ts: "1700000000.0001".into(),
        };
        let posted = [
            post(first.id, first.loop_id, "C1"),
            post(first.id, lp.id, "C2"),
            post(second.id, lp.id, "C3"),
        ];
        for p in &posted {
            store.record_slack_post(p).await.unwrap();
        }
        // A retried post keeps the first.
        store
            .record_slack_post(&post(first.id, first.loop_id, "C9"))
            .await
            .unwrap();
        let mut both = store.slack_posts_of(&[first.id, second.id]).await.unwrap();
        both.sort_by(|a, b| a.channel.cmp(&b.channel));
        assert_eq!(both, posted);
        let one = store.slack_posts_of(&[second.id]).await.unwrap();
        assert_eq!(one, [posted[2].clone()]);
        assert!(store.slack_posts_of(&[]).await.unwrap().is_empty());
    }

    on_every_backend!(posts_are_read_for_many_requests_at_once);
}
