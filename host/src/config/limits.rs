//! Limits on users: requests per window for each endpoint, and what one
//! query may ask for.

use serde::Deserialize;

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
    /// OAuth client registrations and metadata document fetches, per
    /// client address: each stores or fetches something for a stranger.
    pub client_registration: Window,
    /// OAuth client registrations from everyone together: registered
    /// clients are kept a day, so this bounds what strangers can store
    /// whatever number of addresses they use.
    pub all_client_registrations: Window,
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
            client_registration: Window {
                minute: 10,
                day: 200,
            },
            all_client_registrations: Window {
                minute: 100,
                day: 5000,
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
