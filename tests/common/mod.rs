//! The black-box harness: starts the real `reviewloop` binary on a free
//! port with its own temporary SQLite database, and speaks HTTP to it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod load;
pub mod people;
pub mod proxy;
pub mod push;
pub mod receiver;
pub mod slack;
pub mod smtp;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

/// The database a test's servers run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Where the PostgreSQL half creates its databases.
pub const POSTGRES_URL_VAR: &str = "REVIEWLOOP_TEST_POSTGRES_URL";

thread_local! {
    static BACKEND: Cell<Backend> = const { Cell::new(Backend::Sqlite) };
}

/// Runs a test body with its servers on `backend`; on PostgreSQL only when
/// `REVIEWLOOP_TEST_POSTGRES_URL` is set (and says so when it is not; with
/// `REVIEWLOOP_REQUIRE_POSTGRES` set, as in CI, a missing server fails).
pub fn run_on(backend: Backend, body: fn()) {
    if backend == Backend::Postgres
        && std::env::var(POSTGRES_URL_VAR).map_or(true, |v| v.is_empty())
    {
        assert!(
            std::env::var("REVIEWLOOP_REQUIRE_POSTGRES").is_err(),
            "REVIEWLOOP_REQUIRE_POSTGRES is set but {POSTGRES_URL_VAR} is not: the PostgreSQL half must run"
        );
        eprintln!("skipped on PostgreSQL: {POSTGRES_URL_VAR} is not set");
        return;
    }
    BACKEND.with(|b| b.set(backend));
    body();
}

/// The backend the current test's servers run on.
pub fn backend() -> Backend {
    BACKEND.with(Cell::get)
}

/// Runs each named test body once on SQLite and once on PostgreSQL.
#[macro_export]
macro_rules! on_every_backend {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $( #[test] fn $name() { $crate::common::run_on($crate::common::Backend::Sqlite, super::$name) } )*
        }
        mod on_postgres {
            $( #[test] fn $name() { $crate::common::run_on($crate::common::Backend::Postgres, super::$name) } )*
        }
    };
}

