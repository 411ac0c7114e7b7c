//! A loop's rules: ordered `{"id", "when", "then"}` entries that decide a
//! routine request at creation (`answer`), send it to another loop
//! (`route_to_loop_id`) or ask for a quorum (`quorum`). The first rule
//! whose `when` holds and whose `then` can apply fires.
//!
//! `when` may name `priority`, `platform` and `response_type` (one value or
//! a list) and `context`: tests of JSON pointers into the request's
//! `context`, such as `{"pointer": "/amount", "lt": 100}`, with the
//! operators `eq`, `ne`, `lt`, `lte`, `gt`, `gte` and `in`. Every part must
//! hold. A pointer the request's context lacks makes its test fail, so no
//! rule fires on facts it does not have.

use serde_json::{json, Map, Value};

use crate::error::ValidationError;
use crate::id::LoopId;
use crate::quorum::Quorum;
use crate::request_fields::{Platform, Priority};
use crate::response::ResponseType;
use crate::text::char_len;

/// The most rules a loop may hold.
pub const MAX_RULES: usize = 50;
const MAX_RULE_ID_LEN: usize = 64;
const MAX_CONTEXT_TESTS: usize = 20;

api_enum!(
    /// How a context test compares the value a pointer finds.
    Operator, "operator" {
        /// Equal (numbers by value: 100 equals 100.0).
        Eq => "eq",
        /// Not equal.
        Ne => "ne",
        /// Less than (numbers, or texts in their order).
        Lt => "lt",
        /// Less than or equal.
        Lte => "lte",
        /// Greater than.
        Gt => "gt",
        /// Greater than or equal.
        Gte => "gte",
        /// Equal to one of a list.
        In => "in",
    }
);

/// One test of a value in the request's context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextTest {
    /// An RFC 6901 JSON pointer into `context`, such as `/amount`.
    pub pointer: String,
    /// Every comparison must hold.
    pub comparisons: Vec<(Operator, Value)>,
}

/// When a rule fires: every part given must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Condition {
    /// The request's priority is one of these.
    pub priority: Option<Vec<Priority>>,
    /// The request's platform is one of these.
    pub platform: Option<Vec<Platform>>,
    /// The request's response type is one of these.
    pub response_type: Option<Vec<ResponseType>>,
    /// Tests of values in the request's context.
    pub context: Vec<ContextTest>,
}

/// What a rule does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Decides the request at once with this answer; nobody is asked.
    Answer(Value),
    /// Sends the request to another loop instead (whose rules then apply).
    Route(LoopId),
    /// The request needs this quorum.
    Quorum(Quorum),
}

impl Action {
    /// As stored and shown: the rule's `then`.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Answer(v) => json!({ "answer": v }),
            Self::Route(to) => json!({ "route_to_loop_id": to }),
            Self::Quorum(q) => json!({ "quorum": q.to_value() }),
        }
    }
}

/// One rule of a loop.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Unique in its loop; recorded on the requests it decides.
    pub id: String,
    /// When it fires.
    pub when: Condition,
    /// What it does.
    pub then: Action,
}

/// A rule that fired for a request, as the request records it.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedRule {
    /// The loop whose rule it was.
    pub loop_id: LoopId,
    /// The rule's id.
    pub rule_id: String,
    /// What it did.
    pub then: Action,
}

impl AppliedRule {
    /// As stored and shown.
    pub fn to_value(&self) -> Value {
        json!({ "loop_id": self.loop_id, "rule_id": self.rule_id, "then": self.then.to_value() })
    }

    /// Reads a stored one back.
    pub fn from_value(value: &Value) -> Option<Self> {
        Some(Self {
            loop_id: LoopId::parse(value.get("loop_id")?.as_str()?).ok()?,
            rule_id: value.get("rule_id")?.as_str()?.to_owned(),
            then: Rule::parse_then(value.get("then"), "then").ok()?,
        })
    }
}

/// The facts of a request that rules look at.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// Its priority.
    pub priority: Priority,
    /// Where it came from.
    pub platform: Platform,
    /// The answer it wants.
    pub response_type: ResponseType,
    /// Its context, if any.
    pub context: Option<&'a Value>,
}

/// A loop's rules, in the order they are tried.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules(Vec<Rule>);

