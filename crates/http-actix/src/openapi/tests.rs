use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::*;
use crate::routes::table;

fn doc() -> Value {
    serde_json::from_str(json_text()).expect("the document is JSON")
}

#[test]
fn every_operation_has_a_described_tag() {
    // The reference page lists operations under the document's tags: an
    // operation of another tag would not be shown.
    for op in OPERATIONS {
        assert!(
            operations::TAGS.iter().any(|(name, _)| *name == op.tag),
            "{} has the undescribed tag {}",
            op.id,
            op.tag
        );
    }
}

#[test]
fn query_parameters_keep_their_schemas() {
    let doc = doc();
    for op in OPERATIONS {
        for &(prefix, _, _) in placements(op.mount) {
            let path = format!("{prefix}{}", op.path);
            let params = doc["paths"][&path][op.method]["parameters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for (name, _, shape) in op.query {
                let param = params
                    .iter()
                    .find(|p| p["name"] == *name)
                    .unwrap_or_else(|| panic!("{path} lacks {name}"));
                let written: Value = serde_json::from_str(shape).expect("JSON");
                assert_eq!(param["schema"], written, "{path} {name}");
            }
        }
    }
}

/// `(path, METHOD)` pairs.
type Pairs = BTreeSet<(String, String)>;

fn documented() -> Pairs {
    let doc = doc();
    let mut pairs = Pairs::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            pairs.insert((path.clone(), method.to_uppercase()));
        }
    }
    pairs
}

fn routed() -> Pairs {
    table()
        .into_iter()
        .flat_map(|route| {
            route
                .methods
                .into_iter()
                .map(move |m| (route.path.clone(), m.as_str().to_owned()))
        })
        .collect()
}

#[test]
fn every_route_in_the_table_is_in_the_document_and_nothing_else() {
    let (documented, routed) = (documented(), routed());
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from the document: {undocumented:?}"
    );
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        unrouted.is_empty(),
        "documented but not routed: {unrouted:?}"
    );
    // Both path forms of the request surface, and the alternate surface.
    for pair in [
        ("/v1/api/requests", "POST"),
        ("/v1/requests", "POST"),
        ("/v1/reviews", "GET"),
        ("/v1/api/webhooks", "GET"),
        ("/v1/webhooks", "GET"),
        ("/v1/openapi.json", "GET"),
    ] {
        assert!(
            routed.contains(&(pair.0.to_owned(), pair.1.to_owned())),
            "{pair:?}"
        );
    }
}

#[test]
fn the_document_is_openapi_3_1_with_unique_operation_ids() {
    let doc = doc();
    assert!(doc["openapi"].as_str().expect("version").starts_with("3.1"));
    let mut ids = BTreeMap::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("item") {
            let id = op["operationId"].as_str().expect("operationId").to_owned();
            if let Some(other) = ids.insert(id.clone(), format!("{method} {path}")) {
                panic!("{id} names both {other} and {method} {path}");
            }
        }
    }
}

fn refs(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                found.insert(target.clone());
            }
            map.values().for_each(|v| refs(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
        _ => {}
    }
}

#[test]
fn every_reference_names_a_schema_and_every_schema_kept_its_shape() {
    let doc = doc();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let written = components();
    assert!(schemas.len() > written.len(), "the envelopes are added");
    for (name, schema) in schemas {
        if let Some(written) = written.get(name) {
            assert_eq!(
                schema, written,
                "{name} changed on its way into the document"
            );
        }
    }
    let mut found = BTreeSet::new();
    refs(&doc, &mut found);
    for target in found {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{target} is not a schema reference"));
        assert!(schemas.contains_key(name), "{target} names no schema");
    }
}

#[test]
fn operations_list_the_statuses_their_parts_can_answer() {
    let doc = doc();
    let create = &doc["paths"]["/v1/api/requests"]["post"]["responses"];
    for status in [
        "201", "400", "401", "403", "408", "409", "413", "422", "429", "500",
    ] {
        assert!(create.get(status).is_some(), "create lacks {status}");
    }
    let health = &doc["paths"]["/health"]["get"]["responses"];
    assert!(health.get("401").is_none(), "health needs no key");
    // Envelope B on the alternate surface, A on the request surface.
    let review = &doc["paths"]["/v1/reviews/{id}"]["get"]["responses"];
    assert_eq!(
        review["404"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorB"
    );
    assert_eq!(
        doc["paths"]["/v1/loops/{id}"]["get"]["responses"]["404"]["content"]["application/json"]
            ["schema"]["$ref"],
        "#/components/schemas/ErrorA"
    );
}

#[test]
fn links_lead_to_operations_of_the_same_path_form() {
    let doc = doc();
    let mut ids = BTreeSet::new();
    for item in doc["paths"].as_object().expect("paths").values() {
        for op in item.as_object().expect("item").values() {
            ids.insert(op["operationId"].as_str().expect("id").to_owned());
        }
    }
    let links = &doc["paths"]["/v1/loops"]["post"]["responses"]["201"]["links"];
    assert_eq!(links["getLoop"]["operationId"], "getLoopV1");
    assert_eq!(
        links["getLoop"]["parameters"]["id"],
        "$response.body#/data/loop/id"
    );
    let mut targets = BTreeSet::new();
    refs_of_links(&doc, &mut targets);
    assert!(targets.len() > 20, "{targets:?}");
    for target in targets {
        assert!(
            ids.contains(&target),
            "a link names {target}, which is no operation"
        );
    }
}

fn refs_of_links(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(links)) = map.get("links") {
                for link in links.values() {
                    found.insert(link["operationId"].as_str().expect("id").to_owned());
                }
            }
            map.values().for_each(|v| refs_of_links(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| refs_of_links(v, found)),
        _ => {}
    }
}
