//! Scoring: the live answers merged as an assistant would and judged, the
//! ceiling of the vendors' candidates ranked offline, and percentiles.

use anyhow::Result;

use super::MAX_RESULTS;
use super::clients::LiveAnswer;
use super::upstreams::Search;
use crate::rank::eval::{Beir, ndcg_at_10, recall_at_10};
use crate::rank::{Candidate, Embedder, Semantic, plan};

pub(super) struct LiveScore {
    pub(super) ndcg: f64,
    pub(super) recall: f64,
    pub(super) model_share: f64,
}

pub(super) fn score_live(beir: &Beir, answers: &[LiveAnswer]) -> LiveScore {
    let (mut ndcg, mut recall, mut semantic, mut total) = (0.0, 0.0, 0usize, 0usize);
    for answer in answers {
        let mut merged: Vec<(usize, f64)> = answer.chunks.iter().map(|c| (c.0, c.1)).collect();
        // Stable: equal scores keep the answer's order.
        merged.sort_by(|a, b| b.1.total_cmp(&a.1));
        let ids = top_ten_ids(beir, merged.into_iter().map(|(d, _)| d));
        let judged = &beir.qrels[&beir.queries[answer.query].id];
        ndcg += ndcg_at_10(&ids, judged);
        recall += recall_at_10(&ids, judged);
        semantic += answer.chunks.iter().filter(|c| c.2).count();
        total += answer.chunks.len();
    }
    let n = answers.len().max(1) as f64;
    LiveScore {
        ndcg: ndcg / n,
        recall: recall / n,
        model_share: semantic as f64 / total.max(1) as f64,
    }
}

/// The first ten distinct documents, as ids.
fn top_ten_ids(beir: &Beir, documents: impl Iterator<Item = usize>) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for document in documents {
        let id = beir.corpus[document].id.as_str();
        if !ids.contains(&id) {
            ids.push(id);
        }
        if ids.len() == 10 {
            break;
        }
    }
    ids
}

/// Each answer's nDCG@10 of what the vendors returned for its query (every
/// search its connectors made), ranked offline with every passage embedded
/// and no deadline: the best the ranking could do with those candidates.
/// In the answers' order; their mean is the printed ceiling.
pub(super) fn score_ceilings(
    beir: &Beir,
    answers: &[LiveAnswer],
    model: &dyn Embedder,
) -> Result<Vec<f64>> {
    answers
        .iter()
        .map(|answer| ceiling_of(beir, answer, model))
        .collect()
}

/// One answer's ceiling: see [`score_ceilings`].
fn ceiling_of(beir: &Beir, answer: &LiveAnswer, model: &dyn Embedder) -> Result<f64> {
    let question = &beir.queries[answer.query];
    // Each connector's documents once, in the order they came.
    let mut documents: Vec<(&str, usize)> = Vec::new();
    for search in &answer.searches {
        for &document in &search.returned {
            if !documents.contains(&(search.connector.as_str(), document)) {
                documents.push((search.connector.as_str(), document));
            }
        }
    }
    let candidates: Vec<Candidate> = documents
        .iter()
        .enumerate()
        .map(|(position, &(connector, i))| Candidate {
            connector,
            document_index: position,
            document_id: &beir.corpus[i].id,
            title: &beir.corpus[i].title,
            content: &beir.corpus[i].text,
        })
        .collect();
    let plan = plan(&question.text, quarry_store::now());
    let semantic = Semantic::new(model, &question.text, usize::MAX)?;
    let ranked = crate::rank::rank(&plan, &candidates, MAX_RESULTS, Some(&semantic))?;
    let order = ranked.iter().map(|r| documents[r.document_index].1);
    let ids = top_ten_ids(beir, order);
    Ok(ndcg_at_10(&ids, &beir.qrels[&question.id]))
}

/// Writes one JSON line per answer (`--per-query`): the question, its
/// nDCG@10 live and offline, how many documents are judged relevant, and
/// each search's connector, what it sent, how many documents it returned
/// and how many of them are judged relevant.
pub(super) fn write_per_query(
    path: &std::path::Path,
    beir: &Beir,
    answers: &[LiveAnswer],
    ceilings: &[f64],
) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (answer, ceiling) in answers.iter().zip(ceilings) {
        let question = &beir.queries[answer.query];
        let judged = &beir.qrels[&question.id];
        let relevant = |d: &usize| judged.get(&beir.corpus[*d].id).is_some_and(|g| *g > 0);
        let searches: Vec<serde_json::Value> = answer
            .searches
            .iter()
            .map(|s| {
                serde_json::json!({
                    "connector": s.connector,
                    "sent": s.sent,
                    "returned": s.returned.len(),
                    "relevant": s.returned.iter().filter(|d| relevant(d)).count(),
                })
            })
            .collect();
        let line = serde_json::json!({
            "query": question.text,
            "ndcg": score_live(beir, std::slice::from_ref(answer)).ndcg,
            "ceiling": ceiling,
            "relevant": judged.values().filter(|g| **g > 0).count(),
            "searches": searches,
        });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// The share of searches that found nothing: overall, and per connector
/// (in the order given).
pub(super) fn zero_result_rates(
    answers: &[LiveAnswer],
    connectors: &[String],
) -> (f64, Vec<(String, f64, usize)>) {
    let searches: Vec<&Search> = answers.iter().flat_map(|a| &a.searches).collect();
    let rate = |of: &[&&Search]| {
        let empty = of.iter().filter(|s| s.returned.is_empty()).count();
        empty as f64 / of.len().max(1) as f64
    };
    let all: Vec<&&Search> = searches.iter().collect();
    let per_connector = connectors
        .iter()
        .map(|connector| {
            let of: Vec<&&Search> = searches
                .iter()
                .filter(|s| &s.connector == connector)
                .collect();
            (connector.clone(), rate(&of), of.len())
        })
        .collect();
    (rate(&all), per_connector)
}

pub(super) fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
