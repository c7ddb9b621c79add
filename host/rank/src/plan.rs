//! Query understanding: what a natural-language question asks for.
//!
//! Connectors talk to vendors' keyword searches, which do poorly with
//! "could you find anything about the checkout timeouts from last week?".
//! The plan reduces the question to its significant terms, the phrases the
//! user quoted and a time range, which is what the connector contract's
//! `search-request` carries.

use super::time;
use super::words::{collapse_whitespace, is_long_enough, words};
use crate::calendar::rfc3339;

/// A question, planned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryPlan {
    /// The significant words, lower-cased, in order, without duplicates,
    /// stop words, single characters or the words of a time expression.
    pub terms: Vec<String>,
    /// The texts the user put in double quotes (straight or curly),
    /// trimmed, whitespace collapsed, lower-cased.
    pub phrases: Vec<String>,
    /// Only records changed at or after this instant (RFC 3339, UTC).
    pub since: Option<String>,
    /// Only records changed at or before this instant (RFC 3339, UTC).
    pub until: Option<String>,
    /// The query for a vendor's keyword search: terms and quoted phrases in
    /// the order the question gave them. Never empty if the question had
    /// any word.
    pub keywords: String,
}

/// Plans `question` as asked at `now_unix` (seconds, UTC), the instant
/// relative times ("last week") are counted from. Pure: the same question
/// at the same instant always gives the same plan.
pub fn plan(question: &str, now_unix: i64) -> QueryPlan {
    let segments = split_quotes(question);
    let question_words = QuestionWords::of(&segments);
    let found = time::find(&question_words.text, &question_words.unquoted, now_unix);
    let acronyms = acronyms(question);
    let is_term = |index: usize| {
        let word = &question_words.text[index];
        let stop = is_stop_word(word) && !acronyms.contains(word);
        !found.used[index] && is_long_enough(word) && !stop
    };
    let terms = unique(
        (0..question_words.text.len())
            .filter(|index| is_term(*index))
            .map(|index| question_words.text[index].clone()),
    );
    let phrases = unique(
        segments
            .iter()
            .filter(|segment| segment.quoted)
            .map(|segment| segment.phrase())
            .filter(|phrase| !phrase.is_empty()),
    );
    let keywords = keywords(&segments, &question_words, is_term, question);
    QueryPlan {
        terms,
        phrases,
        since: found.bounds.since.map(rfc3339),
        until: found.bounds.until.map(rfc3339),
        keywords,
    }
}

impl QueryPlan {
    /// The plan with the caller's own search terms in place of the ones
    /// planned from the question (an assistant knows the names,
    /// identifiers and synonyms a record is likely to hold): a keyword of
    /// one word is a term, one of several words a phrase. The question
    /// still gives the time range. Keywords are taken as they are, stop
    /// words included: the caller chose them. Without a keyword that has a
    /// word, the plan is unchanged.
    pub fn searching_for(&self, keywords: &[String]) -> QueryPlan {
        let (terms, phrases) = keyword_terms(keywords);
        if terms.is_empty() && phrases.is_empty() {
            return self.clone();
        }
        let quoted = phrases.iter().map(|phrase| format!("\"{phrase}\""));
        let keywords = terms.iter().cloned().chain(quoted).collect::<Vec<_>>();
        QueryPlan {
            keywords: keywords.join(" "),
            terms,
            phrases,
            ..self.clone()
        }
    }

    /// The plan with the caller's keywords added after the question's own
    /// terms and phrases: what the ranking scores passages with.
    pub fn also_ranking(&self, keywords: &[String]) -> QueryPlan {
        let (terms, phrases) = keyword_terms(keywords);
        QueryPlan {
            terms: unique(self.terms.iter().cloned().chain(terms)),
            phrases: unique(self.phrases.iter().cloned().chain(phrases)),
            ..self.clone()
        }
    }
}

/// Keywords as (terms, phrases): lower-cased, whitespace collapsed, each
/// once; a keyword without a word is skipped.
fn keyword_terms(keywords: &[String]) -> (Vec<String>, Vec<String>) {
    let mut terms = Vec::new();
    let mut phrases = Vec::new();
    for keyword in keywords {
        match words(keyword).as_slice() {
            [] => {}
            [word] => terms.push(word.clone()),
            // Its own double quotes dropped: a phrase is quoted once, by
            // whoever writes it for an engine.
            _ => phrases.push(collapse_whitespace(&keyword.replace(is_quote, " ")).to_lowercase()),
        }
    }
    (unique(terms.into_iter()), unique(phrases.into_iter()))
}

