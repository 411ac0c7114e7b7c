//! The command line. Flags win over environment variables.

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

/// reviewloop: routes review tasks from automated workflows to humans.
#[derive(Debug, Parser)]
#[command(name = "reviewloop", version, about)]
pub struct Cli {
    /// Database URL: sqlite://PATH or postgres://USER:PASSWORD@HOST/DB.
    #[arg(
        long,
        env = "REVIEWLOOP_DATABASE_URL",
        default_value = "sqlite://reviewloop.db",
        // `--help` would print the variable's value, password and all.
        hide_env_values = true,
        global = true
    )]
    pub database_url: String,

    /// Address to listen on.
    #[arg(
        long,
        env = "REVIEWLOOP_BIND",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    pub bind: String,

    /// Base URL users reach the service at (join links, QR codes, polling URLs);
    /// defaults to http:// and the address listened on.
    #[arg(long, env = "REVIEWLOOP_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,

    /// Let webhooks and callbacks reach loopback and private addresses.
    #[arg(
        long,
        env = "REVIEWLOOP_ALLOW_PRIVATE_TARGETS",
        default_value_t = false,
        global = true
    )]
    pub allow_private_targets: bool,

    /// Pauses between webhook delivery attempts, in seconds, comma-separated
    /// (default: 5,300,1800,7200,18000, then 36000 six times: about three days).
    #[arg(long, env = "REVIEWLOOP_WEBHOOK_RETRY_SCHEDULE", global = true)]
    pub webhook_retry_schedule: Option<String>,

    /// Reverse proxies whose `X-Forwarded-For` names the client
    /// (`Forwarded` is never read): comma-separated addresses or
    /// CIDR networks, e.g. `127.0.0.1,::1`. Default: none, so the client is
    /// the connection's address.
    #[arg(long, env = "REVIEWLOOP_TRUSTED_PROXIES", global = true)]
    pub trusted_proxies: Option<String>,

    /// Database connections at most (default: 8 on SQLite, 16 on PostgreSQL).
    #[arg(long, env = "REVIEWLOOP_DB_POOL_SIZE", global = true)]
    pub db_pool_size: Option<u32>,

    /// Seconds a call waits for a free database connection before it fails
    /// with 503 (default 4, so a database that went away is a 503 within 5 s).
    #[arg(long, env = "REVIEWLOOP_DB_POOL_TIMEOUT", global = true)]
    pub db_pool_timeout: Option<u64>,

    /// Seconds `serve` waits at start for a PostgreSQL server that does not
    /// answer yet, trying again with growing pauses (default 60; 0: not).
    #[arg(long, env = "REVIEWLOOP_DB_WAIT", global = true)]
    pub db_wait: Option<u64>,

    /// Seconds between SIGTERM and closing the listener, while /ready
    /// answers 503 so that a proxy stops sending here (default 5).
    #[arg(long, env = "REVIEWLOOP_SHUTDOWN_DRAIN", global = true)]
    pub shutdown_drain: Option<u64>,

    /// Days that finished webhook deliveries, their attempts and
    /// dispatched events are kept (default 30).
    #[arg(long, env = "REVIEWLOOP_RETENTION_DAYS", global = true)]
    pub retention_days: Option<u32>,

    /// Who may create an account in the web application: `invite` (with a
    /// loop's invite code, the default) or `open` (anyone).
    #[arg(long, env = "REVIEWLOOP_SIGNUP", global = true)]
    pub signup: Option<String>,

    /// The SMTP server that sends email: `smtp://host:port` (add
    /// `?tls=required` for STARTTLS) or `smtps://user:pass@host:port`.
    /// Without it, no email is attempted.
    #[arg(
        long,
        env = "REVIEWLOOP_SMTP_URL",
        global = true,
        hide_env_values = true
    )]
    pub smtp_url: Option<String>,

    /// The address emails come from (default `reviewloop@localhost`).
    #[arg(long, env = "REVIEWLOOP_SMTP_FROM", global = true)]
    pub smtp_from: Option<String>,

    /// Slack's Web API, which loops' Slack apps call (default
    /// `https://slack.com/api`; point it elsewhere for tests or a proxy).
    #[arg(long, env = "REVIEWLOOP_SLACK_API_URL", global = true)]
    pub slack_api_url: Option<String>,

    /// Who push services can reach about this server's Web Push (the VAPID
    /// `sub`): `mailto:ops@example.com` or an https URL. Default: the public
    /// URL when it is https, else `mailto:` and the email sender's address.
    #[arg(long, env = "REVIEWLOOP_VAPID_SUBJECT", global = true)]
    pub vapid_subject: Option<String>,

    /// Pauses between attempts to send an email or Slack message, in
    /// seconds, comma-separated (default: 10,60,300,1800,7200,21600).
    #[arg(long, env = "REVIEWLOOP_NOTIFY_RETRY_SCHEDULE", global = true)]
    pub notify_retry_schedule: Option<String>,

    /// How log lines look on stderr: `text` (the default) or `json`, one
    /// object per line for log collectors.
    #[arg(long, env = "REVIEWLOOP_LOG_FORMAT", global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every command takes and shows in its `--help`; the other global
