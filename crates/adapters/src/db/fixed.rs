//! `UPDATE` statements the connection keeps prepared.
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
use diesel::sql_types::Bool;
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
    W: Expression<SqlType = Bool> + AppearsOnTable<T>,
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
}
