//! The template store.

use async_trait::async_trait;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use reviewloop_domain::{Event, Template, TemplateId, UserId};
use reviewloop_ports::{StoreError, TemplateStore};

use super::convert::{corrupt, from_db_time, from_json_text, parse, to_db_time, to_json_text};
use super::schema::templates;
use super::{outbox, DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = templates)]
struct TemplateRow {
    id: String,
    account_id: String,
    name: String,
    description: Option<String>,
    fields: String,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
}

impl TemplateRow {
    fn from_domain(t: &Template) -> Self {
        Self {
            id: t.id().to_string(),
            account_id: t.account_id().to_string(),
            name: t.name().to_owned(),
            description: t.description().map(str::to_owned),
            fields: to_json_text(&t.form().to_value()),
            created_at: to_db_time(t.created_at()),
            updated_at: to_db_time(t.updated_at()),
        }
    }

    fn into_domain(self) -> Result<Template, DbError> {
        let fields = from_json_text("template fields", &self.fields)?;
        Template::restore(
            parse("template id", &self.id)?,
            parse("user id", &self.account_id)?,
            &self.name,
            self.description.as_deref(),
            &fields,
            from_db_time(self.created_at),
            from_db_time(self.updated_at),
        )
        .map_err(|e| corrupt("template", &e.to_string()))
    }
}

#[async_trait]
impl TemplateStore for SqlStore {
    async fn insert_template(&self, template: &Template) -> Result<(), StoreError> {
        let row = TemplateRow::from_domain(template);
        self.db
            .write(move |conn| {
                diesel::insert_into(templates::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn template_by_id(&self, id: &TemplateId) -> Result<Option<Template>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                templates::table
                    .find(id)
                    .select(TemplateRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(TemplateRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn templates_of(&self, account: &UserId) -> Result<Vec<Template>, StoreError> {
        let account = account.to_string();
        self.db
            .run(move |conn| {
                templates::table
                    .filter(templates::account_id.eq(account))
                    .order((templates::created_at.desc(), templates::id.desc()))
                    .select(TemplateRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(TemplateRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn update_template(
        &self,
        template: &Template,
        events: &[Event],
    ) -> Result<(), StoreError> {
        let row = TemplateRow::from_domain(template);
        let events = super::outbox::NewEvents::of(events);
        self.db
            .write(move |conn| {
                let changed = diesel::update(templates::table.find(&row.id))
                    .set((
                        templates::name.eq(&row.name),
                        templates::description.eq(&row.description),
                        templates::fields.eq(&row.fields),
                        templates::updated_at.eq(row.updated_at),
                    ))
                    .execute(conn)?;
                if changed == 0 {
                    return Err(StoreError::NotFound.into());
                }
                outbox::append(conn, &events)
            })
            .await
    }

    async fn delete_template(&self, id: &TemplateId) -> Result<(), StoreError> {
        let id = id.to_string();
        self.db
            .write(move |conn| {
                if diesel::delete(templates::table.find(id)).execute(conn)? == 0 {
                    return Err(StoreError::NotFound.into());
                }
                Ok(())
            })
            .await
    }
}

#[cfg(test)]
mod tests;
