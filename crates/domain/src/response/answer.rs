//! Checking an answer against its configuration.

use serde_json::Value;

use super::{ResponseConfig, SelectOption};
use crate::error::ValidationError;
use crate::text::char_len;

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
    /// Checks an answer (`field` names it in messages: `response_data` or
    /// `default_response`).
    pub(crate) fn validate_answer(
        &self,
        field: &str,
        answer: &Value,
    ) -> Result<(), ValidationError> {
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
