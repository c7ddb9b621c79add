//! The one engine behind every fake vendor's search: a vendor's records,
//! tokenized once, searched with that vendor's [`Declaration`].

use std::collections::HashMap;
use std::sync::OnceLock;

use super::declaration::{Declaration, Matching, Order};
use super::query::{Expr, Query};
use super::text::{Stemming, raw_tokens};

/// A vendor's records as searchable texts, in the records' order.
pub struct Index {
    raw: Vec<Vec<String>>,
    views: [OnceLock<View>; Stemming::ALL.len()],
}

/// The records' tokens under one stemming, with the counts BM25 needs.
struct View {
    docs: Vec<Tokens>,
    /// Documents containing each token.
    frequency: HashMap<String, u32>,
    average_length: f64,
}

struct Tokens {
    sequence: Vec<String>,
    counts: HashMap<String, u32>,
}

impl Tokens {
    fn new(sequence: Vec<String>) -> Tokens {
        let mut counts = HashMap::new();
        for token in &sequence {
            *counts.entry(token.clone()).or_insert(0) += 1;
        }
        Tokens { sequence, counts }
    }

    /// How often a word or phrase occurs.
    fn occurrences(&self, term: &Expr, matching: Matching) -> u32 {
        match term {
            Expr::Word(word) => match matching {
                Matching::Words => self.counts.get(word).copied().unwrap_or(0),
                Matching::Prefix => self
                    .counts
                    .iter()
                    .filter(|(token, _)| token.starts_with(word.as_str()))
                    .map(|(_, n)| n)
                    .sum(),
            },
            Expr::Phrase(words) => {
                if words.iter().any(|w| !self.counts.contains_key(w)) {
                    return 0;
                }
                self.sequence
                    .windows(words.len())
                    .filter(|w| *w == words.as_slice())
                    .count() as u32
            }
            _ => 0,
        }
    }
}

/// A record that matched, and how well.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The record's position in the index.
    pub index: usize,
    /// BM25 over the query's words and phrases (0 for an empty query).
    pub score: f64,
}

/// How the hits of a search are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// The engine's own order when the request asks for none.
    Default(Order),
    /// By the record's sort key (a time, a count), as the request asked.
    Key { ascending: bool },
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Index {
    /// Indexes the searchable texts of a vendor's records, in order.
    pub fn new<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> Index {
        Index {
            raw: texts
                .into_iter()
                .map(|t| raw_tokens(t.as_ref()).collect())
                .collect(),
            views: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    fn view(&self, stemming: Stemming) -> &View {
        self.views[stemming.slot()].get_or_init(|| {
            let docs: Vec<Tokens> = self
                .raw
                .iter()
                .map(|tokens| Tokens::new(tokens.iter().map(|t| stemming.stem(t)).collect()))
                .collect();
            let mut frequency = HashMap::new();
            for doc in &docs {
                for token in doc.counts.keys() {
                    *frequency.entry(token.clone()).or_insert(0) += 1;
                }
            }
            let total: usize = docs.iter().map(|d| d.sequence.len()).sum();
            let average_length = total as f64 / docs.len().max(1) as f64;
            View {
                docs,
                frequency,
                average_length,
            }
        })
    }

    /// The records that `keep` lets through and `query` matches, as the
    /// engine `engine` matches, best first (BM25; equal scores in the
    /// records' order).
    pub fn search(
        &self,
        engine: &Declaration,
        query: &Query,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<Hit> {
        self.scored(engine, query, |i| keep(i) && self.matches(i, engine, query))
    }

    /// Every record `keep` lets through, scored by the words and phrases of
    /// `query` it holds (for a query language whose own clauses decide what
    /// matches, such as JQL), best first.
    pub fn scored(
        &self,
        engine: &Declaration,
        query: &Query,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<Hit> {
        let view = self.view(*engine.stemming);
        let matching = engine.matching();
        let terms = query.positive_terms();
        let frequencies: Vec<f64> = terms
            .iter()
            .map(|term| view.frequency_of(term, matching) as f64)
            .collect();
        let total = view.docs.len() as f64;
        let bm25 = |doc: &Tokens| -> f64 {
            terms
                .iter()
                .zip(&frequencies)
                .map(|(term, &df)| {
                    let tf = doc.occurrences(term, matching) as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let idf = (1.0 + (total - df + 0.5) / (df + 0.5)).ln();
                    let length = doc.sequence.len() as f64 / view.average_length.max(1.0);
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length))
                })
                .sum()
        };
        let mut hits: Vec<Hit> = (0..view.docs.len())
            .filter(|&i| keep(i))
            .map(|i| Hit {
                index: i,
                score: bm25(&view.docs[i]),
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        hits
    }

    /// Whether the record at `position` matches `query`, as `engine` matches.
    pub fn matches(&self, position: usize, engine: &Declaration, query: &Query) -> bool {
        let doc = &self.view(*engine.stemming).docs[position];
        let matching = engine.matching();
        query
            .expr
            .as_ref()
            .is_none_or(|expr| expr.holds(&|term| doc.occurrences(term, matching) > 0))
    }
}

impl View {
    fn frequency_of(&self, term: &Expr, matching: Matching) -> u32 {
        match (term, matching) {
            (Expr::Word(word), Matching::Words) => self.frequency.get(word).copied().unwrap_or(0),
            _ => self
                .docs
                .iter()
                .filter(|d| d.occurrences(term, matching) > 0)
                .count() as u32,
        }
    }
}

/// Orders hits as `sort` says, `key` giving each record's sort key (its
/// update time, say).
pub fn sort_hits(hits: &mut [Hit], sort: Sort, key: impl Fn(usize) -> i64) {
    hits.sort_by(|a, b| {
        let by_score = b.score.total_cmp(&a.score);
        let newest = key(b.index).cmp(&key(a.index));
        let then = match sort {
            Sort::Default(Order::Relevance) => by_score.then(newest),
            Sort::Default(Order::Newest) => newest,
            Sort::Default(Order::Stored) => std::cmp::Ordering::Equal,
            Sort::Key { ascending: false } => newest.then(by_score),
            Sort::Key { ascending: true } => newest.reverse().then(by_score),
        };
        then.then(a.index.cmp(&b.index))
    });
}

impl Declaration {
    /// Whether one text (a field, a comment) matches `query` as this engine
    /// matches.
    pub fn matches_text(&self, query: &Query, text: &str) -> bool {
        let Some(expr) = &query.expr else {
            return true;
        };
        let doc = Tokens::new(raw_tokens(text).map(|t| self.stemming.stem(&t)).collect());
        let matching = self.matching();
        expr.holds(&|term| doc.occurrences(term, matching) > 0)
    }
}
