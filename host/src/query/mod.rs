//! The query service: a question asked of the user's connected tools,
//! answered with cited passages grouped by tool ([`Answer`]), archived
//! before it is returned. Every front door asks through here: `/v1/query`,
//! MCP's `query` and `search` tools, the dashboard's "ask again". Charging
//! the limits is the front door's (the same bucket for all three).

pub mod answer;
pub mod idempotency;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use axum::http::StatusCode;
use serde_json::json;

pub use self::answer::{Answer, Chunk, ConnectorFailure, ConnectorResult, SearchSummary};
use self::idempotency::Claimed;
use crate::archive::{OwnedChunk, Recording, Source, ToolError, ToolOutcome};
use crate::connectors::ConnectorError;
use crate::error::ApiError;
use crate::search::{self, ConnectorAnswer, ProgressSender};
use crate::services::Services;
use quarry_store::Grant;

const MAX_QUERY_CHARS: usize = 2000;
const MAX_CONNECTORS: usize = 50;
const DEFAULT_MAX_RESULTS: i64 = 10;
const MAX_KEYWORDS: usize = 10;
const MAX_KEYWORD_CHARS: usize = 100;

/// A question as `POST /v1/query` takes it (MCP's `query` and `search`
/// tools, and the dashboard, ask the same).
#[derive(Debug, Clone)]
pub struct Question {
    pub query: String,
    /// Search terms the caller already knows, searched for instead of the
    /// question's own words (see [`validate_keywords`]).
    pub keywords: Option<Vec<String>>,
    pub connectors: Option<Vec<String>>,
    pub max_results: Option<i64>,
}

/// An answer, and the archive's sequence numbers of its chunks, in the
/// answer's order (MCP's `search` names them for `fetch`).
#[derive(Debug)]
pub struct Answered {
    pub answer: Answer,
    pub archived: Range<u64>,
}

/// What a question asked with an idempotency key came to.
pub enum Keyed {
    /// Asked now: the answer, and its JSON as stored for replays.
    Answered { answer: Answer, json: Vec<u8> },
    /// An earlier question with the same key and hash: its stored JSON.
    Replayed(Vec<u8>),
}

/// Asks `question` for `user_id`: validated, the user's connectors
/// resolved and their tokens renewed, searched, archived.
pub async fn answer(
    services: &Services,
    user_id: &str,
    question: Question,
    progress: Option<ProgressSender>,
) -> Result<Answered, ApiError> {
    let prepared = prepare(services, user_id, question).await?;
    prepared.run(progress).await
}

/// [`answer`], at most once per idempotency key: `key` is `(key, hash of
/// the question as the front door received it)`. The key is claimed once
/// the question is known to be valid, so a refused question leaves it
/// free.
pub async fn answer_with_key(
    services: &Services,
    user_id: &str,
    question: Question,
    (key, hash): (String, String),
    progress: Option<ProgressSender>,
) -> Result<Keyed, ApiError> {
    let prepared = prepare(services, user_id, question).await?;
    let mut claim = match idempotency::claim(&services.store, user_id, key, &hash)? {
        Claimed::Run(claim) => claim,
        Claimed::Replay(json) => return Ok(Keyed::Replayed(json)),
    };
    let answered = prepared.run(progress).await?;
    let json = serde_json::to_vec(&answered.answer)?;
    claim.store(StatusCode::OK, &json)?;
    Ok(Keyed::Answered {
        answer: answered.answer,
        json,
    })
}

/// A question checked, with the connectors to ask and their grants.
struct Prepared<'s> {
    services: &'s Services,
    user_id: String,
    query: String,
    keywords: Vec<String>,
    max_results: usize,
    connectors: Vec<(String, Grant)>,
}

