//! The server's configuration: a TOML file, every key of which can be
//! overridden by a `QUARRY_*` environment variable.
//!
//! Nested keys are joined with a double underscore: `limits.query.minute` is
//! `QUARRY_LIMITS__QUERY__MINUTE`. A value is read as TOML when it parses
//! (numbers, booleans, arrays, inline tables), else as a string, so
//! `QUARRY_UPSTREAM__HOST_OVERRIDES='{ "api.github.com" = "127.0.0.1:9443" }'`
//! works as well as `QUARRY_DATA_DIR=/var/lib/quarry`.
//!
//! - this file: the whole configuration, its defaults, its sources and
//!   the checks across sections;
//! - [`network`]: TLS and upstream addresses;
//! - [`limits`]: rate limits and per-query limits;
//! - [`ranking`]: ranking and embedding (the local model or an endpoint);
//! - [`webhooks`]: outgoing webhooks;
//! - [`dashboard`]: the web dashboard and its single sign-on;
//! - [`storage`]: where records live, and what replicas share.

mod archive;
mod dashboard;
mod limits;
mod network;
mod ranking;
mod storage;
mod webhooks;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde::Deserialize;

use crate::connectors::SandboxLimits;
use quarry_store::secret::Secret;

pub use archive::ArchiveConfig;
pub use dashboard::{DashboardConfig, SsoConfig};
pub use limits::{QueryConfig, RateLimits, Window};
pub use network::{TlsConfig, UpstreamConfig};
pub use ranking::{EmbedderKind, EndpointConfig, RankingConfig};
pub use storage::{BackendKind, CoordinationConfig, StorageConfig};
pub use webhooks::{OperatorEndpoint, WebhookConfig};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// Where the database, keys and caches live.
    pub data_dir: PathBuf,
    /// The connectors: `<id>.wasm` + `<id>.toml` pairs, watched for changes.
    pub plugins_dir: PathBuf,
    pub tls: TlsConfig,
    /// Serve plain HTTP. Refused unless `listen` is a loopback address:
    /// bearer tokens must never cross a network in the clear.
    pub allow_plain_http: bool,
    /// Lifetime of API tokens.
    pub token_ttl_seconds: u64,
    /// The master key (base64 of 32 bytes) that wraps every user's data
    /// key: best given from a secret store (`QUARRY_MASTER_KEY`).
    pub master_key: Option<String>,
    /// Or a file holding it, outside the data folder (so that a copy of
    /// the folder does not hold the key to its records), created with
    /// mode 0600 on first start. With neither, only a data folder that
    /// already holds `master.key` (made by an older version) starts, with
    /// a warning.
    pub master_key_file: Option<PathBuf>,
    pub upstream: UpstreamConfig,
    /// Ceilings for every connector call.
    pub sandbox: SandboxLimits,
    pub limits: RateLimits,
    pub query: QueryConfig,
    pub ranking: RankingConfig,
    pub webhooks: WebhookConfig,
    /// The OAuth clients the operator registered with each vendor, by
    /// connector id: used to revoke tokens (and to connect tools).
    pub oauth_clients: BTreeMap<String, OAuthClient>,
    pub deletion: DeletionConfig,
    /// The web dashboard at `/dashboard` (sign-in, sessions, connecting tools).
    pub dashboard: DashboardConfig,
    /// `text` (for people) or `json` (for log pipelines).
    pub log_format: String,
    /// The bearer token a Prometheus scraper sends to `/metrics`. Without
    /// one, `/metrics` answers only on this machine (loopback clients).
    pub metrics_token: Option<Secret>,
    pub storage: StorageConfig,
    pub coordination: CoordinationConfig,
    pub archive: ArchiveConfig,
    /// `QUARRY_*` variables of the environment that name no configuration
    /// key (the server warns of them once logging is set up).
    #[serde(skip)]
    pub ignored_env: Vec<String>,
}

/// `Config`'s keys (a test holds this list to the struct). A `QUARRY_*`
/// variable whose first part is none of them is not meant for Quarry:
/// Kubernetes gives every pod `QUARRY_PORT`, `QUARRY_SERVICE_HOST`,
/// `QUARRY_PORT_443_TCP`... when a Service named `quarry` exists, and a
/// shell may hold `QUARRY_ROOT`. Those are ignored, with a warning; a
/// misspelt key below a known one (`QUARRY_LIMITS__QUERY__MINUTES`) is
/// still refused.
const TOP_LEVEL_KEYS: &[&str] = &[
    "listen",
    "data_dir",
    "plugins_dir",
    "tls",
    "allow_plain_http",
    "token_ttl_seconds",
    "master_key",
    "master_key_file",
    "upstream",
    "sandbox",
    "limits",
    "query",
    "ranking",
    "webhooks",
    "oauth_clients",
    "deletion",
    "dashboard",
    "log_format",
    "metrics_token",
    "storage",
    "coordination",
    "archive",
];

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:8443".parse().expect("valid address"),
            data_dir: PathBuf::from("data"),
            plugins_dir: PathBuf::from("plugins"),
            tls: TlsConfig::default(),
            allow_plain_http: false,
            token_ttl_seconds: 3600,
            master_key: None,
            master_key_file: None,
            upstream: UpstreamConfig::default(),
            sandbox: SandboxLimits::default(),
            limits: RateLimits::default(),
            query: QueryConfig::default(),
            ranking: RankingConfig::default(),
            webhooks: WebhookConfig::default(),
            oauth_clients: BTreeMap::new(),
            deletion: DeletionConfig::default(),
            dashboard: DashboardConfig::default(),
            log_format: "text".into(),
            metrics_token: None,
            storage: StorageConfig::default(),
            coordination: CoordinationConfig::default(),
            archive: ArchiveConfig::default(),
            ignored_env: Vec::new(),
        }
    }
}

