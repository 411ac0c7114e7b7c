//! `reviewloop serve`: migrate, bootstrap, listen, sweep timeouts, and stop
//! cleanly on SIGINT or SIGTERM.

use std::io::IsTerminal;
use std::net::TcpListener;

use actix_web::HttpServer;
use anyhow::Context;
use reviewloop_adapters::{redacted_url, Change, PrometheusMeter};
use reviewloop_http_actix::{build_app, AppState};
use reviewloop_service::{
    AccountService, DeliveryService, EventStream, IdempotencyService, NoticeService, Ports,
    RequestService,
};
use reviewloop_web::WebState;
use std::sync::Arc;
use tokio::sync::watch;
use tracing_subscriber::EnvFilter;

use crate::cli::LogFormat;
use crate::config::Config;
use crate::{open_database, ports, workers};

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let lines = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests) is harmless; ignore it.
    let _ = match format {
        LogFormat::Text => lines.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => lines.json().flatten_event(true).try_init(),
    };
}

/// The web application's state, sharing the API's key cache (a key revoked
/// in the dashboard stops at once), its per-address limit of public pages
/// and its rule for finding the client behind trusted proxies.
fn web_state(api: &AppState, ports: Ports, public_url: &str, config: &Config) -> WebState {
    let (limiter, proxies) = (api.public_limiter.clone(), api.trusted_proxies.clone());
    let gate_proxies = proxies.clone();
    WebState::new(ports, public_url, config.signup, api.auth.key_cache())
        .with_api_document(reviewloop_http_actix::openapi::document)
        .with_client_address(Arc::new(move |peer, headers| proxies.client(peer, headers)))
        .with_public_gate(Arc::new(move |req| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default();
            match gate_proxies.client(req.peer_addr().map(|a| a.ip()), req.headers()) {
                Some(client) => limiter.hit(client, now),
                None => Ok(()),
            }
        }))
}

/// SIGTERM and SIGINT, listened for from the start: in a container the
/// service is process 1, which the kernel does not stop for a signal it
/// has no handler for, so a `podman stop` during the wait for the
/// database would otherwise wait out its time-out and kill it.
struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn listen() -> anyhow::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Self {
            term: signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?,
            int: signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?,
        })
    }

    /// The next of either.
    async fn next(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}

/// Waits for SIGTERM or SIGINT, then stops the way a proxy in front needs:
/// `/ready` answers 503 at once and long-polls and streams answer or end
/// (`ChangeHub::stop`); calls keep being served for `drain`, while the
/// proxy notices and sends new calls elsewhere; then the listener closes
/// and calls in flight get their grace. A second signal skips the drain.
async fn stop_on_signal(
    server: actix_web::dev::ServerHandle,
    hub: Arc<reviewloop_service::ChangeHub>,
    drain: std::time::Duration,
    mut signals: StopSignals,
) {
    signals.next().await;
    tracing::info!(
        drain_seconds = drain.as_secs(),
        "stopping: not ready, draining"
    );
    hub.stop();
    tokio::select! {
        () = tokio::time::sleep(drain) => {}
        () = signals.next() => {}
    }
    tracing::info!("stopping: listener closed, finishing calls in flight");
    server.stop(true).await;
}

/// The database, opened and migrated. PostgreSQL that does not answer
/// yet (it is starting beside us, as in a compose file) is waited for up
/// to `REVIEWLOOP_DB_WAIT`, with pauses growing from half a second to ten,
/// each logged; meanwhile the address answers `/health` (alive) and 503
/// to everything else, so that an orchestrator neither restarts the
/// instance nor sends it traffic. Anything else (a malformed URL, a
/// password or database PostgreSQL refuses, a failed migration, SQLite)
/// fails at once.
async fn wait_for_database(
    config: &Config,
    meter: Arc<PrometheusMeter>,
    reserved: &socket2::Socket,
) -> anyhow::Result<(reviewloop_adapters::Database, Vec<String>)> {
    let postgres = config.database_url.starts_with("postgres");
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(500);
    let mut starting: Option<actix_web::dev::ServerHandle> = None;
    let opened = loop {
        match open_database(config, meter.clone()).await {
            Err(error)
                if postgres
                    && matches!(
                        error.downcast_ref::<reviewloop_adapters::DatabaseError>(),
                        Some(reviewloop_adapters::DatabaseError::Open(_))
                    )
                    && !refused_for_good(&error)
                    && started.elapsed() + pause <= config.db_wait =>
            {
                if starting.is_none() {
                    starting = Some(
                        answer_while_starting(reserved)
                            .with_context(|| format!("cannot listen on {}", config.bind))?,
                    );
                }
                tracing::warn!(error = %format!("{error:#}"), retry_in_ms = pause.as_millis() as u64,
                    "database not reachable yet; waiting for it");
                eprintln!(
                    "reviewloop: waiting for the database ({}); trying again in {:.1} s",
                    error.root_cause(),
                    pause.as_secs_f64()
                );
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(10));
            }
            other => break other,
        }
    };
    if let Some(starting) = starting {
        // Its answers close their connections, so this is quick; calls
        // that queue meanwhile wait on the socket for the real server.
        starting.stop(true).await;
    }
    opened
}