async fn prepare<'s>(
    services: &'s Services,
    user_id: &str,
    question: Question,
) -> Result<Prepared<'s>, ApiError> {
    let query = validate_question(&question.query)?.to_string();
    let keywords = validate_keywords(question.keywords)?;
    let max_results = validate_max_results(question.max_results)?;
    let connectors = resolve_connectors(services, user_id, question.connectors)?;
    let connectors = refresh_tokens(services, user_id, connectors).await;
    Ok(Prepared {
        services,
        user_id: user_id.to_string(),
        query,
        keywords,
        max_results,
        connectors,
    })
}

impl Prepared<'_> {
    /// Searches, archives, answers.
    async fn run(self, progress: Option<ProgressSender>) -> Result<Answered, ApiError> {
        let (services, user_id) = (self.services, self.user_id.clone());
        match self.search_and_archive(progress).await {
            // The user's deletion began while the question was out (their
            // records, the archive's among them, can no longer be
            // written): refused as every later request of theirs is, not a
            // server error.
            Err(error)
                if error.status == StatusCode::INTERNAL_SERVER_ERROR
                    && services.deletions.is_blocked(&user_id) =>
            {
                Err(ApiError::unauthorized(
                    "this user's data was deleted while the query ran",
                    false,
                ))
            }
            answered => answered,
        }
    }

    async fn search_and_archive(
        self,
        progress: Option<ProgressSender>,
    ) -> Result<Answered, ApiError> {
        let services = self.services;
        let found = services
            .search
            .run(
                &self.user_id,
                &self.query,
                &self.keywords,
                self.connectors,
                self.max_results,
                progress,
            )
            .await?;
        let archived = archive(services, &self.user_id, &self.query, &found).await?;
        Ok(Answered {
            answer: Answer::new(&self.query, &found),
            archived,
        })
    }
}

pub(crate) fn validate_question(raw: &str) -> Result<&str, ApiError> {
    let question = raw.trim();
    let chars = question.chars().count();
    if chars == 0 {
        return Err(ApiError::bad_request("query must not be empty"));
    }
    if chars > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "query is {chars} characters long; at most {MAX_QUERY_CHARS} are allowed"
        )));
    }
    Ok(question)
}

/// The caller's keywords: 1 to [`MAX_KEYWORDS`] of them, each trimmed,
/// 1 to [`MAX_KEYWORD_CHARS`] characters long and holding a letter or a
/// digit (a keyword of punctuation would search for nothing); none when
/// absent.
fn validate_keywords(keywords: Option<Vec<String>>) -> Result<Vec<String>, ApiError> {
    let Some(keywords) = keywords else {
        return Ok(Vec::new());
    };
    if keywords.is_empty() || keywords.len() > MAX_KEYWORDS {
        return Err(ApiError::bad_request(format!(
            "keywords has {} entries; 1 to {MAX_KEYWORDS} are allowed (omit it to search the question's own words)",
            keywords.len()
        )));
    }
    keywords
        .into_iter()
        .map(|keyword| {
            let trimmed = keyword.trim();
            match trimmed.chars().count() {
                1..=MAX_KEYWORD_CHARS if trimmed.chars().any(char::is_alphanumeric) => {
                    Ok(trimmed.to_string())
                }
                1..=MAX_KEYWORD_CHARS => Err(ApiError::bad_request(format!(
                    "each keyword must hold a letter or a digit: {trimmed:?} has none"
                ))),
                n => Err(ApiError::bad_request(format!(
                    "each keyword must be 1 to {MAX_KEYWORD_CHARS} characters long once trimmed, not {n}"
                ))),
            }
        })
        .collect()
}

/// Renews access tokens near expiry, all connectors at once.
async fn refresh_tokens(
    services: &Services,
    user_id: &str,
    connectors: Vec<(String, Grant)>,
) -> Vec<(String, Grant)> {
    let renewals = connectors.into_iter().map(|(id, grant)| async move {
        let grant = services.refresher.fresh(user_id, &id, grant).await;
        (id, grant)
    });
    futures::future::join_all(renewals).await
}

