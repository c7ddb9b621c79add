//! Tokens, BM25 scores, phrases and the relevance scale.

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
