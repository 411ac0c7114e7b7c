//! Response types, their configurations and the validation of answers.
//!
//! A request says what kind of answer it wants (`response_type`) and how
//! that answer is bounded (`response_config`). The same rules check a
//! reviewer's answer and the `default_response` used on timeout.

use serde_json::{Map, Value};

use crate::error::ValidationError;
use crate::text::{char_len, check_line};

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

/// Reads the settings of one response type out of an object, naming every
/// mistake by its path under `prefix` (`response_config` for a request,
/// `fields[2]` for a template's field).
struct Settings<'a> {
    prefix: &'a str,
    map: &'a Map<String, Value>,
}

const OPTION_FORMS: &str =
    "must be strings, or objects with a text `value` (and optionally `label`, `description`, `color`)";

impl Settings<'_> {
    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.prefix)
    }

    fn error(&self, key: &str, message: impl std::fmt::Display) -> ValidationError {
        let path = self.path(key);
        ValidationError::field(path.clone(), format!("{path} {message}"))
    }

    /// One option's optional text under `key`, at most `limit` characters.
    fn option_text(
        &self,
        option: &Map<String, Value>,
        key: &str,
        limit: usize,
    ) -> Result<Option<String>, ValidationError> {
        match option.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text))
                if !text.trim().is_empty() && char_len(text.trim()) <= limit =>
            {
                Ok(Some(text.trim().to_owned()))
            }
            Some(_) => Err(self.error(
                "options",
                format!("`{key}` must be a text of 1 to {limit} characters"),
            )),
        }
    }

    fn option(&self, raw: &Value) -> Result<SelectOption, ValidationError> {
        let (value, object) = match raw {
            Value::String(text) => (text.trim(), None),
            Value::Object(map) => match map.get("value") {
                Some(Value::String(text)) => (text.trim(), Some(map)),
                _ => return Err(self.error("options", OPTION_FORMS)),
            },
            _ => return Err(self.error("options", OPTION_FORMS)),
        };
        if value.is_empty() || char_len(value) > MAX_OPTION_LEN {
            return Err(self.error(
                "options",
                format!("values must be 1 to {MAX_OPTION_LEN} characters"),
            ));
        }
        check_line(&self.path("options"), value)?;
        let Some(object) = object else {
            return Ok(SelectOption::plain(value));
        };
        let label = self.option_text(object, "label", MAX_OPTION_LEN)?;
        if let Some(label) = &label {
            check_line(&self.path("options"), label)?;
        }
        let description = self.option_text(object, "description", MAX_OPTION_DESCRIPTION)?;
        let color = self.option_text(object, "color", 7)?;
        if let Some(color) = &color {
            if !is_hex_color(color) {
                return Err(self.error(
                    "options",
                    format!("`color` must be #rgb or #rrggbb; '{color}' is not"),
                ));
            }
        }
        Ok(SelectOption {
            value: value.to_owned(),
            label,
            description,
            color,
            as_object: true,
        })
    }

    fn options(&self) -> Result<Vec<SelectOption>, ValidationError> {
        let options = self
            .map
            .get("options")
            .and_then(Value::as_array)
            .ok_or_else(|| self.error("options", "must be a non-empty array of options"))?;
        if options.is_empty() || options.len() > MAX_OPTIONS {
            return Err(self.error("options", format!("must have 1 to {MAX_OPTIONS} entries")));
        }
        let mut parsed: Vec<SelectOption> = Vec::with_capacity(options.len());
        for raw in options {
            let option = self.option(raw)?;
            if parsed.iter().any(|p| p.value == option.value) {
                return Err(self.error(
                    "options",
                    format!("must be unique; '{}' appears twice", option.value),
                ));
            }
            parsed.push(option);
        }
        Ok(parsed)
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, ValidationError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.error(key, "must be true or false")),
        }
    }

    /// A one-line text shown to reviewers, 1 to `limit` characters.
    fn hint(&self, key: &str, limit: usize) -> Result<(), ValidationError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(text)) if !text.trim().is_empty() && char_len(text) <= limit => {
                check_line(&self.path(key), text)
            }
            Some(_) => Err(self.error(key, format!("must be a text of 1 to {limit} characters"))),
        }
    }

    /// HITL.sh's rating `labels`, `{"1": "Poor", "5": "Excellent"}`: each a
    /// text of 1 to 100 characters. Other forms are kept and not shown.
    fn rating_labels(&self) -> Result<(), ValidationError> {
        let Some(Value::Object(labels)) = self.map.get("labels") else {
            return Ok(());
        };
        for (point, label) in labels {
            match label {
                Value::String(text) if !text.trim().is_empty() && char_len(text) <= MAX_HINT => {
                    check_line(&self.path("labels"), text)?
                }
                _ => {
                    return Err(self.error(
                        "labels",
                        format!("'{point}' must be a text of 1 to {MAX_HINT} characters"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// A colour shown to reviewers: `#rgb` or `#rrggbb`.
    fn color(&self, key: &str) -> Result<(), ValidationError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(color)) if is_hex_color(color) => Ok(()),
            Some(_) => Err(self.error(key, "must be #rgb or #rrggbb")),
        }
    }

    /// Checks the texts a reviewer is shown for `response_type` (HITL.sh's
    /// `prefix`, `suffix`, `placeholder`, `true_label`, ...); they are kept
    /// as given and read back by [`ReviewerHints::of`].
    fn hints(&self, response_type: ResponseType) -> Result<(), ValidationError> {
        match response_type {
            ResponseType::Number => {
                self.hint("prefix", MAX_AFFIX)?;
                self.hint("suffix", MAX_AFFIX)?;
                self.hint("placeholder", MAX_HINT)
            }
            ResponseType::Text => self.hint("placeholder", MAX_HINT),
            ResponseType::Rating => self.rating_labels(),
            ResponseType::Boolean => {
                self.hint("true_label", MAX_HINT)?;
                self.hint("false_label", MAX_HINT)?;
                self.color("true_color")?;
                self.color("false_color")
            }
            _ => Ok(()),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, ValidationError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_f64()
                .filter(|n| n.is_finite())
                .map(Some)
                .ok_or_else(|| self.error(key, "must be a number")),
        }
    }

    /// `ours` or HITL.sh's name for the same bound; both only if they agree.
    fn either_number(&self, ours: &str, theirs: &str) -> Result<Option<f64>, ValidationError> {
        match (self.number(ours)?, self.number(theirs)?) {
            (Some(a), Some(b)) if a != b => Err(self.error(
                theirs,
                format!("disagrees with {}: send one of them", self.path(ours)),
            )),
            (a, b) => Ok(a.or(b)),
        }
    }

    fn whole(&self, key: &str) -> Result<Option<i64>, ValidationError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_i64()
                .or_else(|| {
                    value
                        .as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                        .map(|f| f as i64)
                })
                .map(Some)
                .ok_or_else(|| self.error(key, "must be a whole number")),
        }
    }

    /// A whole number under `key` from `low` to `high`, else `default`.
    fn whole_in(
        &self,
        key: &str,
        low: i64,
        high: i64,
        default: Option<i64>,
    ) -> Result<Option<i64>, ValidationError> {
        match self.whole(key)?.or(default) {
            Some(n) if !(low..=high).contains(&n) => {
                Err(self.error(key, format!("must be from {low} to {high}")))
            }
            n => Ok(n),
        }
    }
}

fn is_hex_color(color: &str) -> bool {
    let hex = color.strip_prefix('#').unwrap_or_default();
    matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit())
}