/// Archives the answer before it is sent: what the user was told is what
/// deep search finds later.
async fn archive(
    services: &Services,
    user_id: &str,
    question: &str,
    answer: &search::Answer,
) -> anyhow::Result<std::ops::Range<u64>> {
    let started = std::time::Instant::now();
    // With the vectors the ranking computed: the archive indexes them at
    // once instead of embedding the chunks again.
    let chunks: Vec<OwnedChunk> = answer
        .results
        .iter()
        .flat_map(|r| {
            r.chunks.iter().map(|c| OwnedChunk {
                connector: r.connector.clone(),
                content: c.content.clone(),
                vector: c.vector.clone(),
                source: Some(Source {
                    title: c.title().to_string(),
                    url: c.source_url.clone(),
                }),
            })
        })
        .collect();
    let recording = Recording {
        user_id: user_id.to_string(),
        query_id: answer.query_id.clone(),
        query: question.to_string(),
        chunks,
        tools: answer.results.iter().map(tool_outcome).collect(),
    };
    let archived = services.archive.record_grouped(recording).await?;
    services.metrics.observe_stage("archive", started.elapsed());
    Ok(archived)
}

/// What one tool did for the query, as the history keeps it.
fn tool_outcome(result: &ConnectorAnswer) -> ToolOutcome {
    ToolOutcome {
        connector: result.connector.clone(),
        label: result.label.clone(),
        latency_ms: result.latency_ms,
        results: result.chunks.len() as u64,
        error: result.error.as_ref().map(tool_error),
    }
}

/// A connector's error with its type as the API names it (`timeout`).
fn tool_error(error: &ConnectorError) -> ToolError {
    ToolError {
        kind: error.kind.name(),
        message: error.message.clone(),
    }
}

fn validate_max_results(value: Option<i64>) -> Result<usize, ApiError> {
    match value.unwrap_or(DEFAULT_MAX_RESULTS) {
        n @ 1..=100 => Ok(n as usize),
        n => Err(ApiError::bad_request(format!(
            "max_results must be between 1 and 100, not {n}"
        ))),
    }
}

/// The connectors to search: the ones asked for (all must be known and
/// connected), or every connected one; with the user's grant for each, read
/// once here for the search to use.
fn resolve_connectors(
    services: &Services,
    user_id: &str,
    asked: Option<Vec<String>>,
) -> Result<Vec<(String, Grant)>, ApiError> {
    let mut connected: BTreeMap<String, Grant> = services
        .store
        .grants(user_id)?
        .into_iter()
        .filter(|(id, _)| services.registry.get(id).is_some())
        .collect();
    let Some(asked) = asked else {
        if connected.is_empty() {
            return Err(ApiError::bad_request(
                "no tools are connected for this user; connect one first",
            ));
        }
        return Ok(connected.into_iter().collect());
    };
    if asked.is_empty() {
        return Err(ApiError::bad_request(
            "connectors must not be empty; omit it to search every connected tool",
        ));
    }
    if asked.len() > MAX_CONNECTORS {
        return Err(ApiError::bad_request(format!(
            "connectors has {} entries; at most {MAX_CONNECTORS} are allowed",
            asked.len()
        )));
    }
    let asked: BTreeSet<String> = asked.into_iter().collect();
    let unknown: Vec<&String> = asked
        .iter()
        .filter(|id| services.registry.get(id).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(
            ApiError::bad_request(format!("unknown connector(s): {}", join(&unknown)))
                .with_details(json!({ "unknown_connectors": unknown })),
        );
    }
    let not_connected: Vec<&String> = asked
        .iter()
        .filter(|id| !connected.contains_key(*id))
        .collect();
    if !not_connected.is_empty() {
        return Err(ApiError::bad_request(format!(
            "connector(s) not connected for this user: {}",
            join(&not_connected)
        ))
        .with_details(json!({ "not_connected": not_connected })));
    }
    Ok(asked
        .into_iter()
        .filter_map(|id| connected.remove_entry(&id))
        .collect())
}

fn join(ids: &[&String]) -> String {
    ids.iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
