//! The sandbox's limits: the operator's ceilings (and defaults) for every
//! connector, and what one connector gets within them.

use std::time::Duration;

use serde::Deserialize;

use super::RequestedLimits;

/// The operator's ceilings (and defaults) for every connector.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxLimits {
    pub max_fetches: u32,
    pub max_response_bytes: u64,
    pub fetch_timeout_ms: u64,
    pub call_timeout_ms: u64,
    pub memory_bytes: u64,
    /// The most requests of one call in flight at once that a connector
    /// may ask for (one that does not ask gets
    /// [`DEFAULT_CONCURRENT_FETCHES`], within this): a vendor sees at most
    /// this many connections from one search.
    pub max_concurrent_fetches: u32,
}

/// Requests of one call in flight at once when the manifest does not say.
pub const DEFAULT_CONCURRENT_FETCHES: u32 = 8;

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            max_fetches: 16,
            max_response_bytes: 4 * 1024 * 1024,
            fetch_timeout_ms: 10_000,
            call_timeout_ms: 20_000,
            memory_bytes: 128 * 1024 * 1024,
            max_concurrent_fetches: 16,
        }
    }
}

impl SandboxLimits {
    /// The limits for one connector: what it asked for, never above `self`.
    pub fn for_connector(&self, asked: &RequestedLimits) -> SandboxLimits {
        SandboxLimits {
            max_fetches: asked
                .max_fetches
                .map_or(self.max_fetches, |v| v.min(self.max_fetches)),
            max_response_bytes: clamp(asked.max_response_bytes, self.max_response_bytes),
            fetch_timeout_ms: clamp(asked.fetch_timeout_ms, self.fetch_timeout_ms),
            call_timeout_ms: clamp(asked.call_timeout_ms, self.call_timeout_ms),
            memory_bytes: clamp(asked.memory_bytes, self.memory_bytes),
            max_concurrent_fetches: asked
                .max_concurrent_fetches
                .unwrap_or(DEFAULT_CONCURRENT_FETCHES)
                .min(self.max_concurrent_fetches),
        }
    }

    pub fn fetch_timeout(&self) -> Duration {
        Duration::from_millis(self.fetch_timeout_ms)
    }

    pub fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.call_timeout_ms)
    }
}

fn clamp(asked: Option<u64>, ceiling: u64) -> u64 {
    asked.map_or(ceiling, |v| v.min(ceiling))
}
