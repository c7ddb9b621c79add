use super::*;

/// A declaration for the tests: `implicit` and `operators` as given, the
/// rest the most common choices.
fn engine(implicit: &str, operators: &str, extra: &str) -> Declaration {
    let text = format!(
        r#"
vendor = "test"
endpoint = "GET https://example.com/search"
implicit = {{ value = "{implicit}", silent = "test" }}
operators = {{ value = [{operators}], silent = "test" }}
phrases = {{ value = true, silent = "test" }}
fields = {{ value = ["text"], silent = "test" }}
stemming = {{ value = "plural", silent = "test" }}
stop_words = {{ value = true, silent = "test" }}
order = {{ value = "relevance", silent = "test" }}
page_size = {{ value = {{ default = 20, max = 100 }}, silent = "test" }}
{extra}
"#
    );
    Declaration::from_toml(&text).unwrap()
}

fn and_engine() -> Declaration {
    engine("all", r#""OR", "NOT", "-", "()""#, "")
}

fn found(engine: &Declaration, index: &Index, query: &str) -> Vec<usize> {
    let query = engine.parse(query).unwrap();
    index
        .search(engine, &query, |_| true)
        .into_iter()
        .map(|h| h.index)
        .collect()
}

fn corpus() -> Index {
    Index::new([
        "Checkout times out with more than 50 items",
        "The checkout page is slow",
        "Gateway timeout on payments",
        "Payments retried twice: a double charge",
        "timeout timeout timeout in checkout",
    ])
}

#[test]
fn every_declaration_parses_and_names_its_sources() {
    let names: Vec<&str> = declarations().map(|(name, _)| name).collect();
    assert!(names.len() >= 15, "{names:?}");
    for (name, declaration) in declarations() {
        assert!(
            name.starts_with(&declaration.vendor),
            "{name}.toml declares vendor {}",
            declaration.vendor
        );
    }
}

#[test]
fn a_declaration_without_sources_is_refused() {
    let text = r#"
vendor = "x"
endpoint = "GET https://x"
implicit = { value = "all" }
operators = { value = [], silent = "-" }
phrases = { value = true, silent = "-" }
fields = { value = ["text"], silent = "-" }
stemming = { value = "none", silent = "-" }
stop_words = { value = false, silent = "-" }
order = { value = "newest", silent = "-" }
page_size = { value = { default = 10, max = 50 }, silent = "-" }
"#;
    let error = Declaration::from_toml(text).unwrap_err();
    assert!(error.contains("implicit"), "{error}");
}

#[test]
fn implicit_and_needs_every_word() {
    let engine = and_engine();
    let index = corpus();
    assert_eq!(found(&engine, &index, "checkout timeout"), [4]);
    assert_eq!(
        found(&engine, &index, "checkout slow pizza"),
        Vec::<usize>::new()
    );
}

#[test]
fn implicit_or_needs_any_word_and_ranks_by_bm25() {
    let engine = engine("any", "", "");
    let index = corpus();
    // Record 4 says "timeout" three times and "checkout": first; then the
    // rarer word ("timeout") in the shorter record.
    assert_eq!(found(&engine, &index, "checkout timeout"), [4, 2, 1, 0]);
}

#[test]
fn or_not_minus_and_parentheses() {
    let and = and_engine();
    let engine = &and;
    let index = corpus();
    assert_eq!(found(engine, &index, "slow OR charge"), [1, 3]);
    assert_eq!(found(engine, &index, "checkout -slow -timeout"), [0]);
    assert_eq!(found(engine, &index, "checkout NOT slow"), [4, 0]);
    assert_eq!(
        found(engine, &index, "(gateway OR double) payments"),
        [2, 3]
    );
    // Without the operators, they are words (OR is then a stop word).
    let plain = self::engine("all", "", "");
    assert_eq!(found(&plain, &index, "slow OR charge"), Vec::<usize>::new());
}

#[test]
fn phrases_match_consecutive_words() {
    let engine = and_engine();
    let index = corpus();
    assert_eq!(found(&engine, &index, "\"times out\""), [0]);
    assert_eq!(found(&engine, &index, "\"out times\""), Vec::<usize>::new());
    // A word the tokenizer cuts in two is a phrase.
    let ids = Index::new(["fixed in ACME-123", "ACME and 123"]);
    assert_eq!(found(&engine, &ids, "acme-123"), [0]);
}

#[test]
fn operators_beyond_the_maximum_are_refused() {
    let engine = engine(
        "all",
        r#""OR", "AND", "NOT""#,
        r#"max_operators = { value = 2, silent = "test" }"#,
    );
    assert!(engine.parse("a OR b OR c").is_ok());
    assert_eq!(
        engine.parse("a OR b OR c OR d"),
        Err(Refusal::TooManyOperators { found: 3, max: 2 })
    );
}

#[test]
fn stop_words_and_stemming() {
    let engine = and_engine();
    let index = corpus();
    // "the" and "with" are dropped; "items" is "item".
    assert_eq!(found(&engine, &index, "the items with checkout"), [0]);
    assert!(engine.parse("the of").unwrap().is_empty());
    let exact = engine_with_stemming("none");
    assert_eq!(found(&exact, &index, "item"), Vec::<usize>::new());
}

fn engine_with_stemming(stemming: &str) -> Declaration {
    let mut engine = and_engine();
    engine.stemming.value = match stemming {
        "none" => Stemming::None,
        _ => Stemming::Plural,
    };
    engine
}

#[test]
fn prefix_matching() {
    let engine = engine(
        "all",
        "",
        r#"matching = { value = "prefix", silent = "test" }"#,
    );
    let index = corpus();
    assert_eq!(found(&engine, &index, "pay"), [2, 3]);
}

#[test]
fn sorting_by_a_key_or_by_default() {
    let mut hits = vec![
        Hit {
            index: 0,
            score: 1.0,
        },
        Hit {
            index: 1,
            score: 3.0,
        },
        Hit {
            index: 2,
            score: 3.0,
        },
    ];
    let updated = |i: usize| [30, 10, 20][i];
    sort_hits(&mut hits, Sort::Default(Order::Relevance), updated);
    assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [2, 1, 0]);
    sort_hits(&mut hits, Sort::Default(Order::Newest), updated);
    assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [0, 2, 1]);
    sort_hits(&mut hits, Sort::Key { ascending: true }, updated);
    assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [1, 2, 0]);
}
