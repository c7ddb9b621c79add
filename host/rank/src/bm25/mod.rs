//! BM25: a keyword score over the passages of one query.
//!
//! The corpus is the candidate set (every passage of every record the
//! connectors returned for this query), not a global index: Quarry stores
//! nothing from the tools ahead of time. Term rarity is therefore measured
//! among the candidates, which is what separates them.
//!
//! - this file: the statistics, the scores and their relevance scale;
//! - [`tokens`]: text cut into the tokens that are counted.

mod tokens;

use std::collections::HashMap;

use super::words::{collapse_whitespace, is_word_char};

pub use tokens::tokenize;

/// Term-frequency saturation: the usual Okapi value.
const K1: f64 = 1.2;
/// Length normalisation: the usual Okapi value.
const B: f64 = 0.75;

/// Corpus statistics for BM25 over one query's passages.
#[derive(Debug)]
pub struct Bm25 {
    /// Token to its index in `document_frequency`.
    vocabulary: HashMap<String, usize>,
    /// How many passages contain each token.
    document_frequency: Vec<u32>,
    passages: Vec<PassageStats>,
    average_length: f64,
}

#[derive(Debug)]
struct PassageStats {
    /// (token index, count), sorted by token index.
    frequencies: Vec<(usize, u32)>,
    length: u32,
    /// The text lower-cased with whitespace collapsed, for phrase matches.
    lowered: String,
}

impl PassageStats {
    fn frequency(&self, token: usize) -> u32 {
        self.frequencies
            .binary_search_by_key(&token, |(index, _)| *index)
            .map_or(0, |found| self.frequencies[found].1)
    }
}

impl Bm25 {
    /// Statistics over `passages`; `score` refers to them by position.
    pub fn new<'a>(passages: impl IntoIterator<Item = &'a str>) -> Bm25 {
        let mut vocabulary: HashMap<String, usize> = HashMap::new();
        let mut document_frequency: Vec<u32> = Vec::new();
        let mut stats = Vec::new();
        for text in passages {
            let tokens = tokenize(text);
            let mut counts: HashMap<usize, u32> = HashMap::new();
            for token in &tokens {
                let next = vocabulary.len();
                let index = *vocabulary.entry(token.clone()).or_insert(next);
                if index == document_frequency.len() {
                    document_frequency.push(0);
                }
                *counts.entry(index).or_insert(0) += 1;
            }
            for index in counts.keys() {
                document_frequency[*index] += 1;
            }
            let mut frequencies: Vec<(usize, u32)> = counts.into_iter().collect();
            frequencies.sort_unstable();
            stats.push(PassageStats {
                frequencies,
                length: tokens.len() as u32,
                lowered: collapse_whitespace(text).to_lowercase(),
            });
        }
        let total: f64 = stats.iter().map(|s| f64::from(s.length)).sum();
        let average_length = if stats.is_empty() {
            0.0
        } else {
            total / stats.len() as f64
        };
        Bm25 {
            vocabulary,
            document_frequency,
            passages: stats,
            average_length,
        }
    }

    /// How many passages the statistics cover.
    pub fn len(&self) -> usize {
        self.passages.len()
    }

    /// Whether the corpus has no passage.
    pub fn is_empty(&self) -> bool {
        self.passages.is_empty()
    }

    /// The Okapi BM25 score of passage `passage_index` for the query terms
    /// (tokenized like the passages; repeated terms count once), plus, for
    /// each phrase found verbatim (case-insensitive, on word boundaries),
    /// the idf of its tokens: the words in the order the user quoted them
    /// are stronger evidence than the words anywhere. 0 for an index out
    /// of range.
    pub fn score(&self, query_terms: &[String], phrases: &[String], passage_index: usize) -> f32 {
        self.query(query_terms, phrases).score(passage_index)
    }

    /// The positions of the `k` passages that score highest (and above 0),
    /// best first, ties by position: a keyword search engine's top `k`.
    pub fn top(&self, query_terms: &[String], phrases: &[String], k: usize) -> Vec<usize> {
        let query = self.query(query_terms, phrases);
        let mut hits: Vec<(usize, f32)> = (0..self.len())
            .map(|i| (i, query.score(i)))
            .filter(|(_, score)| *score > 0.0)
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.into_iter().take(k).map(|(i, _)| i).collect()
    }

    /// Maps a raw score to [0, 1] so that it means the same across queries
    /// and corpora: `1 - exp(-raw / S)`, where `S` is the sum of the idf of
    /// the distinct query tokens. A passage of average length that holds
    /// every query token once scores `raw = S`, about 0.63; half the query,
    /// less; repetitions and phrases approach 1. 0 for no match, an empty
    /// query or an empty corpus, and never NaN.
    pub fn relevance(&self, raw: f32, query_terms: &[String]) -> f32 {
        let scale: f64 = distinct_tokens(query_terms)
            .iter()
            .map(|token| self.idf(token))
            .sum();
        saturate(f64::from(raw), scale)
    }

    /// The query prepared once for scoring many passages.
    pub(crate) fn query(&self, query_terms: &[String], phrases: &[String]) -> Query<'_> {
        let tokens = distinct_tokens(query_terms);
        let terms = tokens
            .iter()
            .filter_map(|token| {
                self.vocabulary
                    .get(token)
                    .map(|index| (*index, self.idf(token)))
            })
            .collect();
        let phrases = phrases
            .iter()
            .map(|phrase| collapse_whitespace(phrase).to_lowercase())
            .filter(|phrase| !phrase.is_empty())
            .map(|phrase| {
                let bonus = distinct_tokens(std::slice::from_ref(&phrase))
                    .iter()
                    .map(|token| self.idf(token))
                    .sum();
                (phrase, bonus)
            })
            .collect();
        let scale = tokens.iter().map(|token| self.idf(token)).sum();
        Query {
            corpus: self,
            terms,
            phrases,
            scale,
        }
    }

    /// Inverse document frequency, in the form that is never negative
    /// (Lucene's): a token in every passage still counts a little.
    fn idf(&self, token: &str) -> f64 {
        let total = self.passages.len() as f64;
        let containing = self
            .vocabulary
            .get(token)
            .map_or(0.0, |index| f64::from(self.document_frequency[*index]));
        (1.0 + (total - containing + 0.5) / (containing + 0.5)).ln()
    }
}

