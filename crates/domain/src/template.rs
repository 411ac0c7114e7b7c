//! Templates: reusable forms an account creates once and sends reviews with.
//!
//! A template's fields are a [`Form`]; a review copies the form when it is
//! created, so changing a template later never changes a review already sent.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::error::ValidationError;
use crate::form::Form;
use crate::id::{TemplateId, UserId};
use crate::review_loop::{LoopDescription, LoopName};

/// What a client sends to create a template; every field is checked by
/// [`Template::create`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TemplateInput {
    /// 1 to 100 characters (required).
    pub name: Option<String>,
    /// At most 500 characters.
    pub description: Option<String>,
    /// The fields, as [`Form::parse`] takes them (required).
    pub fields: Option<Value>,
}

/// A change to a template: absent parts stay as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TemplatePatch {
    /// A new name.
    pub name: Option<String>,
    /// A new description; `Some(None)` clears it.
    pub description: Option<Option<String>>,
    /// New fields, replacing the old ones whole.
    pub fields: Option<Value>,
}

/// A reusable form owned by one account.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    id: TemplateId,
    account_id: UserId,
    name: LoopName,
    description: Option<LoopDescription>,
    form: Form,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn description(raw: Option<&str>) -> Result<Option<LoopDescription>, ValidationError> {
    raw.map(LoopDescription::parse)
        .transpose()
        .map(|d| d.filter(|d| !d.as_str().is_empty()))
}

impl Template {
    /// A new template from a client's input; every mistake is reported.
    pub fn create(
        id: TemplateId,
        account_id: UserId,
        input: TemplateInput,
        now: DateTime<Utc>,
    ) -> Result<Self, ValidationError> {
        let mut errors = ValidationError::default();
        let name = match input.name.as_deref() {
            Some(name) => errors.collect(LoopName::parse(name)),
            None => {
                errors.extend(ValidationError::field("name", "name is required"));
                None
            }
        };
        let description = errors
            .collect(description(input.description.as_deref()))
            .flatten();
        let form = match &input.fields {
            Some(fields) => errors.collect(Form::parse(fields)),
            None => {
                errors.extend(ValidationError::field(
                    "fields",
                    "fields is required: an array of fields with name, type and label",
                ));
                None
            }
        };
        errors.into_result()?;
        match (name, form) {
            (Some(name), Some(form)) => Ok(Self {
                id,
                account_id,
                name,
                description,
                form,
                created_at: now,
                updated_at: now,
            }),
            _ => Err(ValidationError::field("body", "template is not valid")),
        }
    }

    /// A template as a store kept it. The stored fields are parsed again,
    /// so a template is never handed out with fields that break the rules.
    pub fn restore(
        id: TemplateId,
        account_id: UserId,
        name: &str,
        description_text: Option<&str>,
        fields: &Value,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    ) -> Result<Self, ValidationError> {
        Ok(Self {
            id,
            account_id,
            name: LoopName::parse(name)?,
            description: description(description_text)?,
            form: Form::parse(fields)?,
            created_at,
            updated_at,
        })
    }

    /// Applies a change. Nothing changes unless all of it is valid; an
    /// empty patch is refused.
    pub fn change(
        &mut self,
        patch: TemplatePatch,
        now: DateTime<Utc>,
    ) -> Result<(), ValidationError> {
        if patch == TemplatePatch::default() {
            return Err(ValidationError::field(
                "body",
                "nothing to update: send name, description or fields",
            ));
        }
        let mut errors = ValidationError::default();
        let name = patch
            .name
            .as_deref()
            .and_then(|n| errors.collect(LoopName::parse(n)));
        let new_description = patch
            .description
            .as_ref()
            .and_then(|d| errors.collect(description(d.as_deref())));
        let form = patch
            .fields
            .as_ref()
            .and_then(|f| errors.collect(Form::parse(f)));
        errors.into_result()?;
        if let Some(name) = name {
            self.name = name;
        }
        if let Some(description) = new_description {
            self.description = description;
        }
        if let Some(form) = form {
            self.form = form;
        }
        self.updated_at = now;
        Ok(())
    }

