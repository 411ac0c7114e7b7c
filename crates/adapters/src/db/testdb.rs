//! A fresh SQLite database file per test, and fixtures to fill it.

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use reviewloop_ports::IdSource;
use tempfile::TempDir;

use super::{Database, SqlStore};

/// A fresh database for one test: an SQLite file in a temporary folder, or
/// a PostgreSQL database created for the test and dropped after it.
pub(crate) struct TestDb {
    pub db: Database,
    /// Where `db` is, for tests that open it again with other settings.
    pub url: String,
    // Kept so the SQLite file lives as long as the test.
    _dir: Option<TempDir>,
    // The PostgreSQL database to drop, and where to connect to drop it.
    postgres: Option<(String, String)>,
}

/// Where the PostgreSQL half of the suite creates its databases.
pub(crate) const POSTGRES_URL_VAR: &str = "REVIEWLOOP_TEST_POSTGRES_URL";

impl TestDb {
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("test.db").display());
        let (db, applied) = Database::open(&url).expect("open test database");
        assert!(!applied.is_empty(), "a new database gets every migration");
        Self {
            db,
            url,
            _dir: Some(dir),
            postgres: None,
        }
    }

    /// A new PostgreSQL database, or `None` (and a note that the test was
    /// skipped there) when the variable is not set; a failure instead when
    /// `REVIEWLOOP_REQUIRE_POSTGRES` is set, as in CI.
    pub fn postgres() -> Option<Self> {
        let Some(admin) = std::env::var(POSTGRES_URL_VAR)
            .ok()
            .filter(|u| !u.is_empty())
        else {
            assert!(
                std::env::var("REVIEWLOOP_REQUIRE_POSTGRES").is_err(),
                "REVIEWLOOP_REQUIRE_POSTGRES is set but {POSTGRES_URL_VAR} is not"
            );
            eprintln!("skipped on PostgreSQL: {POSTGRES_URL_VAR} is not set");
            return None;
        };
        let name = format!("reviewloop_test_{}", crate::ids::RandomIds.secret_hex(8));
        let mut conn =
            PgConnection::establish(&admin).expect("connect to the PostgreSQL test server");
        conn.batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create the test database");
        let mut url = url::Url::parse(&admin).expect("a postgres:// URL");
        url.set_path(&name);
        let (db, applied) =
            Database::open(url.as_str()).expect("open the PostgreSQL test database");
        assert!(!applied.is_empty(), "a new database gets every migration");
        Some(Self {
            db,
            url: url.to_string(),
            _dir: None,
            postgres: Some((admin, name)),
        })
    }

    pub fn store(&self) -> SqlStore {
        SqlStore::new(self.db.clone())
    }
}

/// Another connection's open transaction holding one row, as another
/// instance in the middle of a change would; see [`TestDb::hold_row`].
pub(crate) struct HeldRow {
    finish: std::sync::mpsc::Sender<Option<&'static str>>,
    holder: std::thread::JoinHandle<()>,
}

impl HeldRow {
    /// Applies `set` (an SQL SET list), if any, to the held row and
    /// commits, which lets whatever waits on the row go on.
    pub fn release(self, set: Option<&'static str>) {
        self.finish.send(set).expect("the holder waits");
        self.holder.join().expect("the holder's change");
    }
}

#[derive(diesel::QueryableByName)]
struct PlanRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    detail: String,
}

