//! Conversions between stored values and domain values. A stored value that
//! does not convert back means damaged data: an internal error, not a panic.

use std::str::FromStr;

use chrono::{DateTime, NaiveDateTime, Utc};
use reviewloop_ports::StoreError;
use serde_json::Value;

use super::DbError;

pub(crate) fn to_db_time(t: DateTime<Utc>) -> NaiveDateTime {
    t.naive_utc()
}

pub(crate) fn from_db_time(t: NaiveDateTime) -> DateTime<Utc> {
    DateTime::from_naive_utc_and_offset(t, Utc)
}

pub(crate) fn corrupt(what: &str, value: &str) -> DbError {
    DbError::Store(StoreError::Internal(format!(
        "stored {what} is invalid: {value:?}"
    )))
}

pub(crate) fn parse<T: FromStr>(what: &str, value: &str) -> Result<T, DbError> {
    value.parse().map_err(|_| corrupt(what, value))
}

pub(crate) fn parse_opt<T: FromStr>(what: &str, value: Option<&str>) -> Result<Option<T>, DbError> {
    value.map(|v| parse(what, v)).transpose()
}

pub(crate) fn to_json_text(value: &Value) -> String {
    value.to_string()
}

pub(crate) fn from_json_text(what: &str, text: &str) -> Result<Value, DbError> {
    serde_json::from_str(text).map_err(|_| corrupt(what, text))
}

pub(crate) fn from_json_opt(what: &str, text: Option<&str>) -> Result<Option<Value>, DbError> {
    text.map(|t| from_json_text(what, t)).transpose()
}

/// A timestamp as PostgreSQL reads it from JSON, cut to the microsecond as
/// Diesel cuts one it binds, so a row written either way holds the same
/// time.
pub(crate) fn db_time_text(t: &NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

/// Serializes a timestamp column for a set-based write (`serialize_with`).
pub(crate) fn serialize_db_time<S: serde::Serializer>(
    t: &NaiveDateTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&db_time_text(t))
}

/// A column's value as JSON, for writes that send many rows as one JSON
/// document (PostgreSQL's `json_populate_recordset`).
pub(crate) trait JsonColumn {
    fn to_json_column(&self) -> Value;
}

impl JsonColumn for NaiveDateTime {
    fn to_json_column(&self) -> Value {
        Value::String(db_time_text(self))
    }
}

impl<T: JsonColumn> JsonColumn for Option<T> {
    fn to_json_column(&self) -> Value {
        self.as_ref()
            .map_or(Value::Null, JsonColumn::to_json_column)
    }
}

macro_rules! plain_json_column {
    ($($type:ty),*) => {
        $(impl JsonColumn for $type {
            fn to_json_column(&self) -> Value {
                Value::from(self.clone())
            }
        })*
    };
}

plain_json_column!(String, i32, i64, f64, bool);
