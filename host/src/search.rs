//! One question, answered: plan it, fan out to the user's connectors in
//! parallel (each in its own sandbox, each with a deadline), rank what comes
//! back, and cite it. A failing connector never fails the question: its
//! answer carries the error and the others still count.
//!
//! Ranking overlaps the fan-out: the question is embedded while the
//! connectors work, and each connector's passages are handed to the
//! embedding scheduler as soon as that connector answers, its best records
//! first. Once every connector has answered, the query waits for the
//! remaining vectors until its answer budget runs out; a passage the model
//! did not reach by then is placed on the model's scale by its words, and
//! its chunk says so (`"ranking": "keyword"`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::{Map, Value, json};

use crate::connectors::{ConnectorError, Document, ErrorKind, Registry, SearchRequest};
use crate::metrics::Metrics;
use crate::rank::{self, Job, Method, Passage, Priority, QueryPlan, Scheduler};
use quarry_store::{Grant, GrantStatus, now, random_hex};

/// About how many records a question asks its connectors for together:
/// what the model reads within a question's time on two cores.
const CANDIDATES: usize = 90;

/// How many records to ask each of `connectors` connectors for: more than
/// will be shown, so that ranking has something to choose from (twice
/// `max_results`, at least 20), but with many connectors their share of
/// [`CANDIDATES`], never fewer than `max_results`.
fn candidates_wanted(max_results: usize, connectors: usize) -> u32 {
    let share = CANDIDATES / connectors.max(1);
    let most = (max_results * 2).max(20);
    share.clamp(max_results, most).min(100) as u32
}

/// The job key of the question's own vector (passages use their position).
const QUESTION: usize = usize::MAX;

/// After the last connector answers, a query waits at least this long for
/// its vectors, even past its answer budget.
const MIN_EMBED_WAIT: Duration = Duration::from_millis(150);

/// How a query ranks by meaning.
#[derive(Clone)]
pub struct Semantic {
    pub scheduler: Scheduler,
    /// Most passages embedded per query (each connector's best first).
    pub budget: usize,
    /// From the query's start, the time by which it answers with the
    /// vectors it has.
    pub answer_budget: Duration,
}

pub struct Search {
    registry: Arc<Registry>,
    metrics: Arc<Metrics>,
    deadline: Duration,
    /// The semantic stage; `None` ranks by BM25 alone.
    semantic: Option<Semantic>,
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
    /// From the call to the connector's answer or error (the history
    /// keeps it for the dashboard).
    pub latency_ms: u64,
}

/// A ranked passage and where it comes from.
pub struct Cited {
    pub chunk_id: String,
    pub content: String,
    pub source_url: String,
    pub relevance: f32,
    pub metadata: Map<String, Value>,
    /// The passage's vector, when the ranking embedded it: the embedder's
    /// name and the unit vector. The archive stores it with the entry, so
    /// nothing is embedded twice.
    pub vector: Option<(String, Vec<f32>)>,
}

