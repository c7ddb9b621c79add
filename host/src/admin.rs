//! `quarry admin`: users, tokens and connections, straight in the store.
//! With the embedded redb the server must be stopped (redb allows one
//! process); on PostgreSQL it runs beside a running cluster.

use anyhow::{Context, Result, bail};
use clap::Subcommand;

use crate::calendar::rfc3339;
use crate::config::Config;
use quarry_store::secret::Secret;
use quarry_store::{Audience, Grant, GrantStatus, Store, now};

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Create a user.
    CreateUser { email: String },
    /// Issue an API token for a user (printed once).
    IssueToken {
        email: String,
        /// Lifetime; the configured `token_ttl_seconds` by default.
        #[arg(long)]
        ttl_seconds: Option<u64>,
        /// Where the token may be used: `v1` (the REST API) or `mcp` (the
        /// MCP endpoint, `/mcp`).
        #[arg(long, default_value = "v1", value_parser = parse_audience)]
        audience: Audience,
    },
    /// Connect a connector for a user with an upstream token.
    Connect {
        email: String,
        connector: String,
        /// The upstream access token (read from QUARRY_CONNECT_TOKEN when absent).
        #[arg(long, env = "QUARRY_CONNECT_TOKEN", hide_env_values = true)]
        token: String,
        /// A connector setting, `name=value` (repeatable).
        #[arg(long = "setting")]
        settings: Vec<String>,
    },
    /// Set a user's dashboard password (argon2id), read from stdin.
    SetPassword {
        #[arg(long)]
        email: String,
        /// Read the password from stdin (the default; there is no other way,
        /// so that it never shows in the process list or shell history).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Unlink a user's account from their single sign-on identity, so that
    /// their next sign-in links it again by verified email (after the
    /// person's identity was re-created at the provider, say).
    UnlinkSso {
        #[arg(long)]
        email: String,
    },
    /// Bring the PostgreSQL schema up to date (every replica also does
    /// this at start, under a lock); nothing to do with the embedded redb.
    Migrate,
}

pub fn run(config: &Config, action: Action) -> Result<()> {
    let store = crate::server::open_store(config)?;
    match action {
        Action::Migrate => {
            // Opening the store applied whatever was missing.
            println!(
                "{}",
                serde_json::json!({ "backend": format!("{:?}", config.storage.backend).to_lowercase(), "schema": "up to date" })
            );
        }
        Action::CreateUser { email } => {
            let user = store.create_user(&email)?;
            println!(
                "{}",
                serde_json::json!({ "user_id": user.id, "email": user.email })
            );
        }
        Action::IssueToken {
            email,
            ttl_seconds,
            audience,
        } => {
            let user = store
                .user_by_email(&email)?
                .with_context(|| format!("no user {email}"))?;
            let ttl = ttl_seconds.unwrap_or(config.token_ttl_seconds);
            let (token, expires_at) = store.issue_token(&user.id, ttl, audience)?;
            println!(
                "{}",
                serde_json::json!({ "token": token.expose(), "expires_at": rfc3339(expires_at), "audience": audience.as_str() })
            );
        }
        Action::Connect {
            email,
            connector,
            token,
            settings,
        } => {
            let user = store
                .user_by_email(&email)?
                .with_context(|| format!("no user {email}"))?;
            let settings = settings
                .iter()
                .map(|s| match s.split_once('=') {
                    Some((k, v)) => Ok((k.to_string(), v.to_string())),
                    None => bail!("--setting {s:?} is not name=value"),
                })
                .collect::<Result<Vec<_>>>()?;
            connect(&store, &user.id, &connector, Secret::new(token), settings)?;
            println!(
                "{}",
                serde_json::json!({ "user_id": user.id, "connector": connector, "status": "connected" })
            );
        }
        Action::SetPassword { email, .. } => {
            let user = store
                .user_by_email(&email)?
                .with_context(|| format!("no user {email}"))?;
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .context("reading the password from stdin")?;
            let password = line.trim_end_matches(['\r', '\n']);
            crate::dashboard::sign_in::set_password(&store, &user.id, password)?;
            println!(
                "{}",
                serde_json::json!({ "user_id": user.id, "email": user.email, "password": "set" })
            );
        }
        Action::UnlinkSso { email } => {
            let user = store
                .user_by_email(&email)?
                .with_context(|| format!("no user {email}"))?;
            let unlinked = crate::dashboard::sso::unlink(&store, &user.id)?;
            println!(
                "{}",
                serde_json::json!({ "user_id": user.id, "email": user.email, "identities_unlinked": unlinked })
            );
        }
    }
    Ok(())
}

/// Stores a connection for a user (the OAuth flow does the same).
pub fn connect(
    store: &Store,
    user_id: &str,
    connector: &str,
    token: Secret,
    settings: Vec<(String, String)>,
) -> Result<()> {
    let grant = Grant {
        access_token: token,
        refresh_token: None,
        expires_at: None,
        settings,
        status: GrantStatus::Connected,
        connected_at: now(),
    };
    store.put_grant(user_id, connector, &grant)
}

fn parse_audience(text: &str) -> Result<Audience, String> {
    match text {
        "v1" => Ok(Audience::V1),
        "mcp" => Ok(Audience::Mcp),
        other => Err(format!("{other:?} is not an audience: use v1 or mcp")),
    }
}
