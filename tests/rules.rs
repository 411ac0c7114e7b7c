//! Black-box: a loop's rules answer routine requests at once, route others
//! to another loop, or ask for a quorum; the rule that decided is
//! recorded; the test endpoint says what a sample would do; bad rules,
//! cycles and unreachable quorums are refused by name; the web page edits
//! the rules with the test beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::people::{csrf_of, Person};
use common::{id_of, Server};
use serde_json::{json, Value};

/// A yes/no refund request with `amount` in its context.
fn refund(amount: f64, platform: &str) -> Value {
    json!({
        "request_text": "Refund this order?",
        "type": "markdown",
        "response_type": "boolean",
        "priority": "medium",
        "processing_type": "deferred",
        "default_response": false,
        "platform": platform,
        "context": {"amount": amount, "country": "DE"},
    })
}

struct Setup {
    s: Server,
    refunds: String,
    finance: String,
    stranger_loop: String,
}

/// Refunds (admin + two reviewers) and Finance (admin + one reviewer).
fn setup() -> Setup {
    let s = Server::start();
    let refunds = s.create_loop(&s.admin_key, "Refunds");
    for who in ["a@example.com", "b@example.com"] {
        let key = s.key(who);
        s.join(&key, &refunds);
    }
    let finance = s.create_loop(&s.admin_key, "Finance");
    let cfo = s.key("cfo@example.com");
    s.join(&cfo, &finance);
    let stranger = s.key("stranger@example.com");
    let stranger_loop = id_of(&s.create_loop(&stranger, "Elsewhere")["loop"]);
    Setup {
        refunds: id_of(&refunds["loop"]),
        finance: id_of(&finance["loop"]),
        stranger_loop,
        s,
    }
}

