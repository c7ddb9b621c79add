//! The server's configuration: a TOML file, every key of which can be
//! overridden by a `QUARRY_*` environment variable.
//!
//! Nested keys are joined with a double underscore: `limits.query.minute` is
//! `QUARRY_LIMITS__QUERY__MINUTE`. A value is read as TOML when it parses
//! (numbers, booleans, arrays, inline tables), else as a string, so
//! `QUARRY_UPSTREAM__HOST_OVERRIDES='{ "api.github.com" = "127.0.0.1:9443" }'`
//! works as well as `QUARRY_DATA_DIR=/var/lib/quarry`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde::Deserialize;

use crate::connectors::SandboxLimits;
use crate::secret::Secret;

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
    /// key. When absent, `<data_dir>/master.key` is used, and created with
    /// mode 0600 on first start.
    pub master_key: Option<String>,
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
}

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
pub struct DashboardConfig {
    /// The dashboard's public origin (`https://quarry.example.com`): the
    /// OAuth redirect URI and the Origin that forms must come from. When
    /// absent, the request's `Host` is used (fine on one address).
    pub public_url: Option<String>,
    /// A session ends this long after sign-in, whatever happens.
    pub session_absolute_seconds: i64,
    /// A session ends after this long without a request.
    pub session_idle_seconds: i64,
    /// Failed sign-ins allowed per address and per email within the window.
    pub login_failures: u32,
    pub login_window_seconds: i64,
    /// Where a browser is sent for a vendor's authorize page, by host:
    /// `"github.com" = "https://127.0.0.1:9443/_vendor/github.com"` (the
    /// demo sends people to the fake vendors this way). Empty in production.
    pub authorize_host_overrides: BTreeMap<String, String>,
    /// Single sign-on with the operator's OpenID Connect provider, beside
    /// passwords. People sign in to accounts the operator created: the
    /// first time, by the provider's verified email; after that, by the
    /// provider's subject id, to which the account is then linked.
    pub sso: Option<SsoConfig>,
}

/// An OpenID Connect provider (Okta, Google Workspace, Microsoft Entra ID,
/// Keycloak...) with a confidential client registered for Quarry, whose
/// redirect URI is `<public_url>/dashboard/sso/callback`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsoConfig {
    /// The issuer, exactly as the provider's ID tokens name it
    /// (`https://acme.okta.com`); discovery is at
    /// `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Secret,
    /// The provider's name on the sign-in button ("Sign in with Okta").
    #[serde(default = "default_sso_name")]
    pub name: String,
    /// When not empty, only emails in these domains may sign in.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
}

impl SsoConfig {
    fn validate(&self) -> Result<()> {
        let issuer = url::Url::parse(&self.issuer)
            .with_context(|| format!("dashboard.sso.issuer {:?} is not a URL", self.issuer))?;
        ensure!(
            issuer.scheme() == "https" && issuer.query().is_none() && issuer.fragment().is_none(),
            "dashboard.sso.issuer must be an https URL without query or fragment (OpenID Connect Discovery)"
        );
        ensure!(
            !self.client_id.is_empty() && !self.client_secret.expose().is_empty(),
            "dashboard.sso needs client_id and client_secret"
        );
        Ok(())
    }
}

fn default_sso_name() -> String {
    "single sign-on".into()
}

impl Default for DashboardConfig {
    fn default() -> Self {
        DashboardConfig {
            public_url: None,
            session_absolute_seconds: 12 * 3600,
            session_idle_seconds: 30 * 60,
            login_failures: 5,
            login_window_seconds: 15 * 60,
            authorize_host_overrides: BTreeMap::new(),
            sso: None,
        }
    }
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

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// PEM certificate chain.
    pub cert: Option<PathBuf>,
    /// PEM private key.
    pub key: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamConfig {
    /// Vendor host names mapped to fixed addresses (fake upstreams in tests
    /// and the demo). Loopback and private addresses are allowed only here.
    pub host_overrides: BTreeMap<String, SocketAddr>,
    /// Extra PEM root certificates trusted for upstreams.
    pub extra_root_certs: Vec<PathBuf>,
}

/// Requests allowed per window.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub minute: u32,
    pub day: u32,
}