/// A stretch of the question, inside or outside double quotes.
struct Segment<'a> {
    text: &'a str,
    quoted: bool,
}

impl Segment<'_> {
    fn phrase(&self) -> String {
        collapse_whitespace(self.text).to_lowercase()
    }
}

fn is_quote(c: char) -> bool {
    matches!(c, '"' | '“' | '”' | '„')
}

/// Cuts the question at double quotes. Any double quote closes a quoted
/// stretch, so mismatched straight and curly quotes (common when text is
/// pasted) still pair up; a quote left open is just punctuation. Single
/// quotes are not phrase marks: they are apostrophes far more often.
fn split_quotes(question: &str) -> Vec<Segment<'_>> {
    let mut segments = Vec::new();
    let mut rest = question;
    while let Some(open) = rest.find(is_quote) {
        let after_open = open + rest[open..].chars().next().map_or(1, char::len_utf8);
        let Some(length) = rest[after_open..].find(is_quote) else {
            break;
        };
        let close = after_open + length;
        segments.push(Segment {
            text: &rest[..open],
            quoted: false,
        });
        segments.push(Segment {
            text: &rest[after_open..close],
            quoted: true,
        });
        let close_width = rest[close..].chars().next().map_or(1, char::len_utf8);
        rest = &rest[close + close_width..];
    }
    segments.push(Segment {
        text: rest,
        quoted: false,
    });
    segments
}

/// The question's words in order, with where each came from.
struct QuestionWords {
    text: Vec<String>,
    /// False for words inside quotes: never part of a time expression.
    unquoted: Vec<bool>,
    /// The segment each word belongs to.
    segment: Vec<usize>,
}