fn rules_decide_route_and_ask_for_quorums() {
    let Setup {
        s,
        refunds,
        finance,
        stranger_loop,
    } = setup();
    let put_rules = |loop_id: &str, rules: Value| {
        s.put(
            &s.admin_key,
            &format!("/v1/api/loops/{loop_id}"),
            json!({"rules": rules}),
        )
    };

    // Rules that do not parse: every mistake named by its place.
    let bad = put_rules(
        &refunds,
        json!([
            {"id": "small", "when": {"context": {"pointer": "amount", "lt": 50}, "colour": "red"},
             "then": {"answer": true}},
            {"id": "small", "then": {"answer": true, "route_to_loop_id": finance}},
        ]),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.body["msg"],
        "rules[0].when.colour is not a condition: use priority, platform, response_type or context; \
         rules[0].when.context[0].pointer must be a JSON pointer into context, such as \"/amount\"; \
         rules[1].then must be exactly one of {\"answer\": VALUE}, {\"route_to_loop_id\": ID} or {\"quorum\": {...}}"
    );
    // Routes to a loop the owner may not use, or into the loop itself;
    // a quorum its members cannot reach.
    let bad = put_rules(
        &refunds,
        json!([
            {"when": {}, "then": {"route_to_loop_id": stranger_loop}},
            {"when": {}, "then": {"route_to_loop_id": refunds}},
            {"when": {}, "then": {"quorum": {"count": 3}}},
        ]),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.body["msg"],
        "rules[0].then.route_to_loop_id names no loop you may use; \
         rules[2].then.quorum.count is 3 but the loop has only 2 active members other than the requester to answer; \
         rules[1].then.route_to_loop_id routes into this same loop"
    );

    let saved = put_rules(
        &refunds,
        json!([
            {"id": "small-refunds", "when": {"response_type": "boolean",
                "context": [{"pointer": "/amount", "lt": 50}, {"pointer": "/country", "in": ["DE", "FR"]}]},
             "then": {"answer": true}},
            {"id": "big-refunds", "when": {"context": {"pointer": "/amount", "gte": 1000}},
             "then": {"quorum": {"count": 2, "rule": "all_agree"}}},
            {"id": "from-zapier", "when": {"platform": "zapier"},
             "then": {"route_to_loop_id": finance}},
        ]),
    )
    .data(200)
    .clone();
    assert_eq!(saved["loop"]["rules"][0]["id"], "small-refunds");
    assert_eq!(
        saved["loop"]["rules"][2]["when"]["platform"],
        json!(["zapier"])
    );

    // A route back from Finance to Refunds would close a cycle.
    let cycle = put_rules(
        &finance,
        json!([{"id": "back", "when": {}, "then": {"route_to_loop_id": refunds}}]),
    );
    assert_eq!(cycle.status, 400);
    assert_eq!(
        cycle.body["msg"],
        format!(
            "rules[0].then.route_to_loop_id makes a cycle: the rules of loop {refunds} lead back into this loop"
        )
    );

    let create = |body: Value| {
        s.post(&s.admin_key, &format!("/v1/loops/{refunds}/requests"), body)
            .data(201)["request"]
            .clone()
    };
    // A small refund is answered by the rule at once, nobody asked.
    let small = create(refund(20.0, "api"));
    assert_eq!(small["status"], "completed");
    assert_eq!(small["response_data"], true);
    assert_eq!(small["response_by"], Value::Null);
    assert_eq!(small["decided_by_rule"], "small-refunds");
    assert_eq!(small["broadcasted_to"], json!([]));
    assert_eq!(small["applied_rules"][0]["rule_id"], "small-refunds");
    assert!(small["receipt"]["signature"].is_string(), "{small}");
    let id = id_of(&small);
    let audit = s.get(&s.admin_key, "/v1/api/audit?limit=1000").data(200)["entries"].clone();
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["request_id"] == id.as_str())
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["request.created", "request.completed"]);
    // Nobody can answer it any more; a reviewer never sees it.
    let a = s.key_with("a@example.com", &[]);
    assert_eq!(s.get(&a, &format!("/v1/api/requests/{id}")).status, 404);

    // A large one needs two approvals.
    let big = create(refund(5000.0, "api"));
    assert_eq!(big["status"], "pending");
    assert_eq!(big["quorum"]["count"], 2);
    assert_eq!(big["decided_by_rule"], Value::Null);
    assert_eq!(big["applied_rules"][0]["rule_id"], "big-refunds");
    assert_eq!(big["loop_id"], refunds.as_str());

    // One from Zapier goes to Finance's members instead.
    let routed = create(refund(200.0, "zapier"));
    assert_eq!(routed["loop_id"], finance.as_str());
    assert_eq!(
        routed["applied_rules"][0]["then"]["route_to_loop_id"],
        finance.as_str()
    );
    let emails: Vec<&str> = routed["broadcasted_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["email"].as_str().unwrap())
        .collect();
    assert!(emails.contains(&"cfo@example.com"), "{emails:?}");
    assert!(!emails.contains(&"a@example.com"), "{emails:?}");

    // A member's request is not routed where the member may not look.
    let a = s.key_with("a@example.com", &[]);
    let stays = s
        .post(
            &a,
            &format!("/v1/loops/{refunds}/requests"),
            refund(200.0, "zapier"),
        )
        .data(201)["request"]
        .clone();
    assert_eq!(stays["loop_id"], refunds.as_str());
    assert_eq!(stays["applied_rules"], json!([]));

    // Nothing matches: people in Refunds answer as usual.
    let plain = create(refund(200.0, "api"));
    assert_eq!(plain["applied_rules"], json!([]));
    assert_eq!(plain["broadcasted_to"].as_array().unwrap().len(), 3);

    // A request of another type is left to people.
    let mut text = refund(10.0, "api");
    text["response_type"] = json!("text");
    text["default_response"] = json!("no");
    let passed = create(text);
    assert_eq!(passed["status"], "pending");
    assert_eq!(passed["applied_rules"], json!([]));
}

