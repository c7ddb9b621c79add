//! Quarry's ranking: from a question and the records the connectors
//! returned to the cited passages `/v1/query` answers with, and the
//! embedders and scheduler that the archive's deep search shares.
//!
//! It also keeps the archive's vector index ([`vector_index`], on usearch).
//!
//! A crate of its own because it holds the heavy numeric dependencies
//! (candle, ONNX Runtime, the tokenizer, usearch) and the hot loops, which the
//! demo's build optimises without optimising the whole server (see the
//! workspace's `Cargo.toml`). Architecture invariant: it knows nothing of
//! HTTP front doors, storage or connectors; what it needs from the host
//! (the outbound HTTP client of the embeddings endpoint) is handed in.
//!
//! - [`plan`]: the question as terms, quoted phrases and a time range (what
//!   connectors receive).
//! - [`chunk`]: records cut into passages that keep their title.
//! - [`Bm25`]: keyword scores over one query's passages, and a relevance in
//!   [0, 1] that means the same across queries.
//! - [`rank`]: all of it together: the best passage of each record, the top
//!   few per connector.
//!
//! Everything here is a pure function of its inputs (the plan takes the
//! current time as an argument), so ranking is reproducible and testable.

mod bm25;
pub mod calendar;
mod chunk;
pub mod embed;
pub mod eval;
pub mod fuse;
mod plan;
pub mod remote;
pub mod scheduler;
mod time;
pub mod vector_index;
mod words;

pub use bm25::{Bm25, tokenize};
pub use chunk::{Passage, chunk};
pub use embed::{Embedder, MiniLm};
pub use fuse::Semantic;
pub use plan::{QueryPlan, plan};
pub use scheduler::{Job, Priority, Scheduler};

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// One record a connector returned, as the ranking needs it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    pub connector: &'a str,
    /// The record's position in its connector's results: how the caller
    /// finds the record again (url, author, times) for the citation.
    pub document_index: usize,
    pub document_id: &'a str,
    pub title: &'a str,
    pub content: &'a str,
}

/// A passage chosen for the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub connector: String,
    pub document_index: usize,
    pub chunk_id: String,
    pub text: String,
    /// In [0, 1], comparable across connectors and queries.
    pub relevance: f32,
    pub method: Method,
    /// The passage's position in the list that was ranked.
    pub passage: usize,
}

/// How a passage's relevance was decided: by the model (its meaning
/// compared with the question's) or, where the model did not reach it in
/// time, by its words, placed on the model's scale (see [`fuse`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Semantic,
    Keyword,
}

impl Method {
    /// As the chunk metadata says it (`"ranking"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Semantic => "semantic",
            Method::Keyword => "keyword",
        }
    }
}

/// The passages of `candidates`, in candidate order, each with its
/// connector: what [`rank_passages`] ranks and what gets embedded.
pub fn passages<'a>(candidates: &[Candidate<'a>]) -> Vec<(&'a str, Passage)> {
    candidates
        .iter()
        .flat_map(|c| {
            chunk(
                c.connector,
                c.document_index,
                c.document_id,
                c.title,
                c.content,
            )
            .into_iter()
            .map(move |passage| (c.connector, passage))
        })
        .collect()
}