    /// Its id.
    pub fn id(&self) -> TemplateId {
        self.id
    }

    /// The account that owns it.
    pub fn account_id(&self) -> UserId {
        self.account_id
    }

    /// Its name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// Its description, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.description.as_ref().map(LoopDescription::as_str)
    }

    /// Its fields.
    pub fn form(&self) -> &Form {
        &self.form
    }

    /// When it was created.
    pub fn created_at(&self) -> DateTime<Utc> {
        self.created_at
    }

    /// When it last changed.
    pub fn updated_at(&self) -> DateTime<Utc> {
        self.updated_at
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::id::ObjectId;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    fn ids() -> (TemplateId, UserId) {
        (
            TemplateId::new(ObjectId::from_parts(1, [1; 8])),
            UserId::new(ObjectId::from_parts(1, [2; 8])),
        )
    }

    fn input() -> TemplateInput {
        TemplateInput {
            name: Some("  Blog post  ".into()),
            description: Some("Before publishing".into()),
            fields: Some(json!([
                {"name": "post", "type": "content_display", "label": "Post"},
                {"name": "approve", "type": "boolean", "label": "Publish?", "required": true}
            ])),
        }
    }

    #[test]
    fn creates_a_template_from_valid_input() {
        let (id, owner) = ids();
        let template = Template::create(id, owner, input(), at(0)).unwrap();
        assert_eq!(template.name(), "Blog post");
        assert_eq!(template.description(), Some("Before publishing"));
        assert_eq!(template.form().fields().len(), 2);
        assert_eq!(template.account_id(), owner);
        assert_eq!(template.updated_at(), at(0));
    }

    #[test]
    fn reports_every_missing_or_bad_part() {
        let (id, owner) = ids();
        let error = Template::create(id, owner, TemplateInput::default(), at(0)).unwrap_err();
        let fields: Vec<&str> = error.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "fields"]);
        let bad = TemplateInput {
            name: Some("x".repeat(101)),
            description: Some("d".repeat(501)),
            fields: Some(json!([{"name": "a", "type": "rating", "scale_max": 0}])),
        };
        let error = Template::create(id, owner, bad, at(0)).unwrap_err();
        let fields: Vec<&str> = error.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "description", "fields[0].scale_max"]);
    }

    #[test]
    fn a_change_applies_whole_or_not_at_all() {
        let (id, owner) = ids();
        let mut template = Template::create(id, owner, input(), at(0)).unwrap();
        let before = template.clone();
        let bad = TemplatePatch {
            name: Some("Renamed".into()),
            fields: Some(json!([])),
            ..TemplatePatch::default()
        };
        assert!(template.change(bad, at(5)).is_err());
        assert_eq!(template, before);
        assert!(template.change(TemplatePatch::default(), at(5)).is_err());

        let good = TemplatePatch {
            name: Some("Renamed".into()),
            description: Some(None),
            fields: Some(json!([{"name": "score", "type": "rating"}])),
        };
        template.change(good, at(5)).unwrap();
        assert_eq!(template.name(), "Renamed");
        assert_eq!(template.description(), None);
        assert_eq!(template.form().fields()[0].name(), "score");
        assert_eq!(template.updated_at(), at(5));
        assert_eq!(template.created_at(), at(0));
    }

    #[test]
    fn restores_what_a_store_kept() {
        let (id, owner) = ids();
        let template = Template::create(id, owner, input(), at(0)).unwrap();
        let restored = Template::restore(
            id,
            owner,
            template.name(),
            template.description(),
            &template.form().to_value(),
            at(0),
            at(0),
        )
        .unwrap();
        assert_eq!(restored, template);
    }
}
