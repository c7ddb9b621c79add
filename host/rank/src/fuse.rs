//! One relevance scale for every passage, whatever ranked it.
//!
//! BM25 finds the records that use the question's words; the embedding
//! finds the ones that mean the same thing in other words. The model's
//! cosine is mapped to [0, 1] on a fixed range (not normalised per query,
//! so that a score means the same across connectors and queries), and
//! where a passage was embedded its meaning decides ([`SEMANTIC_WEIGHT`]).
//!
//! A passage the model did not reach in time is placed on the same scale
//! by [`keyword_on_model_scale`]: the model relevance that passages with
//! that keyword relevance have on average, measured on evaluation data
//! (`quarry eval-ranking DIR --calibrate` prints the table). So an
//! assistant that merges chunks across connectors by score compares like
//! with like, and a chunk's score does not depend on whether the model
//! happened to reach it.

use anyhow::Result;

use super::embed::{Embedder, cosine};

/// Weight of the semantic relevance in the fused score of an embedded
/// passage. Measured on `ir-dbpedia` (BM25 top-100 re-ranked, nDCG@10):
/// 0.6 → 0.462, 0.75 → 0.486, 0.85 → 0.487, 0.95 → 0.497, 1.0 → 0.500.
/// BM25 over only the candidates is a weak signal next to the model, so
/// where a passage is embedded its meaning decides.
pub const SEMANTIC_WEIGHT: f32 = 1.0;
/// Cosine similarities of all-MiniLM-L6-v2 between a question and an
/// unrelated passage sit near 0.05; a passage that answers it, 0.5 to 0.8.
/// This range maps onto [0, 1].
const COSINE_FLOOR: f32 = 0.05;
const COSINE_CEILING: f32 = 0.75;

/// Keyword relevance → the mean model relevance of passages with that
/// keyword relevance, at knots 0.0, 0.1, …, 1.0 (linear in between).
/// Measured on `ir-dbpedia` with `quarry eval-ranking --calibrate` (BM25
/// top-100 candidates of the 50 judged queries; monotone by pooling).
const CALIBRATION: [f32; 11] = [
    0.214, 0.345, 0.345, 0.405, 0.450, 0.469, 0.483, 0.535, 0.679, 0.679, 0.679,
];

/// The model relevance a passage with keyword relevance `lexical` has on
/// average: where a passage that was not embedded sits on the model's
/// scale.
pub fn keyword_on_model_scale(lexical: f32) -> f32 {
    let x = lexical.clamp(0.0, 1.0) * 10.0;
    let low = (x.floor() as usize).min(9);
    let t = x - low as f32;
    CALIBRATION[low] * (1.0 - t) + CALIBRATION[low + 1] * t
}

/// The relevance of an embedded passage: its cosine with the question on
/// the model's scale, mixed with its keyword relevance by `weight`.
pub fn fused(cosine: f32, lexical: f32, weight: f32) -> f32 {
    (weight * semantic_relevance(cosine) + (1.0 - weight) * lexical).clamp(0.0, 1.0)
}

/// A cosine on the model's scale, in [0, 1].
pub fn semantic_relevance(cosine: f32) -> f32 {
    ((cosine - COSINE_FLOOR) / (COSINE_CEILING - COSINE_FLOOR)).clamp(0.0, 1.0)
}

/// The cosine whose [`semantic_relevance`] is `relevance`: where a passage
/// placed on the model's scale sits among cosines (the archive compares
/// by cosine).
pub fn cosine_of_relevance(relevance: f32) -> f32 {
    COSINE_FLOOR + relevance.clamp(0.0, 1.0) * (COSINE_CEILING - COSINE_FLOOR)
}

/// The semantic stage of one offline ranking: the embedder and the
/// question's vector. (Live queries embed through the
/// [`super::Scheduler`], which overlaps embedding with the connectors.)
pub struct Semantic<'a> {
    embedder: &'a dyn Embedder,
    question: Vec<f32>,
    /// At most this many passages are embedded (the best by BM25 first);
    /// the rest are ranked by their words.
    budget: usize,
    /// Weight of the semantic relevance ([`SEMANTIC_WEIGHT`] unless an
    /// evaluation explores another).
    weight: f32,
}

impl<'a> Semantic<'a> {
    pub fn new(embedder: &'a dyn Embedder, question: &str, budget: usize) -> Result<Semantic<'a>> {
        let question = embedder.embed(&[question])?.pop().unwrap_or_default();
        Ok(Semantic {
            embedder,
            question,
            budget,
            weight: SEMANTIC_WEIGHT,
        })
    }

    /// Mixes with another semantic weight (for `quarry eval-ranking`).
    pub fn with_weight(mut self, weight: f32) -> Semantic<'a> {
        self.weight = weight.clamp(0.0, 1.0);
        self
    }

    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// The cosine of each passage with the question, for the `budget`
    /// passages of highest lexical relevance (`None` for the others).
    pub fn similarities(&self, passages: &[&str], lexical: &[f32]) -> Result<Vec<Option<f32>>> {
        let mut order: Vec<usize> = (0..passages.len()).collect();
        order.sort_by(|&a, &b| lexical[b].total_cmp(&lexical[a]).then(a.cmp(&b)));
        order.truncate(self.budget);
        let texts: Vec<&str> = order.iter().map(|&i| passages[i]).collect();
        let mut similarity = vec![None; passages.len()];
        for (&i, vector) in order.iter().zip(&self.embedder.embed(&texts)?) {
            similarity[i] = Some(cosine(&self.question, vector));
        }
        Ok(similarity)
    }
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
        let lexical = [0.6, 0.1];
        let similarity = semantic
            .similarities(&["same words", "same meaning"], &lexical)
            .unwrap();
        let fused: Vec<f32> = similarity
            .iter()
            .zip(lexical)
            .map(|(s, l)| fused(s.unwrap(), l, SEMANTIC_WEIGHT))
            .collect();
        assert!(fused[1] > fused[0], "{fused:?}");
        assert!(fused.iter().all(|f| (0.0..=1.0).contains(f)));
    }

    #[test]
    fn the_budget_bounds_what_is_embedded() {
        let table = Table(vec![("q", vec![1.0, 0.0]), ("a", vec![1.0, 0.0])]);
        let semantic = Semantic::new(&table, "q", 1).unwrap();
        // "b" is not in the table: it must not be embedded.
        let similarity = semantic.similarities(&["a", "b"], &[0.5, 0.4]).unwrap();
        assert!(similarity[0].is_some());
        assert_eq!(similarity[1], None);
    }

    #[test]
    fn the_calibration_is_monotone_and_on_the_model_scale() {
        let mut previous = 0.0;
        for step in 0..=100 {
            let value = keyword_on_model_scale(step as f32 / 100.0);
            assert!((0.0..=1.0).contains(&value));
            assert!(value >= previous, "at {step}: {value} < {previous}");
            previous = value;
        }
        assert_eq!(keyword_on_model_scale(0.0), CALIBRATION[0]);
        assert_eq!(keyword_on_model_scale(1.0), CALIBRATION[10]);
        assert_eq!(keyword_on_model_scale(7.0), CALIBRATION[10]);
    }
}
