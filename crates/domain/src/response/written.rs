//! A configuration written back as JSON, as it is stored and shown.

use serde_json::{Map, Value};

use super::{ResponseConfig, SelectOption};

/// A number as JSON: whole numbers without a fraction (`1`, not `1.0`).
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

impl ResponseConfig {
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
    pub(crate) fn write_settings(&self, map: &mut Map<String, Value>) {
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
}
