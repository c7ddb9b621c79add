//! Queries for real search engines, planned from the host's terms.
//!
//! Vendors' searches are keyword engines with their own rules, and a
//! question of eight words must not become one query that requires all
//! eight: most engines need every word (Slack, Zendesk, Notion's titles),
//! so one rare or misspelt word empties the answer. What a connector sends
//! depends on its engine:
//!
//! - an engine with an `OR` operator (GitHub, JQL, CQL) gets one query:
//!   the phrases and the most specific terms joined by `OR` ([`any_of`]),
//!   within the engine's limit on operators, and ranks by relevance;
//! - an engine that needs every word gets several narrower queries
//!   ([`narrower`]), sent together with `send_all` (one round trip) and
//!   merged ([`merge`]), within the fetch cap and the vendor's rate budget.
//!
//! Which terms are most specific: a term among the 5,000 most common
//! English words is less specific the more common it is; any other word
//! (a name, an identifier, a rare word) and every quoted phrase is more
//! specific than all of them. The list (`common_words.txt`) is the first
//! 5,000 whole words of the vocabulary of the host's embedding model,
//! all-MiniLM-L6-v2 (Apache License 2.0), which orders its words by how
//! often they occur in English text.

use serde_json::Value;

use crate::http::{Request, Response, send_all};
use crate::text::terms_outside_phrases;
use crate::{SearchError, SearchRequest};

/// English words by how common they are, the most common first.
const COMMON_WORDS: &str = include_str!("common_words.txt");

/// A word or phrase to search for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    pub text: String,
    /// A phrase the user quoted: its words consecutive, where the engine
    /// supports phrases.
    pub phrase: bool,
}

impl Term {
    pub fn word(text: &str) -> Term {
        Term {
            text: text.to_string(),
            phrase: false,
        }
    }

    pub fn phrase(text: &str) -> Term {
        Term {
            text: text.to_string(),
            phrase: true,
        }
    }

    /// The term as most engines write it: a phrase in double quotes (its
    /// own double quotes dropped), a word as it is.
    pub fn quoted(&self) -> String {
        if self.phrase {
            format!("\"{}\"", self.text.replace('"', ""))
        } else {
            self.text.clone()
        }
    }
}

/// How common a lower-case word is in English: its rank among the 5,000
/// most common words (0 is "the"), or `None` for any other word.
pub fn commonness(word: &str) -> Option<usize> {
    COMMON_WORDS.lines().position(|common| common == word)
}

/// The request's phrases and the terms outside them, the most specific
/// first; among equally specific ones, in the question's order.
pub fn terms_by_specificity(request: &SearchRequest) -> Vec<Term> {
    let phrases = request.phrases.iter().map(|p| Term::phrase(p));
    let words = terms_outside_phrases(&request.terms, &request.phrases).map(|t| Term::word(t));
    let mut terms: Vec<(usize, Term)> = phrases.chain(words).enumerate().collect();
    // Stable: equals keep the question's order.
    terms.sort_by_key(|(_, term)| std::cmp::Reverse(specificity(term)));
    terms.into_iter().map(|(_, term)| term).collect()
}

/// Higher is more specific.
fn specificity(term: &Term) -> usize {
    if term.phrase {
        return usize::MAX;
    }
    match commonness(&term.text) {
        Some(rank) => rank,
        None => usize::MAX - 1,
    }
}

/// One query for an engine with an OR operator: at most `max_terms` of the
/// most specific terms, each written by `write`, joined by `or` (`" OR "`).
/// Empty when there are none.
pub fn any_of(
    terms: &[Term],
    or: &str,
    max_terms: usize,
    write: impl Fn(&Term) -> String,
) -> String {
    terms
        .iter()
        .take(max_terms.max(1))
        .map(write)
        .collect::<Vec<_>>()
        .join(or)
}

/// Queries for an engine that needs every word of a query, at most
/// `max_queries`, each a list of terms to send together, alternating the
/// precise and the broad: the two most specific terms together, the most
/// specific alone, the second alone, then the other pairs of the three most
/// specific and the third alone. (One or two terms: all of them, then each
/// alone.) A pair finds the records about both; a term alone is seldom
/// empty, so a question still finds something when no record holds two of
/// its words. The precise query comes first: a merge keeps its records
/// first.
pub fn narrower(terms: &[Term], max_queries: usize) -> Vec<Vec<Term>> {
    let mut queries: Vec<Vec<Term>> = Vec::new();
    let mut push = |query: Vec<Term>| {
        if !query.is_empty() && !queries.contains(&query) {
            queries.push(query);
        }
    };
    let pair = |a: usize, b: usize| vec![terms[a].clone(), terms[b].clone()];
    match terms.len() {
        0 => {}
        1 | 2 => {
            push(terms.to_vec());
            terms.iter().for_each(|t| push(vec![t.clone()]));
        }
        _ => {
            push(pair(0, 1));
            push(vec![terms[0].clone()]);
            push(vec![terms[1].clone()]);
            push(pair(0, 2));
            push(pair(1, 2));
            push(vec![terms[2].clone()]);
        }
    }
    queries.truncate(max_queries.max(1));
    queries
}

