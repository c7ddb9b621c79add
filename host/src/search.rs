//! One question, answered: plan it, fan out to the user's connectors in
//! parallel (each in its own sandbox, each with a deadline), rank what comes
//! back, and cite it. A failing connector never fails the question: its
//! answer carries the error and the others still count.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::connectors::{ConnectorError, Document, ErrorKind, Registry, SearchRequest};
use crate::metrics::Metrics;
use crate::rank::{self, Candidate, Embedder, QueryPlan, Semantic};
use crate::store::{Grant, GrantStatus, now, random_hex};

/// How many records to ask each connector for: more than will be shown, so
/// that ranking has something to choose from.
fn candidates_wanted(max_results: usize) -> u32 {
    (max_results * 2).clamp(20, 100) as u32
}

pub struct Search {
    registry: Arc<Registry>,
    metrics: Arc<Metrics>,
    deadline: Duration,
    /// The semantic stage; `None` ranks by BM25 alone.
    embedder: Option<Arc<dyn Embedder>>,
    embed_budget: usize,
    embed_deadline: Duration,
    embed_slot: Arc<tokio::sync::Semaphore>,
}

/// The answer to one question.
pub struct Answer {
    pub query_id: String,
    pub results: Vec<ConnectorAnswer>,
    pub duration_ms: u64,
}

pub struct ConnectorAnswer {
    pub connector: String,
    pub label: String,
    pub chunks: Vec<Cited>,
    pub error: Option<ConnectorError>,
}

/// A ranked passage and where it comes from.
pub struct Cited {
    pub chunk_id: String,
    pub content: String,
    pub source_url: String,
    pub relevance: f32,
    pub metadata: Map<String, Value>,
}

impl Search {
    pub fn new(
        registry: Arc<Registry>,
        metrics: Arc<Metrics>,
        deadline: Duration,
        embedder: Option<Arc<dyn Embedder>>,
        embed_budget: usize,
        embed_deadline: Duration,
        embed_slot: Arc<tokio::sync::Semaphore>,
    ) -> Search {
        Search {
            registry,
            metrics,
            deadline,
            embedder,
            embed_budget,
            embed_deadline,
            embed_slot,
        }
    }

    /// Answers `question` from `connectors` (the user's grants to use).
    pub async fn run(
        &self,
        question: &str,
        connectors: Vec<(String, Grant)>,
        max_results: usize,
    ) -> anyhow::Result<Answer> {
        let started = Instant::now();
        let plan = rank::plan(question, now());
        let request = search_request(&plan, max_results);
        let question = question.to_string();
        let calls = connectors
            .into_iter()
            .map(|(id, grant)| self.call(id, grant, &request));
        let outcomes = futures::future::join_all(calls).await;
        self.metrics.observe_stage("connectors", started.elapsed());

        let ranking = Instant::now();
        // One query embeds at a time (the model already uses every core).
        // A query that cannot start within its embedding deadline ranks by
        // keywords alone: under load, latency stays bounded and throughput
        // stays that of BM25, rather than every query queueing for the CPU.
        let slot = match &self.embedder {
            Some(_) => {
                tokio::time::timeout(self.embed_deadline, self.embed_slot.clone().acquire_owned())
                    .await
                    .ok()
            }
            None => None,
        };
        let embedder = match &slot {
            Some(Ok(_)) => self.embedder.clone(),
            _ => None,
        };
        let (budget, owned_question) = (self.embed_budget, question);
        let embed_deadline = self.embed_deadline.saturating_sub(ranking.elapsed());
        // Embedding is CPU-bound: off the async workers.
        let mut results = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            let semantic = match &embedder {
                Some(e) => Some(
                    Semantic::new(e.as_ref(), &owned_question, budget)?
                        .with_deadline(embed_deadline),
                ),
                None => None,
            };
            rank_and_cite(&plan, outcomes, max_results, semantic.as_ref())
        })
        .await??;
        for answer in &mut results {
            answer.label = self.label_of(&answer.connector);
        }
        self.metrics.observe_stage("ranking", ranking.elapsed());
        Ok(Answer {
            query_id: format!("qry_{}", random_hex(12)),
            results,
            duration_ms: started.elapsed().as_millis() as u64,
        })
    }

    /// One connector's search, within the query's per-connector deadline.
    async fn call(
        &self,
        id: String,
        grant: Grant,
        base: &SearchRequest,
    ) -> (String, Result<Vec<Document>, ConnectorError>) {
        if grant.status == GrantStatus::NeedsReconnect {
            return (
                id,
                Err(ConnectorError::new(
                    ErrorKind::Unauthorized,
                    "the connection must be renewed: connect the tool again",
                )),
            );
        }
        let request = SearchRequest {
            settings: grant.settings.clone(),
            ..base.clone()
        };
        let started = Instant::now();
        let result = match tokio::time::timeout(
            self.deadline,
            self.registry
                .search(&id, &request, Some(grant.access_token)),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(ConnectorError::new(
                ErrorKind::Timeout,
                format!(
                    "no answer within the query's {} ms per-connector deadline",
                    self.deadline.as_millis()
                ),
            )),
        };
        self.metrics.observe_connector(
            &id,
            result.as_ref().err().map(|e| e.kind),
            started.elapsed(),
        );
        (id, result)
    }

    pub fn label_of(&self, id: &str) -> String {
        self.registry
            .get(id)
            .map_or_else(|| id.to_string(), |c| c.manifest.label.clone())
    }
}