/// flags configure the server and are shown by `serve` (and `reviewloop`
/// alone) only.
const SHOWN_EVERYWHERE: [&str; 2] = ["database_url", "log_format"];

impl Cli {
    /// The command line as clap sees it: the server's flags are still
    /// accepted after any command (`reviewloop migrate --bind ...` was
    /// valid and stays so, and every command reads the same environment),
    /// but other commands' `--help` does not list them.
    pub fn command_line() -> clap::Command {
        let mut root = Cli::command();
        let hidden: Vec<clap::Arg> = root
            .get_arguments()
            .filter(|arg| arg.is_global_set() && !SHOWN_EVERYWHERE.contains(&arg.get_id().as_str()))
            .map(|arg| arg.clone().hide(true))
            .collect();
        let others: Vec<String> = root
            .get_subcommands()
            .map(|sub| sub.get_name().to_owned())
            .filter(|name| name != "serve")
            .collect();
        for name in others {
            // clap copies a global flag into a subcommand only where the
            // subcommand lacks one of that name: a hidden copy put there
            // first is what the subcommand, and its own subcommands, get.
            root = root.mut_subcommand(name, |mut sub| {
                for arg in &hidden {
                    sub = sub.arg(arg.clone());
                }
                sub
            });
        }
        root
    }

    /// Parses these words (the first is the program's name), or says why not.
    pub fn try_parse_words<I, T>(words: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches: ArgMatches = Self::command_line().try_get_matches_from(words)?;
        Self::from_arg_matches(&matches)
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service (the default).
    Serve,
    /// Run pending database migrations and exit.
    Migrate,
    /// Manage user accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Account settings.
    #[command(subcommand)]
    Account(AccountCommand),
    /// The keys that sign decision receipts.
    #[command(subcommand)]
    ReceiptKey(ReceiptKeyCommand),
    /// The accounts' audit chains.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// The key pair that signs Web Push notifications (VAPID).
    #[command(subcommand)]
    VapidKey(VapidKeyCommand),
    /// Copy the SQLite database, consistently, while it is served
    /// (PostgreSQL: use pg_dump).
    Backup {
        /// The new file to write (it must not exist).
        #[arg(long)]
        to: std::path::PathBuf,
    },
    /// Ask a running instance whether it is alive (`/health`) or ready
    /// (`/ready`): exit 0 if it answers 200, 1 otherwise. For container
    /// health checks; it does not open the database.
    Health {
        /// Ask `/ready` (the database answers, the instance is not
        /// stopping) instead of `/health`.
        #[arg(long)]
        ready: bool,
        /// The instance's address (default: the one `--bind` /
        /// `REVIEWLOOP_BIND` names, on loopback when that is 0.0.0.0 or ::).
        #[arg(long)]
        url: Option<String>,
    },
    /// Put a backup in place of the SQLite database. No instance may serve
    /// it; the database it replaces is kept beside it.
    Restore {
        /// The backup to restore.
        #[arg(long)]
        from: std::path::PathBuf,
        /// Replace a database that holds data.
        #[arg(long)]
        force: bool,
    },
}

/// VAPID key commands.
#[derive(Debug, Subcommand)]
pub enum VapidKeyCommand {
    /// Show the public key browsers subscribe with (made if there is none).
    Show {
        #[command(flatten)]
        output: Output,
    },
    /// Make a new key pair. Every device subscribed with the old one is
    /// removed: each person must turn notifications on again. Running
    /// instances switch to the new key within a minute.
    Rotate {
        #[command(flatten)]
        output: Output,
    },
}

/// Audit commands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check that each account's audit log is unbroken; names the first
    /// entry that was changed, removed or inserted, and exits with 1 then.
    Verify {
        /// Only this account's log.
        #[arg(long)]
        email: Option<String>,
        #[command(flatten)]
        output: Output,
    },
}

