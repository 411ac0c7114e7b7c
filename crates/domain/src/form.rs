//! Forms: the typed fields a reviewer sees and fills.
//!
//! A request's answer and a review's result are one concept. A request
//! wants a form of one field whose value is the whole `response_data`
//! ([`Form::single`]); a review wants a form of many named fields whose
//! result is an object of field name to value ([`Form::parse`], from a
//! template). Every answer goes through [`Form::validate`], and each field's
//! value through the rules of its [`ResponseConfig`].

use serde_json::{Map, Value};

use crate::error::ValidationError;
use crate::response::{ResponseConfig, ResponseType};
use crate::text::{char_len, check_line};

/// The most fields a form may have.
pub const MAX_FIELDS: usize = 50;
/// The most characters a field name may have.
pub const MAX_FIELD_NAME: usize = 64;
/// The most characters a field label may have.
pub const MAX_FIELD_LABEL: usize = 200;

/// The type name of a field that shows content and takes no answer.
pub const CONTENT_DISPLAY: &str = "content_display";

/// What a field is for.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Shows the review's `content.text`, or `content.metadata[name]`;
    /// nothing to answer.
    ContentDisplay,
    /// An answer of one of the six response types, within its settings.
    Answer(ResponseConfig),
}

impl FieldKind {
    /// The type's name as the API spells it.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Self::ContentDisplay => CONTENT_DISPLAY,
            Self::Answer(config) => config.response_type().as_str(),
        }
    }
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    name: String,
    label: String,
    required: bool,
    editable: bool,
    kind: FieldKind,
}

impl Field {
    /// Its name: unique in the form, the key of its value in a result.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What a reviewer reads beside it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether a result must give it a value.
    pub fn required(&self) -> bool {
        self.required
    }

    /// Whether it is pre-filled from the content, for the reviewer to change.
    pub fn editable(&self) -> bool {
        self.editable
    }

    /// Its type and settings.
    pub fn kind(&self) -> &FieldKind {
        &self.kind
    }

    /// True for fields a reviewer answers (every type but content display).
    pub fn takes_answer(&self) -> bool {
        matches!(self.kind, FieldKind::Answer(_))
    }

    /// The field as the API shows and stores it: `name`, `type`, `label`,
    /// `required`, `editable` and its type's settings.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), Value::from(self.name.clone()));
        map.insert("type".into(), Value::from(self.kind.type_name()));
        map.insert("label".into(), Value::from(self.label.clone()));
        map.insert("required".into(), Value::from(self.required));
        map.insert("editable".into(), Value::from(self.editable));
        if let FieldKind::Answer(config) = &self.kind {
            config.write_settings(&mut map);
        }
        Value::Object(map)
    }

    fn check(&self, path: &str, value: &Value) -> Result<(), ValidationError> {
        match &self.kind {
            FieldKind::ContentDisplay => Err(ValidationError::field(
                path,
                format!("{path} shows content and takes no answer"),
            )),
            FieldKind::Answer(config) => config.validate_answer(path, value),
        }
    }
}

/// How a form's answer is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The answer is the one field's value (a request's `response_data`).
    Value,
    /// The answer is an object of field name to value (a review's `result`).
    Object,
}

/// The fields a reviewer fills, and the one place answers are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    fields: Vec<Field>,
    shape: Shape,
}

fn is_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= MAX_FIELD_NAME
}

fn optional_flag(map: &Map<String, Value>, path: &str, key: &str) -> Result<bool, ValidationError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(_) => Err(ValidationError::field(
            format!("{path}.{key}"),
            format!("{path}.{key} must be true or false"),
        )),
    }
}

