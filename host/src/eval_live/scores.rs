//! Scoring: the live answers merged as an assistant would and judged, the
//! ceiling of the vendors' candidates ranked offline, and percentiles.

use std::collections::HashMap;

use anyhow::Result;

use super::MAX_RESULTS;
use super::clients::LiveAnswer;
use super::server::vendor_id;
use super::vendors::{Vendors, question_words};
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

/// Mean nDCG@10 of the vendors' candidates ranked offline, every passage
/// embedded; and how many queries had no recorded candidates.
pub(super) fn score_ceiling(
    beir: &Beir,
    answers: &[LiveAnswer],
    vendors: &Vendors,
    model: &dyn Embedder,
    count: usize,
) -> Result<(f64, usize)> {
    let (mut ndcg, mut scored, mut missing) = (0.0, 0usize, 0usize);
    let names: Vec<String> = (0..count).map(vendor_id).collect();
    for answer in answers {
        let question = &beir.queries[answer.query];
        let words = question_words(&question.text);
        let mut candidates = Vec::new();
        let mut documents = HashMap::new();
        let mut recorded = true;
        for (vendor, name) in names.iter().enumerate() {
            let Some(found) = vendors.returned_for(vendor, &words) else {
                recorded = false;
                break;
            };
            for (position, &i) in found.iter().enumerate() {
                documents.insert((vendor, position), i);
                candidates.push(Candidate {
                    connector: name,
                    document_index: position,
                    document_id: &beir.corpus[i].id,
                    title: &beir.corpus[i].title,
                    content: &beir.corpus[i].text,
                });
            }
        }
        if !recorded {
            missing += 1;
            continue;
        }
        let plan = plan(&question.text, crate::store::now());
        let semantic = Semantic::new(model, &question.text, usize::MAX)?;
        let ranked = crate::rank::rank(&plan, &candidates, MAX_RESULTS, Some(&semantic))?;
        let order = ranked.iter().map(|r| {
            let vendor = names.iter().position(|n| *n == r.connector).expect("ours");
            documents[&(vendor, r.document_index)]
        });
        let ids = top_ten_ids(beir, order);
        ndcg += ndcg_at_10(&ids, &beir.qrels[&question.id]);
        scored += 1;
    }
    Ok((ndcg / scored.max(1) as f64, missing))
}

pub(super) fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