/// Whether PostgreSQL answered and refused (a wrong password, an unknown
/// role or database, no `pg_hba.conf` entry): waiting would not help.
fn refused_for_good(error: &anyhow::Error) -> bool {
    let said = format!("{error:#}");
    [
        "password authentication failed",
        "no password supplied",
        "does not exist",
        "no pg_hba.conf entry",
    ]
    .iter()
    .any(|why| said.contains(why))
}

/// Listens on the reserved address with [`reviewloop_http_actix::starting_app`]
/// until the handle is stopped. The socket stays open after that, for the
/// server proper.
fn answer_while_starting(
    reserved: &socket2::Socket,
) -> anyhow::Result<actix_web::dev::ServerHandle> {
    reserved.listen(1024)?;
    let listener: TcpListener = reserved.try_clone()?.into();
    listener.set_nonblocking(true)?;
    let server = HttpServer::new(reviewloop_http_actix::starting_app)
        .workers(1)
        .keep_alive(actix_web::http::KeepAlive::Disabled)
        // Its answers are short: when the database comes, it is gone at once.
        .shutdown_timeout(1)
        .disable_signals()
        .listen(listener)?
        .run();
    let handle = server.handle();
    tokio::spawn(server);
    Ok(handle)
}

/// The address, bound (so that a busy port is found at once) but not yet
/// listening.
fn reserve(address: std::net::SocketAddr) -> std::io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(
        Domain::for_address(address),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    socket.set_reuse_address(true)?;
    socket.bind(&address.into())?;
    Ok(socket)
}

/// Where the first start's secrets (the bootstrap key, the password link)
/// go: stderr for a person reading a terminal; with JSON logs stderr is a
/// log stream that collectors keep, so they go to `bootstrap.txt` in the
/// working directory (readable by this user only) and the log says where.
fn tell_secrets(said: &str, format: crate::cli::LogFormat) -> anyhow::Result<()> {
    if format != crate::cli::LogFormat::Json {
        eprint!("{said}");
        return Ok(());
    }
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = std::path::Path::new(BOOTSTRAP_FILE);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write the bootstrap key to {BOOTSTRAP_FILE}"))?;
    file.write_all(said.as_bytes())?;
    file.sync_all()?;
    let at = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    tracing::warn!(file = %at.display(), "first start: the bootstrap API key and the admin's password link are in this file; read it, then delete it");
    Ok(())
}

/// Where [`tell_secrets`] writes them with JSON logs.
const BOOTSTRAP_FILE: &str = "bootstrap.txt";

