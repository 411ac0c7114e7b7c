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
            scale_max: 5,
            scale_step: 1.0
        }
    );
    assert_eq!(
        parse(ResponseType::Rating, json!({"scale_max": 10})).unwrap(),
        ResponseConfig::Rating {
            scale_min: 1,
            scale_max: 10,
            scale_step: 1.0
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
            max: None,
            decimal_places: None
        }
    );
    assert!(parse(ResponseType::Number, json!({"min": 3, "max": 1})).is_err());
    assert!(parse(ResponseType::Number, json!({"min": "a"})).is_err());
}

#[test]
fn text_max_length_is_bounded() {
    assert_eq!(
        ResponseConfig::parse(ResponseType::Text, None).unwrap(),
        ResponseConfig::Text {
            min_length: 0,
            max_length: 5000
        }
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
    let c = ResponseConfig::Text {
        min_length: 0,
        max_length: 5,
    };
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
        scale_step: 1.0,
    };
    assert!(c.validate_answer("r", &json!(1)).is_ok());
    assert!(c.validate_answer("r", &json!(5.0)).is_ok());
    for bad in [json!(0), json!(6), json!(2.5), json!("3"), json!(null)] {
        assert!(c.validate_answer("r", &bad).is_err(), "{bad}");
    }
}

#[test]
fn allow_negative_false_is_a_lower_bound_of_zero() {
    let config = parse(
        ResponseType::Number,
        json!({"min_value": 1, "max_value": 1000, "allow_negative": false, "decimal_places": 2}),
    )
    .unwrap();
    assert!(config.validate_answer("r", &json!(105.5)).is_ok());
    let open = parse(ResponseType::Number, json!({"allow_negative": false})).unwrap();
    assert_eq!(
        msg(open.validate_answer("default_response", &json!(-3))),
        "default_response must be at least 0"
    );
    assert!(open.validate_answer("r", &json!(0)).is_ok());
    // Said true, or not said, negatives stay allowed.
    for raw in [json!({"allow_negative": true}), json!({})] {
        let config = parse(ResponseType::Number, raw).unwrap();
        assert!(config.validate_answer("r", &json!(-3)).is_ok());
    }
    assert_eq!(
        msg(parse(
            ResponseType::Number,
            json!({"min": -5, "allow_negative": false})
        )),
        "response_config.allow_negative is false, but the lowest allowed value is negative"
    );
    assert_eq!(
        msg(parse(
            ResponseType::Number,
            json!({"max_value": -1, "allow_negative": false})
        )),
        "response_config.allow_negative is false, but the highest allowed value is negative"
    );
    assert_eq!(
        msg(parse(ResponseType::Number, json!({"allow_negative": "no"}))),
        "response_config.allow_negative must be true or false"
    );
}

#[test]
fn a_default_is_held_to_the_maximums_but_not_the_minimums() {
    let text = parse(
        ResponseType::Text,
        json!({"min_length": 20, "max_length": 30}),
    )
    .unwrap();
    let short = json!("No summary provided");
    assert!(text.validate_answer("response_data", &short).is_err());
    assert!(text
        .for_default()
        .validate_answer("default_response", &short)
        .is_ok());
    assert!(text
        .for_default()
        .validate_answer("default_response", &json!("x".repeat(31)))
        .is_err());
    let multi = parse(
        ResponseType::MultiSelect,
        json!({"options": ["a", "b", "c"], "min_selections": 2, "max_selections": 2}),
    )
    .unwrap();
    assert!(multi.validate_answer("response_data", &json!([])).is_err());
    assert!(multi
        .for_default()
        .validate_answer("default_response", &json!([]))
        .is_ok());
    assert!(multi
        .for_default()
        .validate_answer("default_response", &json!(["a", "b", "c"]))
        .is_err());
    assert!(multi
        .for_default()
        .validate_answer("default_response", &json!(["z"]))
        .is_err());
}

