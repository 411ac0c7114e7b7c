//! The OpenAPI 3.1 document served at `GET /v1/openapi.json`, assembled
//! with utoipa's model from [`operations::OPERATIONS`] and the schemas
//! utoipa derives from the wire types ([`reviewloop_wire::components`]):
//! the document describes the very types the handlers parse and answer
//! with. Each request-surface operation is written once and placed under
//! both path forms, as the route table mounts it; a test compares the
//! document with the route table, so neither can gain a path alone.

mod operations;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{json, Value};
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, Paths, RefOr,
    Required, ResponseBuilder, Schema,
};

use operations::{Mount, Op, OPERATIONS};

/// The document, built once.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(assemble)
}

/// The document as the JSON `GET /v1/openapi.json` answers.
pub fn json_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| document().to_string())
}

/// Every schema of the wire types, by name, as JSON.
pub(super) fn components() -> serde_json::Map<String, Value> {
    reviewloop_wire::components()
        .into_iter()
        .map(|(name, schema)| {
            let schema = serde_json::to_value(schema).unwrap_or_else(|_| json!({}));
            (name, schema)
        })
        .collect()
}

/// utoipa's model holds the operations and the derived schemas; the
/// success envelopes around each operation's data are written as JSON
/// Schema 2020-12 (`const`), which that model cannot hold.
fn assemble() -> Value {
    let (api, envelopes) = build();
    let mut doc = serde_json::to_value(&api).unwrap_or_else(|_| json!({}));
    let mut all = components();
    all.extend(envelopes);
    doc["components"]["schemas"] = Value::Object(all);
    // utoipa writes a link's `operationId` in snake case; 3.1 spells it so.
    rename_link_fields(&mut doc);
    doc
}

fn rename_link_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(links)) = map.get_mut("links") {
                for link in links.values_mut() {
                    if let Some(link) = link.as_object_mut() {
                        if let Some(id) = link.remove("operation_id") {
                            link.insert("operationId".into(), id);
                        }
                    }
                }
            }
            map.values_mut().for_each(rename_link_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(rename_link_fields),
        _ => {}
    }
}

/// A schema utoipa's model can hold: references and the plain types of
/// parameters. Anything else is kept out of it (see [`assemble`]); a test
/// compares every parameter's schema with what the table wrote.
fn schema(value: Value) -> RefOr<Schema> {
    serde_json::from_value(value).unwrap_or_else(|_| RefOr::T(Schema::default()))
}

fn reference(name: &str) -> RefOr<Schema> {
    RefOr::Ref(utoipa::openapi::Ref::from_schema_name(name))
}

fn method(op: &Op) -> HttpMethod {
    match op.method {
        "get" => HttpMethod::Get,
        "post" => HttpMethod::Post,
        "put" => HttpMethod::Put,
        "patch" => HttpMethod::Patch,
        _ => HttpMethod::Delete,
    }
}

/// Where an operation is placed: `(path prefix, envelope B?, id suffix)`.
fn placements(mount: Mount) -> &'static [(&'static str, bool, &'static str)] {
    match mount {
        Mount::Public => &[("", false, "")],
        Mount::Both => &[("/v1/api", false, ""), ("/v1", false, "V1")],
        Mount::Api => &[("/v1/api", false, "")],
        Mount::Alternate => &[("/v1", true, "")],
    }
}

fn build() -> (OpenApi, serde_json::Map<String, Value>) {
    let mut paths = Paths::new();
    let mut envelopes = serde_json::Map::new();
    for op in OPERATIONS {
        for &(prefix, alternate, suffix) in placements(op.mount) {
            if let Some(name) = envelope_name(op, alternate) {
                envelopes.insert(name, success(op, alternate));
            }
            let operation = operation(op, alternate, suffix);
            paths.add_path_operation(format!("{prefix}{}", op.path), vec![method(op)], operation);
        }
    }
    let components = ComponentsBuilder::new().security_scheme(
        "api_key",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some("An API key (`rl_...`) in `Authorization: Bearer`."))
                .build(),
        ),
    );
    let tags = operations::TAGS.iter().map(|(name, description)| {
        TagBuilder::new()
            .name(*name)
            .description(Some(*description))
            .build()
    });
    let api = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("reviewloop")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "Human review for automated workflows. The request surface answers at \
                     `/v1/api/...` and `/v1/...` alike in `{\"error\", \"msg\", \"data\"}`; \
                     the alternate surface (`/v1/reviews`, `/v1/templates`, `/v1/teams`, \
                     `/v1/webhooks`) answers in `{\"success\", \"data\", \"meta\"}`. Times are \
                     RFC 3339 in UTC; ids are 24 hexadecimal characters.",
                )),
        )
        .paths(paths)
        .components(Some(components.build()))
        .tags(Some(tags.collect::<Vec<_>>()))
        .build();
    (api, envelopes)
}

/// The component that wraps an operation's `data` in its envelope.
fn envelope_name(op: &Op, alternate: bool) -> Option<String> {
    if op.data.is_empty() {
        return None;
    }
    Some(match (alternate, op.list) {
        (false, _) => format!("{}Answer", op.data),
        (true, false) => format!("{}AnswerB", op.data),
        (true, true) => format!("{}ListAnswerB", op.data),
    })
}