fn search_request(plan: &QueryPlan, max_results: usize) -> SearchRequest {
    SearchRequest {
        query: plan.keywords.clone(),
        terms: plan.terms.clone(),
        phrases: plan.phrases.clone(),
        since: plan.since.clone(),
        until: plan.until.clone(),
        max_results: candidates_wanted(max_results),
        settings: Vec::new(),
    }
}

/// Chunks and ranks every connector's documents in one corpus, so that
/// scores compare across connectors, and keeps the best per connector.
fn rank_and_cite(
    plan: &QueryPlan,
    outcomes: Vec<(String, Result<Vec<Document>, ConnectorError>)>,
    max_results: usize,
    semantic: Option<&Semantic<'_>>,
) -> anyhow::Result<Vec<ConnectorAnswer>> {
    let mut candidates = Vec::new();
    for (id, outcome) in &outcomes {
        if let Ok(documents) = outcome {
            for (index, doc) in documents.iter().enumerate() {
                candidates.push(Candidate {
                    connector: id,
                    document_index: index,
                    document_id: &doc.id,
                    title: &doc.title,
                    content: &doc.content,
                });
            }
        }
    }
    let ranked = rank::rank(plan, &candidates, max_results, semantic)?;
    Ok(outcomes
        .iter()
        .map(|(id, outcome)| {
            let (chunks, error) = match outcome {
                Ok(documents) => {
                    let chunks = ranked
                        .iter()
                        .filter(|r| &r.connector == id)
                        .map(|r| cite(r, &documents[r.document_index]))
                        .collect();
                    (chunks, None)
                }
                Err(error) => (Vec::new(), Some(error.clone())),
            };
            ConnectorAnswer {
                connector: id.clone(),
                label: String::new(),
                chunks,
                error,
            }
        })
        .collect())
}

fn cite(ranked: &rank::Ranked, doc: &Document) -> Cited {
    let mut metadata = Map::new();
    metadata.insert("title".into(), json!(doc.title));
    metadata.insert("document_id".into(), json!(doc.id));
    metadata.insert("author".into(), json!(doc.author));
    metadata.insert("created_at".into(), json!(doc.created_at));
    metadata.insert("updated_at".into(), json!(doc.updated_at));
    for (key, value) in &doc.metadata {
        metadata.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Cited {
        chunk_id: ranked.chunk_id.clone(),
        content: ranked.text.clone(),
        source_url: doc.url.clone(),
        relevance: ranked.relevance.clamp(0.0, 1.0),
        metadata,
    }
}