impl TestDb {
    /// The query plan SQLite picks for `query`, exactly as the store sends
    /// it (on a fresh database: no statistics, as a service's file has).
    pub async fn plan_of<Q>(&self, query: Q) -> Vec<String>
    where
        Q: diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite> + Send + 'static,
    {
        use diesel::RunQueryDsl;
        let sql = diesel::debug_query::<diesel::sqlite::Sqlite, _>(&query).to_string();
        let sql = sql
            .split(" -- binds:")
            .next()
            .unwrap_or_default()
            .to_owned();
        let rows: Vec<PlanRow> = self
            .db
            .run(move |c| Ok(diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}")).load(c)?))
            .await
            .expect("a plan");
        rows.into_iter().map(|r| r.detail).collect()
    }

    /// On PostgreSQL, row `id` of `table` locked by another connection's
    /// transaction until [`HeldRow::release`].
    pub fn hold_row(&self, table: &'static str, id: String) -> HeldRow {
        use diesel::sql_types::Text;
        use diesel::RunQueryDsl;
        let pool = self.db.pool.clone();
        let (locked, wait_locked) = std::sync::mpsc::channel();
        let (finish, wait_finish) = std::sync::mpsc::channel::<Option<&'static str>>();
        let holder = std::thread::spawn(move || {
            let mut conn = pool.get().expect("a connection");
            conn.transaction::<_, diesel::result::Error, _>(|conn| {
                diesel::sql_query(format!("UPDATE {table} SET id = id WHERE id = $1"))
                    .bind::<Text, _>(&id)
                    .execute(conn)?;
                locked.send(()).expect("the test waits");
                if let Some(set) = wait_finish.recv().expect("the test goes on") {
                    diesel::sql_query(format!("UPDATE {table} SET {set} WHERE id = $1"))
                        .bind::<Text, _>(&id)
                        .execute(conn)?;
                }
                Ok(())
            })
            .expect("the holder's transaction");
        });
        wait_locked.recv().expect("the row is held");
        HeldRow { finish, holder }
    }

    /// On PostgreSQL, the interleaving of two instances in which one reads
    /// a row, the other changes it, and the first then writes it: `work`
    /// runs while another connection holds row `id` of `table`; once `work`
    /// waits on that row, the other connection applies `set` (an SQL SET
    /// list) to it and commits, and `work` goes on against the changed row.
    pub async fn changed_under<T: Send + 'static>(
        &self,
        table: &'static str,
        id: String,
        set: &'static str,
        work: impl std::future::Future<Output = T> + Send + 'static,
    ) -> T {
        use diesel::RunQueryDsl;
        let held = self.hold_row(table, id);
        let work = tokio::spawn(work);
        let mut conn = self.db.pool.get().expect("a connection");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            #[derive(diesel::QueryableByName)]
            struct Waiting {
                #[diesel(sql_type = diesel::sql_types::BigInt)]
                n: i64,
            }
            let waiting: Waiting = diesel::sql_query(
                "SELECT COUNT(*) AS n FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .get_result(&mut conn)
            .expect("pg_stat_activity");
            if waiting.n > 0 {
                break;
            }
            // Ending without waiting would make the test pass without
            // the interleaving it is about.
            assert!(
                !work.is_finished(),
                "the work ended without waiting on the held row"
            );
            assert!(
                std::time::Instant::now() < deadline,
                "the work never reached the held row"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        held.release(Some(set));
        work.await.expect("the work")
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = &self.postgres {
            if let Ok(mut conn) = PgConnection::establish(admin) {
                let _ = conn.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// Runs each named test body (an `async fn(TestDb)`) once on SQLite and
/// once on PostgreSQL; the PostgreSQL run skips, and says so, when
/// `REVIEWLOOP_TEST_POSTGRES_URL` is not set.
macro_rules! on_every_backend {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::db::testdb::TestDb::sqlite()).await
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    if let Some(db) = $crate::db::testdb::TestDb::postgres() {
                        super::$name(db).await;
                    }
                }
            )*
        }
    };
}
pub(crate) use on_every_backend;

pub(crate) mod fixtures {
    use chrono::{DateTime, Duration, Utc};
    use reviewloop_domain::NewLoop;
    use reviewloop_domain::{
        AccountStatus, ApiKey, ApiKeyId, ApiKeyRecord, Email, Event, EventId, EventType,
        InviteCode, Loop, LoopId, Member, ObjectId, Permission, RequestId, RequestInput,
        ReviewRequest, User, UserId, UserRecord,
    };
    use reviewloop_ports::{AccountStore, LoopStore, RequestStore};
    use serde_json::json;

    use crate::db::SqlStore;

    pub fn oid(n: u8) -> ObjectId {
        ObjectId::from_parts(1_800_000_000, [n; 8])
    }