fn the_test_endpoint_says_what_a_sample_would_do() {
    let Setup {
        s,
        refunds,
        finance,
        ..
    } = setup();
    s.put(
        &s.admin_key,
        &format!("/v1/api/loops/{refunds}"),
        json!({"rules": [
            {"id": "small", "when": {"context": {"pointer": "/amount", "lt": 50}}, "then": {"answer": true}},
            {"id": "rest", "when": {"priority": ["medium", "high"]}, "then": {"route_to_loop_id": finance}},
        ]}),
    )
    .data(200);
    let test = |body: Value| {
        s.post(
            &s.admin_key,
            &format!("/v1/loops/{refunds}/rules/test"),
            body,
        )
    };

    let small = test(refund(20.0, "api")).data(200).clone();
    assert_eq!(small["fires"], true);
    assert_eq!(small["outcome"], "answer");
    assert_eq!(small["response_data"], true);
    assert_eq!(small["rule"]["rule_id"], "small");
    assert_eq!(
        small["summary"],
        "Rule small answers it at once with true: nobody is asked."
    );
    let routed = test(refund(80.0, "api")).data(200).clone();
    assert_eq!(routed["outcome"], "people");
    assert_eq!(routed["loop_id"], finance.as_str());
    assert_eq!(
        routed["summary"],
        "Rule rest routes it on; it goes to the members of Finance."
    );
    // A rule whose answer does not fit the request is passed over, and the
    // next one that matches fires.
    let mut text = refund(20.0, "api");
    text["response_type"] = json!("text");
    text["default_response"] = json!("no");
    let passed = test(text).data(200).clone();
    assert_eq!(passed["rule"]["rule_id"], "rest");
    assert_eq!(passed["passed_over"][0]["rule_id"], "small");
    assert!(passed["passed_over"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("its answer does not fit this request"));
    // Nothing was created.
    let listed = s.get(&s.admin_key, "/v1/api/requests").data(200).clone();
    assert_eq!(listed["count"], 0);

    // Draft rules in place of the saved ones.
    let mut draft = refund(80.0, "api");
    draft["rules"] = json!([{"id": "two", "when": {}, "then": {"quorum": {"count": 2}}}]);
    let drafted = test(draft).data(200).clone();
    assert_eq!(drafted["outcome"], "quorum");
    assert_eq!(drafted["quorum"]["count"], 2);
    // A draft that saving would refuse is refused by the test too, in the
    // same words: a test never passes what a save turns down.
    let unreachable = json!([{"id": "many", "when": {}, "then": {"quorum": {"count": 50}}}]);
    let mut draft = refund(80.0, "api");
    draft["rules"] = unreachable.clone();
    let tried = test(draft);
    assert_eq!(tried.status, 400, "{:?}", tried.body);
    let saving = s.put(
        &s.admin_key,
        &format!("/v1/api/loops/{refunds}"),
        json!({"rules": unreachable}),
    );
    assert_eq!(saving.status, 400);
    assert_eq!(tried.body["msg"], saving.body["msg"]);
    assert!(
        tried.body["msg"]
            .as_str()
            .unwrap()
            .starts_with("rules[0].then.quorum.count"),
        "{:?}",
        tried.body
    );

    // A sample without the values the rules read, a bad sample, bad
    // draft rules: 400s that name the field.
    let mut missing = refund(20.0, "api");
    missing["context"] = json!({"country": "DE"});
    let refused = test(missing);
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body["msg"],
        "the sample's context has no /amount, which rule small reads: add it to see what the rules do"
    );
    let mut bad = refund(20.0, "api");
    bad["priority"] = json!("urgent");
    assert_eq!(
        test(bad).body["msg"],
        "priority must be one of low, medium, high, critical"
    );
    let mut bad = refund(20.0, "api");
    bad["rules"] = json!([{"then": {"answer": null}}]);
    assert_eq!(
        test(bad).body["msg"],
        "rules[0].then.answer must be an answer, not null"
    );
    // Draft rules are the owner's to try; a member tests the saved ones.
    let member = s.key_with("a@example.com", &[]);
    let mut draft = refund(20.0, "api");
    draft["rules"] = json!([]);
    assert_eq!(
        s.post(&member, &format!("/v1/loops/{refunds}/rules/test"), draft)
            .status,
        403
    );
    let saved = s
        .post(
            &member,
            &format!("/v1/loops/{refunds}/rules/test"),
            refund(20.0, "api"),
        )
        .data(200)
        .clone();
    assert_eq!(saved["rule"]["rule_id"], "small");
    // Another account's loop is not found.
    let stranger = s.key("stranger@example.com");
    let theirs = s.post(
        &stranger,
        &format!("/v1/loops/{refunds}/rules/test"),
        refund(1.0, "api"),
    );
    assert_eq!(theirs.status, 404);
}

