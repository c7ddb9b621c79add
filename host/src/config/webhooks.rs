//! Outgoing webhooks (Standard Webhooks signatures, durable outbox), and
//! the operator's endpoints they go to.

use serde::Deserialize;

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
