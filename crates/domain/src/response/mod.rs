//! Response types, their configurations and the validation of answers.
//!
//! A request says what kind of answer it wants (`response_type`) and how
//! that answer is bounded (`response_config`). The same rules check a
//! reviewer's answer and the `default_response` used on timeout.

mod answer;
mod hints;
mod settings;
mod words;
mod written;

pub use hints::ReviewerHints;
pub use words::plain_words;

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::error::ValidationError;

/// The most characters a text answer may have.
pub const MAX_TEXT_ANSWER: usize = 5000;
/// The most options a select may offer.
pub const MAX_OPTIONS: usize = 100;
/// The most characters one option may have.
pub const MAX_OPTION_LEN: usize = 200;
/// The largest magnitude of a rating scale's ends: wide enough for any
/// scale people use, small enough that no arithmetic on it overflows.
pub const MAX_SCALE: i64 = 1_000_000;
/// The finest step a rating scale may have.
pub const MIN_SCALE_STEP: f64 = 0.001;

/// What kind of answer a request wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseType {
    /// Free text.
    Text,
    /// One of the options.
    SingleSelect,
    /// A non-empty subset of the options.
    MultiSelect,
    /// A whole number on a scale.
    Rating,
    /// Any number, optionally bounded.
    Number,
    /// Yes or no.
    Boolean,
}

impl ResponseType {
    /// Every type, in the order the API lists them.
    pub const ALL: [ResponseType; 6] = [
        Self::Text,
        Self::SingleSelect,
        Self::MultiSelect,
        Self::Rating,
        Self::Number,
        Self::Boolean,
    ];

    /// The stored name, which the API also uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::SingleSelect => "single_select",
            Self::MultiSelect => "multi_select",
            Self::Rating => "rating",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    /// Parses a name given by a client.
    pub fn parse(s: &str) -> Result<Self, ValidationError> {
        Self::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| {
            ValidationError::field(
                "response_type",
                "response_type must be one of text, single_select, multi_select, rating, number, boolean",
            )
        })
    }
}

/// The most characters an option's description may have.
pub const MAX_OPTION_DESCRIPTION: usize = 500;
/// The most decimal places a number's `decimal_places` may ask for.
pub const MAX_DECIMAL_PLACES: i64 = 10;

/// One choice of a select. An answer holds its `value`; a client may write
/// it as a bare string or, as HITL.sh's guides do, as an object with a
/// label, description and colour, and sees it back the way it wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectOption {
    /// What an answer holds.
    pub value: String,
    /// What reviewers read instead of the value.
    pub label: Option<String>,
    /// A longer explanation shown under the label.
    pub description: Option<String>,
    /// A colour (`#rgb` or `#rrggbb`) the option may be shown in.
    pub color: Option<String>,
    /// Whether the client wrote it as an object.
    pub as_object: bool,
}

impl SelectOption {
    /// A choice written as a bare string.
    pub fn plain(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            label: None,
            description: None,
            color: None,
            as_object: false,
        }
    }

    /// What reviewers read: the label, else the value.
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }

    fn to_value(&self) -> Value {
        if !self.as_object {
            return Value::String(self.value.clone());
        }
        let mut map = Map::new();
        map.insert("value".into(), Value::String(self.value.clone()));
        for (key, text) in [
            ("label", &self.label),
            ("description", &self.description),
            ("color", &self.color),
        ] {
            if let Some(text) = text {
                map.insert(key.into(), Value::String(text.clone()));
            }
        }
        Value::Object(map)
    }
}

/// The bounds of an answer, validated for its response type.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseConfig {
    /// Free text of `min_length` to `max_length` characters.
    Text {
        /// The fewest characters an answer may have (default 0: not empty).
        min_length: usize,
        /// The most characters an answer may have (1 to 5000).
        max_length: usize,
    },
    /// Exactly one of `options`.
    SingleSelect {
        /// The choices, non-empty, with unique values.
        options: Vec<SelectOption>,
    },
    /// Between `min_selections` and `max_selections` of `options`, without
    /// repeats.
    MultiSelect {
        /// The choices, non-empty, with unique values.
        options: Vec<SelectOption>,
        /// The fewest choices an answer may make (default 1).
        min_selections: usize,
        /// The most choices an answer may make (default: all).
        max_selections: Option<usize>,
    },
    /// A number from `scale_min` to `scale_max`, in steps of `scale_step`
    /// counted from `scale_min`.
    Rating {
        /// Lowest value; defaults to 1.
        scale_min: i64,
        /// Highest value; defaults to 5.
        scale_max: i64,
        /// The step between allowed values; defaults to 1.
        scale_step: f64,
    },
    /// Any finite number within the optional bounds.
    Number {
        /// Lowest allowed value (`min`, or HITL.sh's `min_value`).
        min: Option<f64>,
        /// Highest allowed value (`max`, or HITL.sh's `max_value`).
        max: Option<f64>,
        /// The most digits after the decimal point.
        decimal_places: Option<u32>,
    },
    /// `true` or `false`.
    Boolean,
}