/// The most characters of a number's `prefix` or `suffix`.
pub const MAX_AFFIX: usize = 20;
/// The most characters of a placeholder or a boolean's label.
pub const MAX_HINT: usize = 100;

/// What a reviewer is shown around the answer widget, from the request's
/// own `response_config`: a number's `prefix` and `suffix` (`$`, ` USD`),
/// a placeholder, a boolean's labels and colours. None of it changes what
/// an answer may be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewerHints {
    /// Shown before a number (`$`).
    pub prefix: Option<String>,
    /// Shown after a number (` USD`).
    pub suffix: Option<String>,
    /// Shown in an empty text or number box.
    pub placeholder: Option<String>,
    /// The word for `true` (default: Approve).
    pub true_label: Option<String>,
    /// The word for `false` (default: Reject).
    pub false_label: Option<String>,
    /// The colour of the `true` button.
    pub true_color: Option<String>,
    /// The colour of the `false` button.
    pub false_color: Option<String>,
    /// Words for points of a rating scale, by the point as written (`"5"`).
    pub rating_labels: Vec<(String, String)>,
}

impl ReviewerHints {
    /// The hints of a stored `response_config` (checked when the request
    /// was made; anything else there is ignored).
    pub fn of(config: &Value) -> Self {
        let text = |key: &str| {
            config
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let color = |key: &str| text(key).filter(|c| is_hex_color(c));
        // Spaces are part of an affix: `$` then 5, 5 then ` USD`.
        let affix = |key: &str| {
            config
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned)
        };
        Self {
            prefix: affix("prefix"),
            suffix: affix("suffix"),
            placeholder: text("placeholder"),
            true_label: text("true_label"),
            false_label: text("false_label"),
            true_color: color("true_color"),
            false_color: color("false_color"),
            rating_labels: config
                .get("labels")
                .and_then(Value::as_object)
                .map(|labels| {
                    labels
                        .iter()
                        .filter_map(|(point, label)| {
                            Some((point.clone(), label.as_str()?.trim().to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The word for a point of a rating scale, if the request gave one.
    pub fn rating_label(&self, point: &str) -> Option<&str> {
        self.rating_labels
            .iter()
            .find(|(p, _)| p == point)
            .map(|(_, label)| label.as_str())
    }
}

/// A number as JSON: whole numbers without a fraction (`1`, not `1.0`).
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// True when `value` is `from` plus a whole number of `step`s.
fn on_step(value: f64, from: f64, step: f64) -> bool {
    let steps = (value - from) / step;
    (steps - steps.round()).abs() < 1e-9
}

/// Values shown in a message: at most ten, then "…".
fn listed(options: &[SelectOption]) -> String {
    let mut shown: Vec<&str> = options.iter().take(10).map(|o| o.value.as_str()).collect();
    if options.len() > 10 {
        shown.push("…");
    }
    shown.join(", ")
}

impl ResponseConfig {
    /// Validates the configuration a client sent for `response_type`.
    /// An absent configuration is allowed where every key has a default.
    pub fn parse(
        response_type: ResponseType,
        raw: Option<&Value>,
    ) -> Result<Self, ValidationError> {
        let empty = Map::new();
        let map = match raw {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(ValidationError::field(
                    "response_config",
                    "response_config must be an object",
                ))
            }
        };
        Self::parse_settings("response_config", response_type, map)
    }

    /// The settings of `response_type` read from `map`, where other keys
    /// may stand too; mistakes are named by their path under `prefix`.
    pub fn parse_settings(
        prefix: &str,
        response_type: ResponseType,
        map: &Map<String, Value>,
    ) -> Result<Self, ValidationError> {
        let settings = Settings { prefix, map };
        settings.hints(response_type)?;
        match response_type {
            ResponseType::Text => {
                let max_length = settings
                    .whole_in(
                        "max_length",
                        1,
                        MAX_TEXT_ANSWER as i64,
                        Some(MAX_TEXT_ANSWER as i64),
                    )?
                    .unwrap_or(MAX_TEXT_ANSWER as i64);
                let min_length = settings
                    .whole_in("min_length", 0, max_length, Some(0))?
                    .unwrap_or(0);
                Ok(Self::Text {
                    min_length: min_length as usize,
                    max_length: max_length as usize,
                })
            }
            ResponseType::SingleSelect => Ok(Self::SingleSelect {
                options: settings.options()?,
            }),
            ResponseType::MultiSelect => {
                let options = settings.options()?;
                let count = options.len() as i64;
                let min_selections = settings
                    .whole_in("min_selections", 0, count, Some(1))?
                    .unwrap_or(1);
                let max_selections =
                    settings.whole_in("max_selections", min_selections.max(1), count, None)?;
                Ok(Self::MultiSelect {
                    options,
                    min_selections: min_selections as usize,
                    max_selections: max_selections.map(|n| n as usize),
                })
            }
            ResponseType::Rating => {
                let scale_min = settings.whole("scale_min")?.unwrap_or(1);
                let scale_max = settings.whole("scale_max")?.unwrap_or(5);
                for (key, end) in [("scale_min", scale_min), ("scale_max", scale_max)] {
                    if end.unsigned_abs() > MAX_SCALE.unsigned_abs() {
                        return Err(settings
                            .error(key, format!("must be from -{MAX_SCALE} to {MAX_SCALE}")));
                    }
                }
                if scale_min >= scale_max {
                    return Err(settings.error(
                        "scale_max",
                        format!("must be greater than {}", settings.path("scale_min")),
                    ));
                }
                let scale_step = settings.number("scale_step")?.unwrap_or(1.0);
                let span = (scale_max - scale_min) as f64;
                // Finer steps than a thousandth are not a scale, and would
                // make the step arithmetic meaningless.
                if !(MIN_SCALE_STEP..=span).contains(&scale_step) {
                    return Err(settings.error(
                        "scale_step",
                        format!("must be from {MIN_SCALE_STEP} to {span}"),
                    ));
                }
                Ok(Self::Rating {
                    scale_min,
                    scale_max,
                    scale_step,
                })
            }
            ResponseType::Number => {
                let mut min = settings.either_number("min", "min_value")?;
                let max = settings.either_number("max", "max_value")?;
                // HITL.sh's `allow_negative: false` is a lower bound of 0.
                // Left out, negatives stay allowed, as they always were here.
                if settings.flag("allow_negative")? == Some(false) {
                    if max.is_some_and(|m| m < 0.0) {
                        return Err(settings.error(
                            "allow_negative",
                            "is false, but the highest allowed value is negative",
                        ));
                    }
                    if min.is_some_and(|m| m < 0.0) {
                        return Err(settings.error(
                            "allow_negative",
                            "is false, but the lowest allowed value is negative",
                        ));
                    }
                    min = Some(min.unwrap_or(0.0));
                }
                if let (Some(min), Some(max)) = (min, max) {
                    if min > max {
                        return Err(settings.error(
                            "max",
                            format!("must not be less than {}", settings.path("min")),
                        ));
                    }
                }
                let decimal_places = settings
                    .whole_in("decimal_places", 0, MAX_DECIMAL_PLACES, None)?
                    .map(|n| n as u32);
                Ok(Self::Number {
                    min,
                    max,
                    decimal_places,
                })
            }
            ResponseType::Boolean => Ok(Self::Boolean),
        }
    }

    /// The names of the settings this type reads. (A template's form field
    /// takes these only; the words shown around a request's widget,
    /// [`ReviewerHints`], are not shown on forms.)
    pub fn setting_names(response_type: ResponseType) -> &'static [&'static str] {
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
    pub fn for_default(&self) -> Self {
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

    /// The configuration as stored and shown: the client's own keys are kept
    /// (they may carry hints for reviewers) and the effective values of the
    /// keys this type knows are written over them, defaults included.
    pub fn to_value(&self, raw: Option<&Value>) -> Value {
        let mut map = match raw {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        self.write_settings(&mut map);
        Value::Object(map)
    }

    /// Writes the effective value of every setting into `map`.
    pub fn write_settings(&self, map: &mut Map<String, Value>) {
        let options_value = |options: &[SelectOption]| {
            Value::Array(options.iter().map(SelectOption::to_value).collect())
        };
        match self {
            Self::Text {
                min_length,
                max_length,
            } => {
                if *min_length > 0 || map.contains_key("min_length") {
                    map.insert("min_length".into(), Value::from(*min_length));
                }
                map.insert("max_length".into(), Value::from(*max_length));
            }
            Self::SingleSelect { options } => {
                map.insert("options".into(), options_value(options));
            }
            Self::MultiSelect {
                options,
                min_selections,
                max_selections,
            } => {
                map.insert("options".into(), options_value(options));
                if *min_selections != 1 || map.contains_key("min_selections") {
                    map.insert("min_selections".into(), Value::from(*min_selections));
                }
                if let Some(max) = max_selections {
                    map.insert("max_selections".into(), Value::from(*max));
                }
            }
            Self::Rating {
                scale_min,
                scale_max,
                scale_step,
            } => {
                map.insert("scale_min".into(), Value::from(*scale_min));
                map.insert("scale_max".into(), Value::from(*scale_max));
                if *scale_step != 1.0 || map.contains_key("scale_step") {
                    map.insert("scale_step".into(), number_value(*scale_step));
                }
            }
            Self::Number {
                min,
                max,
                decimal_places,
            } => {
                for (key, bound) in [("min", min), ("max", max)] {
                    if let Some(bound) = bound {
                        map.insert(key.into(), Value::from(*bound));
                    }
                }
                if let Some(places) = decimal_places {
                    map.insert("decimal_places".into(), Value::from(*places));
                }
            }
            Self::Boolean => {}
        }
    }

    /// Checks an answer (`field` names it in messages: `response_data` or
    /// `default_response`).
    pub fn validate_answer(&self, field: &str, answer: &Value) -> Result<(), ValidationError> {
        let fail = |message: String| Err(ValidationError::field(field, message));
        match self {
            Self::Text {
                min_length,
                max_length,
            } => match answer.as_str() {
                Some(text) if text.trim().is_empty() => fail(format!("{field} must not be empty")),
                Some(text) if char_len(text) > *max_length => {
                    fail(format!("{field} must be at most {max_length} characters"))
                }
                Some(text) if char_len(text.trim()) < *min_length => {
                    fail(format!("{field} must be at least {min_length} characters"))
                }
                Some(_) => Ok(()),
                None => fail(format!("{field} must be a string")),
            },
            Self::SingleSelect { options } => match answer.as_str() {
                Some(choice) if options.iter().any(|o| o.value == choice) => Ok(()),
                Some(choice) => fail(format!(
                    "{field} '{choice}' is not one of the options: {}",
                    listed(options)
                )),
                None => fail(format!(
                    "{field} must be one of the options' values as a string"
                )),
            },
            Self::MultiSelect {
                options,
                min_selections,
                max_selections,
            } => {
                let Some(choices) = answer.as_array() else {
                    return fail(format!("{field} must be an array of options"));
                };
                let mut seen: Vec<&str> = Vec::with_capacity(choices.len());
                for choice in choices {
                    let Some(choice) = choice.as_str() else {
                        return fail(format!("{field} must be an array of options"));
                    };
                    if !options.iter().any(|o| o.value == choice) {
                        return fail(format!(
                            "{field} '{choice}' is not one of the options: {}",
                            listed(options)
                        ));
                    }
                    if seen.contains(&choice) {
                        return fail(format!("{field} selects '{choice}' more than once"));
                    }
                    seen.push(choice);
                }
                if choices.len() < *min_selections {
                    return fail(match min_selections {
                        1 => format!("{field} must select at least one option"),
                        n => format!("{field} must select at least {n} options"),
                    });
                }
                if let Some(max) = max_selections.filter(|max| choices.len() > *max) {
                    return fail(match max {
                        1 => format!("{field} must select at most one option"),
                        n => format!("{field} must select at most {n} options"),
                    });
                }
                Ok(())
            }
            Self::Rating {
                scale_min,
                scale_max,
                scale_step,
            } => {
                let Some(value) = answer.as_f64() else {
                    return fail(format!("{field} must be a number"));
                };
                let (low, high) = (*scale_min as f64, *scale_max as f64);
                if value < low || value > high || !on_step(value, low, *scale_step) {
                    return fail(if *scale_step == 1.0 {
                        format!("{field} must be a whole number from {scale_min} to {scale_max}")
                    } else {
                        format!(
                            "{field} must be from {scale_min} to {scale_max} in steps of {scale_step}"
                        )
                    });
                }
                Ok(())
            }
            Self::Number {
                min,
                max,
                decimal_places,
            } => {
                let Some(value) = answer.as_f64().filter(|v| v.is_finite()) else {
                    return fail(format!("{field} must be a number"));
                };
                if min.is_some_and(|min| value < min) || max.is_some_and(|max| value > max) {
                    let range = match (min, max) {
                        (Some(min), Some(max)) => format!("from {min} to {max}"),
                        (Some(min), None) => format!("at least {min}"),
                        (None, Some(max)) => format!("at most {max}"),
                        (None, None) => String::new(),
                    };
                    return fail(format!("{field} must be {range}"));
                }
                if let Some(places) = decimal_places {
                    // Rounding to the allowed places must give the same
                    // number back (a tolerance would grow with the value).
                    let unit = 10f64.powi(*places as i32);
                    if (value * unit).round() / unit != value {
                        return fail(match places {
                            0 => format!("{field} must be a whole number"),
                            n => format!("{field} must have at most {n} decimal places"),
                        });
                    }
                }
                Ok(())
            }
            Self::Boolean => match answer {
                Value::Bool(_) => Ok(()),
                _ => fail(format!("{field} must be true or false")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(t: ResponseType, raw: Value) -> Result<ResponseConfig, ValidationError> {
        ResponseConfig::parse(t, Some(&raw))
    }

    fn msg(r: Result<impl std::fmt::Debug, ValidationError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn response_type_names() {
        for t in ResponseType::ALL {
            assert_eq!(ResponseType::parse(t.as_str()).unwrap(), t);
        }
        assert!(msg(ResponseType::parse("essay")).starts_with("response_type must be one of"));
    }

    #[test]
    fn selects_need_unique_non_empty_options() {
        for t in [ResponseType::SingleSelect, ResponseType::MultiSelect] {
            assert!(ResponseConfig::parse(t, None).is_err());
            assert!(parse(t, json!({"options": []})).is_err());
            assert!(parse(t, json!({"options": "a,b"})).is_err());
            assert!(parse(t, json!({"options": ["a", 3]})).is_err());
            assert!(parse(t, json!({"options": ["a", " "]})).is_err());
            assert_eq!(
                msg(parse(t, json!({"options": ["a", "b", "a"]}))),
                "response_config.options must be unique; 'a' appears twice"
            );
            assert!(parse(t, json!({"options": vec!["x"; 101]})).is_err());
            assert!(parse(t, json!({"options": ["a", "b"]})).is_ok());
        }
    }

    #[test]
    fn rating_defaults_to_one_to_five_and_needs_min_below_max() {
        assert_eq!(
            ResponseConfig::parse(ResponseType::Rating, None).unwrap(),
            ResponseConfig::Rating {
                scale_min: 1,
                scale_max: 5,
                scale_step: 1.0
            }
        );
        assert_eq!(
            parse(ResponseType::Rating, json!({"scale_max": 10})).unwrap(),
            ResponseConfig::Rating {
                scale_min: 1,
                scale_max: 10,
                scale_step: 1.0
            }
        );
        assert!(parse(
            ResponseType::Rating,
            json!({"scale_min": 5, "scale_max": 5})
        )
        .is_err());
        assert!(parse(ResponseType::Rating, json!({"scale_max": 2.5})).is_err());
        assert!(parse(ResponseType::Rating, json!({"scale_max": "10"})).is_err());
        assert_eq!(
            msg(parse(
                ResponseType::Rating,
                json!({"scale_min": i64::MIN, "scale_max": i64::MAX})
            )),
            "response_config.scale_min must be from -1000000 to 1000000"
        );
        assert!(parse(
            ResponseType::Rating,
            json!({"scale_min": -1_000_000, "scale_max": 1_000_000})
        )
        .is_ok());
    }

    #[test]
    fn number_bounds_are_optional_but_ordered() {
        assert_eq!(
            ResponseConfig::parse(ResponseType::Number, None).unwrap(),
            ResponseConfig::Number {
                min: None,
                max: None,
                decimal_places: None
            }
        );
        assert!(parse(ResponseType::Number, json!({"min": 3, "max": 1})).is_err());
        assert!(parse(ResponseType::Number, json!({"min": "a"})).is_err());
    }

    #[test]
    fn text_max_length_is_bounded() {
        assert_eq!(
            ResponseConfig::parse(ResponseType::Text, None).unwrap(),
            ResponseConfig::Text {
                min_length: 0,
                max_length: 5000
            }
        );
        assert!(parse(ResponseType::Text, json!({"max_length": 0})).is_err());
        assert!(parse(ResponseType::Text, json!({"max_length": 5001})).is_err());
    }

    #[test]
    fn config_must_be_an_object() {
        assert_eq!(
            msg(parse(ResponseType::Boolean, json!([1]))),
            "response_config must be an object"
        );
    }

    #[test]
    fn to_value_keeps_client_keys_and_adds_defaults() {
        let raw = json!({"scale_max": 10, "labels": ["bad", "good"]});
        let config = parse(ResponseType::Rating, raw.clone()).unwrap();
        assert_eq!(
            config.to_value(Some(&raw)),
            json!({"scale_min": 1, "scale_max": 10, "labels": ["bad", "good"]})
        );
    }

    #[test]
    fn text_answers() {
        let c = ResponseConfig::Text {
            min_length: 0,
            max_length: 5,
        };
        assert!(c.validate_answer("r", &json!("hello")).is_ok());
        assert_eq!(
            msg(c.validate_answer("r", &json!("  "))),
            "r must not be empty"
        );
        assert_eq!(
            msg(c.validate_answer("r", &json!("hello!"))),
            "r must be at most 5 characters"
        );
        assert_eq!(msg(c.validate_answer("r", &json!(5))), "r must be a string");
    }

    #[test]
    fn single_select_answers() {
        let c = parse(
            ResponseType::SingleSelect,
            json!({"options": ["yes", "no"]}),
        )
        .unwrap();
        assert!(c.validate_answer("r", &json!("no")).is_ok());
        assert_eq!(
            msg(c.validate_answer("r", &json!("maybe"))),
            "r 'maybe' is not one of the options: yes, no"
        );
        assert!(c.validate_answer("r", &json!(["yes"])).is_err());
    }

    #[test]
    fn multi_select_answers() {
        let c = parse(
            ResponseType::MultiSelect,
            json!({"options": ["a", "b", "c"]}),
        )
        .unwrap();
        assert!(c.validate_answer("r", &json!(["a", "c"])).is_ok());
        assert_eq!(
            msg(c.validate_answer("r", &json!([]))),
            "r must select at least one option"
        );
        assert_eq!(
            msg(c.validate_answer("r", &json!(["a", "a"]))),
            "r selects 'a' more than once"
        );
        assert!(c.validate_answer("r", &json!(["d"])).is_err());
        assert!(c.validate_answer("r", &json!("a")).is_err());
        assert!(c.validate_answer("r", &json!([1])).is_err());
    }

    #[test]
    fn rating_answers_are_whole_steps_within_scale() {
        let c = ResponseConfig::Rating {
            scale_min: 1,
            scale_max: 5,
            scale_step: 1.0,
        };
        assert!(c.validate_answer("r", &json!(1)).is_ok());
        assert!(c.validate_answer("r", &json!(5.0)).is_ok());
        for bad in [json!(0), json!(6), json!(2.5), json!("3"), json!(null)] {
            assert!(c.validate_answer("r", &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn allow_negative_false_is_a_lower_bound_of_zero() {
        let config = parse(
            ResponseType::Number,
            json!({"min_value": 1, "max_value": 1000, "allow_negative": false, "decimal_places": 2}),
        )
        .unwrap();
        assert!(config.validate_answer("r", &json!(105.5)).is_ok());
        let open = parse(ResponseType::Number, json!({"allow_negative": false})).unwrap();
        assert_eq!(
            msg(open.validate_answer("default_response", &json!(-3))),
            "default_response must be at least 0"
        );
        assert!(open.validate_answer("r", &json!(0)).is_ok());
        // Said true, or not said, negatives stay allowed.
        for raw in [json!({"allow_negative": true}), json!({})] {
            let config = parse(ResponseType::Number, raw).unwrap();
            assert!(config.validate_answer("r", &json!(-3)).is_ok());
        }
        assert_eq!(
            msg(parse(
                ResponseType::Number,
                json!({"min": -5, "allow_negative": false})
            )),
            "response_config.allow_negative is false, but the lowest allowed value is negative"
        );
        assert_eq!(
            msg(parse(
                ResponseType::Number,
                json!({"max_value": -1, "allow_negative": false})
            )),
            "response_config.allow_negative is false, but the highest allowed value is negative"
        );
        assert_eq!(
            msg(parse(ResponseType::Number, json!({"allow_negative": "no"}))),
            "response_config.allow_negative must be true or false"
        );
    }

    #[test]
    fn a_default_is_held_to_the_maximums_but_not_the_minimums() {
        let text = parse(
            ResponseType::Text,
            json!({"min_length": 20, "max_length": 30}),
        )
        .unwrap();
        let short = json!("No summary provided");
        assert!(text.validate_answer("response_data", &short).is_err());
        assert!(text
            .for_default()
            .validate_answer("default_response", &short)
            .is_ok());
        assert!(text
            .for_default()
            .validate_answer("default_response", &json!("x".repeat(31)))
            .is_err());
        let multi = parse(
            ResponseType::MultiSelect,
            json!({"options": ["a", "b", "c"], "min_selections": 2, "max_selections": 2}),
        )
        .unwrap();
        assert!(multi.validate_answer("response_data", &json!([])).is_err());
        assert!(multi
            .for_default()
            .validate_answer("default_response", &json!([]))
            .is_ok());
        assert!(multi
            .for_default()
            .validate_answer("default_response", &json!(["a", "b", "c"]))
            .is_err());
        assert!(multi
            .for_default()
            .validate_answer("default_response", &json!(["z"]))
            .is_err());
    }

    #[test]
    fn reviewer_hints_are_checked_and_read_back() {
        let raw = json!({"max_value": 500, "prefix": "$", "suffix": " USD", "placeholder": "0.00"});
        parse(ResponseType::Number, raw.clone()).unwrap();
        let hints = ReviewerHints::of(&raw);
        assert_eq!(hints.prefix.as_deref(), Some("$"));
        assert_eq!(hints.suffix.as_deref(), Some(" USD"));
        assert_eq!(hints.placeholder.as_deref(), Some("0.00"));
        let yes_no =
            json!({"true_label": "Ship it", "false_label": "Hold", "true_color": "#16a34a"});
        parse(ResponseType::Boolean, yes_no.clone()).unwrap();
        let hints = ReviewerHints::of(&yes_no);
        assert_eq!(hints.true_label.as_deref(), Some("Ship it"));
        assert_eq!(hints.false_color, None);
        let scale = json!({"scale_max": 5, "labels": {"1": "Poor", "5": "Excellent"}});
        parse(ResponseType::Rating, scale.clone()).unwrap();
        assert_eq!(
            ReviewerHints::of(&scale).rating_label("5"),
            Some("Excellent")
        );
        assert_eq!(ReviewerHints::of(&scale).rating_label("3"), None);
        for (t, bad, message) in [
            (
                ResponseType::Number,
                json!({"prefix": 5}),
                "response_config.prefix must be a text of 1 to 20 characters",
            ),
            (
                ResponseType::Number,
                json!({"suffix": "x".repeat(21)}),
                "response_config.suffix must be a text of 1 to 20 characters",
            ),
            (
                ResponseType::Boolean,
                json!({"true_label": ""}),
                "response_config.true_label must be a text of 1 to 100 characters",
            ),
            (
                ResponseType::Boolean,
                json!({"false_color": "red"}),
                "response_config.false_color must be #rgb or #rrggbb",
            ),
            (
                ResponseType::Text,
                json!({"placeholder": ["a"]}),
                "response_config.placeholder must be a text of 1 to 100 characters",
            ),
        ] {
            assert_eq!(msg(parse(t, bad)), message);
        }
    }

    #[test]
    fn number_answers_respect_bounds() {
        let c = ResponseConfig::Number {
            min: Some(0.0),
            max: Some(1.5),
            decimal_places: None,
        };
        assert!(c.validate_answer("r", &json!(1.5)).is_ok());
        assert_eq!(
            msg(c.validate_answer("r", &json!(2))),
            "r must be from 0 to 1.5"
        );
        assert!(c.validate_answer("r", &json!(-0.1)).is_err());
        assert!(c.validate_answer("r", &json!("1")).is_err());
        let open = ResponseConfig::Number {
            min: None,
            max: None,
            decimal_places: None,
        };
        assert!(open.validate_answer("r", &json!(-1e300)).is_ok());
    }

    #[test]
    fn boolean_answers() {
        assert!(ResponseConfig::Boolean
            .validate_answer("r", &json!(false))
            .is_ok());
        assert_eq!(
            msg(ResponseConfig::Boolean.validate_answer("r", &json!("true"))),
            "r must be true or false"
        );
    }

    #[test]
    fn options_may_be_objects_and_come_back_as_written() {
        let raw = json!({"options": [
            "plain",
            {"value": "approve", "label": "✅ Approve", "description": "Fits the guidelines", "color": "#16a34a"},
            {"value": "reject"}
        ]});
        let c = parse(ResponseType::SingleSelect, raw.clone()).unwrap();
        let ResponseConfig::SingleSelect { options } = &c else {
            panic!("{c:?}")
        };
        assert_eq!(
            options.iter().map(SelectOption::label).collect::<Vec<_>>(),
            ["plain", "✅ Approve", "reject"]
        );
        assert_eq!(c.to_value(Some(&raw)), raw, "answered as given");
        assert!(c.validate_answer("r", &json!("approve")).is_ok());
        assert_eq!(
            msg(c.validate_answer("r", &json!("✅ Approve"))),
            "r '✅ Approve' is not one of the options: plain, approve, reject",
            "an answer holds the value, not the label"
        );
        for (bad, says) in [
            (
                json!({"options": [{"label": "No value"}]}),
                "must be strings, or objects with a text `value`",
            ),
            (json!({"options": [7]}), "must be strings, or objects"),
            (
                json!({"options": [{"value": "a", "color": "green"}]}),
                "`color` must be #rgb or #rrggbb",
            ),
            (
                json!({"options": [{"value": "a", "label": ""}]}),
                "`label` must be a text of 1 to 200",
            ),
            (
                json!({"options": ["a", {"value": "a"}]}),
                "must be unique; 'a' appears twice",
            ),
        ] {
            let got = msg(parse(ResponseType::MultiSelect, bad.clone()));
            assert!(got.contains(says), "{bad}: {got}");
        }
    }

    #[test]
    fn hitl_bounds_are_enforced() {
        let text = parse(
            ResponseType::Text,
            json!({"min_length": 3, "max_length": 10}),
        )
        .unwrap();
        assert_eq!(
            msg(text.validate_answer("r", &json!("ok"))),
            "r must be at least 3 characters"
        );
        assert!(text.validate_answer("r", &json!("fine")).is_ok());
        assert!(parse(
            ResponseType::Text,
            json!({"min_length": 11, "max_length": 10})
        )
        .is_err());

        let multi = parse(
            ResponseType::MultiSelect,
            json!({"options": ["a", "b", "c", "d"], "min_selections": 2, "max_selections": 3}),
        )
        .unwrap();
        assert_eq!(
            msg(multi.validate_answer("r", &json!(["a"]))),
            "r must select at least 2 options"
        );
        assert_eq!(
            msg(multi.validate_answer("r", &json!(["a", "b", "c", "d"]))),
            "r must select at most 3 options"
        );
        assert!(multi.validate_answer("r", &json!(["a", "d"])).is_ok());
        assert!(parse(
            ResponseType::MultiSelect,
            json!({"options": ["a", "b"], "max_selections": 3})
        )
        .is_err());
        let optional = parse(
            ResponseType::MultiSelect,
            json!({"options": ["a"], "min_selections": 0}),
        )
        .unwrap();
        assert!(optional.validate_answer("r", &json!([])).is_ok());

        let halves = parse(
            ResponseType::Rating,
            json!({"scale_min": 1, "scale_max": 5, "scale_step": 0.5}),
        )
        .unwrap();
        assert!(halves.validate_answer("r", &json!(4.5)).is_ok());
        assert_eq!(
            msg(halves.validate_answer("r", &json!(4.25))),
            "r must be from 1 to 5 in steps of 0.5"
        );
        assert!(parse(ResponseType::Rating, json!({"scale_step": 0})).is_err());
        assert!(parse(ResponseType::Rating, json!({"scale_step": 5e-324})).is_err());

        let price = parse(
            ResponseType::Number,
            json!({"min_value": 0, "max_value": 1000, "decimal_places": 2}),
        )
        .unwrap();
        assert!(price.validate_answer("r", &json!(129.99)).is_ok());
        assert_eq!(
            msg(price.validate_answer("r", &json!(1001))),
            "r must be from 0 to 1000"
        );
        assert_eq!(
            msg(price.validate_answer("r", &json!(1.005))),
            "r must have at most 2 decimal places"
        );
        assert!(
            price.validate_answer("r", &json!(999.5)).is_ok(),
            "a bound tolerance never hides decimals"
        );
        let big = parse(ResponseType::Number, json!({"decimal_places": 2})).unwrap();
        assert!(big.validate_answer("r", &json!(12345.678)).is_err());
        let whole = parse(ResponseType::Number, json!({"decimal_places": 0})).unwrap();
        assert!(whole.validate_answer("r", &json!(1234567.5)).is_err());
        assert!(whole.validate_answer("r", &json!(1234567)).is_ok());
        assert_eq!(
            msg(parse(
                ResponseType::Number,
                json!({"min": 1, "min_value": 2})
            )),
            "response_config.min_value disagrees with response_config.min: send one of them"
        );
    }
}