/// Queries for an engine that needs every word of a query in a short field
/// (Notion searches titles): a title rarely holds two of a long question's
/// words, so the most specific terms go alone; one or two terms as for
/// [`narrower`] (together, then alone).
pub fn narrower_for_titles(terms: &[Term], max_queries: usize) -> Vec<Vec<Term>> {
    if terms.len() <= 2 {
        return narrower(terms, max_queries);
    }
    terms
        .iter()
        .take(max_queries.max(1))
        .map(|term| vec![term.clone()])
        .collect()
}

/// A query's terms as an engine that reads them side by side takes them:
/// phrases quoted, joined by `sep`.
pub fn written(terms: &[Term], sep: &str) -> String {
    terms.iter().map(Term::quoted).collect::<Vec<_>>().join(sep)
}

/// The queries for an engine that needs every word and has no `OR`:
/// [`narrower`] sets of the request's most specific terms, at most `max`,
/// each written with spaces; the question as typed when it has no terms;
/// none when it is blank.
pub fn narrower_queries(request: &SearchRequest, max: usize) -> Vec<String> {
    let terms = terms_by_specificity(request);
    let queries: Vec<String> = narrower(&terms, max)
        .iter()
        .map(|query| written(query, " "))
        .collect();
    match (queries.is_empty(), request.query.trim().is_empty()) {
        (false, _) => queries,
        (true, false) => vec![request.query.clone()],
        (true, true) => Vec::new(),
    }
}