fn the_owner_edits_rules_in_the_browser_with_the_test_beside_them() {
    let Setup { s, refunds, .. } = setup();
    s.set_password("admin@localhost", "correct horse battery");
    let admin = Person::new(&s);
    admin.sign_in("admin@localhost", "correct horse battery");
    let page = format!("/app/loops/{refunds}/rules");
    let action = page.clone();
    let (_, html) = admin.page(&page);
    assert!(html.contains("Test these rules"), "{html}");
    let rules = r#"[{"id": "tiny", "when": {"context": {"pointer": "/amount", "lte": 5}}, "then": {"answer": true}}]"#;
    let sample = r#"{"request_text": "Refund <b>now</b>?", "type": "markdown", "response_type": "boolean",
                     "priority": "low", "processing_type": "deferred", "context": {"amount": 3}}"#;

    // Testing shows what would happen and saves nothing.
    let tested = admin.submit(
        &page,
        &action,
        &[("rules", rules), ("sample", sample), ("do", "test")],
    );
    assert_eq!(tested.status(), 200);
    let html = tested.text().unwrap();
    assert!(
        html.contains("Rule tiny answers it at once with true: nobody is asked."),
        "{html}"
    );
    assert!(html.contains("Tested; nothing was saved or sent."));
    let lp = s
        .get(&s.admin_key, &format!("/v1/api/loops/{refunds}"))
        .data(200)
        .clone();
    assert_eq!(lp["loop"]["rules"], json!([]));

    // JSON that does not parse, and rules that do not, are named.
    let broken = admin.submit(
        &page,
        &action,
        &[("rules", "[{"), ("sample", sample), ("do", "save")],
    );
    assert_eq!(broken.status(), 400);
    assert!(broken.text().unwrap().contains("Rules is not valid JSON"));
    let wrong = admin.submit(
        &page,
        &action,
        &[
            ("rules", r#"[{"then": {"escalate": 1}}]"#),
            ("sample", sample),
            ("do", "save"),
        ],
    );
    assert_eq!(wrong.status(), 400);
    let html = wrong.text().unwrap();
    assert!(
        html.contains("Rule 1: “Then” must be exactly one of"),
        "{html}"
    );
    assert!(!html.contains("<b>now</b>"), "what was typed is escaped");

    // A draft that saving would refuse is refused by the test, beside it.
    let many = admin.submit(
        &page,
        &action,
        &[
            (
                "rules",
                r#"[{"when": {}, "then": {"quorum": {"count": 50}}}]"#,
            ),
            ("sample", sample),
            ("do", "test"),
        ],
    );
    assert_eq!(many.status(), 400);
    let html = many.text().unwrap();
    // In the form's words, with the API's name for the JSON's editor.
    let said = html
        .find("Rule 1: “Answers needed” is 50")
        .expect("named as the form labels it");
    assert!(html.contains("(rules[0].then.quorum.count)"), "{html}");
    let sample_at = html.find("A sample request (JSON)").unwrap();
    let button_at = html.find(r#"value="test""#).unwrap();
    assert!(
        sample_at < said && said < button_at,
        "beside the sample and the test's button"
    );

    // Saving keeps them; the page shows them again.
    let saved = admin.submit(
        &page,
        &action,
        &[("rules", rules), ("sample", sample), ("do", "save")],
    );
    assert_eq!(saved.status(), 200);
    assert!(saved
        .url()
        .as_str()
        .ends_with(&format!("/app/loops/{refunds}/rules?done=rules")));
    let lp = s
        .get(&s.admin_key, &format!("/v1/api/loops/{refunds}"))
        .data(200)
        .clone();
    assert_eq!(lp["loop"]["rules"][0]["id"], "tiny");

    // The same rules as a form: a rule added in the form's blank row is
    // saved (the JSON was not touched, so the form wins), and the JSON
    // view then shows it too.
    let (_, html) = admin.page(&page);
    assert!(
        html.contains(r#"name="rule_count" value="2""#),
        "one rule and a blank one: {html}"
    );
    let from_form = admin.submit(
        &page,
        &action,
        &[
            ("rules", "unchanged"),
            ("rules_was", "unchanged"),
            ("sample", sample),
            ("rule_count", "2"),
            ("r0.id", "tiny"),
            ("r0.test_count", "2"),
            ("r0.t0.pointer", "/amount"),
            ("r0.t0.op", "lte"),
            ("r0.t0.value", "5"),
            ("r0.t1.pointer", ""),
            ("r0.t1.op", "eq"),
            ("r0.t1.value", ""),
            ("r0.then", "answer"),
            ("r0.answer", "true"),
            ("r1.id", "urgent"),
            ("r1.priority", "high"),
            ("r1.priority", "critical"),
            ("r1.test_count", "1"),
            ("r1.t0.pointer", "/country"),
            ("r1.t0.op", "in"),
            ("r1.t0.value", r#"["DE", "FR"]"#),
            ("r1.then", "quorum"),
            ("r1.quorum_count", "2"),
            ("r1.quorum_rule", "majority"),
            ("do", "save"),
        ],
    );
    assert!(
        from_form.url().as_str().ends_with("done=rules"),
        "{}",
        from_form.url()
    );
    let lp = s
        .get(&s.admin_key, &format!("/v1/api/loops/{refunds}"))
        .data(200)
        .clone();
    assert_eq!(
        lp["loop"]["rules"][1],
        json!({"id": "urgent", "when": {"priority": ["high", "critical"],
                "context": [{"pointer": "/country", "in": ["DE", "FR"]}]},
               "then": {"quorum": {"count": 2, "rule": "majority", "exclude_requester": false}}})
    );
    let html = from_form.text().unwrap();
    assert!(
        html.contains("&quot;urgent&quot;"),
        "the JSON view shows it: {html}"
    );
    // A changed JSON wins over the form, and a rule is removed by ticking.
    let one = r#"[{"id": "only", "when": {}, "then": {"answer": false}}]"#;
    let from_json = admin.submit(
        &page,
        &action,
        &[
            ("rules", one),
            ("rules_was", "something else"),
            ("sample", sample),
            ("rule_count", "1"),
            ("r0.id", "ignored"),
            ("r0.then", "answer"),
            ("r0.answer", "true"),
            ("do", "save"),
        ],
    );
    assert!(from_json.url().as_str().ends_with("done=rules"));
    let rules = |s: &Server| {
        s.get(&s.admin_key, &format!("/v1/api/loops/{refunds}"))
            .data(200)["loop"]["rules"]
            .clone()
    };
    assert_eq!(rules(&s)[0]["id"], "only");
    let removed = admin.submit(
        &page,
        &action,
        &[
            ("rules", "x"),
            ("rules_was", "x"),
            ("sample", sample),
            ("rule_count", "1"),
            ("r0.id", "only"),
            ("r0.then", "answer"),
            ("r0.answer", "false"),
            ("r0.remove", "true"),
            ("do", "save"),
        ],
    );
    assert!(removed.url().as_str().ends_with("done=rules"));
    assert_eq!(rules(&s), json!([]));

    // A member who is not the owner gets no editor, and cannot post one.
    let a = Person::new(&s);
    s.set_password("a@example.com", "another good password");
    a.sign_in("a@example.com", "another good password");
    let (status, html) = a.page(&page);
    assert_eq!(status, 403);
    assert!(!html.contains("Test these rules"));
    let (_, members) = a.page(&format!("/app/loops/{refunds}"));
    assert!(!members.contains("/rules\""), "no tab to the rules");
    let token = csrf_of(&members);
    let refused = a.post_raw(
        &action,
        &[
            ("csrf", token.as_str()),
            ("rules", "[]"),
            ("sample", sample),
            ("do", "save"),
        ],
        Some(&s.base),
    );
    assert_eq!(refused.status(), 403);
}

on_every_backend!(
    rules_decide_route_and_ask_for_quorums,
    the_test_endpoint_says_what_a_sample_would_do,
    the_owner_edits_rules_in_the_browser_with_the_test_beside_them
);
