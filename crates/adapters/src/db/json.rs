//! A JSON column type: `jsonb` on PostgreSQL, text on SQLite. Values travel
//! as JSON text either way; PostgreSQL's binary form is that text behind a
//! version byte.

use std::io::Write;

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{HasSqlType, SqlType, Text};
use diesel::sqlite::Sqlite;

use super::MultiBackend;

/// The SQL type of JSON columns.
#[derive(Debug, Clone, Copy, Default, SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(name = "jsonb"))]
#[diesel(sqlite_type(name = "Text"))]
pub struct Json;

/// A JSON document as text, as stored in a [`Json`] column.
#[derive(Debug, Clone, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Json)]
pub struct JsonText(pub String);

/// The version byte of PostgreSQL's binary `jsonb` format.
const JSONB_VERSION: u8 = 1;

impl HasSqlType<Json> for MultiBackend {
    fn metadata(lookup: &mut Self::MetadataLookup) -> Self::TypeMetadata {
        MultiBackend::lookup_sql_type::<Json>(lookup)
    }
}

impl ToSql<Json, MultiBackend> for JsonText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> serialize::Result {
        out.set_value((Json, self));
        Ok(IsNull::No)
    }
}

impl FromSql<Json, MultiBackend> for JsonText {
    fn from_sql(bytes: <MultiBackend as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        bytes.from_sql::<JsonText, Json>()
    }
}

impl ToSql<Json, Pg> for JsonText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(&[JSONB_VERSION])?;
        out.write_all(self.0.as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<Json, Pg> for JsonText {
    fn from_sql(value: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        match value.as_bytes().split_first() {
            Some((&JSONB_VERSION, text)) => Ok(Self(String::from_utf8(text.to_vec())?)),
            _ => Err("unsupported jsonb version".into()),
        }
    }
}

impl ToSql<Json, Sqlite> for JsonText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        <String as ToSql<Text, Sqlite>>::to_sql(&self.0, out)
    }
}

impl FromSql<Json, Sqlite> for JsonText {
    fn from_sql(value: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        <String as FromSql<Text, Sqlite>>::from_sql(value).map(Self)
    }
}