impl Rules {
    /// Reads a list of rules (null: none), naming every bad part by its
    /// place, such as `rules[1].when.context[0].pointer`.
    pub fn parse(raw: Option<&Value>) -> Result<Self, ValidationError> {
        let items = match raw {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(ValidationError::field(
                    "rules",
                    "rules must be a list of {\"id\", \"when\", \"then\"} objects",
                ))
            }
        };
        if items.len() > MAX_RULES {
            return Err(ValidationError::field(
                "rules",
                format!("a loop may hold at most {MAX_RULES} rules"),
            ));
        }
        let mut errors = ValidationError::default();
        let mut rules = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Some(rule) = errors.collect(Rule::parse(item, i)) {
                if rules.iter().any(|r: &Rule| r.id == rule.id) {
                    errors.extend(ValidationError::field(
                        format!("rules[{i}].id"),
                        format!("rules[{i}].id \"{}\" is used by an earlier rule", rule.id),
                    ));
                }
                rules.push(rule);
            }
        }
        errors.into_result()?;
        Ok(Self(rules))
    }

    /// Each rule, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Rule> {
        self.0.iter()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// As stored and shown.
    pub fn to_value(&self) -> Value {
        Value::Array(self.0.iter().map(Rule::to_value).collect())
    }

    /// The rules whose `when` holds for `facts`, in order, with their
    /// places.
    pub fn matching<'a>(&'a self, facts: &'a Facts<'_>) -> impl Iterator<Item = (usize, &'a Rule)> {
        self.0
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.when.holds(facts))
    }

    /// Every loop a rule routes to, with the rule's place.
    pub fn routes(&self) -> impl Iterator<Item = (usize, LoopId)> + '_ {
        self.0.iter().enumerate().filter_map(|(i, r)| match r.then {
            Action::Route(to) => Some((i, to)),
            _ => None,
        })
    }

    /// The first pointer a rule reads that `context` does not have, with
    /// the rule's id: a sample that lacks it cannot show what the rules do.
    pub fn missing_pointer(&self, context: Option<&Value>) -> Option<(&str, &str)> {
        self.0.iter().find_map(|rule| {
            rule.when
                .context
                .iter()
                .find(|t| context.and_then(|c| c.pointer(&t.pointer)).is_none())
                .map(|t| (rule.id.as_str(), t.pointer.as_str()))
        })
    }
}

fn one_or_many<T>(
    value: &Value,
    field: &str,
    parse: fn(&str) -> Result<T, ValidationError>,
) -> Result<Vec<T>, ValidationError> {
    let texts: Vec<&Value> = match value {
        Value::Array(items) if !items.is_empty() => items.iter().collect(),
        Value::String(_) => vec![value],
        _ => {
            return Err(ValidationError::field(
                field,
                format!("{field} must be a value or a non-empty list of values"),
            ))
        }
    };
    texts
        .into_iter()
        .map(|v| {
            v.as_str()
                .ok_or(())
                .and_then(|s| parse(s).map_err(|_| ()))
                .map_err(|()| {
                    ValidationError::field(
                        field,
                        format!("{field} holds {v}, which is not allowed"),
                    )
                })
        })
        .collect()
}

/// True for an RFC 6901 pointer: empty, or `/`-separated tokens in which
/// `~` only starts `~0` or `~1`.
fn is_json_pointer(pointer: &str) -> bool {
    if pointer.is_empty() {
        return true;
    }
    pointer.starts_with('/')
        && pointer
            .split('~')
            .skip(1)
            .all(|rest| rest.starts_with('0') || rest.starts_with('1'))
}

impl ContextTest {
    fn parse(value: &Value, field: &str) -> Result<Self, ValidationError> {
        let Value::Object(map) = value else {
            return Err(ValidationError::field(
                field,
                format!(
                    "{field} must be an object such as {{\"pointer\": \"/amount\", \"lt\": 100}}"
                ),
            ));
        };
        let mut errors = ValidationError::default();
        let pointer = match map.get("pointer") {
            Some(Value::String(p)) if is_json_pointer(p) && !p.is_empty() => Some(p.clone()),
            _ => {
                errors.extend(ValidationError::field(
                    format!("{field}.pointer"),
                    format!(
                        "{field}.pointer must be a JSON pointer into context, such as \"/amount\""
                    ),
                ));
                None
            }
        };
        let mut comparisons = Vec::new();
        for (key, operand) in map.iter().filter(|(k, _)| *k != "pointer") {
            let Ok(op) = Operator::parse(key) else {
                errors.extend(ValidationError::field(
                    format!("{field}.{key}"),
                    format!("{field}.{key} is not an operator: use eq, ne, lt, lte, gt, gte or in"),
                ));
                continue;
            };
            let fits = match op {
                Operator::Eq | Operator::Ne => true,
                Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte => {
                    operand.is_number() || operand.is_string()
                }
                Operator::In => operand.is_array(),
            };
            if fits {
                comparisons.push((op, operand.clone()));
            } else {
                let wanted = if op == Operator::In {
                    "a list of values"
                } else {
                    "a number or a text"
                };
                errors.extend(ValidationError::field(
                    format!("{field}.{key}"),
                    format!("{field}.{key} must be {wanted}"),
                ));
            }
        }
        if comparisons.is_empty() && errors.is_empty() {
            errors.extend(ValidationError::field(
                field,
                format!("{field} needs an operator: eq, ne, lt, lte, gt, gte or in"),
            ));
        }
        errors.into_result()?;
        Ok(Self {
            pointer: pointer.unwrap_or_default(),
            comparisons,
        })
    }

    fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("pointer".into(), Value::String(self.pointer.clone()));
        for (op, operand) in &self.comparisons {
            map.insert(op.as_str().into(), operand.clone());
        }
        Value::Object(map)
    }

    /// Whether the value at the pointer passes every comparison; a missing
    /// value passes none.
    pub fn holds(&self, context: Option<&Value>) -> bool {
        let Some(found) = context.and_then(|c| c.pointer(&self.pointer)) else {
            return false;
        };
        self.comparisons
            .iter()
            .all(|(op, operand)| compare(*op, found, operand))
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

fn compare(op: Operator, found: &Value, operand: &Value) -> bool {
    use std::cmp::Ordering;
    let order = match (found, operand) {
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y)),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match op {
        Operator::Eq => same(found, operand),
        Operator::Ne => !same(found, operand),
        Operator::In => operand
            .as_array()
            .is_some_and(|items| items.iter().any(|i| same(found, i))),
        Operator::Lt => order == Some(Ordering::Less),
        Operator::Lte => matches!(order, Some(Ordering::Less | Ordering::Equal)),
        Operator::Gt => order == Some(Ordering::Greater),
        Operator::Gte => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
    }
}

impl Condition {
    fn parse(value: Option<&Value>, field: &str) -> Result<Self, ValidationError> {
        let map = match value {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(ValidationError::field(
                    field,
                    format!("{field} must be an object (an empty one matches every request)"),
                ))
            }
        };
        let mut errors = ValidationError::default();
        let mut when = Self::default();
        for (key, value) in map {
            let name = format!("{field}.{key}");
            match key.as_str() {
                "priority" => when.priority = errors.collect(one_or_many(value, &name, Priority::parse)),
                "platform" => when.platform = errors.collect(one_or_many(value, &name, Platform::parse)),
                "response_type" => {
                    when.response_type =
                        errors.collect(one_or_many(value, &name, ResponseType::parse));
                }
                "context" => {
                    let tests: Vec<&Value> = match value {
                        Value::Array(items) => items.iter().collect(),
                        single => vec![single],
                    };
                    if tests.len() > MAX_CONTEXT_TESTS {
                        errors.extend(ValidationError::field(
                            name.clone(),
                            format!("{name} may hold at most {MAX_CONTEXT_TESTS} tests"),
                        ));
                    }
                    for (j, test) in tests.into_iter().enumerate() {
                        if let Some(t) = errors.collect(ContextTest::parse(test, &format!("{name}[{j}]"))) {
                            when.context.push(t);
                        }
                    }
                }
                _ => errors.extend(ValidationError::field(
                    name.clone(),
                    format!("{name} is not a condition: use priority, platform, response_type or context"),
                )),
            }
        }
        errors.into_result()?;
        Ok(when)
    }

    fn to_value(&self) -> Value {
        let mut map = Map::new();
        let list = |names: Vec<&str>| Value::Array(names.into_iter().map(Value::from).collect());
        if let Some(p) = &self.priority {
            map.insert(
                "priority".into(),
                list(p.iter().map(Priority::as_str).collect()),
            );
        }
        if let Some(p) = &self.platform {
            map.insert(
                "platform".into(),
                list(p.iter().map(Platform::as_str).collect()),
            );
        }
        if let Some(t) = &self.response_type {
            map.insert(
                "response_type".into(),
                list(t.iter().map(ResponseType::as_str).collect()),
            );
        }
        if !self.context.is_empty() {
            map.insert(
                "context".into(),
                Value::Array(self.context.iter().map(ContextTest::to_value).collect()),
            );
        }
        Value::Object(map)
    }

    /// Whether every part holds for `facts`.
    pub fn holds(&self, facts: &Facts<'_>) -> bool {
        self.priority
            .as_ref()
            .is_none_or(|p| p.contains(&facts.priority))
            && self
                .platform
                .as_ref()
                .is_none_or(|p| p.contains(&facts.platform))
            && self
                .response_type
                .as_ref()
                .is_none_or(|t| t.contains(&facts.response_type))
            && self.context.iter().all(|t| t.holds(facts.context))
    }
}

