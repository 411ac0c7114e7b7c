//! The rules as a form beside their JSON: each rule a fieldset of plain
//! controls (when: priority, platform, response type, context tests;
//! then: answer, route or quorum). Both views are drawn from the same
//! rules after every post, so they stay in step without the script: the
//! JSON wins when it was edited (it differs from the copy the page was
//! drawn with), else the form does.

use maud::{html, Markup};
use reviewloop_domain::{Loop, Operator, Platform, Priority, ResponseType, MAX_RULES};
use serde_json::{json, Map, Value};

use crate::form::FormData;

/// The most context tests a rule may have; each of its comparisons is a
/// row of the form, so a rule may post up to this many rows per operator.
const MAX_TESTS: usize = 20;
const MAX_TEST_ROWS: usize = MAX_TESTS * 7;

/// One context test as the form shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct TestRow {
    pub pointer: String,
    pub op: String,
    /// JSON (`100`, `["DE", "FR"]`), or a plain word read as text.
    pub value: String,
}

/// One rule as the form shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RuleRow {
    pub id: String,
    pub priority: Vec<String>,
    pub platform: Vec<String>,
    pub response_type: Vec<String>,
    pub tests: Vec<TestRow>,
    /// `answer`, `route` or `quorum`.
    pub then: String,
    pub answer: String,
    pub route: String,
    pub quorum_count: String,
    pub quorum_rule: String,
    pub quorum_exclude: bool,
}

impl RuleRow {
    fn is_blank(&self) -> bool {
        self.id.trim().is_empty()
            && self.priority.is_empty()
            && self.platform.is_empty()
            && self.response_type.is_empty()
            && self.tests.iter().all(TestRow::is_blank)
            && self.answer.trim().is_empty()
            && self.route.trim().is_empty()
            && self.quorum_count.trim().is_empty()
    }
}

impl TestRow {
    fn is_blank(&self) -> bool {
        self.pointer.trim().is_empty() && self.value.trim().is_empty()
    }
}

/// A value as the form shows it: text as it is when it cannot be read as
/// anything else, else its JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) if serde_json::from_str::<Value>(s).is_err() && !s.trim().is_empty() => {
            s.clone()
        }
        other => other.to_string(),
    }
}

/// What was typed as a value: JSON when it reads as JSON, else text.
fn typed(text: &str) -> Value {
    let text = text.trim();
    serde_json::from_str(text).unwrap_or_else(|_| Value::from(text))
}

