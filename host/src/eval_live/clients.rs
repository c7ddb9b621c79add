//! The clients: C at once, each (a user of its own) asking the next judged
//! query through `/v1/query`, then a deep search for it; what the vendors
//! returned for the query is read off the upstreams.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::MAX_RESULTS;
use super::upstreams::{Search, Upstreams};
use crate::rank::eval::Beir;

/// One query's answer as an assistant sees it.
pub(super) struct LiveAnswer {
    pub(super) query: usize,
    pub(super) millis: u64,
    /// (corpus index, relevance, ranked by the model) of every chunk.
    pub(super) chunks: Vec<(usize, f64, bool)>,
    /// The deep search asked right after it.
    pub(super) deep_search_millis: u64,
    /// The searches the connectors made for it, and what each returned.
    pub(super) searches: Vec<Search>,
}

/// Asks every judged query, `tokens.len()` clients at once, client `c`
/// with `tokens[c]`.
pub(super) async fn ask_all(
    beir: &Arc<Beir>,
    judged: &[usize],
    url: &str,
    tokens: &[String],
    ca: &Path,
    upstreams: Arc<dyn Upstreams>,
) -> Result<Vec<LiveAnswer>> {
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(ca)?)?)
        .timeout(Duration::from_secs(60))
        .build()?;
    let next = Arc::new(AtomicUsize::new(0));
    let judged = Arc::new(judged.to_vec());
    let tasks: Vec<_> = tokens
        .iter()
        .enumerate()
        .map(|(number, token)| {
            let (client, next, judged, beir, upstreams) = (
                client.clone(),
                next.clone(),
                judged.clone(),
                beir.clone(),
                upstreams.clone(),
            );
            let (url, token) = (url.to_string(), token.to_string());
            tokio::spawn(async move {
                let mut answers = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&query) = judged.get(n) else {
                        return Ok::<_, anyhow::Error>(answers);
                    };
                    let text = &beir.queries[query].text;
                    let before = upstreams.mark();
                    let mut answer = ask(&client, &url, &token, query, text, &*upstreams).await?;
                    answer.searches = upstreams.searches(number, before, upstreams.mark());
                    answer.deep_search_millis = deep_search(&client, &url, &token, text).await?;
                    answers.push(answer);
                }
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.extend(task.await??);
    }
    answers.sort_by_key(|a| a.query);
    Ok(answers)
}

async fn ask(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    query: usize,
    text: &str,
    upstreams: &dyn Upstreams,
) -> Result<LiveAnswer> {
    let (body, millis) = post(client, &format!("{url}/query"), token, text).await?;
    let mut chunks = Vec::new();
    for result in body["results"].as_array().into_iter().flatten() {
        if let Some(error) = result.get("error").filter(|e| !e.is_null()) {
            bail!("connector {} failed: {error}", result["connector"]);
        }
        for chunk in result["chunks"].as_array().into_iter().flatten() {
            let url = chunk["source_url"].as_str().unwrap_or_default();
            let document = upstreams
                .document_of(url)
                .with_context(|| format!("a chunk cites {url:?}, no document of the corpus"))?;
            let relevance = chunk["relevance_score"].as_f64().unwrap_or_default();
            let semantic = chunk["metadata"]["ranking"] == "semantic";
            chunks.push((document, relevance, semantic));
        }
    }
    Ok(LiveAnswer {
        query,
        millis,
        chunks,
        deep_search_millis: 0,
        searches: Vec::new(),
    })
}

/// A deep search for the question just asked, right after its answer (the
/// archive has the answer's chunks, their vectors from the ranking, and
/// whatever the model did not reach still queued). Returns its latency.
async fn deep_search(client: &reqwest::Client, url: &str, token: &str, text: &str) -> Result<u64> {
    let (_, millis) = post(client, &format!("{url}/deep_search"), token, text).await?;
    Ok(millis)
}

/// Asks `text` at `url` (`/v1/query` or `/v1/deep_search`) with
/// `max_results` 10; returns the answer and its latency in milliseconds.
async fn post(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    text: &str,
) -> Result<(Value, u64)> {
    let started = Instant::now();
    let response = client
        .post(url)
        .bearer_auth(token)
        .json(&json!({"query": text, "max_results": MAX_RESULTS}))
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await?;
    let millis = started.elapsed().as_millis() as u64;
    if !status.is_success() {
        bail!("{url} answered {status}: {body}");
    }
    Ok((body, millis))
}