#[test]
fn reviewer_hints_are_checked_and_read_back() {
    let raw = json!({"max_value": 500, "prefix": "$", "suffix": " USD", "placeholder": "0.00"});
    parse(ResponseType::Number, raw.clone()).unwrap();
    let hints = ReviewerHints::of(&raw);
    assert_eq!(hints.prefix.as_deref(), Some("$"));
    assert_eq!(hints.suffix.as_deref(), Some(" USD"));
    assert_eq!(hints.placeholder.as_deref(), Some("0.00"));
    let yes_no = json!({"true_label": "Ship it", "false_label": "Hold", "true_color": "#16a34a"});
    parse(ResponseType::Boolean, yes_no.clone()).unwrap();
    let hints = ReviewerHints::of(&yes_no);
    assert_eq!(hints.true_label.as_deref(), Some("Ship it"));
    assert_eq!(hints.false_color, None);
    let scale = json!({"scale_max": 5, "labels": {"1": "Poor", "5": "Excellent"}});
    parse(ResponseType::Rating, scale.clone()).unwrap();
    assert_eq!(
        ReviewerHints::of(&scale).rating_label("5"),
        Some("Excellent")
    );
    assert_eq!(ReviewerHints::of(&scale).rating_label("3"), None);
    for (t, bad, message) in [
        (
            ResponseType::Number,
            json!({"prefix": 5}),
            "response_config.prefix must be a text of 1 to 20 characters",
        ),
        (
            ResponseType::Number,
            json!({"suffix": "x".repeat(21)}),
            "response_config.suffix must be a text of 1 to 20 characters",
        ),
        (
            ResponseType::Boolean,
            json!({"true_label": ""}),
            "response_config.true_label must be a text of 1 to 100 characters",
        ),
        (
            ResponseType::Boolean,
            json!({"false_color": "red"}),
            "response_config.false_color must be #rgb or #rrggbb",
        ),
        (
            ResponseType::Text,
            json!({"placeholder": ["a"]}),
            "response_config.placeholder must be a text of 1 to 100 characters",
        ),
    ] {
        assert_eq!(msg(parse(t, bad)), message);
    }
}