/// One name or a list of names, as `when` may give them.
fn names(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// The rows of rules given as JSON (read leniently: what does not fit a
/// control is left out of the form, and the JSON still shows it).
pub(super) fn rows_of(rules: &Value) -> Vec<RuleRow> {
    let Some(items) = rules.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .map(|rule| {
            let when = rule.get("when");
            let tests = match when.and_then(|w| w.get("context")) {
                Some(Value::Array(tests)) => tests.clone(),
                Some(test @ Value::Object(_)) => vec![test.clone()],
                _ => Vec::new(),
            };
            let tests = tests
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|test| {
                    let pointer = test
                        .get("pointer")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    test.iter()
                        .filter(|(key, _)| *key != "pointer")
                        .map(move |(op, value)| TestRow {
                            pointer: pointer.clone(),
                            op: op.clone(),
                            value: shown(value),
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            let then = rule.get("then");
            let quorum = then.and_then(|t| t.get("quorum"));
            RuleRow {
                id: rule
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                priority: names(when.and_then(|w| w.get("priority"))),
                platform: names(when.and_then(|w| w.get("platform"))),
                response_type: names(when.and_then(|w| w.get("response_type"))),
                tests,
                then: match then {
                    Some(t) if t.get("route_to_loop_id").is_some() => "route",
                    Some(t) if t.get("quorum").is_some() => "quorum",
                    _ => "answer",
                }
                .into(),
                answer: then
                    .and_then(|t| t.get("answer"))
                    .map(shown)
                    .unwrap_or_default(),
                route: then
                    .and_then(|t| t.get("route_to_loop_id"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                quorum_count: quorum
                    .and_then(|q| q.get("count"))
                    .map(shown)
                    .unwrap_or_default(),
                quorum_rule: quorum
                    .and_then(|q| q.get("rule"))
                    .and_then(Value::as_str)
                    .unwrap_or("all_agree")
                    .to_owned(),
                quorum_exclude: quorum
                    .and_then(|q| q.get("exclude_requester"))
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
            }
        })
        .collect()
}

/// The rows as posted: `rule_count` rules named `r{i}.…`, each with
/// `r{i}.test_count` tests named `r{i}.t{k}.…`.
pub(super) fn rows_posted(f: &FormData) -> Vec<RuleRow> {
    let count = |name: &str, max: usize| {
        f.get(name)
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(0)
            .min(max)
    };
    (0..count("rule_count", MAX_RULES + 1))
        .filter(|i| !f.checked(&format!("r{i}.remove")))
        .map(|i| {
            let text = |key: &str| f.text(&format!("r{i}.{key}")).to_owned();
            let all = |key: &str| {
                f.all(&format!("r{i}.{key}"))
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            };
            RuleRow {
                id: text("id"),
                priority: all("priority"),
                platform: all("platform"),
                response_type: all("response_type"),
                tests: (0..count(&format!("r{i}.test_count"), MAX_TEST_ROWS + 1))
                    .map(|k| TestRow {
                        pointer: text(&format!("t{k}.pointer")),
                        op: text(&format!("t{k}.op")),
                        value: text(&format!("t{k}.value")),
                    })
                    .collect(),
                then: text("then"),
                answer: text("answer"),
                route: text("route"),
                quorum_count: text("quorum_count"),
                quorum_rule: text("quorum_rule"),
                quorum_exclude: f.checked(&format!("r{i}.quorum_exclude")),
            }
        })
        .collect()
}

/// The rules the rows say, as the API takes them (the service checks them
/// and names what is wrong). Rows nobody wrote in are left out; a rule
/// without an id gets the first `rule-N` no other rule has.
pub(super) fn json_of(rows: &[RuleRow]) -> Value {
    let mut taken: Vec<String> = rows.iter().map(|r| r.id.trim().to_owned()).collect();
    let mut fresh_id = || {
        let id = (1..)
            .map(|n| format!("rule-{n}"))
            .find(|id| !taken.contains(id))
            .unwrap_or_default();
        taken.push(id.clone());
        id
    };
    let rules = rows
        .iter()
        .filter(|r| !r.is_blank())
        .map(|row| {
            let mut when = Map::new();
            for (key, chosen) in [
                ("priority", &row.priority),
                ("platform", &row.platform),
                ("response_type", &row.response_type),
            ] {
                if !chosen.is_empty() {
                    when.insert(key.into(), json!(chosen));
                }
            }
            let tests: Vec<Value> = row
                .tests
                .iter()
                .filter(|t| !t.is_blank())
                .map(|t| {
                    let mut test = Map::new();
                    test.insert("pointer".into(), Value::from(t.pointer.trim()));
                    test.insert(t.op.clone(), typed(&t.value));
                    Value::Object(test)
                })
                .collect();
            if !tests.is_empty() {
                when.insert("context".into(), Value::Array(tests));
            }
            let then = match row.then.as_str() {
                "route" => json!({"route_to_loop_id": row.route.trim()}),
                "quorum" => json!({"quorum": {
                    "count": typed(&row.quorum_count),
                    "rule": row.quorum_rule,
                    "exclude_requester": row.quorum_exclude,
                }}),
                _ => json!({"answer": typed(&row.answer)}),
            };
            let mut rule = Map::new();
            let id = match row.id.trim() {
                "" => fresh_id(),
                id => id.to_owned(),
            };
            rule.insert("id".into(), Value::from(id));
            rule.insert("when".into(), Value::Object(when));
            rule.insert("then".into(), then);
            Value::Object(rule)
        })
        .collect();
    Value::Array(rules)
}

/// `\r\n` (as browsers send a text area) read as `\n`, without the ends.
pub(super) fn same_text(a: &str, b: &str) -> bool {
    a.replace("\r\n", "\n").trim() == b.replace("\r\n", "\n").trim()
}

fn checks(name: &str, all: &[&'static str], chosen: &[String], legend: &str) -> Markup {
    html! {
        fieldset.choices-inline {
            legend { (legend) " " small { "(none ticked: any)" } }
            @for value in all {
                label.check { input type="checkbox" name=(name) value=(value) checked[chosen.iter().any(|c| c == value)]; " " (value.replace('_', " ")) }
            }
        }
    }
}

/// The form: every rule, then a blank one to add; each rule's tests and a
/// blank test to add.
pub(super) fn render(rows: &[RuleRow], others: &[Loop]) -> Markup {
    let mut rows = rows.to_vec();
    if rows.len() < MAX_RULES {
        rows.push(RuleRow {
            then: "answer".into(),
            quorum_rule: "all_agree".into(),
            quorum_exclude: true,
            ..RuleRow::default()
        });
    }
    let last = rows.len() - 1;
    // Each rule's tests end with a blank one, to add a test.
    let tests: Vec<Vec<TestRow>> = rows
        .iter()
        .map(|row| {
            let mut tests = row.tests.clone();
            if tests.len() < MAX_TEST_ROWS {
                tests.push(TestRow {
                    op: "eq".into(),
                    ..TestRow::default()
                });
            }
            tests
        })
        .collect();
    html! {
        input type="hidden" name="rule_count" value=(rows.len());
        @for ((i, row), tests) in rows.iter().enumerate().zip(&tests) {
            @let blank = i == last && row.is_blank();
            @if blank {
                details.new-rule open[rows.len() == 1] {
                    summary { "Add a rule" }
                    (rule_fieldset(i, row, tests, others, true))
                }
            } @else {
                (rule_fieldset(i, row, tests, others, false))
            }
        }
    }
}

/// What the form calls each part of a rule, by the part's name in the
/// API (list indices left out).
const RULE_LABELS: &[(&str, &str)] = &[
    ("id", "Id"),
    ("when", "When"),
    ("when.priority", "Priority"),
    ("when.platform", "Platform"),
    ("when.response_type", "Response type"),
    ("when.context", "Context tests"),
    ("when.context.pointer", "Pointer"),
    ("then", "Then"),
    ("then.answer", "The answer"),
    ("then.route_to_loop_id", "The loop"),
    ("then.quorum", "Ask for a quorum"),
    ("then.quorum.count", "Answers needed"),
    ("then.quorum.rule", "Decided when"),
    ("then.quorum.exclude_requester", "Its sender may not answer"),
];

/// A message about `rules[i].…` in the words of the form beside it:
/// "Rule 1: “Answers needed” is 50 but … (rules[0].then.quorum.count)".
/// The API's name stays at the end for whoever edits the JSON.
/// (`None`: not about one rule.)
pub(crate) fn in_rule_words(message: &str) -> Option<String> {
    let rest = message.strip_prefix("rules[")?;
    let close = rest.find(']')?;
    let index: usize = rest[..close].parse().ok()?;
    let after = &rest[close + 1..];
    let (path, said) = match after.strip_prefix('.') {
        Some(dotted) => dotted.split_at(dotted.find(' ').unwrap_or(dotted.len())),
        None => ("", after),
    };
    let api_name = &message[..message.len() - said.len()];
    // `when.context[1].pointer` is labelled as `when.context.pointer`.
    let mut plain = String::new();
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => in_index = true,
            ']' => in_index = false,
            c if !in_index => plain.push(c),
            _ => {}
        }
    }
    // The page shows the rules again in the order the API numbers them.
    let rule = index.saturating_add(1);
    Some(match RULE_LABELS.iter().find(|(name, _)| plain == *name) {
        Some((_, label)) => format!("Rule {rule}: “{label}”{said} ({api_name})"),
        // A part the form has no field for (a key it does not know) keeps
        // its API name.
        None if path.is_empty() => format!("Rule {rule}{said}"),
        None => format!("Rule {rule}: {path}{said}"),
    })
}

/// One rule's controls, named `r{i}.…`.
fn rule_fieldset(
    i: usize,
    row: &RuleRow,
    tests: &[TestRow],
    others: &[Loop],
    blank: bool,
) -> Markup {
    let r = |key: &str| format!("r{i}.{key}");
    let priorities: Vec<&str> = Priority::ALL.iter().map(|p| p.as_str()).collect();
    let platforms: Vec<&str> = Platform::ALL.iter().map(|p| p.as_str()).collect();
    let types: Vec<&str> = ResponseType::ALL.iter().map(|t| t.as_str()).collect();
    html! {
        fieldset.rule-row {
            legend { @if blank { "A new rule" } @else { "Rule " (i + 1) } }
            label { "Id " small { "(recorded on the requests it decides)" }
                input type="text" name=(r("id")) value=(row.id) maxlength="64" spellcheck="false"; }
            p.rule-part { "When" }
            (checks(&r("priority"), &priorities, &row.priority, "Priority"))
            (checks(&r("platform"), &platforms, &row.platform, "Platform"))
            (checks(&r("response_type"), &types, &row.response_type, "Response type"))
            fieldset.context-tests {
                legend { "Context tests " small { "(every one must hold)" } }
                input type="hidden" name=(r("test_count")) value=(tests.len());
                @for (k, test) in tests.iter().enumerate() {
                    div.context-test {
                        label { "Pointer" input type="text" name=(r(&format!("t{k}.pointer"))) value=(test.pointer) placeholder="/amount" spellcheck="false"; }
                        label { "Test"
                            select name=(r(&format!("t{k}.op"))) {
                                @for op in Operator::ALL {
                                    option value=(op.as_str()) selected[test.op == op.as_str()] { (operator_words(*op)) }
                                }
                            }
                        }
                        label { "Value" input type="text" name=(r(&format!("t{k}.value"))) value=(test.value) placeholder="100" spellcheck="false"; }
                    }
                }
            }
            p.rule-part { "Then" }
            fieldset.then {
                legend.visually-hidden { "What it does" }
                label.check { input type="radio" name=(r("then")) value="answer" checked[row.then == "answer"]; " Answer at once with " }
                label { span.visually-hidden { "The answer" } input type="text" name=(r("answer")) value=(row.answer) placeholder="true" spellcheck="false"; }
                label.check { input type="radio" name=(r("then")) value="route" checked[row.then == "route"]; " Send it to another loop" }
                label { span.visually-hidden { "The loop" }
                    select name=(r("route")) {
                        option value="" selected[row.route.is_empty()] { "Choose a loop" }
                        (super::loop_choices(others, &row.route))
                    }
                }
                label.check { input type="radio" name=(r("then")) value="quorum" checked[row.then == "quorum"]; " Ask for a quorum" }
                div.quorum-inline {
                    label { "Answers needed" input type="number" name=(r("quorum_count")) value=(row.quorum_count) min="1" step="1"; }
                    label { "Decided when"
                        select name=(r("quorum_rule")) {
                            option value="all_agree" selected[row.quorum_rule != "majority"] { "that many give the same answer" }
                            option value="majority" selected[row.quorum_rule == "majority"] { "that many have answered (most common)" }
                        }
                    }
                    label.check { input type="checkbox" name=(r("quorum_exclude")) value="true" checked[row.quorum_exclude]; " Its sender may not answer" }
                }
            }
            @if !blank {
                label.check.remove { input type="checkbox" name=(r("remove")) value="true"; " Remove this rule" }
            }
        }
    }
}

fn operator_words(op: Operator) -> &'static str {
    match op {
        Operator::Eq => "equals",
        Operator::Ne => "does not equal",
        Operator::Lt => "is less than",
        Operator::Lte => "is at most",
        Operator::Gt => "is more than",
        Operator::Gte => "is at least",
        Operator::In => "is one of (a JSON list)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_with_a_rule_read_in_the_forms_words() {
        assert_eq!(
            in_rule_words("rules[0].then.quorum.count is 50 but the loop has 1").as_deref(),
            Some("Rule 1: “Answers needed” is 50 but the loop has 1 (rules[0].then.quorum.count)")
        );
        assert_eq!(
            in_rule_words("rules[2].when.context[1].pointer must be a JSON pointer").as_deref(),
            Some("Rule 3: “Pointer” must be a JSON pointer (rules[2].when.context[1].pointer)")
        );
        assert_eq!(
            in_rule_words("rules[0].when.colour is not a condition").as_deref(),
            Some("Rule 1: when.colour is not a condition")
        );
        assert_eq!(
            in_rule_words("rules[1] must be an object with id, when and then").as_deref(),
            Some("Rule 2 must be an object with id, when and then")
        );
        assert_eq!(in_rule_words("rules must be a list"), None);
        assert_eq!(in_rule_words("rules[x].id is bad"), None);
    }

    #[test]
    fn rules_read_into_rows_and_back_unchanged() {
        let rules = json!([
            {"id": "small", "when": {"priority": ["low", "medium"], "context": [
                {"pointer": "/amount", "lt": 50}, {"pointer": "/country", "in": ["DE", "FR"]}]},
             "then": {"answer": true}},
            {"id": "text", "when": {"platform": ["n8n"]}, "then": {"answer": "approve"}},
            {"id": "word", "when": {}, "then": {"answer": "100"}},
            {"id": "two", "when": {"response_type": ["boolean"]},
             "then": {"quorum": {"count": 2, "rule": "majority", "exclude_requester": false}}},
            {"id": "on", "when": {}, "then": {"route_to_loop_id": "5f5e1000ab010203040506ff"}}
        ]);
        let rows = rows_of(&rules);
        assert_eq!(rows[0].tests.len(), 2);
        assert_eq!(rows[1].answer, "approve", "a word is shown as a word");
        assert_eq!(
            rows[2].answer, "\"100\"",
            "text that reads as a number keeps its quotes"
        );
        assert_eq!(json_of(&rows), rules);
    }

    #[test]
    fn blank_rows_and_tests_are_left_out() {
        let mut rows = rows_of(&json!([{"id": "a", "when": {}, "then": {"answer": true}}]));
        rows[0].tests.push(TestRow {
            op: "eq".into(),
            ..TestRow::default()
        });
        rows.push(RuleRow {
            then: "answer".into(),
            ..RuleRow::default()
        });
        assert_eq!(
            json_of(&rows),
            json!([{"id": "a", "when": {}, "then": {"answer": true}}])
        );
    }

    #[test]
    fn a_rule_without_an_id_gets_one_no_other_rule_has() {
        let rows = rows_of(&json!([
            {"when": {}, "then": {"answer": true}},
            {"id": "rule-1", "when": {}, "then": {"answer": false}}
        ]));
        let mut rows = rows;
        rows[0].id.clear();
        let json = json_of(&rows);
        assert_eq!(json[0]["id"], "rule-2");
        assert_eq!(json[1]["id"], "rule-1");
    }

    #[test]
    fn text_areas_match_whatever_line_ends_the_browser_sent() {
        assert!(same_text("[\r\n  1\r\n]\r\n", "[\n  1\n]"));
        assert!(!same_text("[1]", "[2]"));
    }
}
