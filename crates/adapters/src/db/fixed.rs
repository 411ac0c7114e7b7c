//! Statements the connection keeps prepared: `UPDATE`s, and hand-written
//! queries.
//!
//! Diesel prepares every `UPDATE` again each time it runs: a changeset of
//! `Option` fields may leave columns out, so one changeset type can make
//! many different statements, and Diesel does not cache what may vary. Ours
//! set the same columns every time (`treat_none_as_null`, or plain values),
//! so each has one SQL text. [`update`] builds the same statement from the
//! same typed parts (the table, a changeset, a condition), and lets the
//! connection keep it prepared, keyed by its SQL text (never by its type
//! alone: a statement whose text did vary would get an entry per text,
//! still correct). On SQLite, compiling a statement costs more than running
//! it.

use diesel::backend::Backend;
use diesel::expression::{AppearsOnTable, Expression};
use diesel::query_builder::{AsChangeset, AstPass, QueryFragment, QueryId};
use diesel::query_source::Table;
use diesel::sql_types::BoolOrNullableBool;
use diesel::{QueryResult, RunQueryDsl};

/// `UPDATE table SET values WHERE filter`.
#[derive(Debug, Clone)]
pub(crate) struct Update<F, V, W> {
    /// The table's name, as its FROM clause writes it.
    from: F,
    values: V,
    filter: W,
}

/// `UPDATE table SET values WHERE filter`, kept prepared once run.
pub(crate) fn update<T, V, W>(
    table: T,
    filter: W,
    values: V,
) -> Update<T::FromClause, V::Changeset, W>
where
    T: Table,
    V: AsChangeset<Target = T>,
    W: Expression + AppearsOnTable<T>,
    W::SqlType: BoolOrNullableBool,
{
    Update {
        from: table.from_clause(),
        values: values.as_changeset(),
        filter,
    }
}

impl<F, V, W> QueryId for Update<F, V, W> {
    type QueryId = ();
    // Keyed by its SQL text, not by its type.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<F, V, W, DB> QueryFragment<DB> for Update<F, V, W>
where
    DB: Backend,
    F: QueryFragment<DB>,
    V: QueryFragment<DB>,
    W: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE ");
        self.from.walk_ast(out.reborrow())?;
        out.push_sql(" SET ");
        self.values.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.filter.walk_ast(out.reborrow())
    }
}

impl<F, V, W, C> RunQueryDsl<C> for Update<F, V, W> {}

/// A hand-written PostgreSQL query whose parameters are texts, kept
/// prepared once run. Diesel's `sql_query` is never cached (its text may be
/// built at run time), so each run prepares it again: a second round trip
/// and a fresh plan. This one's text is fixed at compile time.
#[derive(Debug, Clone)]
pub(crate) struct TextQuery<'a, const N: usize> {
    /// The SQL around the parameters; each parameter goes between two
    /// parts, so there is one more part than parameters.
    parts: [&'static str; N],
    params: Vec<&'a str>,
}

/// `parts` joined by the parameters `params` (one fewer than `parts`).
pub(crate) fn text_query<'a, const N: usize>(
    parts: [&'static str; N],
    params: Vec<&'a str>,
) -> TextQuery<'a, N> {
    // A mistake here would glue parts into other SQL: stop at once.
    assert_eq!(params.len() + 1, N, "one parameter between two parts");
    TextQuery { parts, params }
}

impl<const N: usize> QueryId for TextQuery<'_, N> {
    type QueryId = ();
    // Keyed by its SQL text.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<const N: usize> diesel::query_builder::Query for TextQuery<'_, N> {
    // Read by column name (`QueryableByName`), as `sql_query` is.
    type SqlType = diesel::sql_types::Untyped;
}

impl<const N: usize> QueryFragment<diesel::pg::Pg> for TextQuery<'_, N> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        for (i, part) in self.parts.iter().enumerate() {
            out.push_sql(part);
            if let Some(param) = self.params.get(i) {
                out.push_bind_param::<diesel::sql_types::Text, _>(param)?;
            }
        }
        Ok(())
    }
}