/// The rate limits of the contract's table, per user and endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimits {
    pub query: Window,
    pub deep_search: Window,
    pub delete_my_data: Window,
    /// Every other endpoint, per user.
    pub default: Window,
    /// Requests without a valid token, per client address.
    pub anonymous: Window,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            query: Window {
                minute: 60,
                day: 6000,
            },
            deep_search: Window {
                minute: 30,
                day: 3000,
            },
            delete_my_data: Window {
                minute: 10,
                day: 100,
            },
            default: Window {
                minute: 120,
                day: 10_000,
            },
            anonymous: Window {
                minute: 60,
                day: 2000,
            },
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueryConfig {
    /// How long one connector may take within a query before its result
    /// is reported as a timeout (the others still answer).
    pub connector_deadline_ms: u64,
}

impl Default for QueryConfig {
    fn default() -> Self {
        QueryConfig {
            connector_deadline_ms: 15_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RankingConfig {
    /// Rank by meaning as well as by words (needs the embedding model).
    pub semantic: bool,
    /// Where `tools/fetch-model` put all-MiniLM-L6-v2.
    pub model_dir: PathBuf,
    /// Most passages embedded per query (each connector's best first).
    pub embed_budget: usize,
    /// Passage vectors kept in memory, by content hash.
    pub cache_entries: usize,
    /// From a query's start, the time by which it answers with the vectors
    /// it has (it waits at least 150 ms after its last connector).
    /// Passages the model did not reach are placed on the model's scale by
    /// their words and say `"ranking": "keyword"`.
    pub answer_budget_ms: u64,
    /// Texts are cut at this many tokens before embedding.
    pub max_tokens: usize,
    /// Threads that run the model, each one batch at a time on one core
    /// (default: one per core).
    pub embed_workers: usize,
    /// Passages per batch a worker embeds.
    pub embed_batch: usize,
    /// What embeds: `"local"` (the model above, on this machine's CPU) or
    /// `"endpoint"` (an OpenAI-compatible embeddings endpoint,
    /// `[ranking.endpoint]`, with the local model as its fallback).
    pub embedder: EmbedderKind,
    pub endpoint: Option<EndpointConfig>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    #[default]
    Local,
    Endpoint,
}

/// An OpenAI-compatible `POST /v1/embeddings` (text-embeddings-inference,
/// vLLM, Ollama, ...). Every text that is ranked or archived is sent to it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// The full URL, such as `https://tei.internal/v1/embeddings`.
    pub url: String,
    /// The `model` sent with each request.
    pub model: String,
    /// The length of the model's vectors.
    pub dimensions: usize,
    /// The environment variable that holds the API key (sent as a bearer
    /// token), if the endpoint needs one.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Time allowed for one request.
    #[serde(default = "default_endpoint_timeout_ms")]
    pub timeout_ms: u64,
    /// Further attempts after a timeout, a connection error, 429 or 5xx.
    #[serde(default = "default_endpoint_retries")]
    pub retries: u32,
}

fn default_endpoint_timeout_ms() -> u64 {
    2_000
}

fn default_endpoint_retries() -> u32 {
    2
}

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            semantic: true,
            model_dir: PathBuf::from(crate::rank::embed::DEFAULT_MODEL_DIR),
            embed_budget: 300,
            cache_entries: 50_000,
            answer_budget_ms: 2_500,
            max_tokens: crate::rank::embed::MAX_TOKENS,
            embed_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            embed_batch: crate::rank::scheduler::DEFAULT_BATCH,
            embedder: EmbedderKind::Local,
            endpoint: None,
        }
    }
}

/// Outgoing webhooks (Standard Webhooks signatures, durable outbox).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookConfig {
    /// The operator's own endpoints, which receive every `user.deleted`
    /// event: `[[webhooks.endpoints]]` tables with `url` and `secret`
    /// (`whsec_` and the base64 of 24 to 64 random bytes).
    pub endpoints: Vec<OperatorEndpoint>,
    /// Deliver to `http://` targets (local receivers; never in production:
    /// the payload and its signature would cross the network in the clear).
    pub allow_plain_http: bool,
    /// Deliver to loopback, private and other non-public addresses. Off, a
    /// target is refused at registration and again at each delivery when
    /// its name resolves to such an address (DNS rebinding).
    pub allow_private_targets: bool,
    /// Seconds to wait before each attempt, the first counted from when the
    /// event is queued and each next one from the previous failure (±10%
    /// jitter). A delivery is given up after the last one.
    pub retry_schedule_seconds: Vec<u64>,
    /// Time allowed for one attempt (connect, send, response headers).
    pub timeout_ms: u64,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            endpoints: Vec::new(),
            allow_plain_http: false,
            allow_private_targets: false,
            // Immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
            retry_schedule_seconds: vec![0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000],
            timeout_ms: 10_000,
        }
    }
}