impl QuestionWords {
    fn of(segments: &[Segment<'_>]) -> QuestionWords {
        let mut all = QuestionWords {
            text: Vec::new(),
            unquoted: Vec::new(),
            segment: Vec::new(),
        };
        for (index, segment) in segments.iter().enumerate() {
            for word in words(segment.text) {
                all.text.push(word);
                all.unquoted.push(!segment.quoted);
                all.segment.push(index);
            }
        }
        all
    }
}

/// Terms outside quotes and quoted phrases, in question order, each once.
/// A quoted phrase stands for its own words, so they are not repeated.
fn keywords(
    segments: &[Segment<'_>],
    question_words: &QuestionWords,
    is_term: impl Fn(usize) -> bool,
    question: &str,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut covered: Vec<&str> = Vec::new();
    for (index, segment) in segments.iter().enumerate() {
        let in_segment =
            (0..question_words.text.len()).filter(|w| question_words.segment[*w] == index);
        if segment.quoted {
            let phrase = segment.phrase();
            let quoted = format!("\"{phrase}\"");
            if !phrase.is_empty() && !parts.contains(&quoted) {
                parts.push(quoted);
                covered.extend(in_segment.map(|w| question_words.text[w].as_str()));
            }
            continue;
        }
        for word in in_segment
            .filter(|w| is_term(*w))
            .map(|w| question_words.text[w].as_str())
        {
            if !covered.contains(&word) {
                covered.push(word);
                parts.push(word.to_string());
            }
        }
    }
    if parts.is_empty() {
        collapse_whitespace(question)
    } else {
        parts.join(" ")
    }
}

fn unique(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// The stop words the question writes in capitals, lower-cased: acronyms
/// ("US", "IT"), not the words. A question written all in capitals has
/// none.
fn acronyms(question: &str) -> Vec<String> {
    let letters = question.chars().filter(|c| c.is_alphabetic());
    let (upper, all) = letters.fold((0, 0), |(u, a), c| (u + c.is_uppercase() as usize, a + 1));
    if upper * 2 > all {
        return Vec::new();
    }
    question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| (2..=4).contains(&w.len()) && w.chars().all(|c| c.is_ascii_uppercase()))
        .map(str::to_lowercase)
        .filter(|w| is_stop_word(w))
        .collect()
}

/// Words that carry no search meaning in a question to an assistant: they
/// would only make a vendor's keyword search (which often ANDs its terms)
/// miss. Time words ("last", "week") are not here: outside a time
/// expression they may be meant ("last mile", "week 12 retro").
fn is_stop_word(word: &str) -> bool {
    STOP_WORDS
        .iter()
        .any(|group| group.split_whitespace().any(|stop| stop == word))
}

const STOP_WORDS: [&str; 5] = [
    // Articles, conjunctions, prepositions.
    "a an the and or but nor of to in on at by for with from into onto about above below over
     under between through during before after since until till up down out off as than then so
     if via per within without around",
    // Question words.
    "what which who whom whose where when why how whether",
    // Auxiliaries and modals.
    "is are was were be been being am do does did doing done have has had having will would
     shall should can could may might must can't don't doesn't didn't isn't aren't wasn't
     weren't won't what's where's who's how's there's let let's",
    // Pronouns, determiners, adverbs of degree.
    "i i'm i've i'd me my mine myself we us our ours you your yours he him his she her hers it
     its they them their theirs this that these those there here any some all each every other
     such own same both either neither no not only also too very just really again ever more
     most much many",
    // What people say to an assistant rather than about the subject. Not
    // "search", "list" or "help": they are often the subject.
    "please pls find show tell give get look looking see know want need kindly thanks anything something everything nothing stuff things related relating regarding
     definition meaning famous examples
     concerning mention mentions mentioned mentioning discuss discussed discussing talk talked
     said say says recent recently latest",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Sunday 2026-11-15 14:30:00 UTC.
    const NOW: i64 = 1_794_753_000;

    fn terms(question: &str) -> Vec<String> {
        plan(question, NOW).terms
    }

    #[test]
    fn keeps_the_significant_words_in_order() {
        assert_eq!(
            terms("Could you please find anything about the checkout timeout issues?"),
            ["checkout", "timeout", "issues"]
        );
        assert_eq!(
            terms("What did Alice say about the Q3 roadmap? What about the roadmap"),
            ["alice", "q3", "roadmap"]
        );
    }

    #[test]
    fn words_that_are_often_the_subject_stay() {
        assert_eq!(
            terms("find the search latency regression in the help center"),
            ["search", "latency", "regression", "help", "center"]
        );
    }

    #[test]
    fn keeps_identifiers_and_strips_punctuation() {
        assert_eq!(
            terms("Status of ACME-123, v2.1. and #482 in acme/shop?!"),
            ["status", "acme-123", "v2.1", "#482", "acme/shop"]
        );
    }

    #[test]
    fn drops_single_characters_but_not_ideographs() {
        assert_eq!(terms("plan b for x 猫"), ["plan", "猫"]);
    }

    #[test]
    fn unicode_survives() {
        assert_eq!(
            terms("Café über alles — 検索エンジン"),
            ["café", "über", "alles", "検索エンジン"]
        );
    }

    #[test]
    fn quoted_phrases() {
        let plan = plan(
            "Find \"Checkout   Timeout\" and “payment retries” last week",
            NOW,
        );
        assert_eq!(plan.phrases, ["checkout timeout", "payment retries"]);
        assert_eq!(plan.terms, ["checkout", "timeout", "payment", "retries"]);
        assert_eq!(plan.keywords, "\"checkout timeout\" \"payment retries\"");
        assert_eq!(plan.since.as_deref(), Some("2026-11-02T00:00:00Z"));
        assert_eq!(plan.until.as_deref(), Some("2026-11-08T23:59:59Z"));
    }

    #[test]
    fn quoted_time_words_are_literal() {
        let plan = plan("notes titled \"last week\"", NOW);
        assert_eq!(plan.since, None);
        assert_eq!(plan.until, None);
        assert_eq!(plan.phrases, ["last week"]);
        assert_eq!(plan.terms, ["notes", "titled", "last", "week"]);
        assert_eq!(plan.keywords, "notes titled \"last week\"");
    }

    #[test]
    fn unbalanced_and_empty_quotes() {
        let plan = plan("the \"checkout bug", NOW);
        assert!(plan.phrases.is_empty());
        assert_eq!(plan.terms, ["checkout", "bug"]);
        let plan = super::plan("\"\" deploy \"  \"", NOW);
        assert!(plan.phrases.is_empty());
        assert_eq!(plan.keywords, "deploy");
    }

    #[test]
    fn mismatched_curly_and_straight_quotes_pair_up() {
        let plan = plan("“refund policy\" update", NOW);
        assert_eq!(plan.phrases, ["refund policy"]);
        assert_eq!(plan.keywords, "\"refund policy\" update");
    }

    #[test]
    fn keywords_mix_terms_and_phrases_in_order() {
        let plan = plan("why is \"checkout timeout\" failing for checkout", NOW);
        assert_eq!(plan.keywords, "\"checkout timeout\" failing");
        assert_eq!(plan.terms, ["checkout", "timeout", "failing"]);
    }

    #[test]
    fn time_words_leave_the_terms() {
        let plan = plan("What broke in checkout since March?", NOW);
        assert_eq!(plan.terms, ["broke", "checkout"]);
        assert_eq!(plan.keywords, "broke checkout");
        assert_eq!(plan.since.as_deref(), Some("2026-03-01T00:00:00Z"));
        assert_eq!(plan.until, None);
    }

    #[test]
    fn times_before_any_record_are_the_subject() {
        let plan = plan("bands formed since 1974", NOW);
        assert_eq!(plan.since, None);
        assert_eq!(plan.terms, ["bands", "formed", "1974"]);
        let plan = super::plan("incidents since 2025", NOW);
        assert_eq!(plan.since.as_deref(), Some("2025-01-01T00:00:00Z"));
    }

    #[test]
    fn keywords_replace_the_searched_terms_and_join_the_ranked_ones() {
        let question = plan("what broke checkout since last week?", NOW);
        let keywords = [
            "PAY-142".to_string(),
            "“Stripe  Webhook”".into(),
            " ".into(),
        ];
        let searched = question.searching_for(&keywords);
        assert_eq!(searched.terms, ["pay-142"]);
        assert_eq!(searched.phrases, ["stripe webhook"]);
        assert_eq!(searched.keywords, "pay-142 \"stripe webhook\"");
        assert_eq!(searched.since, question.since);
        assert!(searched.since.is_some());
        let ranked = question.also_ranking(&keywords);
        assert_eq!(ranked.terms, ["broke", "checkout", "pay-142"]);
        assert_eq!(ranked.phrases, ["stripe webhook"]);
        assert_eq!(question.searching_for(&[" ".to_string()]), question);
    }

    #[test]
    fn stop_words_in_capitals_are_acronyms() {
        assert_eq!(
            terms("Which US state was admitted last?"),
            ["us", "state", "admitted", "last"]
        );
        assert_eq!(terms("IT budget for us"), ["it", "budget"]);
        assert_eq!(terms("WHAT IS THE IT BUDGET"), ["budget"]);
        assert_eq!(terms("the definition of a famous dish"), ["dish"]);
    }

    #[test]
    fn time_words_outside_an_expression_stay() {
        assert_eq!(
            terms("last mile delivery this week"),
            ["last", "mile", "delivery"]
        );
        assert_eq!(
            terms("march madness bracket"),
            ["march", "madness", "bracket"]
        );
    }

    #[test]
    fn keywords_fall_back_to_the_question() {
        let plan = plan("  what is   this?  ", NOW);
        assert!(plan.terms.is_empty());
        assert_eq!(plan.keywords, "what is this?");
        let plan = super::plan("anything from last week", NOW);
        assert!(plan.terms.is_empty());
        assert_eq!(plan.keywords, "anything from last week");
        assert!(plan.since.is_some());
    }

    #[test]
    fn empty_question() {
        assert_eq!(plan("", NOW), QueryPlan::default());
        assert_eq!(plan("   ", NOW), QueryPlan::default());
    }

    #[test]
    fn the_same_question_gives_the_same_plan() {
        let question = "Show me Jira tickets about \"SSO login\" in the last 3 days";
        assert_eq!(plan(question, NOW), plan(question, NOW));
        let planned = plan(question, NOW);
        assert_eq!(planned.terms, ["jira", "tickets", "sso", "login"]);
        assert_eq!(planned.keywords, "jira tickets \"sso login\"");
        assert_eq!(planned.since.as_deref(), Some("2026-11-12T14:30:00Z"));
    }
}