fn parse_field(path: &str, raw: &Value) -> Result<Field, ValidationError> {
    let Some(map) = raw.as_object() else {
        return Err(ValidationError::field(
            path,
            format!("{path} must be an object with name, type and label"),
        ));
    };
    let mut errors = ValidationError::default();
    let name_path = format!("{path}.name");
    let name = match map.get("name").and_then(Value::as_str) {
        Some(name) if is_field_name(name) => Some(name.to_owned()),
        _ => {
            errors.extend(ValidationError::field(
                name_path.clone(),
                format!(
                    "{name_path} must be 1 to {MAX_FIELD_NAME} letters, digits, '_' or '-', starting with a letter"
                ),
            ));
            None
        }
    };
    let type_path = format!("{path}.type");
    let kind_name = map.get("type").and_then(Value::as_str);
    // `Some(None)`: content display; `Some(Some(t))`: an answer of type `t`;
    // `None`: no known type (recorded as an error).
    let answer_type: Option<Option<ResponseType>> = match kind_name {
        Some(CONTENT_DISPLAY) => Some(None),
        Some(other) => ResponseType::parse(other).ok().map(Some),
        None => None,
    };
    if answer_type.is_none() {
        errors.extend(type_error(&type_path));
    }
    let label_path = format!("{path}.label");
    let label = match map.get("label") {
        None | Some(Value::Null) => name.clone(),
        Some(Value::String(label)) => {
            let label = label.trim();
            if label.is_empty() || char_len(label) > MAX_FIELD_LABEL {
                errors.extend(ValidationError::field(
                    label_path.clone(),
                    format!("{label_path} must be 1 to {MAX_FIELD_LABEL} characters"),
                ));
                None
            } else {
                errors.collect(check_line(&label_path, label));
                Some(label.to_owned())
            }
        }
        Some(_) => {
            errors.extend(ValidationError::field(
                label_path.clone(),
                format!("{label_path} must be a string"),
            ));
            None
        }
    };
    let required = errors.collect(optional_flag(map, path, "required"));
    let editable = errors.collect(optional_flag(map, path, "editable"));
    let kind = match answer_type {
        Some(None) => {
            if editable == Some(true) {
                errors.extend(ValidationError::field(
                    format!("{path}.editable"),
                    format!(
                        "{path}.editable must be false: a {CONTENT_DISPLAY} field takes no answer"
                    ),
                ));
            }
            Some(FieldKind::ContentDisplay)
        }
        Some(Some(t)) => errors
            .collect(ResponseConfig::parse_settings(path, t, map))
            .map(FieldKind::Answer),
        None => None,
    };
    let allowed = |key: &str| {
        ["name", "type", "label", "required", "editable"].contains(&key)
            || matches!(answer_type, Some(Some(t)) if ResponseConfig::setting_names(t).contains(&key))
    };
    for key in map.keys().filter(|k| !allowed(k)) {
        let what = kind_name.unwrap_or("this");
        errors.extend(ValidationError::field(
            format!("{path}.{key}"),
            format!("{path}.{key} is not a setting of a {what} field"),
        ));
    }
    errors.into_result()?;
    match (name, label, required, editable, kind) {
        (Some(name), Some(label), Some(required), Some(editable), Some(kind)) => Ok(Field {
            required: required && matches!(kind, FieldKind::Answer(_)),
            name,
            label,
            editable,
            kind,
        }),
        // Every `None` above recorded an error, so this is not reached.
        _ => Err(ValidationError::field(path, format!("{path} is not valid"))),
    }
}

fn type_error(path: &str) -> ValidationError {
    let names: Vec<&str> = std::iter::once(CONTENT_DISPLAY)
        .chain(ResponseType::ALL.iter().map(ResponseType::as_str))
        .collect();
    ValidationError::field(path, format!("{path} must be one of {}", names.join(", ")))
}

impl Form {
    /// A request's form: one required field of `config`'s type, whose value
    /// is the whole answer.
    pub fn single(config: ResponseConfig) -> Self {
        let name = config.response_type().as_str().to_owned();
        Self {
            fields: vec![Field {
                label: name.clone(),
                name,
                required: true,
                editable: false,
                kind: FieldKind::Answer(config),
            }],
            shape: Shape::Value,
        }
    }