/// Receipt key commands.
#[derive(Debug, Subcommand)]
pub enum ReceiptKeyCommand {
    /// List every key, the one that signs now first.
    List {
        #[command(flatten)]
        output: Output,
    },
    /// Make a new signing key; the old one is retired and stays listed, so
    /// receipts it signed stay verifiable. Running instances switch to the
    /// new key within a minute.
    Rotate {
        #[command(flatten)]
        output: Output,
    },
}

/// Account settings commands.
#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Show (or, with --rotate, replace) the secret that signs the account's callbacks.
    SigningSecret {
        /// The account's email.
        #[arg(long)]
        email: String,
        /// Replace the secret with a new one.
        #[arg(long)]
        rotate: bool,
        #[command(flatten)]
        output: Output,
    },
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Account commands.
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an account.
    Create {
        /// The account's email.
        #[arg(long)]
        email: String,
        #[command(flatten)]
        output: Output,
    },
    /// Set an account's password for the web application, read from
    /// stdin (one line). Signs the account out everywhere.
    SetPassword {
        /// The account's email.
        #[arg(long)]
        email: String,
        #[command(flatten)]
        output: Output,
    },
}

/// API key commands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key (and the account, if the email has none). The key is shown once.
    Create {
        /// The account's email.
        #[arg(long)]
        email: String,
        /// Comma-separated permissions, of loops:read, loops:write,
        /// requests:read and requests:write (default: all four).
        #[arg(long)]
        permissions: Option<String>,
        /// Calls allowed per hour (default: 100).
        #[arg(long)]
        rate_limit: Option<u32>,
        /// A label for the key.
        #[arg(long)]
        name: Option<String>,
        /// The plan: standard (the default), professional or enterprise;
        /// calls allowed per minute on the alternate surface (reviews,
        /// templates, webhooks, teams): 1,000, 10,000 or 100,000.
        #[arg(long)]
        plan: Option<String>,
        /// A test-mode key: its requests are answered by their
        /// `test_response`, on its account's own clock, never by people,
        /// and it sees only test data.
        #[arg(long)]
        test: bool,
        #[command(flatten)]
        output: Output,
    },
    /// List an account's keys.
    List {
        /// The account's email.
        #[arg(long)]
        email: String,
        #[command(flatten)]
        output: Output,
    },
    /// Revoke a key by its id; running servers refuse it within 2 seconds
    /// (they believe a key they checked for up to a second).
    Revoke {
        /// The key's id (24 hex characters), as `key list` shows it.
        api_key_id: String,
        #[command(flatten)]
        output: Output,
    },
}

/// Output format of the administration commands.
#[derive(Debug, Args)]
pub struct Output {
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}