/// An OAuth client registered with a vendor.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthClient {
    pub client_id: String,
    pub client_secret: Secret,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeletionConfig {
    /// Seconds to wait before each retry of a token revocation that failed
    /// during a deletion; after the last, it is given up (and logged).
    pub revocation_retry_seconds: Vec<u64>,
}

impl Default for DeletionConfig {
    fn default() -> Self {
        DeletionConfig {
            revocation_retry_seconds: vec![30, 300, 1800, 7200, 21_600, 86_400],
        }
    }
}

impl Config {
    /// Reads `path` (if given) and applies the `QUARRY_*` environment.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        let text = match path {
            Some(p) => {
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?
            }
            None => String::new(),
        };
        Config::from_sources(&text, std::env::vars())
    }

    /// The configuration from TOML text and environment variables.
    pub fn from_sources(
        toml_text: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config> {
        let mut table: toml::Table =
            toml::from_str(toml_text).context("the configuration is not valid TOML")?;
        let mut ignored_env = Vec::new();
        for (name, value) in env {
            let Some(key) = name.strip_prefix("QUARRY_") else {
                continue;
            };
            if key.is_empty() || is_reserved_env(key) {
                continue;
            }
            let path: Vec<String> = key.split("__").map(str::to_ascii_lowercase).collect();
            if !TOP_LEVEL_KEYS.contains(&path[0].as_str()) {
                if let Some(meant) = misspelt_key(&path[0]) {
                    bail!("{name} names no configuration key: did you mean {meant}?");
                }
                ignored_env.push(name);
                continue;
            }
            set_path(&mut table, &path, parse_env_value(&value))
                .with_context(|| format!("applying the environment variable {name}"))?;
        }
        let mut config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    anyhow::anyhow!("invalid configuration: {}", e.message())
                })?;
        config.validate()?;
        ignored_env.sort();
        config.ignored_env = ignored_env;
        Ok(config)
    }

    fn validate(&self) -> Result<()> {
        let has_tls = self.tls.cert.is_some() && self.tls.key.is_some();
        ensure!(
            self.tls.cert.is_some() == self.tls.key.is_some(),
            "tls.cert and tls.key go together: set both or neither"
        );
        if !has_tls {
            if !self.allow_plain_http {
                bail!(
                    "no TLS certificate configured (tls.cert, tls.key); plain HTTP needs allow_plain_http = true"
                );
            }
            if !self.listen.ip().is_loopback() {
                bail!(
                    "plain HTTP is allowed only on a loopback address, not {}: configure tls.cert and tls.key",
                    self.listen
                );
            }
        }
        ensure!(
            self.token_ttl_seconds > 0,
            "token_ttl_seconds must be positive"
        );
        ensure!(
            matches!(self.log_format.as_str(), "text" | "json"),
            "log_format must be \"text\" or \"json\""
        );
        ensure!(
            !self.webhooks.retry_schedule_seconds.is_empty(),
            "webhooks.retry_schedule_seconds needs at least one attempt"
        );
        ensure!(
            self.webhooks.timeout_ms > 0,
            "webhooks.timeout_ms must be positive"
        );
        if let Some(sso) = &self.dashboard.sso {
            sso.validate()?;
        }
        ensure!(
            self.master_key.is_none() || self.master_key_file.is_none(),
            "give master_key or master_key_file, not both"
        );
        if let Some(file) = &self.master_key_file {
            ensure!(
                !file.starts_with(&self.data_dir) || self.data_dir.as_os_str().is_empty(),
                "master_key_file must be outside the data folder {} (a copy of the folder would \
                 hold the key to its records)",
                self.data_dir.display()
            );
        }
        self.storage.validate(self.master_key.as_deref())?;
        self.archive.validate()?;
        Ok(())
    }

    pub fn tls_enabled(&self) -> bool {
        self.tls.cert.is_some()
    }
}

/// Variables with the prefix that are not configuration keys: the log
/// filter, `admin connect`'s token, and the test and tooling variables
/// (every `QUARRY_TEST_*`, which a shell running the tests exports).
const RESERVED_ENV: &[&str] = &[
    "LOG",
    "FAILPOINT",
    "CONNECT_TOKEN",
    "NO_INSTALL",
    "ENGINES",
    "BUILT_PLUGINS",
    "SCREENSHOT_DIR",
    "CHROMIUM",
    "BROWSER_MODULES",
    "DEMO_LINE",
];

/// The key `name` is one letter (or underscores) away from, if any: a
/// misspelling, refused, where a name far from every key (Kubernetes'
/// `port`, `service_host`) is someone else's variable.
fn misspelt_key(name: &str) -> Option<String> {
    let bare = |key: &str| key.replace('_', "");
    TOP_LEVEL_KEYS
        .iter()
        .find(|key| edit_distance(&bare(name), &bare(key)) <= 1)
        .map(|key| format!("QUARRY_{}", key.to_ascii_uppercase()))
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn is_reserved_env(key: &str) -> bool {
    RESERVED_ENV.contains(&key) || key.starts_with("TEST_")
}

fn parse_env_value(value: &str) -> toml::Value {
    // A bare TOML value (`5`, `true`, `[1, 2]`, `{ a = "b" }`) is typed;
    // anything else (paths, addresses) is a string.
    toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()))
}

fn set_path(table: &mut toml::Table, path: &[String], value: toml::Value) -> Result<()> {
    let (last, parents) = path.split_last().expect("a key has at least one part");
    let mut current = table;
    for part in parents {
        let entry = current
            .entry(part.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = entry
            .as_table_mut()
            .with_context(|| format!("{part} is not a table"))?;
    }
    current.insert(last.clone(), value);
    Ok(())
}

#[cfg(test)]
mod tests;
