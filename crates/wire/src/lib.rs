//! reviewloop's messages on the wire: every request body, every answer of
//! both API surfaces and every event payload, as Rust types with serde
//! derives, kept apart from the domain (the domain decides what may be
//! seen; this crate decides the shape and the names). The OpenAPI document
//! is derived from these types ([`components`]), so it cannot describe a
//! shape the service does not send.
//!
//! `serde_json::Value` stands only where the wire is free-form: `context`,
//! `metadata`, an answer before it is checked against its
//! `response_config`, and the loosely read fields of bodies, which the
//! domain validates so that every mistake is named.

pub mod account;
pub mod alternate;
pub mod envelope;
pub mod events;
pub mod loops;
pub mod mcp;
mod present;
pub mod requests;
pub mod schema;
pub mod webhooks;

pub use present::{present, present_text};
