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
