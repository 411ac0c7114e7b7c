//! Account and key administration from the command line. With `--json`,
//! stdout is exactly one JSON object; otherwise a short human summary.

use std::sync::Arc;

use reviewloop_domain::{ApiKey, Permission};
use reviewloop_ports::NoMeter;
use reviewloop_service::{AccountService, NewKey, PeopleService};
use serde_json::{json, Value};

use crate::cli::{
    AccountCommand, AuditCommand, KeyCommand, ReceiptKeyCommand, UserCommand, VapidKeyCommand,
};
use crate::config::Config;
use crate::{open_database, ports};

async fn accounts(config: &Config) -> anyhow::Result<AccountService> {
    let (db, _) = open_database(config, Arc::new(NoMeter)).await?;
    Ok(AccountService::new(
        (&ports(db, config, Arc::new(NoMeter))?.0).into(),
    ))
}

fn print(json_output: bool, value: Value, human: String) {
    if json_output {
        println!("{value}");
    } else {
        println!("{human}");
    }
}

fn permission_names(permissions: &[Permission]) -> Vec<&'static str> {
    permissions.iter().map(Permission::as_str).collect()
}

fn key_json(key: &ApiKey) -> Value {
    json!({
        "api_key_id": key.id,
        "name": key.name,
        "prefix": key.prefix,
        "permissions": permission_names(&key.permissions),
        "rate_limit": key.rate_limit,
        "plan": key.plan.as_str(),
        "test": key.test,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
    })
}

/// `reviewloop user ...`
pub async fn user(config: &Config, command: UserCommand) -> anyhow::Result<()> {
    match command {
        UserCommand::Create { email, output } => {
            let user = accounts(config).await?.create_user(&email).await?;
            print(
                output.json,
                json!({"user_id": user.id, "email": user.email.as_str()}),
                format!("created user {} ({})", user.email, user.id),
            );
        }
        UserCommand::SetPassword { email, output } => {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            let password = line.trim_end_matches(['\r', '\n']);
            let (db, _) = open_database(config, Arc::new(NoMeter)).await?;
            let people = PeopleService::new(
                (&ports(db, config, Arc::new(NoMeter))?.0).into(),
                config.public_url.as_deref().unwrap_or(""),
                config.signup,
            );
            let user = people.set_password(&email, password).await?;
            print(
                output.json,
                json!({"user_id": user.id, "email": user.email.as_str()}),
                format!("password set for {}", user.email),
            );
        }
    }
    Ok(())
}

