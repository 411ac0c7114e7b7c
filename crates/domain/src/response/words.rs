//! An answer as people read it: the label a requester gave its value.

use serde_json::Value;

use super::{ResponseConfig, ReviewerHints, SelectOption};

impl ResponseConfig {
    /// The answer in the words the request gave it: a boolean's
    /// `true_label`/`false_label` (else "Approved"/"Rejected"), an option's
    /// label, a rating point with its label ("4 (Good)"), a number with its
    /// prefix and suffix. A value the settings do not know (options changed
    /// since) is shown as it is.
    pub fn answer_words(&self, hints: &ReviewerHints, answer: &Value) -> String {
        match (self, answer) {
            (_, Value::Null) => "no answer".into(),
            (Self::Boolean, Value::Bool(true)) => hints
                .true_label
                .clone()
                .unwrap_or_else(|| "Approved".into()),
            (Self::Boolean, Value::Bool(false)) => hints
                .false_label
                .clone()
                .unwrap_or_else(|| "Rejected".into()),
            (Self::SingleSelect { options }, value) => option_words(options, value),
            (Self::MultiSelect { options, .. }, Value::Array(items)) => items
                .iter()
                .map(|item| option_words(options, item))
                .collect::<Vec<_>>()
                .join(", "),
            (Self::Rating { .. }, Value::Number(n)) => {
                // `4.0` is the point labelled "4".
                let point = match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
                    _ => n.to_string(),
                };
                match hints.rating_label(&point) {
                    Some(label) if !label.is_empty() => format!("{point} ({label})"),
                    _ => point,
                }
            }
            (Self::Number { .. }, Value::Number(n)) => format!(
                "{}{n}{}",
                hints.prefix.as_deref().unwrap_or_default(),
                hints.suffix.as_deref().unwrap_or_default()
            ),
            (_, other) => plain_words(other),
        }
    }
}

/// An answer in words when its settings are unknown: text as it is, a
/// boolean as approved or rejected, a list joined by commas.
pub fn plain_words(answer: &Value) -> String {
    match answer {
        Value::Null => "no answer".into(),
        Value::String(s) => s.clone(),
        Value::Bool(true) => "Approved".into(),
        Value::Bool(false) => "Rejected".into(),
        Value::Array(items) => items.iter().map(plain_words).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn option_words(options: &[SelectOption], value: &Value) -> String {
    value
        .as_str()
        .and_then(|v| options.iter().find(|o| o.value == v))
        .map(|o| o.label().to_owned())
        .unwrap_or_else(|| plain_words(value))
}
