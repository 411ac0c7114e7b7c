//! Quorum: a request that several reviewers answer, each once, and that is
//! decided when enough of them agree (`all_agree`) or when enough have
//! answered and one answer leads (`majority`).

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::account::Email;
use crate::error::ValidationError;
use crate::id::UserId;

/// The most answers a quorum may ask for.
pub const MAX_QUORUM: u32 = 100;

api_enum!(
    /// How a quorum's answers make a decision.
    QuorumRule, "quorum.rule" {
        /// `count` reviewers gave the same answer.
        AllAgree => "all_agree",
        /// `count` answers are in and one of them is the most common.
        Majority => "majority",
    }
);

/// How many reviewers must answer a request, and how their answers decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quorum {
    /// M: the answers needed.
    pub count: u32,
    /// How the answers decide.
    pub rule: QuorumRule,
    /// The account that created the request may not answer it.
    pub exclude_requester: bool,
}

/// One reviewer's answer to a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// What the reviewer answered.
    pub response_data: Value,
    /// When.
    pub response_at: DateTime<Utc>,
    /// What the reviewer wrote with it.
    pub comment: Option<String>,
}

/// One answer with who gave it, as a request lists its `responses`.
#[derive(Debug, Clone, PartialEq)]
pub struct Response<'a> {
    /// The reviewer.
    pub user_id: UserId,
    /// The reviewer's email.
    pub email: &'a Email,
    /// What was answered.
    pub response_data: &'a Value,
    /// When.
    pub response_at: DateTime<Utc>,
    /// What the reviewer wrote with it.
    pub comment: Option<&'a str>,
}

impl Quorum {
    /// Reads `{"count": M, "rule": ..., "exclude_requester": bool}` (null:
    /// no quorum). `exclude_requester` given beside the quorum, as a
    /// request body may, wins over one inside it; either defaults to true.
    pub fn parse(
        raw: Option<&Value>,
        exclude_requester: Option<&Value>,
    ) -> Result<Option<Self>, ValidationError> {
        let map = match raw {
            None | Some(Value::Null) => {
                return match exclude_requester {
                    Some(v) if !v.is_null() && !v.is_boolean() => Err(ValidationError::field(
                        "exclude_requester",
                        "exclude_requester must be true or false",
                    )),
                    _ => Ok(None),
                };
            }
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(ValidationError::field(
                    "quorum",
                    "quorum must be an object with count and rule, or null",
                ))
            }
        };
        let mut errors = ValidationError::default();
        for key in map.keys() {
            if !["count", "rule", "exclude_requester"].contains(&key.as_str()) {
                errors.extend(ValidationError::field(
                    format!("quorum.{key}"),
                    format!(
                        "quorum.{key} is not a quorum field: use count, rule and exclude_requester"
                    ),
                ));
            }
        }
        let count = map
            .get("count")
            .and_then(Value::as_u64)
            .and_then(|c| u32::try_from(c).ok())
            .filter(|c| (1..=MAX_QUORUM).contains(c));
        if count.is_none() {
            errors.extend(ValidationError::field(
                "quorum.count",
                format!("quorum.count must be a whole number from 1 to {MAX_QUORUM}"),
            ));
        }
        let rule = match map.get("rule") {
            Some(Value::String(rule)) => errors.collect(QuorumRule::parse(rule)),
            None => Some(QuorumRule::AllAgree),
            Some(_) => {
                errors.extend(ValidationError::field(
                    "quorum.rule",
                    "quorum.rule must be all_agree or majority",
                ));
                None
            }
        };
        let mut exclude = true;
        for (field, value) in [
            ("quorum.exclude_requester", map.get("exclude_requester")),
            ("exclude_requester", exclude_requester),
        ] {
            match value {
                None | Some(Value::Null) => {}
                Some(Value::Bool(b)) => exclude = *b,
                Some(_) => errors.extend(ValidationError::field(
                    field,
                    format!("{field} must be true or false"),
                )),
            }
        }
        errors.into_result()?;
        match (count, rule) {
            (Some(count), Some(rule)) => Ok(Some(Self {
                count,
                rule,
                exclude_requester: exclude,
            })),
            _ => Err(ValidationError::field("quorum", "quorum is invalid")),
        }
    }

    /// As stored and shown.
    pub fn to_value(&self) -> Value {
        json!({
            "count": self.count,
            "rule": self.rule.as_str(),
            "exclude_requester": self.exclude_requester,
        })
    }

    /// Refuses a quorum that `eligible` reviewers can never reach.
    pub fn check_reachable(&self, eligible: usize) -> Result<(), ValidationError> {
        if usize::try_from(self.count).unwrap_or(usize::MAX) > eligible {
            let who = if self.exclude_requester {
                "active members other than the requester"
            } else {
                "active members"
            };
            return Err(ValidationError::field(
                "quorum.count",
                format!(
                    "quorum.count is {} but the loop has only {eligible} {who} to answer",
                    self.count
                ),
            ));
        }
        Ok(())
    }

    /// The decided answer, once `answers` make one; `None` while the
    /// request must wait for more. Answers are compared as values, except
    /// that the order of a list of choices does not count.
    pub fn decide<'a>(&self, answers: impl IntoIterator<Item = &'a Value>) -> Option<Value> {
        // Each distinct answer, as first given, with how often it was given.
        let mut tally: Vec<(Value, &Value, u32)> = Vec::new();
        let mut total = 0;
        for answer in answers {
            total += 1;
            let key = comparable(answer);
            match tally.iter_mut().find(|(seen, _, _)| *seen == key) {
                Some((_, _, n)) => *n += 1,
                None => tally.push((key, answer, 1)),
            }
        }
        match self.rule {
            QuorumRule::AllAgree => tally
                .iter()
                .find(|(_, _, n)| *n >= self.count)
                .map(|(_, first, _)| (*first).clone()),
            QuorumRule::Majority => {
                if total < self.count {
                    return None;
                }
                let most = tally.iter().map(|(_, _, n)| *n).max()?;
                let mut leaders = tally.iter().filter(|(_, _, n)| *n == most);
                match (leaders.next(), leaders.next()) {
                    (Some((_, first, _)), None) => Some((*first).clone()),
                    // A tie waits for one more answer.
                    _ => None,
                }
            }
        }
    }

    /// "2 of 3": the answers that count towards the decision so far: the
    /// largest group of equal answers (`all_agree`) or every answer
    /// (`majority`).
    pub fn progress<'a>(&self, answers: impl IntoIterator<Item = &'a Value>) -> u32 {
        let answers: Vec<Value> = answers.into_iter().map(comparable).collect();
        match self.rule {
            QuorumRule::Majority => u32::try_from(answers.len()).unwrap_or(u32::MAX),
            QuorumRule::AllAgree => answers
                .iter()
                .map(|a| answers.iter().filter(|b| *b == a).count())
                .max()
                .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        }
    }
}

