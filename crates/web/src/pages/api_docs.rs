//! `/docs/api`: the API reference for people, rendered here from the same
//! OpenAPI document `/v1/openapi.json` serves, so the two cannot disagree.
//! No third-party viewer: operations by tag, their parameters, bodies with
//! examples, every status, and the shapes they refer to. Descriptions are
//! CommonMark, as OpenAPI has them, through the same sanitising renderer
//! as request text.

use actix_web::web;
use actix_web::HttpResponse;
use std::sync::OnceLock;

use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use crate::error::PageError;
use crate::layout::{self, Nav};
use crate::markdown;
use crate::state::WebState;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

pub(crate) async fn page(state: web::Data<WebState>) -> Result<HttpResponse, PageError> {
    let document = state
        .api_document
        .ok_or_else(|| PageError::NotFound("This server publishes no API reference".into()))?;
    // The document is fixed for the life of the process, and rendering it
    // (hundreds of Markdown passes) is not free: once is enough. The page
    // needs no sign-in, so it shows no one's navigation.
    static PAGE: OnceLock<String> = OnceLock::new();
    let page = PAGE.get_or_init(|| {
        layout::page("API reference", None, Nav::None, reference(document())).into_string()
    });
    Ok(layout::ok(PreEscaped(page.clone())))
}

/// One documented operation.
struct Operation<'a> {
    method: &'a str,
    path: &'a str,
    op: &'a Value,
}

fn operations(doc: &Value) -> Vec<Operation<'_>> {
    let mut all = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for method in METHODS {
                if item.get(method).is_some() {
                    all.push(Operation {
                        method,
                        path,
                        op: &item[method],
                    });
                }
            }
        }
    }
    all
}

/// A request-surface operation is documented under both path forms; the
/// `/v1/...` copy (its id ends in `V1`) shares the `/v1/api/...` entry.
fn is_copy(o: &Operation) -> bool {
    o.op["operationId"]
        .as_str()
        .is_some_and(|id| id.ends_with("V1"))
}

fn twin(path: &str) -> Option<String> {
    path.strip_prefix("/v1/api/")
        .map(|rest| format!("/v1/{rest}"))
}