impl Rule {
    fn parse(value: &Value, i: usize) -> Result<Self, ValidationError> {
        let field = format!("rules[{i}]");
        let Value::Object(map) = value else {
            return Err(ValidationError::field(
                field.clone(),
                format!("{field} must be an object with id, when and then"),
            ));
        };
        let mut errors = ValidationError::default();
        for key in map.keys() {
            if !["id", "when", "then"].contains(&key.as_str()) {
                errors.extend(ValidationError::field(
                    format!("{field}.{key}"),
                    format!("{field}.{key} is not a rule field: use id, when and then"),
                ));
            }
        }
        let id = match map.get("id") {
            None | Some(Value::Null) => Some(format!("rule-{}", i + 1)),
            Some(Value::String(id))
                if !id.is_empty()
                    && char_len(id) <= MAX_RULE_ID_LEN
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') =>
            {
                Some(id.clone())
            }
            Some(_) => {
                errors.extend(ValidationError::field(
                    format!("{field}.id"),
                    format!(
                        "{field}.id must be 1 to {MAX_RULE_ID_LEN} letters, digits, '-', '_' or '.'"
                    ),
                ));
                None
            }
        };
        let when = errors.collect(Condition::parse(map.get("when"), &format!("{field}.when")));
        let then = errors.collect(Self::parse_then(map.get("then"), &format!("{field}.then")));
        errors.into_result()?;
        match (id, when, then) {
            (Some(id), Some(when), Some(then)) => Ok(Self { id, when, then }),
            _ => Err(ValidationError::field(
                field.clone(),
                format!("{field} is invalid"),
            )),
        }
    }

    fn parse_then(value: Option<&Value>, field: &str) -> Result<Action, ValidationError> {
        let wrong = || {
            ValidationError::field(
                field,
                format!(
                    "{field} must be exactly one of {{\"answer\": VALUE}}, {{\"route_to_loop_id\": ID}} or {{\"quorum\": {{...}}}}"
                ),
            )
        };
        let Some(Value::Object(map)) = value else {
            return Err(wrong());
        };
        if map.len() != 1 {
            return Err(wrong());
        }
        match map.iter().next() {
            Some((key, Value::Null)) if key == "answer" => Err(ValidationError::field(
                format!("{field}.answer"),
                format!("{field}.answer must be an answer, not null"),
            )),
            Some((key, answer)) if key == "answer" => Ok(Action::Answer(answer.clone())),
            Some((key, to)) if key == "route_to_loop_id" => to
                .as_str()
                .and_then(|s| LoopId::parse(s).ok())
                .map(Action::Route)
                .ok_or_else(|| {
                    ValidationError::field(
                        format!("{field}.route_to_loop_id"),
                        format!(
                            "{field}.route_to_loop_id must be the id of a loop (24 hexadecimal characters)"
                        ),
                    )
                }),
            Some((key, quorum)) if key == "quorum" => {
                match Quorum::parse(Some(quorum), None) {
                    Ok(Some(q)) => Ok(Action::Quorum(q)),
                    Ok(None) => Err(ValidationError::field(
                        format!("{field}.quorum"),
                        format!("{field}.quorum must be an object with count and rule"),
                    )),
                    Err(e) => Err(ValidationError {
                        errors: e
                            .errors
                            .into_iter()
                            .map(|mut fe| {
                                fe.field = format!("{field}.{}", fe.field);
                                fe.message = format!("{field}.{}", fe.message);
                                fe
                            })
                            .collect(),
                    }),
                }
            }
            _ => Err(wrong()),
        }
    }

    /// As stored and shown.
    pub fn to_value(&self) -> Value {
        json!({ "id": self.id, "when": self.when.to_value(), "then": self.then.to_value() })
    }
}

#[cfg(test)]
mod tests;