/// `reviewloop key ...`
pub async fn key(config: &Config, command: KeyCommand) -> anyhow::Result<()> {
    let accounts = accounts(config).await?;
    match command {
        KeyCommand::Create {
            email,
            permissions,
            rate_limit,
            name,
            plan,
            test,
            output,
        } => {
            let created = accounts
                .create_key(NewKey {
                    email,
                    permissions,
                    rate_limit,
                    name,
                    plan,
                    test,
                })
                .await?;
            let value = json!({
                "api_key": created.plain,
                "api_key_id": created.key.id,
                "user_id": created.user.id,
                "email": created.user.email.as_str(),
                "permissions": permission_names(&created.key.permissions),
                "rate_limit": created.key.rate_limit,
                "plan": created.key.plan.as_str(),
                "test": created.key.test,
            });
            let human = format!(
                "API key for {} (shown once, keep it safe):\n{}\nid {} · permissions {} · {} calls per hour · {} plan ({} calls per minute on /v1/reviews, /v1/templates, /v1/webhooks, /v1/teams)",
                created.user.email,
                created.plain,
                created.key.id,
                reviewloop_domain::Permission::join(&created.key.permissions),
                created.key.rate_limit,
                created.key.plan.as_str(),
                created.key.plan.per_minute(),
            );
            let human = if created.key.test {
                format!("{human}\nTEST MODE: its requests are answered by their test_response on the account's test clock, never by people")
            } else {
                human
            };
            print(output.json, value, human);
        }
        KeyCommand::List { email, output } => {
            let (user, keys) = accounts.list_keys(&email).await?;
            let human = if keys.is_empty() {
                format!("{} has no API keys", user.email)
            } else {
                keys.iter()
                    .map(|k| {
                        let state = if k.revoked_at.is_some() {
                            "revoked"
                        } else {
                            "active"
                        };
                        format!(
                            "{}  {}…  {}  {}",
                            k.id,
                            k.prefix,
                            state,
                            k.name.as_deref().unwrap_or("-")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let value = json!({
                "user_id": user.id,
                "email": user.email.as_str(),
                "keys": keys.iter().map(key_json).collect::<Vec<_>>(),
            });
            print(output.json, value, human);
        }
        KeyCommand::Revoke { api_key_id, output } => {
            let key = accounts.revoke_key(&api_key_id).await?;
            print(
                output.json,
                key_json(&key),
                format!("revoked API key {}", key.id),
            );
        }
    }
    Ok(())
}

/// `reviewloop account ...`
pub async fn account(config: &Config, command: AccountCommand) -> anyhow::Result<()> {
    match command {
        AccountCommand::SigningSecret {
            email,
            rotate,
            output,
        } => {
            let (user, secret) = accounts(config)
                .await?
                .signing_secret_of(&email, rotate)
                .await?;
            let verb = if rotate {
                "new callback signing secret"
            } else {
                "callback signing secret"
            };
            print(
                output.json,
                json!({"user_id": user.id, "email": user.email.as_str(), "signing_secret": secret}),
                format!("{verb} of {}:\n{secret}", user.email),
            );
        }
    }
    Ok(())
}

/// `reviewloop receipt-key ...`.
pub async fn receipt_key(config: &Config, command: ReceiptKeyCommand) -> anyhow::Result<()> {
    let (db, _) = open_database(config, Arc::new(NoMeter)).await?;
    let keys = ports(db, config, Arc::new(NoMeter))?.0.receipts;
    match command {
        ReceiptKeyCommand::List { output } => {
            keys.ensure_key().await?;
            let listed = keys.public_keys().await?;
            let human = listed
                .iter()
                .map(|k| match k.retired_at {
                    Some(at) => format!("{} {} (retired {at})", k.key_id, k.public_key),
                    None => format!("{} {} (signing)", k.key_id, k.public_key),
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(output.json, json!({"keys": listed}), human);
        }
        ReceiptKeyCommand::Rotate { output } => {
            let key_id = keys.rotate().await?;
            print(
                output.json,
                json!({"key_id": key_id}),
                format!("new receipt key {key_id}; the old ones stay listed"),
            );
        }
    }
    Ok(())
}

/// `reviewloop vapid-key ...`.
pub async fn vapid_key(config: &Config, command: VapidKeyCommand) -> anyhow::Result<()> {
    let (db, _) = open_database(config, Arc::new(NoMeter)).await?;
    let all = ports(db, config, Arc::new(NoMeter))?.0;
    let push =
        reviewloop_service::PushService::new((&all).into(), &config.public_url_for(config.bind));
    match command {
        VapidKeyCommand::Show { output } => {
            let key = push.public_key().await?;
            print(output.json, json!({"public_key": key}), key);
        }
        VapidKeyCommand::Rotate { output } => {
            let removed = push.rotate_key().await?;
            let key = push.public_key().await?;
            print(
                output.json,
                json!({"public_key": key, "removed_subscriptions": removed}),
                format!(
                    "new VAPID public key {key}\n{removed} subscribed devices were removed: \
                     subscriptions must be renewed, so each person turns \
                     \"Notify me on this device\" on again on their account page"
                ),
            );
        }
    }
    Ok(())
}

/// `reviewloop audit verify`: fails (exit status 1) when a chain is broken.
pub async fn audit(config: &Config, command: AuditCommand) -> anyhow::Result<()> {
    let AuditCommand::Verify { email, output } = command;
    let (db, _) = open_database(config, Arc::new(NoMeter)).await?;
    let all = ports(db, config, Arc::new(NoMeter))?.0;
    let audit = reviewloop_service::AuditService::new((&all).into());
    let verdicts = audit.verify(email.as_deref()).await?;
    let intact = verdicts.iter().all(|v| v.broken.is_none());
    let accounts: Vec<Value> = verdicts
        .iter()
        .map(|v| {
            json!({
                "account_id": v.account_id,
                "email": v.email.as_ref().map(|e| e.as_str()),
                "entries": v.entries,
                "head": v.head,
                "broken": v.broken.as_ref().map(|b| json!({
                    "seq": b.seq(),
                    "problem": b.to_string(),
                })),
            })
        })
        .collect();
    let human = verdicts
        .iter()
        .map(|v| {
            let who = v
                .email
                .as_ref()
                .map_or_else(|| v.account_id.to_string(), |e| e.to_string());
            match &v.broken {
                None => format!(
                    "{who}: {} entries, intact; head {}",
                    v.entries,
                    v.head.as_deref().unwrap_or("(empty)")
                ),
                Some(broken) => format!("{who}: BROKEN: {broken}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    print(
        output.json,
        json!({"intact": intact, "accounts": accounts}),
        human,
    );
    if !intact {
        anyhow::bail!("the audit chain is broken");
    }
    Ok(())
}

/// `reviewloop backup --to PATH`
pub fn backup(config: &Config, to: &std::path::Path) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let started = std::time::Instant::now();
    if std::io::stderr().is_terminal() {
        eprint!("reviewloop: backing up to {} …", to.display());
    }
    let written = reviewloop_adapters::backup(&config.database_url, to);
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    let bytes = written?;
    println!(
        "reviewloop: backed up {} ({:.1} MB) in {:.1} s",
        to.display(),
        bytes as f64 / 1_000_000.0,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `reviewloop restore --from PATH [--force]`, then the migrations the
/// backup's schema lacks.
pub async fn restore(config: &Config, from: &std::path::Path, force: bool) -> anyhow::Result<()> {
    let restored = reviewloop_adapters::restore(&config.database_url, from, force)?;
    println!(
        "reviewloop: restored {} from {}",
        restored.database.display(),
        from.display()
    );
    if let Some(kept) = restored.kept {
        println!(
            "reviewloop: the database it replaced is kept at {}",
            kept.display()
        );
    }
    let (_, applied) = open_database(config, Arc::new(NoMeter)).await?;
    for version in applied {
        println!("reviewloop: applied migration {version}");
    }
    Ok(())
}
