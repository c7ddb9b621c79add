//! BM25: a keyword score over the passages of one query.
//!
//! The corpus is the candidate set (every passage of every record the
//! connectors returned for this query), not a global index: Quarry stores
//! nothing from the tools ahead of time. Term rarity is therefore measured
//! among the candidates, which is what separates them.

use std::collections::HashMap;

use super::words::{
    collapse_whitespace, is_cjk, is_long_enough, is_part_separator, is_word_char, stem, words,
};

/// Term-frequency saturation: the usual Okapi value.
const K1: f64 = 1.2;
/// Length normalisation: the usual Okapi value.
const B: f64 = 0.75;

/// The tokens of `text`: the words (same rules as the query planner's
/// terms, without stop-word removal), lower-cased and lightly stemmed, each
/// followed by its parts when it is a compound ("acme-123" gives
/// "acme-123", "acme", "123") so that "ACME-123" is found by "acme" and by
/// "ACME-123" alike. A run of Chinese, Japanese or Korean characters is
/// also cut into overlapping pairs, the usual way to match words in text
/// written without spaces.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in words(text) {
        let parts = parts(&word);
        push_token(&mut tokens, &word);
        for part in parts.iter().filter(|part| **part != word) {
            push_token(&mut tokens, part);
        }
    }
    tokens
}

fn push_token(tokens: &mut Vec<String>, word: &str) {
    if is_long_enough(word) {
        tokens.push(stem(word).to_string());
    }
}

/// The distinct parts of a compound word and the character pairs of its
/// CJK runs.
fn parts(word: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut add = |part: String| {
        if !part.is_empty() && !parts.contains(&part) {
            parts.push(part);
        }
    };
    if word.contains(is_part_separator) {
        word.split(is_part_separator)
            .for_each(|part| add(part.to_string()));
    }
    for run in cjk_runs(word) {
        if run.len() >= 2 {
            run.windows(2).for_each(|pair| add(pair.iter().collect()));
        }
    }
    parts
}

