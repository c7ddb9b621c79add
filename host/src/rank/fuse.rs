//! Fusing keyword and semantic relevance into one score in [0, 1].
//!
//! BM25 finds the records that use the question's words; the embedding
//! finds the ones that mean the same thing in other words. Each is mapped
//! to [0, 1] on a fixed scale (not normalised per query, so that a score
//! means the same across connectors and queries) and the two are mixed
//! with a fixed weight, measured on `ir-dbpedia` with `quarry eval-ranking`.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::embed::{Embedder, cosine};

/// Weight of the semantic relevance in the fused score of an embedded
/// passage. Measured on `ir-dbpedia` (BM25 top-100 re-ranked, nDCG@10):
/// 0.6 → 0.462, 0.75 → 0.486, 0.85 → 0.487, 0.95 → 0.497, 1.0 → 0.500.
/// BM25 over only the candidates is a weak signal next to the model, so
/// where a passage is embedded its meaning decides; BM25 decides which
/// passages are embedded first, and ranks the ones the budget did not reach.
pub const SEMANTIC_WEIGHT: f32 = 1.0;
/// A passage that was not embedded keeps this share of its keyword
/// relevance: it ranks among the others by its words, below passages whose
/// meaning was checked.
const KEYWORD_ONLY_SHARE: f32 = 0.1;
/// Cosine similarities of all-MiniLM-L6-v2 between a question and an
/// unrelated passage sit near 0.05; a passage that answers it, 0.5 to 0.8.
/// This range maps onto [0, 1].
const COSINE_FLOOR: f32 = 0.05;
const COSINE_CEILING: f32 = 0.75;

/// The semantic stage of one query: the embedder and the question's vector.
pub struct Semantic<'a> {
    embedder: &'a dyn Embedder,
    question: Vec<f32>,
    /// At most this many passages are embedded per query (the best by
    /// BM25 first); the rest keep their keyword relevance alone. Bounds the
    /// cost of a query whatever the connectors return.
    budget: usize,
    /// When set, embedding stops once this much time has passed (batches
    /// already started finish): a live query trades the last, least
    /// promising passages for latency. Cached passages cost nothing.
    deadline: Option<Duration>,
    /// Weight of the semantic relevance ([`SEMANTIC_WEIGHT`] unless an
    /// evaluation explores another).
    weight: f32,
}

/// Passages embedded per step when a deadline applies.
const STEP: usize = 4;

impl<'a> Semantic<'a> {
    pub fn new(embedder: &'a dyn Embedder, question: &str, budget: usize) -> Result<Semantic<'a>> {
        let question = embedder.embed(&[question])?.pop().unwrap_or_default();
        Ok(Semantic {
            embedder,
            question,
            budget,
            deadline: None,
            weight: SEMANTIC_WEIGHT,
        })
    }

    /// Mixes with another semantic weight (for `quarry eval-ranking`).
    pub fn with_weight(mut self, weight: f32) -> Semantic<'a> {
        self.weight = weight.clamp(0.0, 1.0);
        self
    }

    /// Stops embedding after `deadline` (see the field).
    pub fn with_deadline(mut self, deadline: Duration) -> Semantic<'a> {
        self.deadline = Some(deadline);
        self
    }

    /// Fused relevance of each passage, given its lexical relevance.
    pub fn fuse(&self, passages: &[&str], lexical: &[f32]) -> Result<Vec<f32>> {
        let mut order: Vec<usize> = (0..passages.len()).collect();
        order.sort_by(|&a, &b| lexical[b].total_cmp(&lexical[a]).then(a.cmp(&b)));
        order.truncate(self.budget);
        let mut fused: Vec<f32> = lexical
            .iter()
            .map(|&l| (1.0 - self.weight).max(KEYWORD_ONLY_SHARE) * l)
            .collect();
        let started = Instant::now();
        let step = if self.deadline.is_some() {
            STEP
        } else {
            order.len().max(1)
        };
        for batch in order.chunks(step) {
            if self.deadline.is_some_and(|d| started.elapsed() >= d) {
                break;
            }
            let texts: Vec<&str> = batch.iter().map(|&i| passages[i]).collect();
            for (&i, vector) in batch.iter().zip(&self.embedder.embed(&texts)?) {
                let semantic = semantic_relevance(cosine(&self.question, vector));
                fused[i] =
                    (self.weight * semantic + (1.0 - self.weight) * lexical[i]).clamp(0.0, 1.0);
            }
        }
        Ok(fused)
    }
}

fn semantic_relevance(cosine: f32) -> f32 {
    ((cosine - COSINE_FLOOR) / (COSINE_CEILING - COSINE_FLOOR)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors from a table: the "embedding" of a text is looked up.
    struct Table(Vec<(&'static str, Vec<f32>)>);

    impl Embedder for Table {
        fn name(&self) -> &str {
            "table"
        }

        fn dimensions(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| {
                    self.0
                        .iter()
                        .find(|(k, _)| k == t)
                        .map(|(_, v)| v.clone())
                        .unwrap()
                })
                .collect())
        }
    }

    #[test]
    fn meaning_can_outrank_words_and_scores_stay_in_range() {
        let table = Table(vec![
            ("q", vec![1.0, 0.0]),
            ("same words", vec![0.0, 1.0]),
            ("same meaning", vec![0.8, 0.6]),
        ]);
        let semantic = Semantic::new(&table, "q", 10).unwrap();
        let fused = semantic
            .fuse(&["same words", "same meaning"], &[0.6, 0.1])
            .unwrap();
        assert!(fused[1] > fused[0], "{fused:?}");
        assert!(fused.iter().all(|f| (0.0..=1.0).contains(f)));
    }

    #[test]
    fn the_budget_bounds_what_is_embedded() {
        let table = Table(vec![("q", vec![1.0, 0.0]), ("a", vec![1.0, 0.0])]);
        let semantic = Semantic::new(&table, "q", 1).unwrap();
        // "b" is not in the table: it must not be embedded.
        let fused = semantic.fuse(&["a", "b"], &[0.5, 0.4]).unwrap();
        assert!(fused[0] > fused[1]);
        assert!((fused[1] - (1.0 - SEMANTIC_WEIGHT).max(KEYWORD_ONLY_SHARE) * 0.4).abs() < 1e-6);
    }
}
