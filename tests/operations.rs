//! Black-box: what operators point their tools at: `/ready`, `/metrics` in
//! Prometheus' format with the HTTP calls and queues, and JSON log lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{id_of, Server};
use serde_json::{json, Value};

fn scrape(server: &Server) -> String {
    let reply = server
        .http()
        .get(format!("{}/metrics", server.base))
        .send()
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    let kind = reply.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    reply.text().unwrap()
}

/// The value of the sample `name` (with its labels, as rendered).
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .map(|v| v.trim().parse().unwrap())
}

fn ready_and_metrics_tell_an_operator_how_the_instance_does() {
    let server = Server::start();
    // `reviewloop health`, the container's health check, agrees.
    for extra in [&[][..], &["--ready"]] {
        let probe = std::process::Command::new(common::BIN)
            .args(["health", "--url", &server.base])
            .args(extra)
            .output()
            .unwrap();
        assert!(probe.status.success(), "{extra:?}: {probe:?}");
    }
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nobody = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let probe = std::process::Command::new(common::BIN)
        .args(["health", "--url", &nobody])
        .output()
        .unwrap();
    assert!(!probe.status.success());
    let said = String::from_utf8_lossy(&probe.stderr);
    assert!(
        said.contains("did not answer") && said.lines().count() == 1,
        "{said}"
    );
    let ready = server
        .http()
        .get(format!("{}/ready", server.base))
        .send()
        .unwrap();
    assert_eq!(ready.status().as_u16(), 200);
    let body: Value = ready.json().unwrap();
    assert_eq!(body["data"]["status"], "ready");

    let created = server.create_loop(&server.admin_key, "Ops");
    let loop_id = id_of(&created["loop"]);
    let id = server.create_request(&server.admin_key, &loop_id);
    server
        .get(&server.admin_key, &format!("/v1/requests/{id}"))
        .data(200);
    server
        .get(&server.admin_key, "/v1/requests/0123456789abcdef01234567")
        .error(404);
    let text = scrape(&server);
    for (name, at_least) in [
        (
            r#"reviewloop_http_requests_total{route="/v1/requests/{id}",method="GET",status="200"}"#,
            1.0,
        ),
        (
            r#"reviewloop_http_requests_total{route="/v1/requests/{id}",method="GET",status="404"}"#,
            1.0,
        ),
        (
            r#"reviewloop_http_requests_total{route="/v1/loops/{id}/requests",method="POST",status="201"}"#,
            1.0,
        ),
        (
            r#"reviewloop_http_request_duration_seconds_count{route="/v1/requests/{id}",method="GET"}"#,
            2.0,
        ),
        (r#"reviewloop_requests{status="pending"}"#, 1.0),
        ("reviewloop_db_pool_wait_seconds_count", 1.0),
    ] {
        let got = sample(&text, name).unwrap_or_else(|| panic!("no {name} in\n{text}"));
        assert!(got >= at_least, "{name} is {got}");
    }
    assert_eq!(
        sample(&text, r#"reviewloop_requests{status="completed"}"#),
        Some(0.0)
    );
    for queue in ["outbox", "deliveries", "notices"] {
        assert!(
            sample(
                &text,
                &format!(r#"reviewloop_queue_waiting{{queue="{queue}"}}"#)
            )
            .is_some(),
            "{queue}: {text}"
        );
    }
    assert!(
        !text.contains(&id),
        "series are by route pattern, never by id"
    );

    // A request that times out shows its lag; the sweeper runs often.
    let mut body = common::request_body();
    body["timeout_seconds"] = json!(1);
    server
        .post(
            &server.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            body,
        )
        .data(201);
    let started = Instant::now();
    loop {
        let text = scrape(&server);
        // The counts by status are read from the database for a scrape,
        // and may lag the sweeper's own count by one scrape.
        if sample(&text, "reviewloop_timeout_lag_seconds_count") == Some(1.0)
            && sample(&text, r#"reviewloop_requests{status="timeout"}"#) == Some(1.0)
        {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{text}");
        // /metrics allows 60 calls a minute per client: poll gently.
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn json_logs_are_one_object_per_line() {
    let server = Server::start_with(&[("REVIEWLOOP_LOG_FORMAT", "json"), ("RUST_LOG", "info")]);
    server.get(&server.admin_key, "/v1/loops").data(200);
    // The first start's secrets stay out of the log stream: they are in a
    // file only this user can read, which the log names.
    let lines = server.stderr.lock().unwrap().clone();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains(&server.admin_key) || l.contains("/setup/")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("bootstrap.txt")),
        "{lines:?}"
    );
    let file = server.dir_path().join("bootstrap.txt");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert!(std::fs::read_to_string(&file).unwrap().contains("/setup/"));
    let started = Instant::now();
    loop {
        let lines = server.stderr.lock().unwrap().clone();
        let logged: Vec<Value> = lines
            .iter()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        if let Some(call) = logged
            .iter()
            .find(|l| l["message"] == "request" && l["path"] == "/v1/loops")
        {
            assert_eq!(call["status"], 200);
            assert_eq!(call["level"], "INFO");
            assert!(call["timestamp"].is_string());
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{lines:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

on_every_backend!(
    ready_and_metrics_tell_an_operator_how_the_instance_does,
    json_logs_are_one_object_per_line,
);

/// An SQLite database takes one instance: a second `reviewloop serve` on
/// the same file refuses to start and says why, while the first goes on
/// and the CLI still works beside it.
#[test]
fn a_second_instance_on_one_sqlite_file_refuses_to_start() {
    common::run_on(common::Backend::Sqlite, || {
        let server = Server::start();
        let mut second = std::process::Command::new(common::BIN)
            .args(["serve", "--bind", "127.0.0.1:0", "--database-url"])
            .arg(&server.db_url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start a second reviewloop");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = second.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = second.kill();
                panic!("a second instance started on the same SQLite file");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut second.stderr.take().expect("stderr"), &mut stderr)
            .expect("stderr");
        assert!(!status.success());
        assert!(
            stderr.contains("another reviewloop already serves")
                && stderr.contains("use PostgreSQL for several"),
            "{stderr}"
        );
        // The first goes on, and the CLI runs beside it.
        server.get(&server.admin_key, "/v1/test").data(200);
        assert!(server.key("cli@example.com").starts_with("rl_"));
    });
}

fn cli_failure(server: &Server, args: &[&str]) -> String {
    let output = server.cli_raw(args);
    assert!(!output.status.success(), "{args:?} should fail");
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

/// A backup taken while requests are being created restores to a
/// database that holds every request acknowledged before it began, whose
/// audit chains verify; the restore refuses a served database, one with
/// data (without --force), and files that are no reviewloop database.
#[test]
fn a_backup_under_load_restores_every_acknowledged_request() {
    common::run_on(common::Backend::Sqlite, || {
        let mut server = Server::start();
        // A key with a limit the load does not reach.
        let owner = server.key("load@example.com");
        let loop_id = id_of(&server.create_loop(&owner, "Backed up")["loop"]);
        let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let load = {
            let (base, key) = (server.base.clone(), owner.clone());
            let (acknowledged, stop, loop_id) =
                (acknowledged.clone(), stop.clone(), loop_id.clone());
            std::thread::spawn(move || {
                let http = reqwest::blocking::Client::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let reply = http
                        .post(format!("{base}/v1/loops/{loop_id}/requests"))
                        .bearer_auth(&key)
                        .json(&common::request_body())
                        .send()
                        .unwrap();
                    if reply.status() == 201 {
                        let body: serde_json::Value = reply.json().unwrap();
                        acknowledged
                            .lock()
                            .unwrap()
                            .push(id_of(&body["data"]["request"]));
                    }
                }
            })
        };
        std::thread::sleep(Duration::from_millis(1500));
        let before: Vec<String> = acknowledged.lock().unwrap().clone();
        let file = server.dir_path().join("backup.db");
        let file_text = file.to_str().unwrap();
        let output = server.cli_raw(&["backup", "--to", file_text]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(String::from_utf8_lossy(&output.stdout).contains("backed up"));
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&file).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600, "keys and secrets are in it");
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        load.join().unwrap();
        let after = acknowledged.lock().unwrap().len();
        assert!(
            before.len() >= 5 && after > before.len(),
            "{} then {after}",
            before.len()
        );

        // Not over a backup, not while served, not over data without --force.
        assert!(cli_failure(&server, &["backup", "--to", file_text]).contains("exists already"));
        assert!(
            cli_failure(&server, &["restore", "--from", file_text, "--force"])
                .contains("another reviewloop already serves")
        );
        server.kill();
        assert!(
            cli_failure(&server, &["restore", "--from", file_text]).contains("holds data already")
        );
        let junk = server.dir_path().join("junk.db");
        std::fs::write(&junk, "not a database at all").unwrap();
        assert!(cli_failure(
            &server,
            &["restore", "--from", junk.to_str().unwrap(), "--force"]
        )
        .contains("is not a reviewloop database"));
        assert!(
            cli_failure(&server, &["restore", "--from", "/nonexistent/backup.db"])
                .contains("does not exist")
        );
        let missing = std::process::Command::new(common::BIN)
            .args([
                "backup",
                "--to",
                "/tmp/never.db",
                "--database-url",
                "sqlite:///nonexistent/r.db",
            ])
            .output()
            .unwrap();
        assert!(!missing.status.success());
        assert!(String::from_utf8_lossy(&missing.stderr).contains("does not exist"));
        let postgres = std::process::Command::new(common::BIN)
            .args([
                "backup",
                "--to",
                "x.dump",
                "--database-url",
                "postgres://app:secret@db/reviews",
            ])
            .output()
            .unwrap();
        assert!(!postgres.status.success());
        let postgres = String::from_utf8_lossy(&postgres.stderr);
        assert!(
            postgres.contains("pg_dump") && !postgres.contains("secret"),
            "{postgres}"
        );

        let output = server.cli_raw(&["restore", "--from", file_text, "--force"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(String::from_utf8_lossy(&output.stdout).contains("is kept at"));
        let kept = std::fs::read_dir(server.dir_path())
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().contains(".before-restore-"));
        assert!(kept, "the replaced database is kept beside it");

        server.relaunch();
        for id in &before {
            server
                .get(&owner, &format!("/v1/api/requests/{id}"))
                .data(200);
        }
        server.assert_audit_verifies();
    });
}

/// PostgreSQL goes away and comes back (a proxy between them cut and
/// mended): calls answer 503 `Database unavailable` with `Retry-After`
/// within 5 s, never a 500 or a hang; `/ready` says 503; within 5 s of
/// the database's return the service serves again without a restart,
/// and what was answered 2xx before is there.
fn the_database_going_away_is_a_503_and_its_return_needs_no_restart() {
    let target = common::proxy::postgres_address();
    let proxy = common::proxy::Proxy::start(&target);
    let through = format!("127.0.0.1:{}", proxy.port);
    let server = Server::start_reaching(&[], |url| url.replacen(&target, &through, 1));
    assert!(server.db_url.contains(&through));
    let key = server.key("outage@example.com");
    let loop_id = id_of(&server.create_loop(&key, "Outage")["loop"]);
    let kept = server.create_request(&key, &loop_id);

    proxy.cut();
    let calls: [(&str, reqwest::Method, Option<Value>); 3] = [
        ("/v1/api/loops", reqwest::Method::GET, None),
        (
            &format!("/v1/loops/{loop_id}/requests"),
            reqwest::Method::POST,
            Some(common::request_body()),
        ),
        ("/ready", reqwest::Method::GET, None),
    ];
    for (path, method, body) in &calls {
        let started = Instant::now();
        let reply = server.call(method.clone(), Some(&key), path, body.clone());
        let took = started.elapsed();
        assert_eq!(
            reply.status,
            503,
            "{path}: {:?}\n{:#?}",
            reply.body,
            server.stderr.lock().unwrap()
        );
        assert!(took <= Duration::from_secs(5), "{path} took {took:?}");
        if *path != "/ready" {
            assert_eq!(reply.body["msg"], "Database unavailable", "{path}");
            assert!(reply.header("retry-after").is_some(), "{path}");
        }
    }
    // What needs no database is still served: liveness, the API's
    // description and reference, the sign-in page.
    for path in ["/health", "/v1/openapi.json", "/docs/api", "/login"] {
        let started = Instant::now();
        let reply = server
            .http()
            .get(format!("{}{path}", server.base))
            .send()
            .unwrap();
        assert_eq!(reply.status(), 200, "{path} while the database is away");
        assert!(
            started.elapsed() <= Duration::from_secs(1),
            "{path} at once"
        );
    }

    proxy.mend();
    let back = Instant::now();
    loop {
        let reply = server.get(&key, "/v1/api/loops");
        if reply.status == 200 {
            break;
        }
        assert!(
            back.elapsed() <= Duration::from_secs(5),
            "still {} after the database came back: {:?}",
            reply.status,
            reply.body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
        .get(&key, &format!("/v1/api/requests/{kept}"))
        .data(200);
    let made = server.post(
        &key,
        &format!("/v1/loops/{loop_id}/requests"),
        common::request_body(),
    );
    assert_eq!(made.status, 201);
    let ready = server.call(reqwest::Method::GET, None, "/ready", None);
    assert_eq!(ready.status, 200);
}

/// An instance started before its PostgreSQL answers waits for it (as in
/// a compose file, where both start together), says meanwhile that it is
/// alive but not ready, and serves once the database answers.
fn an_instance_waits_for_postgres_at_start() {
    let target = common::proxy::postgres_address();
    let proxy = std::sync::Arc::new(common::proxy::Proxy::start(&target));
    proxy.cut();
    let through = format!("127.0.0.1:{}", proxy.port);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mender = {
        let proxy = proxy.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            let http = reqwest::blocking::Client::new();
            let at = |path: &str| {
                http.get(format!("http://127.0.0.1:{port}{path}"))
                    .send()
                    .unwrap_or_else(|e| panic!("{path} answers while it waits: {e}"))
            };
            let health = at("/health");
            let ready = at("/ready");
            let call = at("/v1/test");
            // The container health check: alive, not ready.
            let probe = |extra: &[&str]| {
                std::process::Command::new(common::BIN)
                    .args(["health", "--url", &format!("http://127.0.0.1:{port}")])
                    .args(extra)
                    .output()
                    .unwrap()
            };
            assert!(probe(&[]).status.success());
            let not_ready = probe(&["--ready"]);
            assert!(!not_ready.status.success());
            let said = String::from_utf8_lossy(&not_ready.stderr);
            assert!(
                said.contains("503") && said.contains("Database unavailable"),
                "{said}"
            );
            std::thread::sleep(Duration::from_millis(1500));
            proxy.mend();
            (health.status(), ready, call)
        })
    };
    let started = Instant::now();
    let server = Server::start_reaching_at(&format!("127.0.0.1:{port}"), &[], |url| {
        url.replacen(&target, &through, 1)
    });
    let (health, ready, call) = mender.join().unwrap();
    assert_eq!(health, 200, "alive while it waits");
    for refused in [ready, call] {
        assert_eq!(refused.status(), 503);
        assert!(refused.headers().contains_key("retry-after"));
        let body: serde_json::Value = refused.json().unwrap();
        assert_eq!(body["msg"], "Database unavailable", "{body}");
    }
    assert!(started.elapsed() >= Duration::from_secs(3), "it waited");
    assert!(
        server
            .stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("waiting for the database")),
        "and said so"
    );
    server.get(&server.admin_key, "/v1/test").data(200);
}

/// Instances started at the same moment on one new PostgreSQL database
/// (a compose file starts them together) migrate it one at a time: each
/// starts, and one of them made the bootstrap key.
fn instances_started_together_migrate_one_at_a_time() {
    let database = common::EmptyDatabase::new();
    let url = database.url.clone();
    let starts: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Server::start_on(&url))
        })
        .collect();
    let servers: Vec<Server> = starts.into_iter().map(|s| s.join().unwrap()).collect();
    let keys: Vec<&str> = servers
        .iter()
        .map(|s| s.admin_key.as_str())
        .filter(|k| !k.is_empty())
        .collect();
    assert_eq!(keys.len(), 1, "one bootstrap key: {keys:?}");
    for server in &servers {
        server.get(keys[0], "/v1/test").data(200);
    }
}

#[test]
fn instances_started_together_on_one_new_postgres_database_all_start() {
    common::run_on(
        common::Backend::Postgres,
        instances_started_together_migrate_one_at_a_time,
    );
}

/// SIGTERM while it waits for its database stops it at once with exit
/// code 0: in a container it is process 1, for which a signal without a
/// handler does nothing, so the handler must be there from the start.
#[test]
fn a_signal_during_the_wait_for_the_database_stops_it_at_once() {
    use std::io::BufRead;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(common::BIN)
        .args(["--bind", "127.0.0.1:0", "--database-url"])
        .arg(format!("postgres://nobody@127.0.0.1:{port}/none"))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let waiting = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(10)).ok())
        .any(|line| line.contains("waiting for the database"));
    assert!(waiting, "it waits");
    let signalled = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(3),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A PostgreSQL that answers and refuses (here: an unknown role) is not
/// waited for: the start fails at once and says why.
fn a_refusing_postgres_fails_the_start_at_once() {
    let admin = std::env::var("REVIEWLOOP_TEST_POSTGRES_URL").unwrap();
    let (scheme, rest) = admin.split_once("://").unwrap();
    let host = rest.split_once('@').map_or(rest, |(_, host)| host);
    let url = format!("{scheme}://no_such_role_here@{host}");
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = std::process::Command::new(common::BIN)
        .args(["--bind", "127.0.0.1:0", "--database-url", &url])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(started.elapsed() < Duration::from_secs(5), "not waited for");
    let said = String::from_utf8_lossy(&output.stderr);
    // With password logins (as .ci/run may set up) libpq may instead say
    // that no password was given.
    assert!(
        said.contains("no_such_role_here") || said.contains("no password supplied"),
        "{said}"
    );
    assert!(!said.contains("waiting for the database"), "{said}");
}

#[test]
fn a_postgres_that_refuses_the_role_fails_the_start_at_once() {
    common::run_on(
        common::Backend::Postgres,
        a_refusing_postgres_fails_the_start_at_once,
    );
}

#[test]
fn an_instance_started_before_postgres_waits_for_it() {
    common::run_on(
        common::Backend::Postgres,
        an_instance_waits_for_postgres_at_start,
    );
}

#[test]
fn postgres_going_away_is_a_503_and_its_return_needs_no_restart() {
    common::run_on(
        common::Backend::Postgres,
        the_database_going_away_is_a_503_and_its_return_needs_no_restart,
    );
}

/// A first start on a busy port fails before it makes the bootstrap key,
/// so the next start (on a free port) still prints it.
#[test]
fn a_busy_port_does_not_use_up_the_bootstrap_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("r.db").display());
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let refused = std::process::Command::new(common::BIN)
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--database-url",
            &db,
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("cannot listen on"), "{said}");
    assert!(!said.contains("bootstrap API key"), "{said}");
    drop(busy);
    let mut next = std::process::Command::new(common::BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--database-url", &db])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stderr = next.stderr.take().unwrap();
    let mut printed = false;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
        if line.contains("bootstrap API key") {
            printed = true;
        }
        if line.contains("listening on") {
            break;
        }
    }
    let _ = next.kill();
    let _ = next.wait();
    assert!(printed, "the next start still makes and prints the key");
}

/// A CLI mistake is one line that says it once, and a non-zero exit.
#[test]
fn a_cli_mistake_is_said_once_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("r.db").display());
    let output = std::process::Command::new(common::BIN)
        .args([
            "key",
            "create",
            "--email",
            "a@example.com",
            "--permissions",
            "foo",
        ])
        .args(["--database-url", &db])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert_eq!(
        said.matches("unknown permission 'foo'").count(),
        1,
        "{said}"
    );
    let help = std::process::Command::new(common::BIN)
        .args(["key", "create", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("requests:write") && help.contains("enterprise"),
        "{help}"
    );
    // The server's flags are listed by `serve` and by `reviewloop` alone,
    // not by commands that never listen.
    let help_of = |words: &[&str]| {
        let output = std::process::Command::new(common::BIN)
            .args(words)
            .output()
            .unwrap();
        assert!(output.status.success(), "{words:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    for words in [&["--help"][..], &["serve", "--help"]] {
        let help = help_of(words);
        assert!(
            help.contains("--smtp-url") && help.contains("--bind"),
            "{words:?}: {help}"
        );
    }
    for words in [
        &["migrate", "--help"][..],
        &["key", "create", "--help"],
        &["backup", "--help"],
    ] {
        let help = help_of(words);
        assert!(
            !help.contains("--smtp-url") && !help.contains("--bind"),
            "{words:?}: {help}"
        );
        assert!(help.contains("--database-url"), "{words:?}: {help}");
    }
}

/// The shipped systemd unit passes `systemd-analyze verify` without a
/// word (an unknown key would be a warning), pointed at this build.
#[test]
fn the_systemd_unit_verifies() {
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/reviewloop@.service"
    ))
    .unwrap();
    for hardening in [
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "StateDirectory=",
    ] {
        assert!(unit.contains(hardening), "{hardening}");
    }
    let binary = std::fs::canonicalize(common::BIN).unwrap();
    let unit = unit.replace("/usr/local/bin/reviewloop", binary.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reviewloop@8081.service");
    std::fs::write(&path, unit).unwrap();
    let verified = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!("systemd-analyze is needed (Debian: apt-get install systemd): {e}")
        });
    let said = String::from_utf8_lossy(&verified.stderr);
    assert!(verified.status.success(), "{said}");
    assert!(said.trim().is_empty(), "no warning: {said}");
}

