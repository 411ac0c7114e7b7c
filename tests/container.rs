//! Black-box: the shipped `Containerfile` and `compose.yaml`, built and
//! run with podman as the README says.
//!
//! Container registries are out of reach here, so the images start from
//! a Debian root made with debootstrap (the host's release, since the
//! image is given this build's binary: `BINARY_FROM=prebuilt`), and the
//! compose file's PostgreSQL and nginx images are stand-ins made from
//! Debian's packages that take the official images' settings.
//!
//! Needs root, podman, runc, podman-compose and debootstrap (Debian
//! packages of those names) and Debian's mirror; `.ci/run` installs them
//! and sets `REVIEWLOOP_TEST_CONTAINERS=1`. Without that variable the
//! tests say they were skipped and return; with it, anything missing is
//! a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::{id_of, request_body};
use serde_json::{json, Value};

const IMAGE: &str = "localhost/reviewloop:ci-test";
const BASE: &str = "localhost/reviewloop-ci-base";
const POSTGRES_STANDIN: &str = "localhost/reviewloop-ci-postgres";
const NGINX_STANDIN: &str = "localhost/reviewloop-ci-nginx";

fn wanted() -> bool {
    if std::env::var("REVIEWLOOP_TEST_CONTAINERS").is_ok_and(|v| v == "1") {
        return true;
    }
    eprintln!(
        "container test SKIPPED: set REVIEWLOOP_TEST_CONTAINERS=1 to run it (root, podman, runc, podman-compose, debootstrap)"
    );
    false
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the tests keep what they make (under target/, beside the binary,
/// so that the binary can be hard-linked into a build context).
fn work_dir() -> PathBuf {
    let dir = Path::new(common::BIN)
        .parent()
        .unwrap()
        .join("container-test");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::canonicalize(dir).unwrap()
}

/// podman as these machines need it: runc (crun fails on their cgroup
/// layout) and limits podman may set.
struct Podman {
    conf: PathBuf,
}

impl Podman {
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("CONTAINERS_CONF", &self.conf);
        command
    }

    fn output(&self, program: &str, args: &[&str]) -> Output {
        self.command(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("{program} is needed (Debian: apt-get install {program}): {e}")
            })
    }

    /// Runs podman; its stdout, after asserting that it succeeded.
    fn run(&self, args: &[&str]) -> String {
        let output = self.output("podman", args);
        assert!(
            output.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn image_exists(&self, name: &str) -> bool {
        self.output("podman", &["image", "exists", name])
            .status
            .success()
    }

    /// What a container printed, stdout and stderr.
    fn logs(&self, name: &str) -> String {
        let output = self.output("podman", &["logs", name]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// The id of the image `name`, if there is one.
    fn image_id(&self, name: &str) -> Option<String> {
        let output = self.output("podman", &["image", "inspect", "--format", "{{.Id}}", name]);
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Builds `dir` (holding a Containerfile) as `tag`, and removes the
    /// image the tag named before (each build gives the binary anew).
    fn build(&self, dir: &Path, tag: &str, args: &[&str]) {
        let before = self.image_id(tag);
        let mut words = vec![
            "build",
            "--format",
            "docker",
            "-f",
            "Containerfile",
            "-t",
            tag,
        ];
        words.extend_from_slice(args);
        words.push(".");
        let output = self
            .command("podman")
            .args(&words)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "podman build {tag}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        if let Some(before) = before.filter(|id| Some(id) != self.image_id(tag).as_ref()) {
            let _ = self.output("podman", &["rmi", &before]);
        }
    }
}

/// podman set up once for both tests: the base image and the service's
/// image, built from the shipped Containerfile with this build's binary.
fn podman() -> &'static Podman {
    static PODMAN: OnceLock<Podman> = OnceLock::new();
    PODMAN.get_or_init(|| {
        let work = work_dir();
        let conf = work.join("containers.conf");
        std::fs::write(
            &conf,
            "[containers]\ndefault_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]\n\
             [engine]\nruntime = \"runc\"\n",
        )
        .unwrap();
        let podman = Podman { conf };
        if !podman.image_exists(BASE) {
            make_base(&podman, &work);
        }
        let context = work.join("reviewloop");
        let _ = std::fs::remove_dir_all(&context);
        std::fs::create_dir_all(context.join("target/release")).unwrap();
        std::fs::copy(repo().join("Containerfile"), context.join("Containerfile")).unwrap();
        std::fs::copy(repo().join(".dockerignore"), context.join(".dockerignore")).unwrap();
        let binary = context.join("target/release/reviewloop");
        if std::fs::hard_link(common::BIN, &binary).is_err() {
            std::fs::copy(common::BIN, &binary).unwrap();
        }
        podman.build(
            &context,
            IMAGE,
            &[
                "--build-arg",
                &format!("BASE_IMAGE={BASE}"),
                "--build-arg",
                "BINARY_FROM=prebuilt",
            ],
        );
        podman
    })
}

/// A minimal Debian root of the host's release, imported as [`BASE`].
fn make_base(podman: &Podman, work: &Path) {
    let release = std::fs::read_to_string("/etc/os-release")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME=").map(str::to_owned))
        .expect("a Debian host");
    let root = work.join("rootfs");
    let _ = std::fs::remove_dir_all(&root);
    let made = podman.output(
        "debootstrap",
        &[
            "--variant=minbase",
            &release,
            root.to_str().unwrap(),
            "http://deb.debian.org/debian",
        ],
    );
    assert!(
        made.status.success(),
        "debootstrap: {}",
        String::from_utf8_lossy(&made.stdout)
    );
    let imported = podman
        .command("sh")
        .args([
            "-c",
            &format!("tar -C '{}' -c . | podman import - {BASE}", root.display()),
        ])
        .output()
        .unwrap();
    assert!(
        imported.status.success(),
        "podman import: {}",
        String::from_utf8_lossy(&imported.stderr)
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// The two tests share podman's storage and two cores: one at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `base` answers `/ready` with 200.
fn wait_until_ready(base: &str, logs: impl Fn() -> String) {
    let http = reqwest::blocking::Client::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(90) {
        if http
            .get(format!("{base}/ready"))
            .timeout(Duration::from_secs(2))
            .send()
            .is_ok_and(|r| r.status() == 200)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("{base} never became ready: {}", logs());
}

/// The bootstrap key a first start printed.
fn bootstrap_key(logs: &str) -> String {
    logs.lines()
        .find_map(|l| l.split("reviewloop: bootstrap API key: ").nth(1))
        .unwrap_or_else(|| panic!("no bootstrap key in {logs}"))
        .trim()
        .to_owned()
}

/// A loop and a request in it, made through `base`; the loop's id and
/// the request's.
fn a_request_through(base: &str, key: &str) -> (String, String) {
    let http = reqwest::blocking::Client::new();
    let made: Value = http
        .post(format!("{base}/v1/api/loops"))
        .bearer_auth(key)
        .json(&json!({"name": "Boxed"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let loop_id = id_of(&made["data"]["loop"]);
    let request: Value = http
        .post(format!("{base}/v1/loops/{loop_id}/requests"))
        .bearer_auth(key)
        .json(&request_body())
        .send()
        .unwrap()
        .json()
        .unwrap();
    (loop_id, id_of(&request["data"]["request"]))
}

fn status_of(base: &str, key: &str, path: &str) -> u16 {
    reqwest::blocking::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(key)
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// Removes the named containers and volumes however the test ends.
struct Cleanup {
    containers: Vec<String>,
    volumes: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let podman = podman();
        for name in &self.containers {
            let _ = podman.output("podman", &["rm", "-f", "-v", "-t", "0", name]);
        }
        for name in &self.volumes {
            let _ = podman.output("podman", &["volume", "rm", "-f", name]);
        }
    }
}

/// The image alone, on SQLite in its volume: it serves, runs as a user
/// other than root, owns its data, reports healthy, stops on SIGTERM with
/// exit code 0 within the drain, and starts again with its data.
#[test]
fn the_image_serves_from_its_volume_as_a_user_and_stops_cleanly() {
    if !wanted() {
        return;
    }
    let _turn = one_at_a_time();
    let podman = podman();
    let (name, volume) = (
        format!("reviewloop-ci-{}", std::process::id()),
        format!("reviewloop-ci-data-{}", std::process::id()),
    );
    let _cleanup = Cleanup {
        containers: vec![name.clone()],
        volumes: vec![volume.clone()],
    };
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    podman.run(&[
        "run",
        "-d",
        "--name",
        &name,
        "-p",
        &format!("127.0.0.1:{port}:8080"),
        "-v",
        &format!("{volume}:/data"),
        "-e",
        &format!("REVIEWLOOP_PUBLIC_URL={base}"),
        IMAGE,
    ]);
    wait_until_ready(&base, || podman.logs(&name));
    let logs = podman.logs(&name);
    let key = bootstrap_key(&logs);
    assert!(
        logs.contains(&format!("set the admin password at: {base}/setup/")),
        "{logs}"
    );
    let (_, id) = a_request_through(&base, &key);

    let uid = podman.run(&["exec", &name, "id", "-u"]);
    assert_ne!(uid.trim(), "0", "not root");
    let owner = podman.run(&["exec", &name, "stat", "-c", "%u", "/data/reviewloop.db"]);
    assert_eq!(owner.trim(), uid.trim(), "the database is the user's");
    podman.run(&["healthcheck", "run", &name]);

    let stopping = Instant::now();
    podman.run(&["stop", "-t", "20", &name]);
    assert!(
        stopping.elapsed() < Duration::from_secs(15),
        "stopped by SIGTERM, not killed after 20 s"
    );
    let code = podman.run(&["inspect", "--format", "{{.State.ExitCode}}", &name]);
    assert_eq!(code.trim(), "0", "{}", podman.logs(&name));

    podman.run(&["start", &name]);
    wait_until_ready(&base, || podman.logs(&name));
    assert_eq!(
        status_of(&base, &key, &format!("/v1/requests/{id}")),
        200,
        "the request survived the restart"
    );
}

/// compose.yaml as shipped: PostgreSQL, two instances and nginx with
/// docs/nginx.conf. The instances wait for PostgreSQL, one of them makes
/// the bootstrap key, calls through nginx reach both, /metrics is not
/// served to the outside, and both instances report healthy.
#[test]
fn the_compose_file_runs_two_instances_on_postgres_behind_nginx() {
    if !wanted() {
        return;
    }
    let _turn = one_at_a_time();
    let podman = podman();
    let work = work_dir();
    for (tag, dir, containerfile, files) in [
        (
            POSTGRES_STANDIN,
            "postgres",
            POSTGRES_CONTAINERFILE,
            &[("entrypoint.sh", POSTGRES_ENTRYPOINT)][..],
        ),
        (NGINX_STANDIN, "nginx", NGINX_CONTAINERFILE, &[][..]),
    ] {
        if podman.image_exists(tag) {
            continue;
        }
        let dir = work.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("Containerfile"),
            containerfile.replace("BASE", BASE),
        )
        .unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        podman.build(&dir, tag, &[]);
    }

    let project = format!("reviewloopci{}", std::process::id());
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let compose = |args: &[&str]| {
        let mut command = podman.command("podman-compose");
        command
            .args(["-p", &project, "-f"])
            .arg(repo().join("compose.yaml"))
            .args(args)
            .env("POSTGRES_PASSWORD", "ci0secret")
            .env("REVIEWLOOP_IMAGE", IMAGE)
            .env("POSTGRES_IMAGE", POSTGRES_STANDIN)
            .env("NGINX_IMAGE", NGINX_STANDIN)
            .env("REVIEWLOOP_PORT", port.to_string())
            .env("REVIEWLOOP_PUBLIC_URL", &base);
        command
            .output()
            .expect("podman-compose is needed (Debian: apt-get install podman-compose)")
    };
    let instance = |n: u8| format!("{project}_reviewloop-{n}_1");
    // podman-compose 1.0.3's `down` leaves the project's network.
    struct Down<F: Fn(&[&str]) -> Output>(F, String);
    impl<F: Fn(&[&str]) -> Output> Drop for Down<F> {
        fn drop(&mut self) {
            let _ = (self.0)(&["down", "-v", "-t", "1"]);
            let _ = crate::podman().output("podman", &["network", "rm", "-f", &self.1]);
        }
    }
    let down = Down(compose, format!("{project}_default"));
    // podman-compose's `down -v` removes the named volume but not the
    // instances' anonymous /data ones: their containers go first (this is
    // dropped before `down`), and those volumes with them.
    let _cleanup = Cleanup {
        containers: vec![instance(1), instance(2)],
        volumes: Vec::new(),
    };
    let up = (down.0)(&["up", "-d"]);
    assert!(
        up.status.success(),
        "podman-compose up: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    let logs = || {
        format!(
            "{}\n{}\n{}",
            podman.logs(&instance(1)),
            podman.logs(&instance(2)),
            podman.logs(&format!("{project}_proxy_1"))
        )
    };
    wait_until_ready(&base, logs);
    // Both instances up (nginx reaches either), one made the key.
    let started = Instant::now();
    while !(podman.logs(&instance(1)).contains("listening on")
        && podman.logs(&instance(2)).contains("listening on"))
    {
        assert!(started.elapsed() < Duration::from_secs(60), "{}", logs());
        std::thread::sleep(Duration::from_millis(250));
    }
    let all = logs();
    assert_eq!(
        all.matches("reviewloop: bootstrap API key: ").count(),
        1,
        "{all}"
    );
    let key = bootstrap_key(&all);
    let (_, id) = a_request_through(&base, &key);
    for _ in 0..10 {
        assert_eq!(status_of(&base, &key, &format!("/v1/requests/{id}")), 200);
    }
    assert_eq!(status_of(&base, &key, "/metrics"), 403, "docs/nginx.conf");
    for n in [1, 2] {
        podman.run(&["healthcheck", "run", &instance(n)]);
    }

    // The rolling restart the compose file's header gives, under a load
    // of creates and reads through nginx: no call fails. The load's key
    // comes from the CLI in a container, with room for it (the bootstrap
    // key allows 100 calls an hour).
    // podman's DNS (aardvark-dns) sometimes fails a lookup of `postgres`
    // for a moment after the project's containers start; a CLI command,
    // unlike `serve`, does not wait for its database, so it is run again.
    let create = [
        "exec",
        &instance(1),
        "reviewloop",
        "key",
        "create",
        "--email",
        "load@example.com",
        "--rate-limit",
        "100000",
        "--json",
    ];
    let mut made = podman.output("podman", &create);
    for _ in 0..5 {
        let said = String::from_utf8_lossy(&made.stderr);
        if made.status.success() || !said.contains("could not translate host name") {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
        made = podman.output("podman", &create);
    }
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let made = String::from_utf8_lossy(&made.stdout);
    let key = serde_json::from_str::<Value>(&made).unwrap()["api_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let (loop_id, id) = a_request_through(&base, &key);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // `nginx -s reload` closes the old workers' idle client connections
    // (and ones accepted but not read yet), and a call a client sends down
    // one at that moment fails in any client. The client libraries send
    // such a call again (reads, and creates with their Idempotency-Key);
    // so does this load, once, and it opens a connection per call. A
    // response that is not a success (a 502 from an instance going away)
    // is never sent again: that is what the restarts must not cause.
    let http = reqwest::blocking::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let load = {
        let (base, key, stop) = (base.clone(), key.clone(), stop.clone());
        let (id, loop_id) = (id.clone(), loop_id.clone());
        common::load::until_stopped(stop, http, move |http, n| {
            let call = || match n % 3 {
                0 => http
                    .post(format!("{base}/v1/loops/{loop_id}/requests"))
                    .bearer_auth(&key)
                    .header("Idempotency-Key", format!("load-{n}"))
                    .json(&request_body())
                    .send(),
                1 => http
                    .get(format!("{base}/v1/api/loops"))
                    .bearer_auth(&key)
                    .send(),
                _ => http
                    .get(format!("{base}/v1/requests/{id}"))
                    .bearer_auth(&key)
                    .send(),
            };
            call().or_else(|_| call())
        })
    };
    for n in [1, 2] {
        let restarted = (down.0)(&["restart", "-t", "20", &format!("reviewloop-{n}")]);
        assert!(
            restarted.status.success(),
            "{}",
            String::from_utf8_lossy(&restarted.stderr)
        );
        let started = Instant::now();
        while !podman
            .output("podman", &["healthcheck", "run", &instance(n)])
            .status
            .success()
        {
            assert!(started.elapsed() < Duration::from_secs(60), "{}", logs());
            std::thread::sleep(Duration::from_millis(250));
        }
        let reloaded = (down.0)(&["exec", "proxy", "nginx", "-s", "reload"]);
        assert!(
            reloaded.status.success(),
            "{}",
            String::from_utf8_lossy(&reloaded.stderr)
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (calls, failed) = load.join().unwrap();
    assert!(calls > 100, "a real load: {calls} calls");
    assert!(
        failed.is_empty(),
        "{} of {calls} failed: {failed:?}",
        failed.len()
    );
    for n in [1, 2] {
        let served = podman.logs(&instance(n));
        assert!(
            !served.contains("ERROR"),
            "instance {n} logged an error: {served}"
        );
    }
}

const POSTGRES_CONTAINERFILE: &str = "FROM BASE
RUN apt-get update && apt-get install -y --no-install-recommends postgresql && rm -rf /var/lib/apt/lists/*
COPY entrypoint.sh /entrypoint.sh
RUN chmod 0755 /entrypoint.sh
ENTRYPOINT [\"/entrypoint.sh\"]
";

/// The official image's start, in short: the same variables, a cluster
/// made on first start, password logins over TCP.
const POSTGRES_ENTRYPOINT: &str = r#"#!/bin/sh
set -e
bin=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
export PGDATA=/var/lib/postgresql/data
as_postgres() { su postgres -s /bin/sh -c "$1"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  install -d -o postgres -g postgres -m 0700 "$PGDATA"
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/password && chown postgres /tmp/password
  as_postgres "$bin/initdb -D $PGDATA -U $POSTGRES_USER --pwfile=/tmp/password --auth-host=scram-sha-256 --auth-local=trust"
  rm /tmp/password
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  as_postgres "$bin/pg_ctl -D $PGDATA -w -o '-c listen_addresses=' start"
  as_postgres "psql -U $POSTGRES_USER -d postgres -c 'CREATE DATABASE $POSTGRES_DB'"
  as_postgres "$bin/pg_ctl -D $PGDATA -w stop"
fi
exec su postgres -s /bin/sh -c "exec $bin/postgres -D $PGDATA"
"#;

const NGINX_CONTAINERFILE: &str = "FROM BASE
RUN apt-get update && apt-get install -y --no-install-recommends nginx && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default
CMD [\"nginx\", \"-g\", \"daemon off;\"]
";
