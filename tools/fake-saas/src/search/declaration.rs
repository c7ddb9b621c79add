//! A vendor's search, declared: how its engine reads a query and which
//! records it answers with, each rule with the documentation page it comes
//! from.
//!
//! A declaration is data (`declarations/<vendor>.toml`, or `search.toml` in
//! a fixtures folder), read by the one engine in [`super::index`]. Every
//! rule says where it comes from: `source` (the vendor's documentation
//! page, with a `quote` of the sentence) or `silent` (the documentation
//! says nothing; what the fake assumes, and why).

use std::collections::BTreeSet;

use serde::Deserialize;

use super::text::Stemming;

/// How a vendor's search reads a query and what it returns.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    /// The vendor (`github`), as in token names.
    pub vendor: String,
    /// The request the declaration is about (`GET https://api.github.com/search/issues`).
    pub endpoint: String,
    /// How words without an operator between them combine.
    pub implicit: Rule<Combine>,
    /// The operators the query text understands (`OR`, `AND`, `NOT`, `-`
    /// before a word, `()`); any other is an ordinary word.
    pub operators: Rule<BTreeSet<Operator>>,
    /// At most this many `AND`/`OR`/`NOT` operators in one query.
    #[serde(default)]
    pub max_operators: Option<Rule<usize>>,
    /// Whether `"quoted phrases"` match as phrases (else their words are
    /// ordinary words).
    pub phrases: Rule<bool>,
    /// How a query word matches a word of a record.
    #[serde(default)]
    pub matching: Option<Rule<Matching>>,
    /// The record fields the text is searched in, by the names the fake's
    /// records give them (`title`, `body`...).
    pub fields: Rule<Vec<String>>,
    /// The word endings the engine ignores.
    pub stemming: Rule<Stemming>,
    /// Whether the engine drops common words from queries.
    pub stop_words: Rule<bool>,
    /// The order of the answer when the request asks for none.
    pub order: Rule<Order>,
    /// The page sizes the endpoint takes.
    pub page_size: Rule<PageSize>,
    /// How many results paging can reach at most.
    #[serde(default)]
    pub max_results: Option<Rule<usize>>,
    /// What the vendor allows per token before it refuses, and how it refuses.
    #[serde(default)]
    pub rate_limit: Option<Rule<RateLimit>>,
}

/// One rule and where it comes from.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule<T> {
    pub value: T,
    /// The vendor's documentation page that states the rule.
    #[serde(default)]
    pub source: Option<String>,
    /// The sentence of that page, quoted.
    #[serde(default)]
    pub quote: Option<String>,
    /// Where the documentation is silent: what the fake assumes, and why.
    #[serde(default)]
    pub silent: Option<String>,
}

impl<T> std::ops::Deref for Rule<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Every word must match (implicit AND).
    All,
    /// Any word may match (implicit OR).
    Any,
    /// The words are one string, matched as a phrase (Sentry's raw search:
    /// "you can provide one string, and the query uses that entire string").
    Phrase,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operator {
    #[serde(rename = "OR")]
    Or,
    #[serde(rename = "AND")]
    And,
    #[serde(rename = "NOT")]
    Not,
    /// `-word`: the word must not match.
    #[serde(rename = "-")]
    Minus,
    #[serde(rename = "()")]
    Parentheses,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Matching {
    /// A query word matches a whole word of the record.
    #[default]
    Words,
    /// A query word matches any word of the record it begins.
    Prefix,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// The best matches first. No vendor publishes its relevance function;
    /// the fake ranks by BM25 (Elasticsearch's and Lucene's default
    /// similarity), newest first among equals.
    Relevance,
    /// The most recently updated first.
    Newest,
    /// An order the vendor leaves unspecified but stable (Google Calendar's
    /// events.list): the fake keeps its records' own order.
    Stored,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PageSize {
    pub default: usize,
    pub max: usize,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Requests allowed per window and token.
    pub requests: u32,
    pub per_seconds: u32,
    /// The status of the refusal (429, or GitHub's 403).
    pub status: u16,
}

impl Declaration {
    /// Parses a declaration and checks that every rule says where it comes
    /// from.
    pub fn from_toml(text: &str) -> Result<Declaration, String> {
        let declaration: Declaration = toml::from_str(text).map_err(|e| e.to_string())?;
        let unsourced = declaration.unsourced_rules();
        if !unsourced.is_empty() {
            return Err(format!(
                "{}: every rule needs a `source` (the documentation page) or a `silent` (what the fake assumes): {}",
                declaration.vendor,
                unsourced.join(", ")
            ));
        }
        if declaration.page_size.default > declaration.page_size.max {
            return Err(format!(
                "{}: page_size.default is above page_size.max",
                declaration.vendor
            ));
        }
        Ok(declaration)
    }

    fn unsourced_rules(&self) -> Vec<&'static str> {
        fn sourced<T>(rule: &Rule<T>) -> bool {
            let has = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.trim().is_empty());
            has(&rule.source) != has(&rule.silent)
        }
        let mut missing = Vec::new();
        let mut check = |name, ok: bool| {
            if !ok {
                missing.push(name);
            }
        };
        check("implicit", sourced(&self.implicit));
        check("operators", sourced(&self.operators));
        check(
            "max_operators",
            self.max_operators.as_ref().is_none_or(sourced),
        );
        check("phrases", sourced(&self.phrases));
        check("matching", self.matching.as_ref().is_none_or(sourced));
        check("fields", sourced(&self.fields));
        check("stemming", sourced(&self.stemming));
        check("stop_words", sourced(&self.stop_words));
        check("order", sourced(&self.order));
        check("page_size", sourced(&self.page_size));
        check("max_results", self.max_results.as_ref().is_none_or(sourced));
        check("rate_limit", self.rate_limit.as_ref().is_none_or(sourced));
        missing
    }

    pub fn understands(&self, operator: Operator) -> bool {
        self.operators.contains(&operator)
    }

    pub fn matching(&self) -> Matching {
        self.matching.as_ref().map(|m| m.value).unwrap_or_default()
    }

    /// The same engine matching words as `matching` says (a request's own
    /// option, such as Trello's `partial`).
    pub fn with_matching(&self, matching: Matching, why: &str) -> Declaration {
        Declaration {
            matching: Some(Rule {
                value: matching,
                source: None,
                quote: None,
                silent: Some(why.to_string()),
            }),
            ..self.clone()
        }
    }

    /// A page size the client asked for, within the vendor's maximum
    /// (vendors clamp rather than refuse unless the fake says otherwise).
    pub fn page_size_for(&self, asked: Option<usize>) -> usize {
        asked
            .unwrap_or(self.page_size.default)
            .clamp(1, self.page_size.max)
    }
}