impl<const N: usize, C> RunQueryDsl<C> for TextQuery<'_, N> {}

#[cfg(test)]
mod tests {
    use super::super::schema::rate_limit_windows;
    use super::super::testdb::TestDb;
    use super::*;
    use diesel::connection::{Instrumentation, InstrumentationEvent};
    use diesel::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts the statements a connection prepares for its cache.
    struct Prepared(Arc<AtomicUsize>);

    impl Instrumentation for Prepared {
        fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
            if let InstrumentationEvent::CacheQuery { .. } = event {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The same `UPDATE` run again is found prepared, and does what
    /// Diesel's own would.
    #[tokio::test]
    async fn an_update_is_prepared_once_and_changes_what_it_names() {
        let db = TestDb::sqlite();
        let (prepared, calls) = db
            .db
            .run(|conn| {
                let super::super::DbConnection::Sqlite(c) = conn else {
                    unreachable!("a SQLite test database")
                };
                for (key, start) in [("a", 1i64), ("b", 1)] {
                    diesel::insert_into(rate_limit_windows::table)
                        .values((
                            rate_limit_windows::api_key_id.eq(key),
                            rate_limit_windows::window_start.eq(start),
                            rate_limit_windows::calls.eq(0),
                        ))
                        .execute(c)?;
                }
                let prepared = Arc::new(AtomicUsize::new(0));
                c.set_instrumentation(Prepared(prepared.clone()));
                for calls in 1..=5 {
                    let changed = update(
                        rate_limit_windows::table,
                        rate_limit_windows::api_key_id.eq("a"),
                        rate_limit_windows::calls.eq(calls),
                    )
                    .execute(c)?;
                    assert_eq!(changed, 1);
                }
                let calls: Vec<(String, i32)> = rate_limit_windows::table
                    .select((rate_limit_windows::api_key_id, rate_limit_windows::calls))
                    .order(rate_limit_windows::api_key_id)
                    .load(c)?;
                Ok((prepared.load(Ordering::Relaxed), calls))
            })
            .await
            .unwrap();
        assert_eq!(prepared, 2, "the update once, the read once");
        assert_eq!(calls, [("a".to_owned(), 5), ("b".to_owned(), 0)]);
    }

    #[derive(QueryableByName, Debug, PartialEq)]
    struct Calls {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        calls: i32,
    }

    /// A hand-written query is prepared once on PostgreSQL, however often
    /// it runs, and binds each parameter where it stands.
    #[tokio::test]
    async fn a_text_query_is_prepared_once_and_binds_its_parameters() {
        let Some(db) = TestDb::postgres() else { return };
        let (prepared, read) = db
            .db
            .run(|conn| {
                let super::super::DbConnection::Postgres(c) = conn else {
                    unreachable!("a PostgreSQL test database")
                };
                for (key, calls) in [("a", 3), ("b", 4)] {
                    diesel::insert_into(rate_limit_windows::table)
                        .values((
                            rate_limit_windows::api_key_id.eq(key),
                            rate_limit_windows::window_start.eq(7i64),
                            rate_limit_windows::calls.eq(calls),
                        ))
                        .execute(c)?;
                }
                let prepared = Arc::new(AtomicUsize::new(0));
                c.set_instrumentation(Prepared(prepared.clone()));
                let mut read = Vec::new();
                for key in ["a", "b", "a", "none"] {
                    let rows: Vec<Calls> = text_query(
                        [
                            "SELECT calls FROM rate_limit_windows WHERE api_key_id = ",
                            " AND window_start = 7 AND api_key_id <> ",
                            "",
                        ],
                        vec![key, "b"],
                    )
                    .load(c)?;
                    read.push(rows.first().map(|r| r.calls));
                }
                Ok((prepared.load(Ordering::Relaxed), read))
            })
            .await
            .unwrap();
        assert_eq!(prepared, 1);
        assert_eq!(read, [Some(3), None, Some(3), None]);
    }
}
