//! The answer to a question, typed: what `/v1/query` sends (as JSON, its
//! `QueryResponse`), what MCP's `query` tool returns as structured content
//! (its output schema is derived from these types) and what the dashboard
//! shows. Each front door turns it into its own wire format from here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::search;

/// `POST /v1/query`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    pub query_id: String,
    pub query: String,
    pub results: Vec<ConnectorResult>,
    pub search_summary: SearchSummary,
}

/// What one connector (tool) found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConnectorResult {
    pub connector: String,
    pub source_label: String,
    pub chunks: Vec<Chunk>,
    /// Why this connector found nothing (the others still answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ConnectorFailure>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConnectorFailure {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// A passage found, with its source.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Chunk {
    pub chunk_id: String,
    pub content: String,
    pub source_url: String,
    pub relevance_score: f64,
    pub metadata: Map<String, Value>,
}

impl Chunk {
    /// Its document's title (empty when the connector gave none).
    pub fn title(&self) -> &str {
        self.metadata
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchSummary {
    pub connectors_searched: u64,
    pub total_chunks_found: u64,
    pub duration_ms: u64,
}

impl Answer {
    /// The answer to `question` from what the search found.
    pub(super) fn new(question: &str, found: &search::Answer) -> Answer {
        let results: Vec<ConnectorResult> = found.results.iter().map(connector_result).collect();
        let total = results.iter().map(|r| r.chunks.len() as u64).sum();
        Answer {
            query_id: found.query_id.clone(),
            query: question.to_string(),
            search_summary: SearchSummary {
                connectors_searched: results.len() as u64,
                total_chunks_found: total,
                duration_ms: found.duration_ms,
            },
            results,
        }
    }

    /// Every passage, in the answer's order (the archive's order too).
    pub fn chunks(&self) -> impl Iterator<Item = (&ConnectorResult, &Chunk)> {
        self.results
            .iter()
            .flat_map(|result| result.chunks.iter().map(move |chunk| (result, chunk)))
    }
}

fn connector_result(found: &search::ConnectorAnswer) -> ConnectorResult {
    ConnectorResult {
        connector: found.connector.clone(),
        source_label: found.label.clone(),
        chunks: found
            .chunks
            .iter()
            .map(|cited| Chunk {
                chunk_id: cited.chunk_id.clone(),
                content: cited.content.clone(),
                source_url: cited.source_url.clone(),
                relevance_score: round4(cited.relevance),
                metadata: cited.metadata.clone(),
            })
            .collect(),
        error: found.error.as_ref().map(|error| ConnectorFailure {
            kind: error.kind.name(),
            message: error.message.clone(),
            retry_after_seconds: error.retry_after_seconds,
        }),
    }
}

fn round4(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}