/// A query against one corpus: token indices with their idf, phrases with
/// their bonus, and the relevance scale.
pub(crate) struct Query<'a> {
    corpus: &'a Bm25,
    terms: Vec<(usize, f64)>,
    phrases: Vec<(String, f64)>,
    scale: f64,
}

impl Query<'_> {
    pub(crate) fn score(&self, passage_index: usize) -> f32 {
        let Some(passage) = self.corpus.passages.get(passage_index) else {
            return 0.0;
        };
        let average = self.corpus.average_length.max(1.0);
        let length_norm = 1.0 - B + B * f64::from(passage.length) / average;
        let terms: f64 = self
            .terms
            .iter()
            .map(|(token, idf)| {
                let frequency = f64::from(passage.frequency(*token));
                idf * frequency * (K1 + 1.0) / (frequency + K1 * length_norm)
            })
            .sum();
        let phrases: f64 = self
            .phrases
            .iter()
            .filter(|(phrase, _)| contains_phrase(&passage.lowered, phrase))
            .map(|(_, bonus)| bonus)
            .sum();
        (terms + phrases) as f32
    }

    /// [`Bm25::relevance`] without tokenizing the query again.
    pub(crate) fn relevance(&self, raw: f32) -> f32 {
        saturate(f64::from(raw), self.scale)
    }
}

fn saturate(raw: f64, scale: f64) -> f32 {
    if !(raw > 0.0 && raw.is_finite() && scale > 0.0 && scale.is_finite()) {
        return 0.0;
    }
    let relevance = 1.0 - (-raw / scale).exp();
    (relevance as f32).clamp(0.0, 1.0)
}

/// The tokens of the terms, each once, in order (the order keeps float sums
/// identical from run to run).
fn distinct_tokens(terms: &[String]) -> Vec<String> {
    let mut distinct: Vec<String> = Vec::new();
    for token in terms.iter().flat_map(|term| tokenize(term)) {
        if !distinct.contains(&token) {
            distinct.push(token);
        }
    }
    distinct
}

/// Whether `phrase` occurs in `text` as whole words: "cat" is not in
/// "category". Both are lower-cased with whitespace collapsed.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(start, found)| {
        let before = text[..start].chars().next_back();
        let after = text[start + found.len()..].chars().next();
        let glued_before = phrase.starts_with(is_word_char) && before.is_some_and(is_word_char);
        let glued_after = phrase.ends_with(is_word_char) && after.is_some_and(is_word_char);
        !(glued_before || glued_after)
    })
}

#[cfg(test)]
mod tests;