impl ResponseConfig {
    /// The names of the settings this type reads. (A template's form field
    /// takes these only; the words shown around a request's widget,
    /// [`ReviewerHints`], are not shown on forms.)
    pub(crate) fn setting_names(response_type: ResponseType) -> &'static [&'static str] {
        match response_type {
            ResponseType::Text => &["min_length", "max_length"],
            ResponseType::SingleSelect => &["options"],
            ResponseType::MultiSelect => &["options", "min_selections", "max_selections"],
            ResponseType::Rating => &["scale_min", "scale_max", "scale_step"],
            ResponseType::Number => &[
                "min",
                "max",
                "min_value",
                "max_value",
                "decimal_places",
                "allow_negative",
            ],
            ResponseType::Boolean => &[],
        }
    }

    /// The bounds a requester's `default_response` is held to: those of an
    /// answer without the minimums (`min_length`, `min_selections`), which
    /// ask effort of reviewers, not of the fallback an automation names
    /// (HITL.sh's own scripts send a 19-character default where answers
    /// need 20, and `[]` as a multi-select default).
    pub(crate) fn for_default(&self) -> Self {
        match self {
            Self::Text { max_length, .. } => Self::Text {
                min_length: 0,
                max_length: *max_length,
            },
            Self::MultiSelect {
                options,
                max_selections,
                ..
            } => Self::MultiSelect {
                options: options.clone(),
                min_selections: 0,
                max_selections: *max_selections,
            },
            other => other.clone(),
        }
    }

    /// The response type these settings are for.
    pub fn response_type(&self) -> ResponseType {
        match self {
            Self::Text { .. } => ResponseType::Text,
            Self::SingleSelect { .. } => ResponseType::SingleSelect,
            Self::MultiSelect { .. } => ResponseType::MultiSelect,
            Self::Rating { .. } => ResponseType::Rating,
            Self::Number { .. } => ResponseType::Number,
            Self::Boolean => ResponseType::Boolean,
        }
    }
}

/// A request's answer bounds, parsed at most once: the object as stored
/// and shown (the client's own keys, such as reviewer hints, kept; every
/// default filled in), and the typed configuration answers are checked
/// against, made from it. A configuration read back from a store is parsed
/// the first time an answer is checked against it, not on every read: most
/// reads only show it.
#[derive(Debug, Clone)]
pub struct RequestConfig {
    response_type: ResponseType,
    shown: Value,
    /// What parsing `shown` gives. A stored object that no longer parses
    /// (bounds tightened since it was written) keeps its error, so the
    /// request can still be read and shown; only answering it fails.
    typed: OnceLock<Result<ResponseConfig, ValidationError>>,
}

impl PartialEq for RequestConfig {
    /// The typed bounds follow from the rest, parsed yet or not.
    fn eq(&self, other: &Self) -> bool {
        self.response_type == other.response_type && self.shown == other.shown
    }
}

impl RequestConfig {
    /// Validates what a client sent for `response_type` (see
    /// [`ResponseConfig::parse`]).
    pub fn parse(
        response_type: ResponseType,
        raw: Option<&Value>,
    ) -> Result<Self, ValidationError> {
        let typed = ResponseConfig::parse(response_type, raw)?;
        Ok(Self {
            response_type,
            shown: typed.to_value(raw),
            typed: OnceLock::from(Ok(typed)),
        })
    }

    /// The configuration a store gives back, as it was written.
    pub fn restore(response_type: ResponseType, stored: Value) -> Self {
        Self {
            response_type,
            shown: stored,
            typed: OnceLock::new(),
        }
    }

    /// The typed bounds.
    pub fn typed(&self) -> Result<&ResponseConfig, ValidationError> {
        self.typed
            .get_or_init(|| ResponseConfig::parse(self.response_type, Some(&self.shown)))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The object as stored and shown.
    pub fn as_value(&self) -> &Value {
        &self.shown
    }
}

#[cfg(test)]
mod tests;