impl Cited {
    /// Its document's title (empty when the connector gave none).
    pub fn title(&self) -> &str {
        self.metadata
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// Told as each connector answers (MCP's progress notifications): how
/// many have answered, of how many, and which one just did.
#[derive(Debug, Clone)]
pub struct Progress {
    pub answered: usize,
    pub total: usize,
    pub connector: String,
}

pub type ProgressSender = tokio::sync::mpsc::UnboundedSender<Progress>;

type Outcome = (String, Result<Vec<Document>, ConnectorError>);

/// What the connectors returned, chunked as it arrived.
#[derive(Default)]
struct Gathered {
    /// In the order of the user's connectors (not of arrival), so that the
    /// answer does not depend on timing.
    outcomes: Vec<Option<Outcome>>,
    /// (outcome slot, passage) in arrival order: the job's keys.
    passages: Vec<(usize, Passage)>,
    /// Each connector's time to answer (ms), by outcome slot.
    latencies_ms: Vec<u64>,
}

impl Search {
    pub fn new(
        registry: Arc<Registry>,
        metrics: Arc<Metrics>,
        deadline: Duration,
        semantic: Option<Semantic>,
    ) -> Search {
        Search {
            registry,
            metrics,
            deadline,
            semantic,
        }
    }

    /// Answers `question` from `connectors` (the user's grants to use),
    /// telling `progress` (if any) as each connector answers. The
    /// connectors search for the caller's `keywords` when there are any,
    /// otherwise for the terms planned from the question; the ranking
    /// scores with both.
    pub async fn run(
        &self,
        user_id: &str,
        question: &str,
        keywords: &[String],
        connectors: Vec<(String, Grant)>,
        max_results: usize,
        progress: Option<ProgressSender>,
    ) -> anyhow::Result<Answer> {
        let started = Instant::now();
        let asked = rank::plan(question, now());
        let request = search_request(
            &asked.searching_for(keywords),
            max_results,
            connectors.len(),
        );
        let plan = asked.also_ranking(keywords);
        let mut job = self.semantic.as_ref().map(|s| {
            let mut job = s.scheduler.job(user_id, Priority::Live, true);
            job.submit(QUESTION, question, 0);
            job
        });
        let gathered = self
            .gather(user_id, connectors, &request, job.as_mut(), progress)
            .await;
        self.metrics.observe_stage("connectors", started.elapsed());

        let ranking = Instant::now();
        if let (Some(job), Some(semantic)) = (job.as_mut(), &self.semantic) {
            let deadline = (started + semantic.answer_budget).max(Instant::now() + MIN_EMBED_WAIT);
            job.wait(Some(deadline)).await;
        }
        let similarity = job
            .as_ref()
            .map(|job| similarities(job, &gathered.passages));
        let vectors_model = job.as_ref().map(|job| job.model_name().to_string());
        // Scoring is a few milliseconds of CPU: off the async workers.
        let mut results = tokio::task::spawn_blocking(move || {
            rank_and_cite(&plan, gathered, similarity.as_deref(), max_results)
        })
        .await?;
        if let (Some(job), Some(model)) = (job.as_mut(), vectors_model) {
            attach_vectors(&mut results, job, &model);
        }
        let (semantic, keyword) = count_methods(&results);
        self.metrics.observe_ranking(semantic, keyword);
        for (answer, _) in &mut results {
            answer.label = self.label_of(&answer.connector);
        }
        self.metrics.observe_stage("ranking", ranking.elapsed());
        Ok(Answer {
            query_id: format!("qry_{}", random_hex(12)),
            results: results.into_iter().map(|(answer, _)| answer).collect(),
            duration_ms: started.elapsed().as_millis() as u64,
        })
    }

    /// Calls every connector at once and chunks each answer as it arrives,
    /// handing its passages to the embedding job: each connector's best
    /// records first, within the query's embedding budget.
    async fn gather(
        &self,
        user_id: &str,
        connectors: Vec<(String, Grant)>,
        request: &SearchRequest,
        mut job: Option<&mut Job>,
        progress: Option<ProgressSender>,
    ) -> Gathered {
        let total = connectors.len();
        let mut gathered = Gathered {
            outcomes: connectors.iter().map(|_| None).collect(),
            passages: Vec::new(),
            latencies_ms: vec![0; total],
        };
        let budget = self.semantic.as_ref().map_or(0, |s| s.budget);
        let mut calls: FuturesUnordered<_> = connectors
            .into_iter()
            .enumerate()
            .map(|(slot, (id, grant))| async move {
                let started = Instant::now();
                let outcome = self.call(user_id, id, grant, request).await;
                (slot, outcome, started.elapsed())
            })
            .collect();
        while let Some((slot, (id, result), took)) = calls.next().await {
            gathered.latencies_ms[slot] = took.as_millis() as u64;
            if let Ok(documents) = &result {
                for (position, document) in documents.iter().enumerate() {
                    for passage in rank::chunk(
                        &id,
                        position,
                        &document.id,
                        &document.title,
                        &document.content,
                    ) {
                        let key = gathered.passages.len();
                        if let Some(job) = job.as_deref_mut()
                            && key < budget
                        {
                            job.submit(key, &passage.text, position as u32 + 1);
                        }
                        gathered.passages.push((slot, passage));
                    }
                }
            }
            if let Some(progress) = &progress {
                let answered = gathered.outcomes.iter().flatten().count() + 1;
                // A receiver gone (the client left) is no reason to stop.
                let _ = progress.send(Progress {
                    answered,
                    total,
                    connector: id.clone(),
                });
            }
            gathered.outcomes[slot] = Some((id, result));
        }
        gathered
    }

    /// One connector's search, within the query's per-connector deadline.
    async fn call(
        &self,
        user_id: &str,
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
                .search_for(Some(user_id), &id, &request, Some(grant.access_token)),
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

pub fn search_request(plan: &QueryPlan, max_results: usize, connectors: usize) -> SearchRequest {
    SearchRequest {
        query: plan.keywords.clone(),
        terms: plan.terms.clone(),
        phrases: plan.phrases.clone(),
        since: plan.since.clone(),
        until: plan.until.clone(),
        max_results: candidates_wanted(max_results, connectors),
        settings: Vec::new(),
    }
}

/// The cosine of each passage with the question, where both have arrived.
fn similarities(job: &Job, passages: &[(usize, Passage)]) -> Vec<Option<f32>> {
    let question = job.vector(QUESTION);
    (0..passages.len())
        .map(|key| {
            let (question, passage) = (question?, job.vector(key)?);
            Some(rank::embed::cosine(question, passage))
        })
        .collect()
}

/// Chunks and ranks every connector's documents in one corpus, so that
/// scores compare across connectors, and keeps the best per connector.
/// Each cited chunk comes with the position of its passage (the job key).
fn rank_and_cite(
    plan: &QueryPlan,
    gathered: Gathered,
    similarity: Option<&[Option<f32>]>,
    max_results: usize,
) -> Vec<(ConnectorAnswer, Vec<usize>)> {
    // Every slot has its outcome once the gathering is over: the latencies
    // line up with them.
    let outcomes: Vec<Outcome> = gathered.outcomes.into_iter().flatten().collect();
    let latencies_ms = gathered.latencies_ms;
    let ids: Vec<&str> = outcomes.iter().map(|(id, _)| id.as_str()).collect();
    let passages: Vec<(&str, Passage)> = gathered
        .passages
        .into_iter()
        .map(|(slot, passage)| (ids[slot], passage))
        .collect();
    let ranked = rank::rank_passages(
        plan,
        &passages,
        similarity,
        rank::fuse::SEMANTIC_WEIGHT,
        max_results,
    );
    outcomes
        .iter()
        .zip(latencies_ms)
        .map(|((id, outcome), latency_ms)| {
            let (chunks, error) = match outcome {
                Ok(documents) => {
                    let chunks = ranked
                        .iter()
                        .filter(|r| &r.connector == id)
                        .map(|r| (cite(r, &documents[r.document_index]), r.passage))
                        .collect();
                    (chunks, None)
                }
                Err(error) => (Vec::new(), Some(error.clone())),
            };
            let (chunks, keys): (Vec<Cited>, Vec<usize>) = chunks.into_iter().unzip();
            let answer = ConnectorAnswer {
                connector: id.clone(),
                label: String::new(),
                chunks,
                error,
                latency_ms,
            };
            (answer, keys)
        })
        .collect()
}

/// Hands each semantically ranked chunk its vector, for the archive.
fn attach_vectors(results: &mut [(ConnectorAnswer, Vec<usize>)], job: &mut Job, model: &str) {
    for (answer, keys) in results {
        for (chunk, key) in answer.chunks.iter_mut().zip(keys.iter()) {
            if chunk.metadata.get("ranking") == Some(&json!(Method::Semantic.as_str())) {
                chunk.vector = job.take_vector(*key).map(|v| (model.to_string(), v));
            }
        }
    }
}

/// Chunks ranked by the model, and by keywords alone.
fn count_methods(results: &[(ConnectorAnswer, Vec<usize>)]) -> (u64, u64) {
    let chunks = results.iter().flat_map(|(answer, _)| &answer.chunks);
    chunks.fold((0, 0), |(semantic, keyword), chunk| {
        match chunk.metadata.get("ranking").and_then(Value::as_str) {
            Some("semantic") => (semantic + 1, keyword),
            _ => (semantic, keyword + 1),
        }
    })
}

fn cite(ranked: &rank::Ranked, doc: &Document) -> Cited {
    let mut metadata = Map::new();
    metadata.insert("title".into(), json!(doc.title));
    metadata.insert("ranking".into(), json!(ranked.method.as_str()));
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
        vector: None,
    }
}
