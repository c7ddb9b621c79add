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
            log_format: "text".into(),
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
    /// Most passages embedded per query (the best by BM25 first).
    pub embed_budget: usize,
    /// Passage vectors kept in memory, by content hash.
    pub cache_entries: usize,
    /// Time a query may spend embedding passages; passages not reached keep
    /// their keyword relevance.
    pub embed_deadline_ms: u64,
}

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            semantic: true,
            model_dir: PathBuf::from(crate::rank::embed::DEFAULT_MODEL_DIR),
            embed_budget: 100,
            cache_entries: 50_000,
            embed_deadline_ms: 90,
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
        Ok(())
    }

    pub fn tls_enabled(&self) -> bool {
        self.tls.cert.is_some()
    }
}

/// Variables with the prefix that are not configuration keys.
const RESERVED_ENV: &[&str] = &["LOG"];

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
    fn unknown_keys_are_refused() {
        let err = Config::from_sources("allow_plain_http = true\nlisten_adress = \"x\"", env(&[]))
            .unwrap_err();
        assert!(format!("{err:#}").contains("listen_adress"));
    }
}