    /// A time with milliseconds, as the clock gives them.
    pub fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_123).expect("time")
            + Duration::seconds(seconds)
    }

    pub fn user(n: u8, email: &str) -> User {
        User::restore(UserRecord {
            id: UserId::new(oid(n)),
            email: Email::parse(email).expect("email"),
            status: AccountStatus::Active,
            signing_secret: format!("whsec_{n}"),
            created_at: at(0),
        })
    }

    pub fn key(n: u8, user: &User, hash: &str) -> ApiKey {
        ApiKey::restore(ApiKeyRecord {
            id: ApiKeyId::new(oid(n)),
            user_id: user.id,
            name: Some("ci".into()),
            key_hash: hash.into(),
            prefix: "rl_abcdef".into(),
            permissions: vec![Permission::LoopsRead, Permission::RequestsWrite],
            rate_limit: 250,
            plan: reviewloop_domain::Plan::Standard,
            test: false,
            created_at: at(0),
            revoked_at: None,
        })
    }

    /// Users 1 (creator), 2 and 3 (active), 4 (pending) and a loop with a code.
    pub async fn loop_with_members(store: &SqlStore, n: u8, code: &str) -> Loop {
        for u in 1..=4u8 {
            let user = user(u, &format!("u{u}@x.io"));
            if store.user_by_id(&user.id).await.expect("lookup").is_none() {
                store.insert_user(&user).await.expect("user");
            }
        }
        let id = LoopId::new(oid(n));
        let creator = Member::creator(
            id,
            UserId::new(oid(1)),
            Email::parse("u1@x.io").expect("e"),
            at(0),
        );
        let fields = NewLoop::parse(Some("Reviewers"), Some("desc"), Some("📝")).expect("fields");
        let mut lp = Loop::create(
            id,
            fields,
            creator,
            InviteCode::parse(code).expect("code"),
            at(0),
        );
        for (u, active) in [(2u8, true), (3, true), (4, false)] {
            let email = Email::parse(&format!("u{u}@x.io")).expect("e");
            let member = if active {
                Member::joined(id, UserId::new(oid(u)), email, at(1))
            } else {
                Member::invited(id, UserId::new(oid(u)), email, at(1))
            };
            lp.put_member(member).expect("a member of this loop");
        }
        store.insert_loop(&lp, &[]).await.expect("loop");
        lp
    }

    /// A pending request in `lp` by user 1, sent to its active members.
    pub fn request(lp: &Loop, n: u8, priority: &str, created: i64) -> ReviewRequest {
        let input = RequestInput {
            request_text: Some(format!("Request {n}")),
            content_type: Some("markdown".into()),
            response_type: Some("rating".into()),
            response_config: Some(json!({"scale_max": 10, "hint": "be fair"})),
            priority: Some(priority.into()),
            processing_type: Some("time-sensitive".into()),
            timeout_seconds: Some(json!(60)),
            default_response: Some(json!(5)),
            context: Some(json!({"post": n})),
            metadata: Some(json!({"trace": "t"})),
            callback_url: Some("https://hooks.example.com/cb".into()),
            ..RequestInput::default()
        };
        let fields = input.validate().expect("valid");
        let broadcasts = lp.broadcast_entries(fields.priority, true);
        ReviewRequest::create(
            RequestId::new(oid(n)),
            lp.id,
            lp.creator_id,
            Some(ApiKeyId::new(oid(200))),
            fields,
            broadcasts,
            at(created),
        )
    }

    pub fn event_for(request: &ReviewRequest, lp: &Loop, n: u8, kind: EventType) -> Event {
        let data = json!({"request": {"id": request.id}, "loop": {"id": lp.id}});
        Event::for_request(EventId::new(oid(n)), kind, request, data, at(0))
    }

    /// A high request in a loop with members, stored with its
    /// `request.created` event in the outbox.
    pub async fn created_request(store: &SqlStore) -> (ReviewRequest, Event) {
        let lp = loop_with_members(store, 10, "ABCDEF").await;
        stored_request(store, &lp, 20, "high", 90).await
    }

    /// Request `n` of `lp` (see [`request`]), stored with its
    /// `request.created` event `event`.
    pub async fn stored_request(
        store: &SqlStore,
        lp: &Loop,
        n: u8,
        priority: &str,
        event: u8,
    ) -> (ReviewRequest, Event) {
        let request = request(lp, n, priority, 0);
        let event = event_for(&request, lp, event, EventType::RequestCreated);
        store
            .insert_request(&request, std::slice::from_ref(&event))
            .await
            .expect("stored");
        (request, event)
    }
}
