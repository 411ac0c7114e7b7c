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

/// The bounds of an answer, validated for its response type.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseConfig {
    /// Free text of at most `max_length` characters.
    Text {
        /// The most characters an answer may have (1 to 5000).
        max_length: usize,
    },
    /// Exactly one of `options`.
    SingleSelect {
        /// The choices, non-empty and unique.
        options: Vec<String>,
    },
    /// A non-empty subset of `options`, without repeats.
    MultiSelect {
        /// The choices, non-empty and unique.
        options: Vec<String>,
    },
    /// A whole number from `scale_min` to `scale_max`.
    Rating {
        /// Lowest value; defaults to 1.
        scale_min: i64,
        /// Highest value; defaults to 5.
        scale_max: i64,
    },
    /// Any finite number within the optional bounds.
    Number {
        /// Lowest allowed value.
        min: Option<f64>,
        /// Highest allowed value.
        max: Option<f64>,
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

impl Settings<'_> {
    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.prefix)
    }

    fn error(&self, key: &str, message: impl std::fmt::Display) -> ValidationError {
        let path = self.path(key);
        ValidationError::field(path.clone(), format!("{path} {message}"))
    }

    fn options(&self) -> Result<Vec<String>, ValidationError> {
        let options = self
            .map
            .get("options")
            .and_then(Value::as_array)
            .ok_or_else(|| self.error("options", "must be a non-empty array of strings"))?;
        if options.is_empty() || options.len() > MAX_OPTIONS {
            return Err(self.error("options", format!("must have 1 to {MAX_OPTIONS} entries")));
        }
        let mut parsed: Vec<String> = Vec::with_capacity(options.len());
        for option in options {
            let text = option.as_str().map(str::trim).unwrap_or_default();
            if text.is_empty() || char_len(text) > MAX_OPTION_LEN {
                return Err(self.error(
                    "options",
                    format!("must be strings of 1 to {MAX_OPTION_LEN} characters"),
                ));
            }
            check_line(&self.path("options"), text)?;
            if parsed.iter().any(|p| p == text) {
                return Err(
                    self.error("options", format!("must be unique; '{text}' appears twice"))
                );
            }
            parsed.push(text.to_owned());
        }
        Ok(parsed)
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
        match response_type {
            ResponseType::Text => {
                let max_length = settings
                    .whole("max_length")?
                    .unwrap_or(MAX_TEXT_ANSWER as i64);
                if !(1..=MAX_TEXT_ANSWER as i64).contains(&max_length) {
                    return Err(settings
                        .error("max_length", format!("must be from 1 to {MAX_TEXT_ANSWER}")));
                }
                Ok(Self::Text {
                    max_length: max_length as usize,
                })
            }
            ResponseType::SingleSelect => Ok(Self::SingleSelect {
                options: settings.options()?,
            }),
            ResponseType::MultiSelect => Ok(Self::MultiSelect {
                options: settings.options()?,
            }),
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
                Ok(Self::Rating {
                    scale_min,
                    scale_max,
                })
            }
            ResponseType::Number => {
                let min = settings.number("min")?;
                let max = settings.number("max")?;
                if let (Some(min), Some(max)) = (min, max) {
                    if min > max {
                        return Err(settings.error(
                            "max",
                            format!("must not be less than {}", settings.path("min")),
                        ));
                    }
                }
                Ok(Self::Number { min, max })
            }
            ResponseType::Boolean => Ok(Self::Boolean),
        }
    }

    /// The names of the settings this type reads.
    pub fn setting_names(response_type: ResponseType) -> &'static [&'static str] {
        match response_type {
            ResponseType::Text => &["max_length"],
            ResponseType::SingleSelect | ResponseType::MultiSelect => &["options"],
            ResponseType::Rating => &["scale_min", "scale_max"],
            ResponseType::Number => &["min", "max"],
            ResponseType::Boolean => &[],
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
        match self {
            Self::Text { max_length } => {
                map.insert("max_length".into(), Value::from(*max_length));
            }
            Self::SingleSelect { options } | Self::MultiSelect { options } => {
                map.insert("options".into(), Value::from(options.clone()));
            }
            Self::Rating {
                scale_min,
                scale_max,
            } => {
                map.insert("scale_min".into(), Value::from(*scale_min));
                map.insert("scale_max".into(), Value::from(*scale_max));
            }
            Self::Number { min, max } => {
                for (key, bound) in [("min", min), ("max", max)] {
                    if let Some(bound) = bound {
                        map.insert(key.into(), Value::from(*bound));
                    }
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
            Self::Text { max_length } => match answer.as_str() {
                Some(text) if text.trim().is_empty() => fail(format!("{field} must not be empty")),
                Some(text) if char_len(text) > *max_length => {
                    fail(format!("{field} must be at most {max_length} characters"))
                }
                Some(_) => Ok(()),
                None => fail(format!("{field} must be a string")),
            },
            Self::SingleSelect { options } => match answer.as_str() {
                Some(choice) if options.iter().any(|o| o == choice) => Ok(()),
                Some(choice) => fail(format!(
                    "{field} '{choice}' is not one of the options: {}",
                    options.join(", ")
                )),
                None => fail(format!("{field} must be one of the options as a string")),
            },
            Self::MultiSelect { options } => {
                let Some(choices) = answer.as_array() else {
                    return fail(format!("{field} must be an array of options"));
                };
                if choices.is_empty() {
                    return fail(format!("{field} must select at least one option"));
                }
                let mut seen: Vec<&str> = Vec::with_capacity(choices.len());
                for choice in choices {
                    let Some(choice) = choice.as_str() else {
                        return fail(format!("{field} must be an array of options"));
                    };
                    if !options.iter().any(|o| o == choice) {
                        return fail(format!(
                            "{field} '{choice}' is not one of the options: {}",
                            options.join(", ")
                        ));
                    }
                    if seen.contains(&choice) {
                        return fail(format!("{field} selects '{choice}' more than once"));
                    }
                    seen.push(choice);
                }
                Ok(())
            }
            Self::Rating {
                scale_min,
                scale_max,
            } => {
                let Some(value) = answer.as_f64() else {
                    return fail(format!("{field} must be a number"));
                };
                if value.fract() != 0.0 || value < *scale_min as f64 || value > *scale_max as f64 {
                    return fail(format!(
                        "{field} must be a whole number from {scale_min} to {scale_max}"
                    ));
                }
                Ok(())
            }
            Self::Number { min, max } => {
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
                scale_max: 5
            }
        );
        assert_eq!(
            parse(ResponseType::Rating, json!({"scale_max": 10})).unwrap(),
            ResponseConfig::Rating {
                scale_min: 1,
                scale_max: 10
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
                max: None
            }
        );
        assert!(parse(ResponseType::Number, json!({"min": 3, "max": 1})).is_err());
        assert!(parse(ResponseType::Number, json!({"min": "a"})).is_err());
    }

    #[test]
    fn text_max_length_is_bounded() {
        assert_eq!(
            ResponseConfig::parse(ResponseType::Text, None).unwrap(),
            ResponseConfig::Text { max_length: 5000 }
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
        let c = ResponseConfig::Text { max_length: 5 };
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
        };
        assert!(c.validate_answer("r", &json!(1)).is_ok());
        assert!(c.validate_answer("r", &json!(5.0)).is_ok());
        for bad in [json!(0), json!(6), json!(2.5), json!("3"), json!(null)] {
            assert!(c.validate_answer("r", &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn number_answers_respect_bounds() {
        let c = ResponseConfig::Number {
            min: Some(0.0),
            max: Some(1.5),
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
}