/// Runs the service until SIGINT or SIGTERM.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    init_logging(config.log_format);
    let meter = Arc::new(PrometheusMeter::new());
    // Before anything is read or written: one instance per SQLite file.
    let _sole = reviewloop_adapters::claim_sole_instance(&config.database_url)
        .with_context(|| format!("cannot serve {}", redacted_url(&config.database_url)))?;
    // The port is taken first, so that a busy one does not cost the first
    // start its bootstrap key; it listens only once the instance can
    // answer (or, while it waits for PostgreSQL, answers only /health), so
    // no proxy sends it calls while it migrates or waits.
    let reserved =
        reserve(config.bind).with_context(|| format!("cannot listen on {}", config.bind))?;
    let mut signals = StopSignals::listen()?;
    let (db, applied) = tokio::select! {
        opened = wait_for_database(&config, meter.clone(), &reserved) => opened?,
        () = signals.next() => {
            tracing::info!("stopped before it started serving");
            eprintln!("reviewloop: stopped before it started serving");
            return Ok(());
        }
    };
    for version in &applied {
        tracing::info!(%version, "applied migration");
    }
    let (ports, shared_limiter) = ports(db.clone(), &config, meter)?;
    // Other instances' changes wake this one's waiters (PostgreSQL only;
    // the listener stops when dropped at the end of this function).
    let hub = ports.changes.clone();
    let _listener = db.listen_for_changes(move |change| match change {
        Change::Request(id) => hub.request_changed(&id),
        Change::EventsNumbered => hub.events_numbered(),
        Change::Resumed => hub.wake_everyone(),
    });
    let bootstrapped = AccountService::new((&ports).into()).bootstrap().await?;
    // The first start makes the key pair that signs decision receipts, so
    // its public key is listed before the first receipt names it.
    ports.receipts.ensure_key().await?;

    reserved
        .listen(1024)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let listener: TcpListener = reserved.into();
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    let public_url = config.public_url_for(bound);
    let state = AppState::new(ports.clone(), &public_url)
        .with_trusted_proxies(config.trusted_proxies.clone());
    // Likewise the VAPID key pair, so the first browser finds it.
    state.push.ensure_key().await?;
    let pages = web_state(&state, ports.clone(), &public_url, &config);
    if let Some(created) = bootstrapped {
        let link = pages.people().password_link(&created.user.id).await?;
        let said = format!(
            "reviewloop: bootstrap API key: {}\nreviewloop: set the admin password at: {public_url}/setup/{link}\n",
            created.plain
        );
        tell_secrets(&said, config.log_format)?;
    }
    let people = pages.people().clone();
    let server = HttpServer::new(move || {
        let pages = pages.clone();
        build_app(state.clone(), move |cfg| reviewloop_web::mount(cfg, pages))
    })
    .listen(listener)?
    // An idle connection is closed after 5 s. A proxy must close its own
    // idle connections sooner (docs/nginx.conf: 4 s), or it may send a
    // call down one at the very moment this side closes it, and a POST
    // that meets a closed connection is not retried: a 502. The shutdown
    // drain (5 s) outlasts the proxy's idle time for the same reason.
    .keep_alive(std::time::Duration::from_secs(5))
    // Calls in flight get 10 s to finish once the listener closes.
    .shutdown_timeout(10)
    // SIGTERM and SIGINT are handled below: not ready first, then a
    // drain, then the listener closes.
    .disable_signals()
    .run();
    let stopper = tokio::spawn(stop_on_signal(
        server.handle(),
        ports.changes.clone(),
        config.shutdown_drain,
        signals,
    ));
    eprintln!("reviewloop: listening on http://{bound}");
    tracing::info!(%bound, %public_url, "reviewloop started");

    let (stop, stopped) = watch::channel(false);
    let notices = NoticeService::new(
        (&ports).into(),
        &public_url,
        config.notify_retry_schedule.clone(),
    );
    let deliverer = tokio::spawn(workers::deliver_events(
        DeliveryService::with_schedule((&ports).into(), config.retry_schedule.clone())
            .announcing(notices.clone()),
        ports.changes.clone(),
        stopped.clone(),
    ));
    let notifier = tokio::spawn(workers::send_notices(
        notices,
        ports.changes.clone(),
        stopped.clone(),
    ));
    let numberer = tokio::spawn(workers::number_events(
        EventStream::new((&ports).into()),
        stopped.clone(),
    ));
    let linker = tokio::spawn(workers::link_audit_entries(
        reviewloop_service::AuditService::new((&ports).into()),
        stopped.clone(),
    ));
    let purger = tokio::spawn(workers::purge_old_records(
        IdempotencyService::new((&ports).into()),
        DeliveryService::with_schedule((&ports).into(), config.retry_schedule.clone()),
        people,
        config.retention_days,
        stopped.clone(),
    ));
    let flusher = shared_limiter
        .map(|limiter| tokio::spawn(workers::flush_rate_limits(limiter, stopped.clone())));
    let escalator = tokio::spawn(workers::escalate_due_requests(
        RequestService::new((&ports).into(), &public_url),
        stopped.clone(),
    ));
    let sweeper = tokio::spawn(workers::time_out_due_requests(
        RequestService::new((&ports).into(), &public_url),
        stopped,
    ));

    // The server stops (see `stop_on_signal`) and lets calls in flight
    // finish; then the workers finish their current item and stop.
    let result = server.await;
    stopper.abort();
    let _ = stop.send(true);
    for (name, worker) in [
        ("timeout", sweeper),
        ("escalation", escalator),
        ("idempotency purge", purger),
        ("event numbering", numberer),
        ("audit linking", linker),
        ("delivery", deliverer),
        ("notices", notifier),
    ] {
        if let Err(error) = worker.await {
            tracing::warn!(%error, worker = name, "worker ended abnormally");
        }
    }
    if let Some(flusher) = flusher {
        if let Err(error) = flusher.await {
            tracing::warn!(%error, worker = "rate limit flush", "worker ended abnormally");
        }
    }
    tracing::info!("reviewloop stopped");
    result.context("HTTP server failed")
}
