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

    async fn slack_posts_of(&self, request: &RequestId) -> Result<Vec<SlackPost>, StoreError> {
        let id = request.to_string();
        self.db
            .run(move |conn| {
                slack_posts::table
                    .filter(slack_posts::request_id.eq(&id))
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