fn cjk_runs(word: &str) -> Vec<Vec<char>> {
    let mut runs = Vec::new();
    let mut current = Vec::new();
    for c in word.chars() {
        if is_cjk(c) {
            current.push(c);
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

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
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tokenizes_compounds_into_parts() {
        assert_eq!(tokenize("ACME-123"), ["acme-123", "acme", "123"]);
        assert_eq!(
            tokenize("see v2.1, #482"),
            ["see", "v2.1", "v2", "#482", "482"]
        );
        assert_eq!(tokenize("acme/shop"), ["acme/shop", "acme", "shop"]);
        assert_eq!(
            tokenize("bob@acme.com"),
            ["bob@acme.com", "bob", "acme", "com"]
        );
        assert_eq!(tokenize("a-a-b"), ["a-a-b"]);
        assert_eq!(
            tokenize("C++ google+api"),
            ["c++", "google+api", "google", "api"]
        );
    }

    #[test]
    fn tokenizes_like_the_planner_without_stop_words() {
        assert_eq!(
            tokenize("What is the status?"),
            ["what", "is", "the", "statu"]
        );
        assert_eq!(tokenize("I saw a bug"), ["saw", "bug"]);
    }

    #[test]
    fn stems_plurals_the_same_on_both_sides() {
        assert_eq!(tokenize("Timeouts"), tokenize("timeout"));
        assert_eq!(tokenize("class bus"), ["class", "bus"]);
        assert_eq!(tokenize("acme-apps"), ["acme-app", "acme", "app"]);
    }

    #[test]
    fn tokenizes_unicode() {
        assert_eq!(tokenize("Café Über"), ["café", "über"]);
        assert_eq!(
            tokenize("検索エンジン"),
            ["検索エンジン", "検索", "索エ", "エン", "ンジ", "ジン"]
        );
        assert_eq!(tokenize("設計"), ["設計"]);
        assert_eq!(
            tokenize("iphone用アプリ"),
            ["iphone用アプリ", "用ア", "アプ", "プリ"]
        );
    }

    #[test]
    fn contains_phrase_on_word_boundaries() {
        assert!(contains_phrase(
            "the checkout timeout again",
            "checkout timeout"
        ));
        assert!(contains_phrase("checkout timeout", "checkout timeout"));
        assert!(!contains_phrase(
            "the checkout timeouts",
            "checkout timeout"
        ));
        assert!(!contains_phrase("category", "cat"));
        assert!(contains_phrase("a cat, then category", "cat"));
        assert!(contains_phrase("version v2.1!", "v2.1!"));
    }

    fn corpus() -> Vec<&'static str> {
        vec![
            "Checkout timeout after the payment provider upgrade",
            "Payment provider upgrade notes for the quarter",
            "Lunch menu for Friday",
            "Checkout timeout checkout timeout: the checkout page times out again and again",
            "The team offsite agenda and travel",
        ]
    }

    #[test]
    fn ranks_matching_passages_first() {
        let passages = corpus();
        let bm25 = Bm25::new(passages.iter().copied());
        let query = strings(&["checkout", "timeout"]);
        let scores: Vec<f32> = (0..passages.len())
            .map(|i| bm25.score(&query, &[], i))
            .collect();
        assert!(scores[3] > scores[0], "{scores:?}");
        assert!(scores[0] > 0.0);
        assert_eq!(scores[1], 0.0);
        assert_eq!(scores[2], 0.0);
        assert_eq!(scores[4], 0.0);
    }

    #[test]
    fn rare_terms_weigh_more() {
        let bm25 = Bm25::new(corpus());
        let rare = bm25.score(&strings(&["lunch"]), &[], 2);
        let common = bm25.score(&strings(&["payment"]), &[], 1);
        assert!(rare > common, "{rare} {common}");
    }

    #[test]
    fn shorter_passages_win_at_equal_frequency() {
        let bm25 = Bm25::new([
            "deploy failed",
            "deploy failed while the team was looking at many other unrelated things",
        ]);
        let query = strings(&["deploy"]);
        assert!(bm25.score(&query, &[], 0) > bm25.score(&query, &[], 1));
    }

    #[test]
    fn repeated_query_terms_count_once() {
        let bm25 = Bm25::new(corpus());
        let once = bm25.score(&strings(&["checkout"]), &[], 0);
        let twice = bm25.score(&strings(&["checkout", "Checkouts"]), &[], 0);
        assert_eq!(once, twice);
    }

    #[test]
    fn phrases_add_a_bonus() {
        let bm25 = Bm25::new([
            "the checkout timeout is back",
            "timeout on the checkout page",
        ]);
        let query = strings(&["checkout", "timeout"]);
        let phrase = strings(&["Checkout  Timeout"]);
        let plain = bm25.score(&query, &[], 0);
        assert!(bm25.score(&query, &phrase, 0) > plain);
        assert_eq!(bm25.score(&query, &phrase, 1), bm25.score(&query, &[], 1));
    }

    #[test]
    fn compounds_match_their_parts() {
        let bm25 = Bm25::new(["Fixed in ACME-123 yesterday", "acme shop", "nothing here"]);
        let query = strings(&["acme-123"]);
        let exact = bm25.score(&query, &[], 0);
        let partial = bm25.score(&query, &[], 1);
        assert!(exact > partial && partial > 0.0, "{exact} {partial}");
        assert_eq!(bm25.score(&query, &[], 2), 0.0);
    }

    #[test]
    fn relevance_of_a_full_match_at_average_length_is_about_063() {
        // Every passage has the same length, so each is at average length.
        let bm25 = Bm25::new(["alpha beta", "gamma delta", "alpha delta"]);
        let query = strings(&["alpha", "beta"]);
        let raw = bm25.score(&query, &[], 0);
        let relevance = bm25.relevance(raw, &query);
        assert!(
            (relevance - (1.0 - (-1.0f32).exp())).abs() < 1e-4,
            "{relevance}"
        );
        let half = bm25.relevance(bm25.score(&query, &[], 2), &query);
        assert!(half > 0.0 && half < relevance);
        assert_eq!(bm25.relevance(bm25.score(&query, &[], 1), &query), 0.0);
    }

    #[test]
    fn relevance_is_bounded_and_finite() {
        let bm25 = Bm25::new(corpus());
        let query = strings(&["checkout"]);
        for raw in [
            0.0,
            -1.0,
            1e-30,
            1.0,
            1e30,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            f32::NEG_INFINITY,
        ] {
            let relevance = bm25.relevance(raw, &query);
            assert!((0.0..=1.0).contains(&relevance), "{raw} -> {relevance}");
        }
        assert_eq!(bm25.relevance(f32::NAN, &query), 0.0);
        assert_eq!(bm25.relevance(5.0, &[]), 0.0);
        assert_eq!(bm25.relevance(5.0, &strings(&["", "!!"])), 0.0);
    }

    #[test]
    fn empty_corpus_and_empty_query() {
        let empty = Bm25::new(std::iter::empty());
        assert!(empty.is_empty());
        let query = strings(&["checkout"]);
        assert_eq!(empty.score(&query, &[], 0), 0.0);
        let relevance = empty.relevance(1.0, &query);
        assert!((0.0..=1.0).contains(&relevance));
        let bm25 = Bm25::new(["", "   "]);
        assert_eq!(bm25.len(), 2);
        assert_eq!(bm25.score(&query, &strings(&["checkout"]), 0), 0.0);
        let bm25 = Bm25::new(corpus());
        assert_eq!(bm25.score(&[], &[], 0), 0.0);
        assert_eq!(bm25.score(&query, &[], 99), 0.0);
    }

    #[test]
    fn scores_are_deterministic() {
        let passages = corpus();
        let query = strings(&["checkout", "payment", "provider", "timeout", "upgrade"]);
        let first: Vec<f32> = {
            let bm25 = Bm25::new(passages.iter().copied());
            (0..5).map(|i| bm25.score(&query, &[], i)).collect()
        };
        for _ in 0..10 {
            let bm25 = Bm25::new(passages.iter().copied());
            let again: Vec<f32> = (0..5).map(|i| bm25.score(&query, &[], i)).collect();
            assert_eq!(first, again);
        }
    }
}
