//! The fake's full-text search semantics, shared by every vendor.
//!
//! * Case-insensitive. Text is cut into tokens at every non-alphanumeric character.
//! * A query is a set of *terms*: its words, minus stop words and one-character words,
//!   plus its `"quoted phrases"` (a phrase keeps all its words, stop words included,
//!   and matches only when those tokens appear consecutively).
//! * Words match whole tokens only (`pay` does not match `payments`). The only stemming
//!   is that a plural `s` is ignored: a token longer than 3 characters that ends in `s`
//!   (but not `ss`, `us` or `is`) loses it, in texts and queries alike (`items` = `item`,
//!   `timeouts` = `timeout`).
//! * A record matches when it contains ANY term. Records are ranked by the number of
//!   distinct terms they contain (more first), then by update time, newest first.
//! * A query without terms (empty, or only stop words) matches every record.

use std::collections::HashSet;

/// Words that are dropped from queries (not from phrases).
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

fn raw_tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| t.to_lowercase())
}

/// Drops a plural `s` (see the module docs).
pub fn normalize(token: &str) -> String {
    let n = token.chars().count();
    if n > 3
        && token.ends_with('s')
        && !token.ends_with("ss")
        && !token.ends_with("us")
        && !token.ends_with("is")
    {
        token[..token.len() - 1].to_string()
    } else {
        token.to_string()
    }
}

/// Lower-cased, normalized alphanumeric tokens of a text.
pub fn tokenize(text: &str) -> Vec<String> {
    raw_tokens(text).map(|t| normalize(&t)).collect()
}

fn is_stop_word(t: &str) -> bool {
    STOP_WORDS.binary_search(&t).is_ok()
}

/// One search term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// A single lower-case token.
    Word(String),
    /// Consecutive lower-case tokens.
    Phrase(Vec<String>),
}

/// A parsed free-text query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub terms: Vec<Term>,
}

/// A pre-tokenized searchable text.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    tokens: Vec<String>,
    set: HashSet<String>,
}

impl Doc {
    pub fn new(text: &str) -> Doc {
        let tokens = tokenize(text);
        let set = tokens.iter().cloned().collect();
        Doc { tokens, set }
    }

    fn contains_phrase(&self, phrase: &[String]) -> bool {
        if phrase.is_empty() || !phrase.iter().all(|t| self.set.contains(t)) {
            return false;
        }
        self.tokens.windows(phrase.len()).any(|w| w == phrase)
    }
}

impl Query {
    /// Parses free text: words and `"quoted phrases"`.
    pub fn parse(text: &str) -> Query {
        let mut q = Query::default();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('"') {
                None => {
                    q.add_words(rest);
                    break;
                }
                Some(i) => {
                    q.add_words(&rest[..i]);
                    let after = &rest[i + 1..];
                    let (phrase, next) = match after.find('"') {
                        Some(j) => (&after[..j], &after[j + 1..]),
                        None => (after, ""),
                    };
                    q.add_phrase(phrase);
                    rest = next;
                }
            }
        }
        q
    }

    fn push(&mut self, t: Term) {
        if !self.terms.contains(&t) {
            self.terms.push(t);
        }
    }

    fn add_words(&mut self, text: &str) {
        for t in raw_tokens(text) {
            if t.chars().count() > 1 && !is_stop_word(&t) {
                self.push(Term::Word(normalize(&t)));
            }
        }
    }

    fn add_phrase(&mut self, text: &str) {
        let toks = tokenize(text);
        match toks.len() {
            0 => {}
            1 => {
                if toks[0].chars().count() > 1 {
                    self.push(Term::Word(toks.into_iter().next().unwrap_or_default()));
                }
            }
            _ => self.push(Term::Phrase(toks)),
        }
    }

    /// Adds the terms of another query.
    pub fn extend(&mut self, other: Query) {
        for t in other.terms {
            self.push(t);
        }
    }

    /// True when the query has no terms (it then matches everything).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Number of distinct terms of the query found in the document.
    pub fn score(&self, doc: &Doc) -> usize {
        self.terms
            .iter()
            .filter(|t| match t {
                Term::Word(w) => doc.set.contains(w),
                Term::Phrase(p) => doc.contains_phrase(p),
            })
            .count()
    }

    /// Whether the document matches: any term found, or the query is empty.
    pub fn matches(&self, doc: &Doc) -> bool {
        self.is_empty() || self.score(doc) > 0
    }

    /// [`Query::score`] for a plain text.
    pub fn score_text(&self, text: &str) -> usize {
        self.score(&Doc::new(text))
    }

    /// [`Query::matches`] for a plain text.
    pub fn matches_text(&self, text: &str) -> bool {
        self.matches(&Doc::new(text))
    }
}

/// Sorts `(index, score, updated_unix)` hits: score descending, then updated descending
/// (or ascending when `ascending`), then index.
pub fn rank(hits: &mut [(usize, usize, i64)], ascending: bool) {
    hits.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(if ascending {
                a.2.cmp(&b.2)
            } else {
                b.2.cmp(&a.2)
            })
            .then(a.0.cmp(&b.0))
    });
}

/// Splits a query on white space, keeping `"quoted strings"` (and `name:"quoted values"`)
/// in one piece, quotes included.
pub fn split_words(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    for c in q.chars() {
        if c == '"' {
            in_quote = !in_quote;
            cur.push(c);
        } else if c.is_whitespace() && !in_quote {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// If `word` looks like `name:value` (name made of letters, `_` or `-`, optionally
/// negated with a leading `-`), returns `(negated, lower-case name, value without quotes)`.
pub fn qualifier(word: &str) -> Option<(bool, String, String)> {
    let (neg, w) = match word.strip_prefix('-') {
        Some(w) => (true, w),
        None => (false, word),
    };
    let i = w.find(':')?;
    let name = &w[..i];
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-')
    {
        return None;
    }
    let value = w[i + 1..].trim_matches('"').to_string();
    Some((neg, name.to_ascii_lowercase(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_sorted() {
        let mut s = STOP_WORDS.to_vec();
        s.sort();
        assert_eq!(s, STOP_WORDS);
    }

    #[test]
    fn parse_and_score() {
        let q = Query::parse("Why does the checkout time out with \"more than 50 items\"? x");
        assert_eq!(
            q.terms,
            vec![
                Term::Word("checkout".into()),
                Term::Word("time".into()),
                Term::Word("out".into()),
                Term::Phrase(vec![
                    "more".into(),
                    "than".into(),
                    "50".into(),
                    "item".into()
                ]),
            ]
        );
        assert_eq!(
            q.score_text("Checkout times out with more than 50 items"),
            4
        );
        assert_eq!(Query::parse("timeouts").score_text("gateway timeout"), 1);
        assert_eq!(Query::parse("status").score_text("statu"), 0);
        assert_eq!(q.score_text("items: more than 50"), 0);
        assert!(Query::parse("the of").matches_text("anything"));
    }

    #[test]
    fn words() {
        assert_eq!(
            split_words(r#"checkout repo:acme/shop "time out" label:"good first" is:pr"#),
            vec![
                "checkout",
                "repo:acme/shop",
                "\"time out\"",
                "label:\"good first\"",
                "is:pr"
            ]
        );
        assert_eq!(
            qualifier("updated:>=2025-01-01"),
            Some((false, "updated".into(), ">=2025-01-01".into()))
        );
        assert_eq!(qualifier("12:30"), None);
    }
}