    /// Parses a template's `fields`: an array of 1 to 50 (`MAX_FIELDS`)
    /// objects with unique names and at least one field to answer. Every
    /// mistake is named by its path (`fields[2].options`).
    pub fn parse(raw: &Value) -> Result<Self, ValidationError> {
        let Some(items) = raw.as_array() else {
            return Err(ValidationError::field(
                "fields",
                "fields must be an array of field objects",
            ));
        };
        if items.is_empty() || items.len() > MAX_FIELDS {
            return Err(ValidationError::field(
                "fields",
                format!("fields must have 1 to {MAX_FIELDS} entries"),
            ));
        }
        let mut errors = ValidationError::default();
        let mut fields: Vec<Field> = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let path = format!("fields[{index}]");
            let Some(field) = errors.collect(parse_field(&path, item)) else {
                continue;
            };
            if fields.iter().any(|f| f.name == field.name) {
                errors.extend(ValidationError::field(
                    format!("{path}.name"),
                    format!("{path}.name '{}' is used by another field", field.name),
                ));
                continue;
            }
            fields.push(field);
        }
        errors.into_result()?;
        if !fields.iter().any(Field::takes_answer) {
            return Err(ValidationError::field(
                "fields",
                "fields must have at least one field to answer (a type other than content_display)",
            ));
        }
        Ok(Self {
            fields,
            shape: Shape::Object,
        })
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The fields as the API shows and stores them (a template's `fields`).
    pub fn to_value(&self) -> Value {
        Value::Array(self.fields.iter().map(Field::to_value).collect())
    }

    /// The values editable fields start with: `metadata[name]` of the
    /// content, for each editable field that has one there. Each must be a
    /// valid value of its field (named `content.metadata.<name>`).
    pub fn prefill(
        &self,
        metadata: &Map<String, Value>,
    ) -> Result<Map<String, Value>, ValidationError> {
        let mut errors = ValidationError::default();
        let mut values = Map::new();
        for field in self.fields.iter().filter(|f| f.editable) {
            if let Some(value) = metadata.get(&field.name).filter(|v| !v.is_null()) {
                let path = format!("content.metadata.{}", field.name);
                if errors.collect(field.check(&path, value)).is_some() {
                    values.insert(field.name.clone(), value.clone());
                }
            }
        }
        errors.into_result().map(|()| values)
    }

    /// Checks an answer (named `path` in messages: `response_data`,
    /// `default_response`, `result`) and returns it as it stands. A
    /// one-field form takes the field's value itself. A form of named
    /// fields takes an object: unknown names are refused, an editable field
    /// left out keeps its `prefill`, and a required field must end up with
    /// a value. Every mistake is reported, each by its path.
    pub fn validate(
        &self,
        path: &str,
        answer: &Value,
        prefill: &Map<String, Value>,
    ) -> Result<Value, ValidationError> {
        if self.shape == Shape::Value {
            let field = self.fields.first().ok_or_else(|| {
                ValidationError::field(path, format!("{path} has no field to answer"))
            })?;
            field.check(path, answer)?;
            return Ok(answer.clone());
        }
        let Some(given) = answer.as_object() else {
            return Err(ValidationError::field(
                path,
                format!("{path} must be an object of field name to value"),
            ));
        };
        let mut errors = ValidationError::default();
        for name in given.keys().filter(|name| self.field(name).is_none()) {
            errors.extend(ValidationError::field(
                format!("{path}.{name}"),
                format!("{path}.{name} is not a field of this form"),
            ));
        }
        let mut result = Map::new();
        for field in &self.fields {
            let field_path = format!("{path}.{}", field.name);
            let value = given
                .get(&field.name)
                .filter(|v| !v.is_null())
                .or_else(|| prefill.get(&field.name));
            match value {
                Some(value) => {
                    let checked = errors.collect(field.check(&field_path, value));
                    if checked.is_some() {
                        result.insert(field.name.clone(), value.clone());
                    }
                }
                None if field.required => errors.extend(ValidationError::field(
                    field_path.clone(),
                    format!("{field_path} is required"),
                )),
                None => {}
            }
        }
        errors.into_result().map(|()| Value::Object(result))
    }
}

#[cfg(test)]
mod tests;