/// A small tmpfs for a database, unmounted when dropped.
struct SmallDisk {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk");
        std::fs::create_dir(&path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            mounted.status.success(),
            "this test mounts a small tmpfs to fill (it needs root): {}",
            String::from_utf8_lossy(&mounted.stderr)
        );
        SmallDisk { path, _dir: dir }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
    }
}

/// The SQLite disk fills up: writes answer 503 `Database unavailable`
/// with `Retry-After`, never a 500; reads go on; once space is freed the
/// instance writes again without a restart, and every write answered
/// 201 before is there.
#[test]
fn a_full_sqlite_disk_is_a_503_until_space_is_freed() {
    common::run_on(common::Backend::Sqlite, || {
        let disk = SmallDisk::mount("6m");
        // Room to free later.
        let ballast = disk.path.join("ballast");
        std::fs::write(&ballast, vec![0u8; 1024 * 1024]).unwrap();
        let db = format!("sqlite://{}", disk.path.join("r.db").display());
        let mut server = Server::start_reaching(&[], |_| db.clone());
        let key = server.key("disk@example.com");
        let loop_id = id_of(&server.create_loop(&key, "Full")["loop"]);
        let mut body = common::request_body();
        body["request_text"] = json!("x".repeat(2000));
        body["context"] = json!({"blob": "y".repeat(60_000)});
        let mut created = Vec::new();
        let refused = loop {
            let reply = server.post(&key, &format!("/v1/loops/{loop_id}/requests"), body.clone());
            if reply.status != 201 {
                break reply;
            }
            created.push(id_of(&reply.body["data"]["request"]));
            assert!(created.len() < 500, "the disk never filled");
        };
        assert_eq!(
            refused.status,
            503,
            "{:?}\n{:#?}",
            refused.body,
            server.stderr.lock().unwrap()
        );
        assert_eq!(refused.body["msg"], "Database unavailable");
        assert!(refused.header("retry-after").is_some());
        assert!(!created.is_empty());
        server.get(&key, "/v1/api/loops").data(200);

        std::fs::remove_file(&ballast).unwrap();
        let freed = Instant::now();
        loop {
            let reply = server.post(
                &key,
                &format!("/v1/loops/{loop_id}/requests"),
                common::request_body(),
            );
            if reply.status == 201 {
                break;
            }
            assert_ne!(reply.status, 500, "{:?}", reply.body);
            assert!(freed.elapsed() < Duration::from_secs(5), "{:?}", reply.body);
            std::thread::sleep(Duration::from_millis(200));
        }
        for id in &created {
            server
                .get(&key, &format!("/v1/api/requests/{id}"))
                .data(200);
        }
        server.kill();
    });
}
