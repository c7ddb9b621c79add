//! `POST /v1/query`: validate, resolve connectors, search, answer.

use std::collections::{BTreeMap, BTreeSet};

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::App;
use super::error::ApiError;
use super::gate::{BodyHash, Caller};
use super::idempotency::{self, Claimed};
use super::json::ApiJson;
use crate::archive::{OwnedChunk, Recording, Source, ToolError, ToolOutcome};
use crate::connectors::ConnectorError;
use crate::search::{Answer, ConnectorAnswer};
use crate::store::Grant;
use quarry_guard::bodies::QueryBody;

const MAX_QUERY_CHARS: usize = 2000;
const MAX_CONNECTORS: usize = 50;
const DEFAULT_MAX_RESULTS: i64 = 10;

pub async fn query(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Extension(BodyHash(body_hash)): Extension<BodyHash>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<QueryBody>,
) -> Result<Response, ApiError> {
    let key = idempotency::key_of(&headers)?;
    let question = Question {
        query: body.query,
        connectors: body.connectors,
        max_results: body.max_results,
    };
    let idempotency = key.map(|key| (key, body_hash));
    Ok(
        match ask(&app, &caller.user.id, question, idempotency, None).await? {
            Asked::Answered { body, .. } => (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response(),
            Asked::Replayed(body) => idempotency::replay_response(body),
        },
    )
}

/// A question as `POST /v1/query` takes it (MCP's `query` and `search`
/// tools ask the same).
pub struct Question {
    pub query: String,
    pub connectors: Option<Vec<String>>,
    pub max_results: Option<i64>,
}

/// What [`ask`] came to.
pub enum Asked {
    /// Searched now and archived: the answer as `/v1/query` renders it
    /// (and its bytes, as sent and stored for replays), and the archive's
    /// sequence numbers of its chunks, in the rendered order.
    Answered {
        rendered: Value,
        body: Vec<u8>,
        archived: std::ops::Range<u64>,
    },
    /// An earlier request with the same idempotency key and body: its
    /// stored answer.
    Replayed(Vec<u8>),
}

/// The query pipeline, for `/v1/query` and the MCP tools alike: validate,
/// resolve the user's connectors, claim the idempotency key (`(key, hash
/// of the request)`) if any, search, archive, render. Charging the limits
/// is the caller's (the gate's, or the tool's).
pub async fn ask(
    app: &App,
    user_id: &str,
    question: Question,
    idempotency: Option<(String, String)>,
    progress: Option<crate::search::ProgressSender>,
) -> Result<Asked, ApiError> {
    let asked = answer(app, user_id, question, idempotency, progress).await;
    match asked {
        // The user's deletion began while the question was out (their
        // records, the archive's among them, can no longer be written):
        // refused as every later request of theirs is, not a server error.
        Err(error)
            if error.status == StatusCode::INTERNAL_SERVER_ERROR
                && app.deletions.is_blocked(user_id) =>
        {
            Err(ApiError::unauthorized(
                "this user's data was deleted while the query ran",
                false,
            ))
        }
        asked => asked,
    }
}

async fn answer(
    app: &App,
    user_id: &str,
    question: Question,
    idempotency: Option<(String, String)>,
    progress: Option<crate::search::ProgressSender>,
) -> Result<Asked, ApiError> {
    let query = validate_question(&question.query)?;
    let max_results = validate_max_results(question.max_results)?;
    let connectors = resolve_connectors(app, user_id, question.connectors)?;
    let connectors = refresh_tokens(app, user_id, connectors).await;
    let mut claim = match idempotency {
        Some((key, hash)) => match idempotency::claim(&app.store, user_id, key, &hash)? {
            Claimed::Run(claim) => Some(claim),
            Claimed::Replay(body) => return Ok(Asked::Replayed(body)),
        },
        None => None,
    };
    let answer = app
        .search
        .run(user_id, query, connectors, max_results, progress)
        .await?;
    let archived = archive(app, user_id, query, &answer).await?;
    let rendered = render(query, &answer);
    let body = serde_json::to_vec(&rendered)?;
    if let Some(claim) = &mut claim {
        claim.store(StatusCode::OK, &body)?;
    }
    Ok(Asked::Answered {
        rendered,
        body,
        archived,
    })
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

/// Renews access tokens near expiry, all connectors at once.
async fn refresh_tokens(
    app: &App,
    user_id: &str,
    connectors: Vec<(String, Grant)>,
) -> Vec<(String, Grant)> {
    let renewals = connectors.into_iter().map(|(id, grant)| async move {
        let grant = app.refresher.fresh(user_id, &id, grant).await;
        (id, grant)
    });
    futures::future::join_all(renewals).await
}

/// Archives the answer before it is sent: what the user was told is what
/// deep search finds later.
async fn archive(
    app: &App,
    user_id: &str,
    question: &str,
    answer: &Answer,
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
    let archived = app.archive.record_grouped(recording).await?;
    app.metrics.observe_stage("archive", started.elapsed());
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
    let kind = serde_json::to_value(error.kind)
        .ok()
        .and_then(|kind| kind.as_str().map(str::to_string))
        .unwrap_or_default();
    ToolError {
        kind,
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
    app: &App,
    user_id: &str,
    asked: Option<Vec<String>>,
) -> Result<Vec<(String, Grant)>, ApiError> {
    let mut connected: BTreeMap<String, Grant> = app
        .store
        .grants(user_id)?
        .into_iter()
        .filter(|(id, _)| app.registry.get(id).is_some())
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
        .filter(|id| app.registry.get(id).is_none())
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

fn render(question: &str, answer: &Answer) -> Value {
    let results: Vec<Value> = answer
        .results
        .iter()
        .map(|r| {
            let chunks: Vec<Value> = r
                .chunks
                .iter()
                .map(|c| {
                    json!({
                        "chunk_id": c.chunk_id,
                        "content": c.content,
                        "source_url": c.source_url,
                        "relevance_score": round4(c.relevance),
                        "metadata": c.metadata,
                    })
                })
                .collect();
            let mut result =
                json!({ "connector": r.connector, "source_label": r.label, "chunks": chunks });
            if let Some(error) = &r.error {
                result["error"] = json!(error);
            }
            result
        })
        .collect();
    let total: usize = answer.results.iter().map(|r| r.chunks.len()).sum();
    json!({
        "query_id": answer.query_id,
        "query": question,
        "results": results,
        "search_summary": {
            "connectors_searched": answer.results.len(),
            "total_chunks_found": total,
            "duration_ms": answer.duration_ms,
        },
    })
}

fn round4(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}
