//! Where the records live (`[storage]`) and what replicas share beside
//! them (`[coordination]`).
//!
//! One machine needs neither: the default is the embedded redb file in the
//! data folder. Replicas share one PostgreSQL (`backend = "postgres"`) and
//! one Redis (`redis_url`), which holds the rate-limit windows and sign-in
//! throttles every replica must agree on.

use anyhow::{Result, ensure};
use serde::Deserialize;

use quarry_store::secret::Secret;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// One redb file in the data folder: one process.
    #[default]
    Redb,
    /// A PostgreSQL database shared by every replica.
    Postgres,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    pub backend: BackendKind,
    /// `postgres://user:password@host:port/database` (with `postgres`).
    pub postgres_url: Option<Secret>,
    /// Connections each replica keeps open at most. PostgreSQL's default
    /// `max_connections` is 100: replicas × pool_size must stay below it.
    pub pool_size: usize,
    /// The embedded file's page cache, in MiB (with `redb`). The archive
    /// makes the file grow for as long as users ask; the cache does not.
    pub cache_mib: usize,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            backend: BackendKind::Redb,
            postgres_url: None,
            pool_size: 16,
            cache_mib: quarry_store::DEFAULT_PAGE_CACHE_MIB,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoordinationConfig {
    /// `redis://host:port[/db]`, or `rediss://` for TLS (the server's
    /// certificate checked against the system's roots, or
    /// `redis_ca_file`): the rate-limit windows and sign-in throttles,
    /// shared by every replica. Without it they live in the process, which
    /// is right for one replica only.
    pub redis_url: Option<Secret>,
    /// The CA certificate (PEM) that signed the Redis server's, for a
    /// `rediss://` URL.
    pub redis_ca_file: Option<std::path::PathBuf>,
    /// A prefix for every Redis key, so that several deployments (or test
    /// runs) can share one Redis.
    pub key_prefix: Option<String>,
}

impl StorageConfig {
    pub fn cache_bytes(&self) -> usize {
        self.cache_mib << 20
    }

    pub(super) fn validate(&self, master_key: Option<&str>) -> Result<()> {
        if self.backend == BackendKind::Postgres {
            ensure!(
                self.postgres_url.is_some(),
                "[storage] backend = \"postgres\" needs postgres_url"
            );
            // Every replica must unwrap the same data keys, and the key
            // must not live in the database it protects.
            ensure!(
                master_key.is_some(),
                "[storage] backend = \"postgres\" needs master_key (base64 of 32 bytes), \
                 the same on every replica"
            );
            ensure!(self.pool_size > 0, "[storage] pool_size must be positive");
        }
        ensure!(
            self.cache_mib > 0,
            "[storage] cache_mib must be positive (the embedded file's page cache, in MiB)"
        );
        Ok(())
    }
}
