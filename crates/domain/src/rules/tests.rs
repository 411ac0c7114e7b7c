use serde_json::json;

use super::*;

fn facts(context: &Value) -> Facts<'_> {
    Facts {
        priority: Priority::High,
        platform: Platform::Api,
        response_type: ResponseType::Boolean,
        context: Some(context),
    }
}

fn fields_of(error: &ValidationError) -> Vec<&str> {
    error.errors.iter().map(|e| e.field.as_str()).collect()
}

#[test]
fn the_first_rule_whose_conditions_all_hold_is_found() {
    let rules = Rules::parse(Some(&json!([
        {"id": "big", "when": {"context": {"pointer": "/amount", "gte": 1000}},
         "then": {"quorum": {"count": 2, "rule": "all_agree"}}},
        {"id": "small", "when": {"priority": ["low", "high"], "response_type": "boolean",
                                 "context": [{"pointer": "/amount", "lt": 100},
                                             {"pointer": "/country", "in": ["DE", "FR"]}]},
         "then": {"answer": true}},
        {"when": {}, "then": {"route_to_loop_id": "65f0c0ffee0000000000abcd"}}
    ])))
    .unwrap();
    let first = |context: Value| {
        rules
            .matching(&facts(&context))
            .next()
            .map(|(_, r)| r.id.clone())
    };
    assert_eq!(first(json!({"amount": 5000})).as_deref(), Some("big"));
    assert_eq!(
        first(json!({"amount": 99.5, "country": "DE"})).as_deref(),
        Some("small")
    );
    assert_eq!(
        first(json!({"amount": 99.5, "country": "US"})).as_deref(),
        Some("rule-3"),
        "an unnamed rule is named by its place"
    );
    assert_eq!(
        first(json!({"country": "DE"})).as_deref(),
        Some("rule-3"),
        "a missing value fails every test"
    );
    assert_eq!(rules.routes().count(), 1);
    assert_eq!(
        rules.missing_pointer(Some(&json!({"amount": 1}))),
        Some(("small", "/country"))
    );
    assert_eq!(rules.missing_pointer(None), Some(("big", "/amount")));
}

#[test]
fn comparisons_follow_their_operators() {
    let holds = |test: Value, context: Value| {
        ContextTest::parse(&test, "t")
            .unwrap()
            .holds(Some(&context))
    };
    assert!(holds(
        json!({"pointer": "/n", "eq": 100}),
        json!({"n": 100.0})
    ));
    assert!(holds(json!({"pointer": "/n", "ne": 1}), json!({"n": 2})));
    assert!(!holds(json!({"pointer": "/n", "ne": 1}), json!({})));
    assert!(holds(
        json!({"pointer": "/n", "gt": 1, "lte": 2}),
        json!({"n": 2})
    ));
    assert!(!holds(
        json!({"pointer": "/n", "gt": 1, "lte": 2}),
        json!({"n": 3})
    ));
    assert!(holds(
        json!({"pointer": "/d", "lt": "2027"}),
        json!({"d": "2026-11-25"})
    ));
    assert!(
        !holds(json!({"pointer": "/n", "lt": 5}), json!({"n": "3"})),
        "no coercion"
    );
    assert!(holds(
        json!({"pointer": "/a~1b/0", "eq": true}),
        json!({"a/b": [true]})
    ));
}

#[test]
fn rules_that_do_not_parse_are_refused_with_every_mistake_named() {
    let error = Rules::parse(Some(&json!([
        {"id": "x y", "when": {"priority": "urgent", "colour": 1,
                               "context": [{"pointer": "amount", "lt": 1},
                                           {"pointer": "/a", "like": 1},
                                           {"pointer": "/a", "in": 3}]},
         "then": {"answer": true, "quorum": {"count": 2}}},
        {"id": "q", "then": {"quorum": {"count": 0}}},
        {"id": "q", "then": {"route_to_loop_id": "nope"}},
        "a rule"
    ])))
    .unwrap_err();
    assert_eq!(
        fields_of(&error),
        [
            "rules[0].id",
            "rules[0].when.colour",
            "rules[0].when.context[0].pointer",
            "rules[0].when.context[1].like",
            "rules[0].when.context[2].in",
            "rules[0].when.priority",
            "rules[0].then",
            "rules[1].then.quorum.count",
            "rules[2].then.route_to_loop_id",
            "rules[3]",
        ]
    );
    let duplicate = Rules::parse(Some(&json!([
        {"id": "a", "then": {"answer": 1}},
        {"id": "a", "then": {"answer": 2}}
    ])))
    .unwrap_err();
    assert_eq!(fields_of(&duplicate), ["rules[1].id"]);
    assert_eq!(
        fields_of(&Rules::parse(Some(&json!({"id": "a"}))).unwrap_err()),
        ["rules"]
    );
}

#[test]
fn rules_are_stored_in_the_shape_they_are_read_in() {
    let rules = Rules::parse(Some(&json!([
        {"id": "a", "when": {"platform": "n8n", "context": {"pointer": "/x", "eq": null}},
         "then": {"answer": "approve"}}
    ])))
    .unwrap();
    let stored = rules.to_value();
    assert_eq!(stored[0]["when"]["platform"], json!(["n8n"]));
    assert_eq!(Rules::parse(Some(&stored)).unwrap(), rules);
    let applied = AppliedRule {
        loop_id: LoopId::parse("65f0c0ffee0000000000abcd").unwrap(),
        rule_id: "a".into(),
        then: Action::Answer(json!("approve")),
    };
    assert_eq!(AppliedRule::from_value(&applied.to_value()), Some(applied));
}