/// Sends the searches of a plan together (one round trip), reads each
/// answer's records with `read`, and merges them ([`merge`]) by `id`, at
/// most `max`. A search that fails costs only its own records; the error
/// is the answer only when every search failed.
pub fn search_all(
    searches: Vec<Request>,
    read: impl Fn(Response) -> Result<Vec<Value>, SearchError>,
    id: impl Fn(&Value) -> String,
    max: usize,
) -> Result<Vec<Value>, SearchError> {
    let mut answers = Vec::new();
    let mut first_error = None;
    for result in send_all(searches) {
        match result.and_then(&read) {
            Ok(records) => answers.push(records),
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    match (answers.is_empty(), first_error) {
        (true, Some(error)) => Err(error),
        _ => Ok(merge(answers, id, max)),
    }
}

/// Merges the answers of several queries, each best first: the first of
/// each, then the second of each..., a record once (the first time `id`
/// gives its id; a record without one, an empty id, is never taken for
/// another), at most `max`.
pub fn merge<T>(answers: Vec<Vec<T>>, id: impl Fn(&T) -> String, max: usize) -> Vec<T> {
    let mut seen = std::collections::HashSet::new();
    let mut merged = Vec::new();
    let mut answers: Vec<std::vec::IntoIter<T>> = answers.into_iter().map(Vec::into_iter).collect();
    while merged.len() < max {
        let mut any = false;
        for answer in answers.iter_mut() {
            let Some(item) = answer.next() else { continue };
            any = true;
            let id = id(&item);
            if (id.is_empty() || seen.insert(id)) && merged.len() < max {
                merged.push(item);
            }
        }
        if !any {
            break;
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrower_queries_fall_back_to_the_question_unless_it_is_blank() {
        let many = SearchRequest::new("x", &["checkout", "timeout", "refund"], &[]);
        let queries = narrower_queries(&many, 2);
        assert_eq!(queries.len(), 2, "{queries:?}");
        assert!(
            queries
                .iter()
                .all(|q| !q.is_empty() && q.split(' ').count() <= 2)
        );
        let stop_words = SearchRequest::new("what is the", &[], &[]);
        assert_eq!(narrower_queries(&stop_words, 2), ["what is the"]);
        let blank = SearchRequest::new("  ", &[], &[]);
        assert!(narrower_queries(&blank, 2).is_empty());
    }

    fn words(terms: &[Term]) -> Vec<String> {
        terms.iter().map(Term::quoted).collect()
    }

    #[test]
    fn the_list_is_of_lower_case_words_most_common_first() {
        assert_eq!(commonness("the"), Some(0));
        assert_eq!(COMMON_WORDS.lines().count(), 5000);
        assert!(COMMON_WORDS.lines().all(|w| w.len() > 1 && w.chars().all(|c| c.is_alphanumeric() && !c.is_uppercase())));
        assert!(commonness("used") < commonness("definition"));
        assert_eq!(commonness("turturro"), None);
    }

    /// The list is the model's vocabulary's first 5,000 whole words (of two
    /// letters or digits or more), where the checkout has fetched the model
    /// (`tools/fetch-model`).
    #[test]
    fn the_list_is_the_models_vocabulary() {
        let vocabulary = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../models/all-minilm-l6-v2/vocab.txt"
        );
        let Ok(vocabulary) = std::fs::read_to_string(vocabulary) else {
            return;
        };
        // Below id 1996: padding, unused slots, special tokens, characters.
        let expected: Vec<&str> = vocabulary
            .lines()
            .skip(1996)
            .filter(|w| {
                !w.starts_with("##")
                    && w.chars().count() > 1
                    && w.chars().all(char::is_alphanumeric)
            })
            .take(5000)
            .collect();
        assert_eq!(COMMON_WORDS.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn specific_terms_come_first() {
        let request = SearchRequest::new(
            "x",
            &["famous", "airlines", "use", "boeing", "747", "timeout"],
            &["checkout page"],
        );
        let terms = terms_by_specificity(&request);
        assert_eq!(words(&terms)[0], "\"checkout page\"");
        // The rarest words next (in the question's order when both are
        // beyond the list), the common ones last.
        let order = words(&terms);
        let at = |w: &str| order.iter().position(|t| t == w).unwrap();
        assert!(at("boeing") < at("famous"));
        assert!(at("timeout") < at("use"));
        assert!(at("famous") < at("use"), "{order:?}");
    }

    #[test]
    fn an_or_query_keeps_the_most_specific_terms() {
        let terms = vec![
            Term::phrase("time out"),
            Term::word("checkout"),
            Term::word("slow"),
        ];
        assert_eq!(
            any_of(&terms, " OR ", 2, Term::quoted),
            "\"time out\" OR checkout"
        );
        assert_eq!(any_of(&[], " OR ", 2, Term::quoted), "");
    }

    #[test]
    fn narrower_sets_of_terms() {
        let [a, b, c, d] = ["a", "b", "c", "d"].map(Term::word);
        let queries = narrower(&[a.clone(), b.clone(), c.clone(), d.clone()], 5);
        let written: Vec<String> = queries.iter().map(|q| words(q).join(" ")).collect();
        assert_eq!(written, ["a b", "a", "b", "a c", "b c"]);
        let two = narrower(&[a.clone(), b.clone()], 3);
        let written: Vec<String> = two.iter().map(|q| words(q).join(" ")).collect();
        assert_eq!(written, ["a b", "a", "b"]);
        assert_eq!(narrower(std::slice::from_ref(&a), 3), vec![vec![a]]);
        assert!(narrower(&[], 3).is_empty());
    }

    #[test]
    fn searches_go_out_together_and_a_failed_one_costs_its_records() {
        use crate::testing::with_upstream;
        use serde_json::json;
        let searches = || {
            ["a", "b", "c"]
                .map(|q| Request::get(format!("https://api.example.com/s?q={q}")))
                .to_vec()
        };
        let read = |r: Response| -> Result<Vec<Value>, SearchError> {
            let body: Value = r.error_for_status()?.json()?;
            Ok(body["items"].as_array().cloned().unwrap_or_default())
        };
        let id = |v: &Value| v["id"].to_string();
        let (found, sent) = with_upstream(
            |request| {
                Ok(match request.param("q").as_deref() {
                    Some("a") => Response::for_test(
                        200,
                        &[],
                        json!({"items": [{"id": 1}, {"id": 2}]}).to_string(),
                    ),
                    Some("b") => Response::for_test(429, &[("retry-after", "3")], ""),
                    _ => Response::for_test(
                        200,
                        &[],
                        json!({"items": [{"id": 2}, {"id": 3}]}).to_string(),
                    ),
                })
            },
            || search_all(searches(), read, id, 10),
        );
        assert_eq!(sent.len(), 3);
        assert_eq!(
            found.unwrap(),
            vec![json!({"id": 1}), json!({"id": 2}), json!({"id": 3})]
        );
        let (found, _) = with_upstream(
            |_| Ok(Response::for_test(429, &[("retry-after", "3")], "")),
            || search_all(searches(), read, id, 10),
        );
        assert!(matches!(found, Err(SearchError::RateLimited(Some(3)))));
    }

    #[test]
    fn title_queries_take_long_questions_word_by_word() {
        let [a, b, c, d] = ["a", "b", "c", "d"].map(Term::word);
        let written = |queries: Vec<Vec<Term>>| -> Vec<String> {
            queries.iter().map(|q| words(q).join(" ")).collect()
        };
        assert_eq!(
            written(narrower_for_titles(&[a.clone(), b.clone(), c, d], 3)),
            ["a", "b", "c"]
        );
        assert_eq!(written(narrower_for_titles(&[a, b], 3)), ["a b", "a", "b"]);
    }

    #[test]
    fn merge_interleaves_and_keeps_each_once() {
        let merged = merge(
            vec![vec![1, 2, 3], vec![2, 4], vec![5]],
            |n| n.to_string(),
            4,
        );
        assert_eq!(merged, [1, 2, 5, 4]);
        let anonymous = merge(vec![vec![1, 2], vec![3]], |_| String::new(), 5);
        assert_eq!(anonymous, [1, 3, 2], "no id, no duplicate");
    }
}