/// Ranks the passages of `candidates` for `plan`, embedding them with
/// `semantic` when given (every passage, no deadline: the offline path of
/// `quarry eval-ranking`; live queries embed through the scheduler and call
/// [`rank_passages`]).
pub fn rank(
    plan: &QueryPlan,
    candidates: &[Candidate<'_>],
    max_per_connector: usize,
    semantic: Option<&Semantic<'_>>,
) -> anyhow::Result<Vec<Ranked>> {
    let passages = passages(candidates);
    let similarity = match semantic {
        Some(semantic) => {
            let texts: Vec<&str> = passages.iter().map(|(_, p)| p.text.as_str()).collect();
            let lexical = lexical_relevance(plan, &passages);
            Some(semantic.similarities(&texts, &lexical)?)
        }
        None => None,
    };
    let weight = semantic.map_or(fuse::SEMANTIC_WEIGHT, Semantic::weight);
    Ok(rank_passages(
        plan,
        &passages,
        similarity.as_deref(),
        weight,
        max_per_connector,
    ))
}

/// The keyword relevance of each passage: BM25 over these passages (one
/// corpus, so that scores compare across connectors), on a fixed scale.
pub fn lexical_relevance(plan: &QueryPlan, passages: &[(&str, Passage)]) -> Vec<f32> {
    let bm25 = Bm25::new(passages.iter().map(|(_, passage)| passage.text.as_str()));
    let query = bm25.query(&scoring_terms(plan), &plan.phrases);
    (0..passages.len())
        .map(|i| query.relevance(query.score(i)))
        .collect()
}

/// Ranks `passages` for `plan`: at most one passage per record (its best),
/// at most `max_per_connector` per connector, ordered by relevance, highest
/// first. Ties are broken by connector, then record position, then passage
/// position, so the same input always gives the same output.
///
/// With the model in use, `similarity[i]` is the cosine between passage
/// `i` and the question when the model embedded it: its relevance is then
/// the model's (mixed with its keyword relevance by `semantic_weight`). A
/// passage the model did not reach is placed on the model's scale by its
/// keyword relevance, through the calibration in [`fuse`], so that every
/// score means the same. Without the model (`None`), relevance is BM25's.
///
/// A record that matches no query term is still returned when its
/// connector has room (the upstream search found it for a reason:
/// synonyms, fields we do not see).
pub fn rank_passages(
    plan: &QueryPlan,
    passages: &[(&str, Passage)],
    similarity: Option<&[Option<f32>]>,
    semantic_weight: f32,
    max_per_connector: usize,
) -> Vec<Ranked> {
    if max_per_connector == 0 {
        return Vec::new();
    }
    let lexical = lexical_relevance(plan, passages);
    let scored = passages
        .iter()
        .enumerate()
        .map(|(i, (connector, passage))| {
            let (relevance, method) = match similarity.map(|s| s.get(i).copied().flatten()) {
                Some(Some(cosine)) => (
                    fuse::fused(cosine, lexical[i], semantic_weight),
                    Method::Semantic,
                ),
                Some(None) => (fuse::keyword_on_model_scale(lexical[i]), Method::Keyword),
                // No model at all (ranking.semantic = false): BM25's own
                // scale is the only one.
                None => (lexical[i], Method::Keyword),
            };
            Scored {
                connector,
                passage,
                index: i,
                relevance,
                method,
            }
        });
    top_per_connector(best_per_record(scored), max_per_connector)
        .into_iter()
        .map(|scored| Ranked {
            connector: scored.connector.to_string(),
            document_index: scored.passage.document_index,
            chunk_id: scored.passage.chunk_id.clone(),
            text: scored.passage.text.clone(),
            relevance: scored.relevance,
            method: scored.method,
            passage: scored.index,
        })
        .collect()
}

/// The terms to score with: the plan's terms, or, when the user quoted
/// only stop words (`"to be or not to be"`), the phrases' own words, so
/// that such a query still scores.
fn scoring_terms(plan: &QueryPlan) -> Vec<String> {
    if plan.terms.iter().any(|term| !tokenize(term).is_empty()) {
        plan.terms.clone()
    } else {
        plan.phrases.clone()
    }
}

struct Scored<'a> {
    connector: &'a str,
    passage: &'a Passage,
    index: usize,
    relevance: f32,
    method: Method,
}

impl Scored<'_> {
    /// Output order: relevance descending, then connector, record and
    /// passage position ascending.
    fn order(&self, other: &Scored<'_>) -> Ordering {
        other
            .relevance
            .total_cmp(&self.relevance)
            .then_with(|| self.connector.cmp(other.connector))
            .then_with(|| {
                self.passage
                    .document_index
                    .cmp(&other.passage.document_index)
            })
            .then_with(|| self.passage.ordinal.cmp(&other.passage.ordinal))
    }
}

/// The best passage of each (connector, record); among equals, the earlier.
fn best_per_record<'a>(scored: impl Iterator<Item = Scored<'a>>) -> Vec<Scored<'a>> {
    let mut best: BTreeMap<(&str, usize), Scored<'a>> = BTreeMap::new();
    for candidate in scored {
        let key = (candidate.connector, candidate.passage.document_index);
        match best.get(&key) {
            Some(current) if current.order(&candidate) != Ordering::Greater => {}
            _ => {
                best.insert(key, candidate);
            }
        }
    }
    best.into_values().collect()
}