#[test]
fn number_answers_respect_bounds() {
    let c = ResponseConfig::Number {
        min: Some(0.0),
        max: Some(1.5),
        decimal_places: None,
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
        decimal_places: None,
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

#[test]
fn options_may_be_objects_and_come_back_as_written() {
    let raw = json!({"options": [
        "plain",
        {"value": "approve", "label": "✅ Approve", "description": "Fits the guidelines", "color": "#16a34a"},
        {"value": "reject"}
    ]});
    let c = parse(ResponseType::SingleSelect, raw.clone()).unwrap();
    let ResponseConfig::SingleSelect { options } = &c else {
        panic!("{c:?}")
    };
    assert_eq!(
        options.iter().map(SelectOption::label).collect::<Vec<_>>(),
        ["plain", "✅ Approve", "reject"]
    );
    assert_eq!(c.to_value(Some(&raw)), raw, "answered as given");
    assert!(c.validate_answer("r", &json!("approve")).is_ok());
    assert_eq!(
        msg(c.validate_answer("r", &json!("✅ Approve"))),
        "r '✅ Approve' is not one of the options: plain, approve, reject",
        "an answer holds the value, not the label"
    );
    for (bad, says) in [
        (
            json!({"options": [{"label": "No value"}]}),
            "must be strings, or objects with a text `value`",
        ),
        (json!({"options": [7]}), "must be strings, or objects"),
        (
            json!({"options": [{"value": "a", "color": "green"}]}),
            "`color` must be #rgb or #rrggbb",
        ),
        (
            json!({"options": [{"value": "a", "label": ""}]}),
            "`label` must be a text of 1 to 200",
        ),
        (
            json!({"options": ["a", {"value": "a"}]}),
            "must be unique; 'a' appears twice",
        ),
    ] {
        let got = msg(parse(ResponseType::MultiSelect, bad.clone()));
        assert!(got.contains(says), "{bad}: {got}");
    }
}

#[test]
fn hitl_bounds_are_enforced() {
    let text = parse(
        ResponseType::Text,
        json!({"min_length": 3, "max_length": 10}),
    )
    .unwrap();
    assert_eq!(
        msg(text.validate_answer("r", &json!("ok"))),
        "r must be at least 3 characters"
    );
    assert!(text.validate_answer("r", &json!("fine")).is_ok());
    assert!(parse(
        ResponseType::Text,
        json!({"min_length": 11, "max_length": 10})
    )
    .is_err());

    let multi = parse(
        ResponseType::MultiSelect,
        json!({"options": ["a", "b", "c", "d"], "min_selections": 2, "max_selections": 3}),
    )
    .unwrap();
    assert_eq!(
        msg(multi.validate_answer("r", &json!(["a"]))),
        "r must select at least 2 options"
    );
    assert_eq!(
        msg(multi.validate_answer("r", &json!(["a", "b", "c", "d"]))),
        "r must select at most 3 options"
    );
    assert!(multi.validate_answer("r", &json!(["a", "d"])).is_ok());
    assert!(parse(
        ResponseType::MultiSelect,
        json!({"options": ["a", "b"], "max_selections": 3})
    )
    .is_err());
    let optional = parse(
        ResponseType::MultiSelect,
        json!({"options": ["a"], "min_selections": 0}),
    )
    .unwrap();
    assert!(optional.validate_answer("r", &json!([])).is_ok());

    let halves = parse(
        ResponseType::Rating,
        json!({"scale_min": 1, "scale_max": 5, "scale_step": 0.5}),
    )
    .unwrap();
    assert!(halves.validate_answer("r", &json!(4.5)).is_ok());
    assert_eq!(
        msg(halves.validate_answer("r", &json!(4.25))),
        "r must be from 1 to 5 in steps of 0.5"
    );
    assert!(parse(ResponseType::Rating, json!({"scale_step": 0})).is_err());
    assert!(parse(ResponseType::Rating, json!({"scale_step": 5e-324})).is_err());

    let price = parse(
        ResponseType::Number,
        json!({"min_value": 0, "max_value": 1000, "decimal_places": 2}),
    )
    .unwrap();
    assert!(price.validate_answer("r", &json!(129.99)).is_ok());
    assert_eq!(
        msg(price.validate_answer("r", &json!(1001))),
        "r must be from 0 to 1000"
    );
    assert_eq!(
        msg(price.validate_answer("r", &json!(1.005))),
        "r must have at most 2 decimal places"
    );
    assert!(
        price.validate_answer("r", &json!(999.5)).is_ok(),
        "a bound tolerance never hides decimals"
    );
    let big = parse(ResponseType::Number, json!({"decimal_places": 2})).unwrap();
    assert!(big.validate_answer("r", &json!(12345.678)).is_err());
    let whole = parse(ResponseType::Number, json!({"decimal_places": 0})).unwrap();
    assert!(whole.validate_answer("r", &json!(1234567.5)).is_err());
    assert!(whole.validate_answer("r", &json!(1234567)).is_ok());
    assert_eq!(
        msg(parse(
            ResponseType::Number,
            json!({"min": 1, "min_value": 2})
        )),
        "response_config.min_value disagrees with response_config.min: send one of them"
    );
}

#[test]
fn a_restored_configuration_is_the_one_written_and_parses_when_used() {
    let written = RequestConfig::parse(
        ResponseType::SingleSelect,
        Some(&json!({"options": ["a", "b"], "placeholder": "Pick"})),
    )
    .unwrap();
    let restored = RequestConfig::restore(ResponseType::SingleSelect, written.as_value().clone());
    assert_eq!(restored, written, "equal before it is parsed");
    assert_eq!(restored.typed().unwrap(), written.typed().unwrap());
    assert_eq!(restored, written, "and after");
    let broken = RequestConfig::restore(ResponseType::SingleSelect, json!({"options": []}));
    assert!(broken.typed().is_err());
    assert!(
        broken.typed().is_err(),
        "the error is kept, not lost on first use"
    );
}

fn words(response_type: ResponseType, config: Value, answer: Value) -> String {
    let config = RequestConfig::parse(response_type, Some(&config)).unwrap();
    config
        .typed()
        .unwrap()
        .answer_words(&ReviewerHints::of(config.as_value()), &answer)
}

#[test]
fn answers_are_shown_in_the_words_the_request_gave_them() {
    let refund = json!({"true_label": "Refund", "false_label": "Keep"});
    assert_eq!(
        words(ResponseType::Boolean, refund.clone(), json!(true)),
        "Refund"
    );
    assert_eq!(words(ResponseType::Boolean, refund, json!(false)), "Keep");
    assert_eq!(
        words(ResponseType::Boolean, json!({}), json!(true)),
        "Approved"
    );
    assert_eq!(
        words(ResponseType::Boolean, json!({}), json!(false)),
        "Rejected"
    );

    let options = json!({"options": [{"value": "hold", "label": "Hold it"}, "ship"]});
    assert_eq!(
        words(ResponseType::SingleSelect, options.clone(), json!("hold")),
        "Hold it"
    );
    assert_eq!(
        words(ResponseType::SingleSelect, options.clone(), json!("ship")),
        "ship"
    );
    assert_eq!(
        words(ResponseType::MultiSelect, options, json!(["ship", "hold"])),
        "ship, Hold it"
    );

    let scale = json!({"scale_max": 5, "labels": {"1": "Poor", "5": "Excellent"}});
    assert_eq!(
        words(ResponseType::Rating, scale.clone(), json!(5)),
        "5 (Excellent)"
    );
    assert_eq!(words(ResponseType::Rating, scale.clone(), json!(3)), "3");
    assert_eq!(
        words(ResponseType::Rating, scale, json!(5.0)),
        "5 (Excellent)"
    );
    assert_eq!(
        words(
            ResponseType::Number,
            json!({"prefix": "$", "suffix": " USD"}),
            json!(12.5)
        ),
        "$12.5 USD"
    );
    assert_eq!(words(ResponseType::Text, json!({}), json!("fine")), "fine");
}

#[test]
fn an_answer_the_settings_no_longer_know_is_shown_as_it_is() {
    let options = json!({"options": ["a", "b"]});
    assert_eq!(
        words(ResponseType::SingleSelect, options, json!("gone")),
        "gone"
    );
    assert_eq!(plain_words(&json!(["x", 2])), "x, 2");
    assert_eq!(plain_words(&Value::Null), "no answer");
}