fn success(op: &Op, alternate: bool) -> Value {
    let data = json!({"$ref": format!("#/components/schemas/{}", op.data)});
    let data = if op.list && alternate {
        json!({"type": "array", "items": data})
    } else {
        data
    };
    if alternate {
        json!({
            "type": "object", "required": ["success", "data", "meta"],
            "properties": {"success": {"const": true}, "data": data,
                           "meta": {"$ref": "#/components/schemas/Meta"}},
        })
    } else {
        json!({
            "type": "object", "required": ["error", "msg", "data"],
            "properties": {"error": {"const": false}, "msg": {"type": "string"}, "data": data},
        })
    }
}

fn error_description(status: u16) -> &'static str {
    match status {
        400 => "The request is malformed or a value is not allowed; the message names it.",
        401 => "No API key, or one that is unknown or revoked.",
        403 => "The key lacks the permission, or the account is suspended.",
        404 => "Nothing with that id that this key may see.",
        408 => "The body did not arrive in time.",
        409 => "The resource changed under the request, or it is in a state that forbids this.",
        413 => "The body is larger than 1 MiB.",
        422 => "The `Idempotency-Key` was used before with another body.",
        429 => "Over the key's rate limit; `Retry-After` says when to try again.",
        500 => "An unexpected failure; nothing internal is shown.",
        503 => "The database cannot be reached.",
        _ => "A failure.",
    }
}

/// The statuses an operation can answer besides its success: those of its
/// mount and parts (key, path ids, query, body) and its own.
fn statuses(op: &Op) -> BTreeSet<u16> {
    let mut all: BTreeSet<u16> = op.errors.iter().copied().collect();
    all.extend([500, 503]);
    if op.mount != Mount::Public {
        all.extend([401, 403, 429]);
    }
    if op.path.contains('{') {
        all.extend([400, 404]);
    }
    if !op.query.is_empty() {
        all.insert(400);
    }
    if op.body.is_some() {
        all.extend([400, 408, 413]);
    }
    all
}

fn operation(op: &Op, alternate: bool, suffix: &str) -> utoipa::openapi::path::Operation {
    let mut builder = OperationBuilder::new()
        .operation_id(Some(format!("{}{suffix}", op.id)))
        .summary(Some(op.summary))
        .tag(op.tag);
    if !op.description.is_empty() {
        builder = builder.description(Some(op.description));
    }
    for name in path_parameters(op.path) {
        builder = builder.parameter(
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .schema(Some(if name == "file" {
                    schema(json!({"type": "string"}))
                } else {
                    reference("Id")
                })),
        );
    }
    for (name, description, shape) in op.query {
        builder = builder.parameter(
            ParameterBuilder::new()
                .name(*name)
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(*description))
                .schema(Some(schema(
                    serde_json::from_str(shape).unwrap_or_else(|_| json!({"type": "string"})),
                ))),
        );
    }
    if let Some(body) = op.body {
        builder = builder.request_body(Some(
            RequestBodyBuilder::new()
                .required(Some(Required::True))
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(reference(body))).build(),
                )
                .build(),
        ));
    }
    if op.idempotent {
        builder = builder.parameter(
            ParameterBuilder::new()
                .name("Idempotency-Key")
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .description(Some(
                    "Sending the same key again within 24 hours replays the first answer.",
                ))
                .schema(Some(schema(json!({"type": "string", "maxLength": 255})))),
        );
    }
    let ok = match op.content {
        "application/json" => ContentBuilder::new()
            .schema(Some(match envelope_name(op, alternate) {
                Some(name) => reference(&name),
                None => schema(json!({"type": "object"})),
            }))
            .build(),
        "text/event-stream" | "application/openmetrics-text" => ContentBuilder::new()
            .schema(Some(schema(json!({"type": "string"}))))
            .build(),
        _ => ContentBuilder::new()
            .schema(Some(schema(json!({"type": "string", "format": "binary"}))))
            .build(),
    };
    let mut response = ResponseBuilder::new()
        .description(op.summary)
        .content(op.content, ok);
    // Links tell clients (and schemathesis' stateful phase) where the new
    // id goes next.
    if let Some((pointer, targets)) = op.creates {
        for target in targets {
            response = response.link(
                *target,
                LinkBuilder::new()
                    .operation_id(format!("{target}{suffix}"))
                    .parameter("id", format!("$response.body#{pointer}"))
                    .build(),
            );
        }
    }
    builder = builder.response(op.status.to_string(), response.build());
    let failure = if alternate { "ErrorB" } else { "ErrorA" };
    for status in statuses(op) {
        builder = builder.response(
            status.to_string(),
            ResponseBuilder::new()
                .description(error_description(status))
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(reference(failure)))
                        .build(),
                )
                .build(),
        );
    }
    if op.mount != Mount::Public {
        builder = builder.security(SecurityRequirement::new::<_, _, &str>("api_key", []));
    }
    builder.build()
}

/// The `{name}`s of a path pattern.
fn path_parameters(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
}

#[cfg(test)]
mod tests;