/// A fresh database URL for one server of the current backend, and the
/// PostgreSQL database to drop afterwards.
fn fresh_database(dir: &TempDir) -> (String, Option<(String, String)>) {
    match BACKEND.with(Cell::get) {
        Backend::Sqlite => (
            format!("sqlite://{}", dir.path().join("reviewloop.db").display()),
            None,
        ),
        Backend::Postgres => {
            use diesel::connection::SimpleConnection;
            use diesel::Connection;
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let admin = std::env::var(POSTGRES_URL_VAR).expect("checked by run_on");
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos();
            let name = format!(
                "reviewloop_bb_{}_{}_{nanos}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            );
            let mut conn = diesel::PgConnection::establish(&admin).expect("connect to PostgreSQL");
            conn.batch_execute(&format!("CREATE DATABASE {name}"))
                .expect("create the test database");
            let slash = admin.rfind('/').expect("a database in the URL");
            (format!("{}/{name}", &admin[..slash]), Some((admin, name)))
        }
    }
}

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::blocking::Client;
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_reviewloop");

/// Both path forms of the request surface.
pub const PREFIXES: [&str; 2] = ["/v1/api", "/v1"];

/// A running server and what the tests need to talk to it.
pub struct Server {
    child: Child,
    pub base: String,
    pub admin_key: String,
    pub db_url: String,
    pub stderr: Arc<Mutex<Vec<String>>>,
    env: Vec<(String, String)>,
    postgres: Option<(String, String)>,
    client: Client,
    dir: TempDir,
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// `data` of a success envelope, after checking the status.
    pub fn data(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(self.body["error"], false, "{}", self.body);
        &self.body["data"]
    }

    /// The failure message, after checking status and envelope.
    pub fn error(&self, status: u16) -> &str {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(self.body["error"], true, "{}", self.body);
        self.body["msg"].as_str().expect("msg")
    }

    /// `data` of an alternate-surface success, after checking the status,
    /// the envelope and its `meta`.
    pub fn data_b(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(self.body["success"], true, "{}", self.body);
        assert!(self.body["meta"]["request_id"].is_string(), "{}", self.body);
        &self.body["data"]
    }

    /// `error` of an alternate-surface failure (`code`, `message`,
    /// `details`), after checking the status, the envelope and that `meta`
    /// names the request.
    pub fn error_b(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(self.body["success"], false, "{}", self.body);
        assert_eq!(
            self.body["meta"]["request_id"].as_str(),
            self.header("x-request-id"),
            "meta.request_id is the X-Request-Id of the answer: {}",
            self.body
        );
        assert!(self.body["error"]["message"].is_string(), "{}", self.body);
        &self.body["error"]
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Server {
    /// Starts a server on a fresh database.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts a server on a fresh database with extra environment.
    pub fn start_with(env: &[(&str, &str)]) -> Self {
        Self::start_reaching(env, |url| url)
    }

    /// Starts a server whose database URL is `reach(the fresh database's)`
    /// (for example through a proxy a test can cut).
    pub fn start_reaching(env: &[(&str, &str)], reach: impl Fn(String) -> String) -> Self {
        Self::start_reaching_at("127.0.0.1:0", env, reach)
    }

    /// [`Server::start_reaching`] on a given address.
    pub fn start_reaching_at(
        bind: &str,
        env: &[(&str, &str)],
        reach: impl Fn(String) -> String,
    ) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (db_url, postgres) = fresh_database(&dir);
        let db_url = reach(db_url);
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut server = Server::launched(dir, db_url, env, postgres, bind);
        // With JSON logs the key is written to a file, not the log.
        server.admin_key = server
            .wait_for_line("reviewloop: bootstrap API key: ")
            .or_else(|| {
                std::fs::read_to_string(server.dir.path().join("bootstrap.txt"))
                    .ok()?
                    .lines()
                    .find_map(|l| l.strip_prefix("reviewloop: bootstrap API key: "))
                    .map(str::to_owned)
            })
            .expect("bootstrap key on first start");
        server
    }

    /// Starts a server on a database that exists already (an
    /// [`EmptyDatabase`], say), which it does not drop. `admin_key` is the
    /// bootstrap key if this start made it, else empty.
    pub fn start_on(db_url: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut server = Server::launched(dir, db_url.to_owned(), Vec::new(), None, "127.0.0.1:0");
        // Said before "listening on", so already read.
        server.admin_key = server
            .wait_for_line("reviewloop: bootstrap API key: ")
            .unwrap_or_default();
        server
    }

    /// Starts a server on a fresh database that `load` first fills (given
    /// the database URL): a database an earlier release made. Its accounts
    /// exist already, so no bootstrap key is made (`admin_key` is empty).
    pub fn start_loaded(load: impl FnOnce(&str)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (db_url, postgres) = fresh_database(&dir);
        load(&db_url);
        Server::launched(dir, db_url, Vec::new(), postgres, "127.0.0.1:0")
    }

    /// A server started in `dir` on `db_url` at `bind`, whose bootstrap
    /// key (if any) is not read yet; it drops `postgres` when dropped.
    fn launched(
        dir: TempDir,
        db_url: String,
        env: Vec<(String, String)>,
        postgres: Option<(String, String)>,
        bind: &str,
    ) -> Self {
        let (child, base, stderr) = launch_at(&dir, &db_url, &env, bind);
        let client = Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("client");
        Server {
            child,
            base,
            admin_key: String::new(),
            db_url,
            stderr,
            env,
            postgres,
            client,
            dir,
        }
    }

    /// Kills the process (as a crash would) and starts another one on the
    /// same database.
    pub fn restart(&mut self) {
        self.kill();
        self.relaunch();
    }

    /// Kills the process with SIGKILL: no chance to clean up.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a new process on the same database after [`Server::kill`].
    pub fn relaunch(&mut self) {
        let (child, base, stderr) = launch(&self.dir, &self.db_url, &self.env);
        self.child = child;
        self.base = base;
        self.stderr = stderr;
    }

    fn wait_for_line(&self, prefix: &str) -> Option<String> {
        self.stderr
            .lock()
            .unwrap()
            .iter()
            .find_map(|l| l.strip_prefix(prefix).map(str::to_owned))
    }

    /// The server's own directory (its SQLite file lives there).
    pub fn dir_path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Runs a CLI command on this server's database; returns its JSON output.
    pub fn cli(&self, args: &[&str]) -> Value {
        let output = self.cli_raw(args);
        assert!(
            output.status.success(),
            "cli {args:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("cli JSON output")
    }

    /// Asserts that `reviewloop audit verify` finds every chain intact.
    pub fn assert_audit_verifies(&self) {
        let verified = self.cli_raw(&["audit", "verify"]);
        assert!(
            verified.status.success(),
            "{}{}",
            String::from_utf8_lossy(&verified.stdout),
            String::from_utf8_lossy(&verified.stderr)
        );
    }

    pub fn cli_raw(&self, args: &[&str]) -> std::process::Output {
        Command::new(BIN)
            .args(args)
            .args(["--database-url", &self.db_url])
            .current_dir(self.dir.path())
            .output()
            .expect("run cli")
    }

    /// A new key (and account) for `email` with a generous limit.
    pub fn key(&self, email: &str) -> String {
        self.key_with(email, &["--rate-limit", "100000"])
    }

    pub fn key_with(&self, email: &str, extra: &[&str]) -> String {
        let mut args = vec!["key", "create", "--email", email, "--json"];
        args.extend_from_slice(extra);
        self.cli(&args)["api_key"]
            .as_str()
            .expect("api_key")
            .to_owned()
    }

    pub fn call(
        &self,
        method: Method,
        key: Option<&str>,
        path: &str,
        body: Option<Value>,
    ) -> Reply {
        let mut request = self
            .client
            .request(method, format!("{}{}", self.base, path));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().expect("HTTP call");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().expect("body");
        let body =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"));
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn get(&self, key: &str, path: &str) -> Reply {
        self.call(Method::GET, Some(key), path, None)
    }

    pub fn post(&self, key: &str, path: &str, body: Value) -> Reply {
        self.call(Method::POST, Some(key), path, Some(body))
    }

    pub fn put(&self, key: &str, path: &str, body: Value) -> Reply {
        self.call(Method::PUT, Some(key), path, Some(body))
    }

    pub fn patch(&self, key: &str, path: &str, body: Value) -> Reply {
        self.call(Method::PATCH, Some(key), path, Some(body))
    }

    pub fn delete(&self, key: &str, path: &str) -> Reply {
        self.call(Method::DELETE, Some(key), path, None)
    }

    /// Raw access for bodies that are not JSON.
    pub fn http(&self) -> &Client {
        &self.client
    }

    /// Stops the process with SIGTERM, as a service manager does, and
    /// waits for it to exit; returns its exit status.
    pub fn stop_gracefully(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not stop within 30 s of SIGTERM");
    }

    /// Starts a new process on the same database listening at `address`
    /// (`http://127.0.0.1:PORT`, the one a proxy in front knows), after
    /// the old one stopped; `base` stays as it is.
    pub fn relaunch_at(&mut self, address: &str) {
        let bind = address.trim_start_matches("http://");
        let (child, _, stderr) = launch_at(&self.dir, &self.db_url, &self.env, bind);
        self.child = child;
        self.stderr = stderr;
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and returns the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        self.stop_gracefully()
    }

    /// Creates a loop owned by `key`; returns its `data`.
    pub fn create_loop(&self, key: &str, name: &str) -> Value {
        self.post(key, "/v1/api/loops", json!({"name": name}))
            .data(201)
            .clone()
    }

    /// Creates the usual request (`request_body`) in `loop_id` as `key`;
    /// returns its id.
    pub fn create_request(&self, key: &str, loop_id: &str) -> String {
        self.create_request_with(key, loop_id, json!({}))
    }

    /// Creates the usual request with the fields of `changes` laid over
    /// it; returns its id.
    pub fn create_request_with(&self, key: &str, loop_id: &str, changes: Value) -> String {
        let mut body = request_body();
        for (field, value) in changes.as_object().expect("an object of fields") {
            body[field] = value.clone();
        }
        id_of(
            &self
                .post(key, &format!("/v1/loops/{loop_id}/requests"), body)
                .data(201)["request"],
        )
    }

    /// The ids in `key`'s inbox (what it may act on now).
    pub fn inbox(&self, key: &str) -> Vec<String> {
        self.get(key, "/v1/api/inbox").data(200)["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .map(id_of)
            .collect()
    }

    /// How often `action` was logged for request `id` in the admin's
    /// audit log.
    pub fn logged(&self, id: &str, action: &str) -> usize {
        self.get(&self.admin_key, "/v1/api/audit?limit=1000")
            .data(200)["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| e["request_id"] == id && e["action"] == action)
            .count()
    }

    /// Joins with the code of `created` (a loop creation result).
    pub fn join(&self, key: &str, created: &Value) {
        let code = created["invite_code"].as_str().unwrap();
        self.post(key, "/v1/api/loops/join", json!({"invite_code": code}))
            .data(200);
    }
}

/// Starts the binary on `db_url`; waits for its "listening on" line.
fn launch(
    dir: &TempDir,
    db_url: &str,
    env: &[(String, String)],
) -> (Child, String, Arc<Mutex<Vec<String>>>) {
    launch_at(dir, db_url, env, "127.0.0.1:0")
}

fn launch_at(
    dir: &TempDir,
    db_url: &str,
    env: &[(String, String)],
    bind: &str,
) -> (Child, String, Arc<Mutex<Vec<String>>>) {
    let mut command = Command::new(BIN);
    command
        .args(["--bind", bind, "--database-url", db_url])
        .env("RUST_LOG", "warn")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("start reviewloop");
    let stderr = child.stderr.take().expect("stderr");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("reviewloop: listening on ") {
                let _ = tx.send(addr.to_owned());
            }
            sink.lock().unwrap().push(line);
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("server did not start; stderr: {:?}", lines.lock().unwrap()));
    (child, base, lines)
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some((admin, name)) = &self.postgres {
            drop_postgres_database(admin, name);
        }
    }
}

fn drop_postgres_database(admin: &str, name: &str) {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    if let Ok(mut conn) = diesel::PgConnection::establish(admin) {
        let _ = conn.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }
}

/// An empty database of the current backend, for servers started on it
/// with [`Server::start_on`]; dropped with this value.
pub struct EmptyDatabase {
    pub url: String,
    postgres: Option<(String, String)>,
    _dir: TempDir,
}

impl EmptyDatabase {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (url, postgres) = fresh_database(&dir);
        EmptyDatabase {
            url,
            postgres,
            _dir: dir,
        }
    }
}

impl Drop for EmptyDatabase {
    fn drop(&mut self) {
        if let Some((admin, name)) = &self.postgres {
            drop_postgres_database(admin, name);
        }
    }
}

/// A valid single-select request body.
pub fn request_body() -> Value {
    json!({
        "request_text": "Publish this post?",
        "type": "markdown",
        "response_type": "single_select",
        "response_config": {"options": ["approve", "reject"]},
        "priority": "high",
        "processing_type": "time-sensitive",
        "timeout_seconds": 3600,
        "default_response": "reject",
        "context": {"post_id": 42},
        "metadata": {"workflow": "blog"},
        "platform": "n8n",
    })
}

pub fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_owned()
}

impl Server {
    /// Another instance on the same database (a second node of a cluster).
    /// Its database is dropped by the first instance, not by this one.
    pub fn another_instance(&self) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let (child, base, stderr) = launch(&dir, &self.db_url, &self.env);
        Server {
            child,
            base,
            admin_key: self.admin_key.clone(),
            db_url: self.db_url.clone(),
            stderr,
            env: self.env.clone(),
            postgres: None,
            client: Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("client"),
            dir,
        }
    }
}

/// nginx in front of some instances, configured from `docs/nginx.conf`.
pub struct Nginx {
    child: Child,
    pub base: String,
    _dir: TempDir,
}

impl Nginx {
    pub fn start(upstreams: &[&str]) -> Nginx {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let documented = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/nginx.conf"
        ))
        .unwrap();
        let servers: String = upstreams
            .iter()
            .map(|u| {
                format!(
                    "    server {} max_fails=1 fail_timeout=5s;\n",
                    u.trim_start_matches("http://")
                )
            })
            .collect();
        let site = documented
            .replace("    server 127.0.0.1:8081 max_fails=1 fail_timeout=5s;\n    server 127.0.0.1:8082 max_fails=1 fail_timeout=5s;\n", &servers)
            .replace("listen 80;", &format!("listen 127.0.0.1:{port};"));
        assert!(
            site.contains(&format!("listen 127.0.0.1:{port};")) && site.contains(&servers),
            "docs/nginx.conf changed shape"
        );
        let d = dir.path().display();
        std::fs::write(dir.path().join("site.conf"), site).unwrap();
        std::fs::write(
            dir.path().join("nginx.conf"),
            format!(
                "user root; daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log warn;\n\
                 events {{ worker_connections 512; }}\n\
                 http {{ access_log off; client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
                 fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
                 include {d}/site.conf; }}\n"
            ),
        )
        .unwrap();
        let mut child = Command::new("nginx")
            .args(["-p", &d.to_string(), "-c", &format!("{d}/nginx.conf")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx is installed (.ci/run installs it)");
        let base = format!("http://127.0.0.1:{port}");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Nginx {
                    child,
                    base,
                    _dir: dir,
                };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "nginx did not start: {}",
            std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default()
        );
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
