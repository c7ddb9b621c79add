//! What a search asks and returns, as the host and the sandbox both see
//! it: the request the host planned, the documents a connector found, and
//! why a call produced none.

use serde::Serialize;

/// One search, as the host planned it from the user's question.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    pub terms: Vec<String>,
    pub phrases: Vec<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub max_results: u32,
    pub settings: Vec<(String, String)>,
}

/// One record a connector found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Document {
    pub id: String,
    pub title: String,
    pub content: String,
    pub url: String,
    pub author: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// A JSON object (the guest's metadata text, parsed and checked).
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

/// Why a connector call produced no documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConnectorError {
    #[serde(rename = "type")]
    pub kind: ErrorKind,
    pub message: String,
    /// Seconds the upstream asked us to wait, for `rate_limited`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The upstream refused the user's credential: reconnect the tool.
    Unauthorized,
    /// The upstream is rate limiting.
    RateLimited,
    /// The upstream failed or could not be reached.
    Upstream,
    /// The upstream answered something the connector could not read.
    InvalidResponse,
    /// The connector could not form a request (missing setting...).
    InvalidRequest,
    /// The sandbox refused one of the connector's fetches.
    Denied,
    /// The connector ran past its time limit.
    Timeout,
    /// The connector crashed or exceeded a sandbox limit (memory...).
    Crashed,
    /// No such connector is loaded.
    NotFound,
    /// The user has no credential for this connector.
    NotConnected,
}

impl ErrorKind {
    /// Its name in answers and in the history (`rate_limited`): its JSON.
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|kind| kind.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

impl ConnectorError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ConnectorError {
        ConnectorError {
            kind,
            message: message.into(),
            retry_after_seconds: None,
        }
    }
}

impl std::fmt::Display for ConnectorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ConnectorError {}