fn reference(doc: &Value) -> Markup {
    let all = operations(doc);
    let tags: Vec<(&str, &str)> = doc["tags"]
        .as_array()
        .map(|tags| {
            tags.iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap_or_default(),
                        t["description"].as_str().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let copies: std::collections::HashSet<(&str, &str)> = all
        .iter()
        .filter(|o| is_copy(o))
        .map(|o| (o.method, o.path))
        .collect();
    let shown = |o: &&Operation| !is_copy(o);
    html! {
        div.api-docs {
            h1 { "API reference" }
            p.hint {
                "reviewloop " (doc["info"]["version"].as_str().unwrap_or_default())
                " · OpenAPI " (doc["openapi"].as_str().unwrap_or_default())
                " · " a href="/v1/openapi.json" { "the document as JSON" }
            }
            (markdown::render(doc["info"]["description"].as_str().unwrap_or_default()))
            p {
                "Send the API key as " code { "Authorization: Bearer rl_…" }
                ". Request-surface operations answer at " code { "/v1/api/…" }
                " and at " code { "/v1/…" } " alike; the entries below show the first."
            }
            nav.toc aria-label="Sections" {
                ul {
                    @for (name, _) in &tags {
                        li { a href={ "#tag-" (slug(name)) } { (name) } }
                    }
                    li { a href="#schemas" { "Schemas" } }
                }
            }
            @for (name, description) in &tags {
                section id={ "tag-" (slug(name)) } {
                    h2 { (name) }
                    p.hint { (description) }
                    @for o in all.iter().filter(shown).filter(|o| o.op["tags"][0] == *name) {
                        (operation(doc, o, &copies))
                    }
                }
            }
            section #schemas {
                h2 { "Schemas" }
                @if let Some(schemas) = doc["components"]["schemas"].as_object() {
                    @for (name, schema) in schemas {
                        (schema_entry(name, schema))
                    }
                }
            }
        }
    }
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The example of the schema `schema` refers to, pretty-printed.
fn example_of(doc: &Value, schema: &Value) -> Option<String> {
    let name = schema["$ref"].as_str()?.rsplit('/').next()?;
    let example = doc["components"]["schemas"][name].get("example")?;
    serde_json::to_string_pretty(example).ok()
}

fn operation(
    doc: &Value,
    o: &Operation,
    copies: &std::collections::HashSet<(&str, &str)>,
) -> Markup {
    let op = o.op;
    let id = op["operationId"].as_str().unwrap_or_default();
    let params = op["parameters"].as_array().cloned().unwrap_or_default();
    html! {
        article.operation id={ "op-" (id) } {
            h3 {
                span class={ "method method-" (o.method) } { (o.method.to_uppercase()) }
                " " code.path { (o.path) }
            }
            p { strong { (op["summary"].as_str().unwrap_or_default()) } }
            @if let Some(description) = op["description"].as_str() {
                (markdown::render(description))
            }
            @if let Some(other) = twin(o.path).filter(|t| copies.contains(&(o.method, t.as_str()))) {
                p.hint { "Also at " code { (other) } "." }
            }
            @if op.get("security").is_none() {
                p.hint { "No API key needed." }
            }
            @if !params.is_empty() {
                h4 { "Parameters" }
                div.table-scroll {
                    table {
                        thead { tr { th { "Name" } th { "In" } th { "Type" } th { "Description" } } }
                        tbody {
                            @for p in &params {
                                tr {
                                    td {
                                        code { (p["name"].as_str().unwrap_or_default()) }
                                        @if p["required"] == true { " " small { "required" } }
                                    }
                                    td { (p["in"].as_str().unwrap_or_default()) }
                                    td { (type_of(&p["schema"])) }
                                    td { (markdown::render(p["description"].as_str().unwrap_or_default())) }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some((media, content)) = first_content(&op["requestBody"]) {
                h4 { "Body" }
                p { code { (media) } " · " (type_of(&content["schema"])) }
                @if let Some(example) = example_of(doc, &content["schema"]) {
                    pre { code { (example) } }
                }
            }
            h4 { "Responses" }
            div.table-scroll {
                table {
                    thead { tr { th { "Status" } th { "Meaning" } th { "Body" } } }
                    tbody {
                        @if let Some(responses) = op["responses"].as_object() {
                            @for (status, response) in responses {
                                tr {
                                    td { code { (status) } }
                                    td { (markdown::render(response["description"].as_str().unwrap_or_default())) }
                                    td {
                                        @if let Some((media, content)) = first_content(response) {
                                            (type_of(&content["schema"]))
                                            @if media != "application/json" { " " small { (media) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn first_content(holder: &Value) -> Option<(&str, &Value)> {
    holder["content"]
        .as_object()?
        .iter()
        .next()
        .map(|(media, content)| (media.as_str(), content))
}

/// A schema in a few words, with references as links.
fn type_of(schema: &Value) -> Markup {
    if let Some(target) = schema["$ref"].as_str() {
        let name = target.rsplit('/').next().unwrap_or(target);
        return html! { a href={ "#schema-" (name) } { (name) } };
    }
    if let Some(choices) = schema["oneOf"].as_array() {
        return html! {
            @for (i, choice) in choices.iter().enumerate() {
                @if i > 0 { " or " }
                (type_of(choice))
            }
        };
    }
    if let Some(values) = schema["enum"].as_array() {
        let words: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        return html! { "one of " code { (words.join(", ")) } };
    }
    if let Some(value) = schema.get("const") {
        return html! { code { (value.to_string()) } };
    }
    // OpenAPI 3.1 writes a nullable type as a list: `["string", "null"]`.
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let nullable = kinds.contains(&"null");
    let kind = kinds.into_iter().find(|k| *k != "null");
    let shown = match kind {
        Some("array") => html! { "array of " (type_of(&schema["items"])) },
        Some(kind) => {
            let format = schema["format"].as_str();
            html! { (kind) @if let Some(f) = format { " (" (f) ")" } }
        }
        None if schema.get("allOf").is_some() => type_of(&schema["allOf"][0]),
        None if nullable => return html! { "null" },
        None => html! { "any value" },
    };
    html! { (shown) @if nullable { " or null" } }
}

/// A field of a schema: its name, its own schema, and the fields the part
/// it is written in requires.
type FieldOf<'a> = (&'a String, &'a Value, Vec<&'a str>);

/// The fields of `schema`: its own, and those of each part of an `allOf`
/// written in place. Parts that are references are listed apart, as links.
fn fields_of(schema: &Value) -> (Vec<FieldOf<'_>>, Vec<&str>) {
    let mut fields = Vec::new();
    let mut included = Vec::new();
    let parts = std::iter::once(schema).chain(
        schema["allOf"]
            .as_array()
            .map(|parts| parts.iter())
            .into_iter()
            .flatten(),
    );
    for part in parts {
        if let Some(target) = part["$ref"].as_str() {
            included.push(target.rsplit('/').next().unwrap_or(target));
            continue;
        }
        let required: Vec<&str> = part["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = part["properties"].as_object() {
            for (field, shape) in properties {
                fields.push((field, shape, required.clone()));
            }
        }
    }
    (fields, included)
}

fn schema_entry(name: &str, schema: &Value) -> Markup {
    let example = schema
        .get("example")
        .and_then(|e| serde_json::to_string_pretty(e).ok());
    let (fields, included) = fields_of(schema);
    html! {
        article.schema id={ "schema-" (name) } {
            h3 { code { (name) } }
            @if let Some(description) = schema["description"].as_str() {
                (markdown::render(description))
            }
            @if !included.is_empty() {
                p {
                    "Every field of "
                    @for (i, part) in included.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href={ "#schema-" (part) } { (part) }
                    }
                    @if !fields.is_empty() { ", and:" } @else { "." }
                }
            }
            @if !fields.is_empty() {
                div.table-scroll {
                    table {
                        thead { tr { th { "Field" } th { "Type" } th { "Description" } } }
                        tbody {
                            @for (field, shape, required) in &fields {
                                tr {
                                    td {
                                        code { (field) }
                                        @if required.contains(&field.as_str()) { " " small { "required" } }
                                    }
                                    td { (type_of(shape)) }
                                    td { (markdown::render(shape["description"].as_str().unwrap_or_default())) }
                                }
                            }
                        }
                    }
                }
            } @else if included.is_empty() {
                p { (type_of(schema)) }
            }
            @if let Some(example) = example {
                details {
                    summary { "Example" }
                    pre { code { (example) } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nullable_types_read_as_such() {
        let shown = type_of(&json!({"type": ["string", "null"], "format": "date-time"}));
        assert_eq!(shown.into_string(), "string (date-time) or null");
        let list = type_of(&json!({"type": ["array", "null"], "items": {"type": "string"}}));
        assert_eq!(list.into_string(), "array of string or null");
        assert_eq!(type_of(&json!({})).into_string(), "any value");
    }

    #[test]
    fn a_schema_made_of_parts_lists_every_field() {
        let schema = json!({"allOf": [
            {"$ref": "#/components/schemas/RequestFields"},
            {"type": "object", "required": ["loop_id"],
             "properties": {"loop_id": {"$ref": "#/components/schemas/Id"}}},
        ]});
        let html = schema_entry("NewRequest", &schema).into_string();
        assert!(html.contains(r##"href="#schema-RequestFields""##), "{html}");
        assert!(html.contains("<code>loop_id</code>"), "{html}");
        assert!(html.contains("required"), "{html}");
    }
}