/// The first `limit` of each connector, in output order.
fn top_per_connector(mut scored: Vec<Scored<'_>>, limit: usize) -> Vec<Scored<'_>> {
    scored.sort_by(|a, b| a.order(b));
    let mut taken: BTreeMap<&str, usize> = BTreeMap::new();
    scored.retain(|item| {
        let count = taken.entry(item.connector).or_insert(0);
        *count += 1;
        *count <= limit
    });
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_794_753_000;

    fn candidate<'a>(
        connector: &'a str,
        index: usize,
        title: &'a str,
        content: &'a str,
    ) -> Candidate<'a> {
        Candidate {
            connector,
            document_index: index,
            document_id: title,
            title,
            content,
        }
    }

    fn summary(ranked: &[Ranked]) -> Vec<(String, usize)> {
        ranked
            .iter()
            .map(|r| (r.connector.clone(), r.document_index))
            .collect()
    }

    fn pairs(items: &[(&str, usize)]) -> Vec<(String, usize)> {
        items.iter().map(|(c, i)| (c.to_string(), *i)).collect()
    }

    #[test]
    fn best_matches_first_across_connectors() {
        let candidates = [
            candidate("slack", 0, "", "lunch on friday?"),
            candidate("slack", 1, "", "checkout timeout again after the deploy"),
            candidate(
                "github",
                0,
                "Checkout timeout",
                "The checkout page times out with a timeout error.",
            ),
            candidate("github", 1, "Docs", "Update the readme"),
        ];
        let plan = plan("checkout timeout", NOW);
        let ranked = rank(&plan, &candidates, 10, None).unwrap();
        assert_eq!(
            summary(&ranked),
            pairs(&[("github", 0), ("slack", 1), ("github", 1), ("slack", 0)])
        );
        assert!(ranked[0].relevance > ranked[1].relevance);
        assert!(ranked[1].relevance > 0.0);
        assert_eq!(ranked[2].relevance, 0.0);
        assert_eq!(ranked[3].relevance, 0.0);
        for item in &ranked {
            assert!((0.0..=1.0).contains(&item.relevance));
            assert!(item.chunk_id.starts_with("chnk_"));
        }
    }

    #[test]
    fn keeps_the_top_few_per_connector() {
        let candidates = [
            candidate("jira", 0, "A", "deploy"),
            candidate("jira", 1, "B", "deploy deploy failed"),
            candidate("jira", 2, "C", "nothing"),
            candidate("linear", 0, "D", "deploy"),
        ];
        let ranked = rank(&plan("deploy failed", NOW), &candidates, 2, None).unwrap();
        assert_eq!(
            summary(&ranked),
            pairs(&[("jira", 1), ("jira", 0), ("linear", 0)])
        );
        assert!(
            rank(&plan("deploy", NOW), &candidates, 0, None)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn one_passage_per_record_the_best() {
        let filler: Vec<String> = (0..150).map(|i| format!("filler{i}")).collect();
        let content = format!("{} the refund policy changed in may.", filler.join(" "));
        let candidates = [candidate("notion", 0, "Handbook", &content)];
        let ranked = rank(&plan("refund policy", NOW), &candidates, 5, None).unwrap();
        assert_eq!(ranked.len(), 1);
        assert!(ranked[0].text.starts_with("Handbook\n"));
        assert!(ranked[0].text.contains("refund policy"));
        assert!(ranked[0].relevance > 0.0);
    }

    #[test]
    fn zero_scores_keep_upstream_order() {
        let candidates = [
            candidate("slack", 2, "", "gamma"),
            candidate("slack", 0, "", "alpha"),
            candidate("slack", 1, "", "beta"),
        ];
        let ranked = rank(&plan("unrelated", NOW), &candidates, 10, None).unwrap();
        assert_eq!(
            summary(&ranked),
            pairs(&[("slack", 0), ("slack", 1), ("slack", 2)])
        );
        let first = ranked[0].clone();
        assert_eq!(first.text, "alpha");
        assert_eq!(first.relevance, 0.0);
    }

    #[test]
    fn deterministic_ties() {
        let candidates = [
            candidate("zeta", 0, "", "deploy"),
            candidate("alpha", 1, "", "deploy"),
            candidate("alpha", 0, "", "deploy"),
        ];
        let ranked = rank(&plan("deploy", NOW), &candidates, 10, None).unwrap();
        assert_eq!(
            summary(&ranked),
            pairs(&[("alpha", 0), ("alpha", 1), ("zeta", 0)])
        );
        assert_eq!(
            ranked,
            rank(&plan("deploy", NOW), &candidates, 10, None).unwrap()
        );
    }

    #[test]
    fn quoted_stop_words_still_score() {
        let candidates = [
            candidate("notion", 0, "", "to be or not to be"),
            candidate("notion", 1, "", "a different page"),
        ];
        let ranked = rank(&plan("\"to be or not to be\"", NOW), &candidates, 10, None).unwrap();
        assert_eq!(ranked[0].document_index, 0);
        assert!(ranked[0].relevance > 0.0);
        assert_eq!(ranked[1].relevance, 0.0);
    }

    #[test]
    fn nothing_in_nothing_out() {
        assert!(
            rank(&plan("checkout", NOW), &[], 10, None)
                .unwrap()
                .is_empty()
        );
        let ranked = rank(&plan("", NOW), &[candidate("slack", 0, "", "")], 10, None).unwrap();
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].relevance, 0.0);
    }

    #[test]
    fn chunk_ids_match_chunk() {
        let candidates = [candidate("github", 4, "Title", "Some content")];
        let ranked = rank(&plan("content", NOW), &candidates, 10, None).unwrap();
        let passages = chunk("github", 4, "Title", "Title", "Some content");
        assert_eq!(ranked[0].chunk_id, passages[0].chunk_id);
        assert_eq!(ranked[0].text, passages[0].text);
    }
}
