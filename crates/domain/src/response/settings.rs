//! Reading a response type's settings out of a JSON object: a request's
//! `response_config`, or one field of a template.

use serde_json::{Map, Value};

use super::hints::{is_hex_color, MAX_AFFIX, MAX_HINT};
use super::{
    ResponseConfig, ResponseType, SelectOption, MAX_DECIMAL_PLACES, MAX_OPTIONS,
    MAX_OPTION_DESCRIPTION, MAX_OPTION_LEN, MAX_SCALE, MAX_TEXT_ANSWER, MIN_SCALE_STEP,
};
use crate::error::ValidationError;
use crate::text::{char_len, check_line};

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
    pub(crate) fn parse_settings(
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
}
