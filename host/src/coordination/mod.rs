//! What replicas must agree on beside their records: the rate-limit
//! windows and the sign-in throttles. One process keeps them in memory
//! (with day counts in the store); replicas share them in Redis
//! (`[coordination] redis_url`).
//!
//! When Redis cannot be reached, the limits fail closed: requests get 503
//! (`store::Unavailable`), as when PostgreSQL is down. A limiter that
//! failed open would let one client spend the day's vendor quotas and the
//! embedder of every other user while Redis restarts; a 503 with
//! `Retry-After` is honest and short.

mod attempts;
mod windows;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use redis::IntoConnectionInfo as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use self::attempts::SharedAttempts;
pub use self::windows::{Counted, SharedWindows};
use quarry_store::Unavailable;

/// A connection to the Redis every replica shares. It reconnects by itself
/// after Redis restarts.
#[derive(Clone)]
pub struct Redis {
    connection: ConnectionManager,
    prefix: String,
}

impl Redis {
    /// Connects lazily: a replica starts while Redis is away, and answers
    /// 503 until it is back. A `rediss://` URL is TLS, the server checked
    /// against `ca_file` (PEM) or the system's roots.
    pub fn connect(url: &str, prefix: Option<&str>, ca_file: Option<&Path>) -> Result<Redis> {
        let client = client(url, ca_file)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client, config)
            .context("connecting to Redis")?;
        Ok(Redis {
            connection,
            prefix: prefix.unwrap_or("quarry").to_string(),
        })
    }

    /// A key under this deployment's prefix.
    fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }
}

fn client(url: &str, ca_file: Option<&Path>) -> Result<redis::Client> {
    let info: redis::ConnectionInfo = url
        .into_connection_info()
        .context("[coordination] redis_url is not valid")?;
    let tls = matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. });
    if let redis::ConnectionAddr::Tcp(host, _) = info.addr()
        && !quarry_store::is_loopback_host(host)
    {
        tracing::warn!(
            "Redis is on another machine over plain TCP: use a rediss:// URL (with \
             [coordination] redis_ca_file for your CA)"
        );
    }
    let Some(path) = ca_file else {
        return redis::Client::open(info).context("[coordination] redis_url is not valid");
    };
    anyhow::ensure!(
        tls,
        "[coordination] redis_ca_file is for TLS: make redis_url a rediss:// URL"
    );
    let root_cert =
        std::fs::read(path).with_context(|| format!("reading redis_ca_file {}", path.display()))?;
    let certificates = redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(root_cert),
    };
    redis::Client::build_with_tls(info, certificates)
        .context("[coordination] redis_url with redis_ca_file")
}

/// Every Redis failure is the engine being away (the scripts are ours and
/// tested): the request may be retried.
fn unavailable(error: redis::RedisError) -> anyhow::Error {
    anyhow::Error::new(Unavailable(format!("Redis: {error}")))
}
