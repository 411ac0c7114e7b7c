//! Storage of templates.

use async_trait::async_trait;
use reviewloop_domain::{Event, Template, TemplateId, UserId};

use crate::StoreError;

/// Templates, an account's own.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait TemplateStore: Send + Sync {
    /// Adds a template.
    async fn insert_template(&self, template: &Template) -> Result<(), StoreError>;
    /// One template.
    async fn template_by_id(&self, id: &TemplateId) -> Result<Option<Template>, StoreError>;
    /// An account's templates, newest first.
    async fn templates_of(&self, account: &UserId) -> Result<Vec<Template>, StoreError>;
    /// Writes name, description, fields and `updated_at` with the events
    /// the change emits, in one transaction; `NotFound` when it is gone.
    async fn update_template(
        &self,
        template: &Template,
        events: &[Event],
    ) -> Result<(), StoreError>;
    /// Deletes a template; `NotFound` when it is gone.
    async fn delete_template(&self, id: &TemplateId) -> Result<(), StoreError>;
}
