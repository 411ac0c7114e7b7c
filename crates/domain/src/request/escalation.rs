//! Escalation: a request nobody has taken up after a while is also sent to
//! the members of another loop, once.

use serde_json::{json, Value};

use crate::error::ValidationError;
use crate::id::LoopId;
use crate::request_fields::MAX_TIMEOUT_SECONDS;

/// Where and when a request goes when nobody claims it in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Escalation {
    /// Seconds after creation, unclaimed, before the request escalates.
    pub after_seconds: i64,
    /// The loop whose active members it is also sent to.
    pub to_loop_id: LoopId,
    /// Whether the request's priority goes up one step when it escalates.
    pub raise_priority: bool,
}

impl Escalation {
    /// Reads `{"after_seconds": N, "to_loop_id": ID, "raise_priority":
    /// bool}` (null or absent: none), naming every bad part under `field`.
    pub fn parse(raw: Option<&Value>, field: &str) -> Result<Option<Self>, ValidationError> {
        let map = match raw {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(ValidationError::field(
                    field,
                    format!("{field} must be an object with after_seconds and to_loop_id, or null"),
                ))
            }
        };
        let mut errors = ValidationError::default();
        for key in map.keys() {
            if !["after_seconds", "to_loop_id", "raise_priority"].contains(&key.as_str()) {
                errors.extend(ValidationError::field(
                    format!("{field}.{key}"),
                    format!(
                        "{field}.{key} is not an escalation field: use after_seconds, to_loop_id and raise_priority"
                    ),
                ));
            }
        }
        let after_seconds = map
            .get("after_seconds")
            .and_then(Value::as_i64)
            .filter(|s| (1..MAX_TIMEOUT_SECONDS).contains(s));
        if after_seconds.is_none() {
            errors.extend(ValidationError::field(
                format!("{field}.after_seconds"),
                format!(
                    "{field}.after_seconds must be a whole number of seconds from 1 to {}",
                    MAX_TIMEOUT_SECONDS - 1
                ),
            ));
        }
        let to_loop_id = match map.get("to_loop_id") {
            Some(Value::String(id)) => LoopId::parse(id).ok(),
            _ => None,
        };
        if to_loop_id.is_none() {
            errors.extend(ValidationError::field(
                format!("{field}.to_loop_id"),
                format!("{field}.to_loop_id must be the id of a loop (24 hexadecimal characters)"),
            ));
        }
        let raise_priority = match map.get("raise_priority") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                errors.extend(ValidationError::field(
                    format!("{field}.raise_priority"),
                    format!("{field}.raise_priority must be true or false"),
                ));
                false
            }
        };
        errors.into_result()?;
        match (after_seconds, to_loop_id) {
            (Some(after_seconds), Some(to_loop_id)) => Ok(Some(Self {
                after_seconds,
                to_loop_id,
                raise_priority,
            })),
            _ => Err(ValidationError::field(field, format!("{field} is invalid"))),
        }
    }

    /// As stored and shown.
    pub fn to_value(&self) -> Value {
        json!({
            "after_seconds": self.after_seconds,
            "to_loop_id": self.to_loop_id,
            "raise_priority": self.raise_priority,
        })
    }

    /// Refuses an escalation back into the loop it starts from.
    pub fn check_target(&self, from: &LoopId, field: &str) -> Result<(), ValidationError> {
        if self.to_loop_id == *from {
            return Err(ValidationError::field(
                format!("{field}.to_loop_id"),
                format!("{field}.to_loop_id must name another loop than the request's own"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "65f0c0ffee0000000000abcd";

    #[test]
    fn an_escalation_is_read_with_every_mistake_named() {
        let e = Escalation::parse(
            Some(&json!({"after_seconds": 60, "to_loop_id": LOOP, "raise_priority": true})),
            "escalation",
        )
        .unwrap()
        .unwrap();
        assert_eq!(e.after_seconds, 60);
        assert!(e.raise_priority);
        assert_eq!(e.to_value()["to_loop_id"], LOOP);
        assert_eq!(
            Escalation::parse(Some(&Value::Null), "escalation").unwrap(),
            None
        );

        let bad = Escalation::parse(
            Some(&json!({"after_seconds": 0, "to_loop_id": "nope", "raise_priority": 1, "x": 1})),
            "escalation",
        )
        .unwrap_err();
        let fields: Vec<&str> = bad.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "escalation.x",
                "escalation.after_seconds",
                "escalation.to_loop_id",
                "escalation.raise_priority"
            ]
        );
        assert_eq!(
            Escalation::parse(Some(&json!([1])), "escalation")
                .unwrap_err()
                .errors[0]
                .field,
            "escalation"
        );
    }

    #[test]
    fn an_escalation_into_its_own_loop_is_refused() {
        let e = Escalation::parse(
            Some(&json!({"after_seconds": 5, "to_loop_id": LOOP})),
            "escalation",
        )
        .unwrap()
        .unwrap();
        let own = LoopId::parse(LOOP).unwrap();
        assert_eq!(
            e.check_target(&own, "escalation").unwrap_err().errors[0].field,
            "escalation.to_loop_id"
        );
        let other = LoopId::parse("65f0c0ffee0000000000abce").unwrap();
        assert!(e.check_target(&other, "escalation").is_ok());
    }
}
