//! What the MCP tools take and give, typed so that rmcp derives their
//! `inputSchema` and `outputSchema` (JSON Schema) from the same types the
//! answers are built from. `search` and `fetch` are ChatGPT's
//! company-knowledge shapes; `query`, `deep_search` and `list_connectors`
//! are the REST answers of `/v1`, field for field.

use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for, in natural language (1 to 2000 characters).
    pub query: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchOut {
    pub results: Vec<SearchHit>,
}

/// One passage found: `id` is for `fetch`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchHit {
    pub id: String,
    pub title: String,
    pub url: String,
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// An `id` a `search` result gave.
    pub id: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct FetchOut {
    pub id: String,
    pub title: String,
    pub text: String,
    pub url: String,
    pub metadata: FetchMetadata,
}

/// Where a fetched passage came from.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct FetchMetadata {
    /// The connector (tool) that found it.
    pub connector: String,
    /// The question that found it, and when (RFC 3339).
    pub query: String,
    pub query_id: String,
    pub queried_at: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    /// The question, in natural language (1 to 2000 characters).
    pub query: String,
    /// Connector ids to search (default: every connected one).
    #[serde(default)]
    pub connectors: Option<Vec<String>>,
    /// Passages per connector, 1 to 100 (default 10).
    #[serde(default)]
    pub max_results: Option<i64>,
    /// Makes a repeated call (same key, same arguments, within 24 hours)
    /// return the first answer instead of searching again.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// `POST /v1/query`'s answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct QueryOut {
    pub query_id: String,
    pub query: String,
    pub results: Vec<ConnectorResult>,
    pub search_summary: SearchSummary,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ConnectorResult {
    pub connector: String,
    pub source_label: String,
    pub chunks: Vec<Chunk>,
    /// Why this connector found nothing (the others still answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ConnectorFailure>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ConnectorFailure {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct Chunk {
    pub chunk_id: String,
    pub content: String,
    pub source_url: String,
    pub relevance_score: f64,
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchSummary {
    pub connectors_searched: u64,
    pub total_chunks_found: u64,
    pub duration_ms: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct DeepSearchArgs {
    /// What to look for in earlier answers, by meaning.
    pub query: String,
    /// Results, 1 to 50 (default 20).
    #[serde(default)]
    pub max_results: Option<i64>,
    /// Only chunks archived at or after this ISO 8601 date or date-time.
    #[serde(default)]
    pub date_from: Option<String>,
    /// Only chunks archived at or before this ISO 8601 date or date-time.
    #[serde(default)]
    pub date_to: Option<String>,
}

/// `POST /v1/deep_search`'s answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct DeepSearchOut {
    pub query_id: String,
    pub query: String,
    pub archive_results: Vec<ArchiveResult>,
    pub total_matches: u64,
    pub duration_ms: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ArchiveResult {
    pub original_query_id: String,
    pub original_query: String,
    pub matched_chunk: MatchedChunk,
    pub similarity_score: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct MatchedChunk {
    pub content: String,
    pub source_connector: String,
    pub queried_at: String,
}

/// `GET /v1/connectors`'s answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ConnectorsOut {
    pub connectors: Vec<ConnectorInfo>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ConnectorInfo {
    pub id: String,
    pub label: String,
    pub description: String,
    pub connected: bool,
    /// `connected`, `needs_reconnect` or `not_connected`.
    pub status: String,
}
