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

mod windows;

use std::time::Duration;

use anyhow::{Context, Result};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use self::windows::{Counted, SharedWindows};
use crate::store::Unavailable;

/// A connection to the Redis every replica shares. It reconnects by itself
/// after Redis restarts.
#[derive(Clone)]
pub struct Redis {
    connection: ConnectionManager,
    prefix: String,
}

impl Redis {
    /// Connects lazily: a replica starts while Redis is away, and answers
    /// 503 until it is back.
    pub fn connect(url: &str, prefix: Option<&str>) -> Result<Redis> {
        let client = redis::Client::open(url).context("[coordination] redis_url is not valid")?;
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

/// Every Redis failure is the engine being away (the scripts are ours and
/// tested): the request may be retried.
fn unavailable(error: redis::RedisError) -> anyhow::Error {
    anyhow::Error::new(Unavailable(format!("Redis: {error}")))
}