/// An endpoint of the operator's. Its `Debug` hides the secret.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorEndpoint {
    pub url: String,
    pub secret: String,
}

impl std::fmt::Debug for OperatorEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A URL may carry a token in its path or query: only its origin.
        let origin = url::Url::parse(&self.url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| "(not a URL)".into());
        f.debug_struct("OperatorEndpoint")
            .field("url", &origin)
            .field("secret", &"***")
            .finish()
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
        for (name, value) in env {
            let Some(key) = name.strip_prefix("QUARRY_") else {
                continue;
            };
            if key.is_empty() || RESERVED_ENV.contains(&key) {
                continue;
            }
            let path: Vec<String> = key.split("__").map(str::to_ascii_lowercase).collect();
            set_path(&mut table, &path, parse_env_value(&value))
                .with_context(|| format!("applying the environment variable {name}"))?;
        }
        let config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    anyhow::anyhow!("invalid configuration: {}", e.message())
                })?;
        config.validate()?;
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
        Ok(())
    }

    pub fn tls_enabled(&self) -> bool {
        self.tls.cert.is_some()
    }
}

/// Variables with the prefix that are not configuration keys.
const RESERVED_ENV: &[&str] = &["LOG", "FAILPOINT"];

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
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn environment_overrides_every_key() {
        let config = Config::from_sources(
            "data_dir = \"/from/file\"\nallow_plain_http = true\n[limits.query]\nminute = 1\nday = 2\n",
            env(&[
                ("QUARRY_DATA_DIR", "/from/env"),
                ("QUARRY_LIMITS__QUERY__MINUTE", "99"),
                ("QUARRY_UPSTREAM__HOST_OVERRIDES", "{ \"api.github.com\" = \"127.0.0.1:9443\" }"),
                ("QUARRY_SANDBOX__MAX_FETCHES", "3"),
                ("PATH", "/usr/bin"),
            ]),
        )
        .unwrap();
        assert_eq!(config.data_dir, PathBuf::from("/from/env"));
        assert_eq!(config.limits.query, Window { minute: 99, day: 2 });
        assert_eq!(
            config.upstream.host_overrides["api.github.com"].port(),
            9443
        );
        assert_eq!(config.sandbox.max_fetches, 3);
    }

    #[test]
    fn plain_http_only_on_loopback_and_only_when_asked() {
        assert!(Config::from_sources("", env(&[])).is_err());
        assert!(Config::from_sources("allow_plain_http = true", env(&[])).is_ok());
        let public = Config::from_sources(
            "allow_plain_http = true\nlisten = \"0.0.0.0:8080\"",
            env(&[]),
        );
        assert!(format!("{:#}", public.unwrap_err()).contains("loopback"));
    }

    #[test]
    fn webhook_keys_have_defaults_and_environment_overrides() {
        let config = Config::from_sources("allow_plain_http = true", env(&[])).unwrap();
        assert_eq!(
            config.webhooks.retry_schedule_seconds,
            [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000]
        );
        assert_eq!(config.webhooks.timeout_ms, 10_000);
        assert!(!config.webhooks.allow_plain_http && !config.webhooks.allow_private_targets);
        let config = Config::from_sources(
            "allow_plain_http = true",
            env(&[
                ("QUARRY_WEBHOOKS__RETRY_SCHEDULE_SECONDS", "[0,1,1,1]"),
                ("QUARRY_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true"),
                (
                    "QUARRY_WEBHOOKS__ENDPOINTS",
                    "[{ url = \"https://ops.example.com/hook?key=k\", secret = \"whsec_c2VjcmV0\" }]",
                ),
            ]),
        )
        .unwrap();
        assert_eq!(config.webhooks.retry_schedule_seconds, [0, 1, 1, 1]);
        assert!(config.webhooks.allow_private_targets);
        assert_eq!(config.webhooks.endpoints[0].secret, "whsec_c2VjcmV0");
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("whsec_") && !shown.contains("key=k"),
            "Debug hides secrets: {shown}"
        );
        let empty = Config::from_sources(
            "allow_plain_http = true\n[webhooks]\nretry_schedule_seconds = []",
            env(&[]),
        );
        assert!(format!("{:#}", empty.unwrap_err()).contains("retry_schedule_seconds"));
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = Config::from_sources("allow_plain_http = true\nlisten_adress = \"x\"", env(&[]))
            .unwrap_err();
        assert!(format!("{err:#}").contains("listen_adress"));
    }
}