/// An answer in the form two answers are compared in: a list of choices
/// sorted, so `["a","b"]` and `["b","a"]` agree.
fn comparable(answer: &Value) -> Value {
    match answer {
        Value::Array(items) => {
            let mut items = items.clone();
            items.sort_by_key(|item| item.to_string());
            Value::Array(items)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quorum(count: u32, rule: QuorumRule) -> Quorum {
        Quorum {
            count,
            rule,
            exclude_requester: true,
        }
    }

    #[test]
    fn a_quorum_is_read_with_every_mistake_named() {
        let q = Quorum::parse(Some(&json!({"count": 2, "rule": "majority"})), None).unwrap();
        assert_eq!(q, Some(quorum(2, QuorumRule::Majority)));
        let q = Quorum::parse(Some(&json!({"count": 3})), Some(&json!(false)))
            .unwrap()
            .unwrap();
        assert_eq!(q.rule, QuorumRule::AllAgree);
        assert!(!q.exclude_requester, "the body's exclude_requester wins");
        assert_eq!(Quorum::parse(Some(&Value::Null), None).unwrap(), None);

        let bad = Quorum::parse(
            Some(&json!({"count": 0, "rule": "most", "exclude_requester": "no", "m": 1})),
            None,
        )
        .unwrap_err();
        let fields: Vec<&str> = bad.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "quorum.m",
                "quorum.count",
                "quorum.rule",
                "quorum.exclude_requester"
            ]
        );
        assert_eq!(
            Quorum::parse(Some(&json!(2)), None).unwrap_err().errors[0].field,
            "quorum"
        );
        assert_eq!(
            Quorum::parse(None, Some(&json!(1))).unwrap_err().errors[0].field,
            "exclude_requester"
        );
    }

    #[test]
    fn a_quorum_larger_than_its_reviewers_is_refused() {
        let q = quorum(3, QuorumRule::AllAgree);
        assert!(q.check_reachable(3).is_ok());
        let error = q.check_reachable(2).unwrap_err();
        assert_eq!(error.errors[0].field, "quorum.count");
        assert!(error
            .to_string()
            .contains("only 2 active members other than"));
    }

    #[test]
    fn all_agree_decides_when_enough_give_the_same_answer() {
        let q = quorum(2, QuorumRule::AllAgree);
        let (yes, no) = (json!("approve"), json!("reject"));
        assert_eq!(q.decide([&yes]), None);
        assert_eq!(q.decide([&yes, &no]), None);
        assert_eq!(q.decide([&yes, &no, &yes]), Some(yes.clone()));
        assert_eq!(q.progress([&yes, &no, &no]), 2);
        let (ab, ba) = (json!(["a", "b"]), json!(["b", "a"]));
        assert!(
            q.decide([&ab, &ba]).is_some(),
            "choice order does not count"
        );
    }

    #[test]
    fn majority_waits_for_the_count_and_breaks_no_ties() {
        let q = quorum(3, QuorumRule::Majority);
        let (yes, no) = (json!(true), json!(false));
        assert_eq!(q.decide([&yes, &yes]), None, "two of three answers");
        assert_eq!(q.decide([&yes, &no, &yes]), Some(yes.clone()));
        let q = quorum(2, QuorumRule::Majority);
        assert_eq!(q.decide([&yes, &no]), None, "a tie stays open");
        assert_eq!(q.decide([&yes, &no, &no]), Some(no.clone()));
        assert_eq!(q.progress([&yes, &no]), 2);
    }
}
