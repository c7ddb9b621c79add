//! What the MCP tools take and give, typed so that rmcp derives their
//! `inputSchema` and `outputSchema` (JSON Schema) from the same types the
//! answers are built from. `search` and `fetch` are ChatGPT's
//! company-knowledge shapes; `query`, `deep_search` and `list_connectors`
//! answer with the services' own types (`query::Answer`,
//! `deep_search::DeepSearchAnswer`, `account::ConnectorList`), as `/v1`
//! does.

use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// What the tools' keyword searches should look for instead of the
    /// question's own words: 1 to 10 words or phrases (names, identifiers,
    /// synonyms, each 1 to 100 characters), most important first. The
    /// question still ranks the passages and gives the time range.
    #[serde(default)]
    pub keywords: Option<Vec<String>>,
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
