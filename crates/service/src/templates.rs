//! Templates: an account's reusable forms, managed through the alternate
//! surface. Changing one emits `template.updated`; reviews already sent
//! keep the fields they were created with.

use reviewloop_domain::{
    Event, EventType, Permission, Template, TemplateId, TemplateInput, TemplatePatch,
};
use reviewloop_ports::StoreError;
use serde_json::json;

use crate::error::{CreateError, EditError, ListError, Missing, ReadError};
use crate::ports::{event_id, TemplatePorts};
use crate::principal::Principal;
use reviewloop_wire::alternate::TemplateOut;

/// Template use cases.
#[derive(Clone)]
pub struct TemplateService {
    ports: TemplatePorts,
}

impl TemplateService {
    /// A service over `ports`.
    pub fn new(ports: TemplatePorts) -> Self {
        Self { ports }
    }

    /// The caller's template `id`; anyone else's is not found.
    async fn own<E>(&self, caller: &Principal, id: &TemplateId) -> Result<Template, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        self.ports
            .templates
            .template_by_id(id)
            .await?
            .filter(|t| t.account_id() == caller.user_id)
            .ok_or(Missing::Template.into())
    }

    /// Creates a template for the caller.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        caller: &Principal,
        input: TemplateInput,
    ) -> Result<Template, CreateError> {
        caller.require_live("templates")?;
        caller.require(Permission::RequestsWrite)?;
        let now = self.ports.clock.now();
        let id = TemplateId::new(self.ports.ids.object_id(now));
        let template = Template::create(id, caller.user_id, input, now)?;
        self.ports.templates.insert_template(&template).await?;
        Ok(template)
    }

    /// The caller's templates, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(&self, caller: &Principal) -> Result<Vec<Template>, ListError> {
        caller.require_live("templates")?;
        caller.require(Permission::RequestsRead)?;
        Ok(self.ports.templates.templates_of(&caller.user_id).await?)
    }

    /// One of the caller's templates.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(&self, caller: &Principal, id: &TemplateId) -> Result<Template, ReadError> {
        caller.require_live("templates")?;
        caller.require(Permission::RequestsRead)?;
        self.own(caller, id).await
    }

    /// Changes a template and emits `template.updated` with it, in one
    /// transaction.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        caller: &Principal,
        id: &TemplateId,
        patch: TemplatePatch,
    ) -> Result<Template, EditError> {
        caller.require_live("templates")?;
        caller.require(Permission::RequestsWrite)?;
        let mut template = self.own::<EditError>(caller, id).await?;
        let now = self.ports.clock.now();
        template.change(patch, now)?;
        let event = Event::for_account(
            event_id(&*self.ports.ids, now),
            EventType::TemplateUpdated,
            caller.user_id,
            json!({"template": TemplateOut::of(&template)}),
            now,
        );
        match self
            .ports
            .templates
            .update_template(&template, &[event])
            .await
        {
            Ok(()) => {
                self.ports.changes.outbox_written();
                Ok(template)
            }
            Err(StoreError::NotFound) => Err(Missing::Template.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a template. Reviews sent with it keep their own copy of its
    /// fields.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete(&self, caller: &Principal, id: &TemplateId) -> Result<(), ReadError> {
        caller.require_live("templates")?;
        caller.require(Permission::RequestsWrite)?;
        self.own::<ReadError>(caller, id).await?;
        match self.ports.templates.delete_template(id).await {
            Ok(()) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests;
