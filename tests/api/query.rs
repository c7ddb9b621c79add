//! `POST /query` when it succeeds: results per connector, ids, scores,
//! citations, the summary, `max_results`, `connectors`, unicode, and a
//! connector that fails without failing the query.

use std::collections::{BTreeMap, BTreeSet};

use quarry_tests::server::{CONNECTORS, Demo};
use serde_json::{Value, json};

use super::{QUESTION, ask, assert_query_answer, generous_demo};

fn connector_set(connectors: &[String]) -> BTreeSet<&str> {
    connectors.iter().map(String::as_str).collect()
}

#[tokio::test]
async fn a_question_is_answered_by_every_connected_tool() {
    let demo = Demo::start(&[]);
    let reply = demo.query(demo.alice(), &ask(QUESTION)).await;
    let connectors = assert_query_answer(&reply, QUESTION, 10);
    assert_eq!(
        connector_set(&connectors),
        CONNECTORS.into_iter().collect::<BTreeSet<_>>(),
        "every connected tool is searched when `connectors` is omitted"
    );
    let results = reply.body["results"].as_array().unwrap();
    for result in results {
        assert!(
            result.get("error").is_none(),
            "no connector fails against the fake upstreams: {result}"
        );
    }
    let answered = results
        .iter()
        .filter(|r| !r["chunks"].as_array().unwrap().is_empty())
        .count();
    assert!(
        answered >= 3,
        "the fake company's tools all talk about checkout timeouts; only {answered} answered"
    );
    // Each chunk carries the record's facts.
    let chunk = &results
        .iter()
        .find(|r| r["connector"] == json!("github"))
        .unwrap()["chunks"][0];
    assert!(chunk["metadata"]["title"].is_string(), "{chunk}");
    assert!(chunk["metadata"]["document_id"].is_string(), "{chunk}");
    assert!(
        chunk["source_url"]
            .as_str()
            .unwrap()
            .starts_with("https://github.com/"),
        "{chunk}"
    );
}

/// The connectors that answered with at least one chunk.
fn answering(body: &Value) -> BTreeSet<String> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["chunks"].as_array().unwrap().is_empty())
        .map(|r| r["connector"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn keywords_are_what_the_tools_search_for() {
    let demo = generous_demo();
    // Words no record holds: the vendors' searches find nothing...
    let question = "zqxv wibbleflop";
    let reply = demo.query(demo.alice(), &ask(question)).await;
    assert_query_answer(&reply, question, 10);
    assert!(answering(&reply.body).is_empty(), "{}", reply.body);
    // ...unless the caller says what to look for.
    let body = json!({ "query": question, "keywords": ["checkout", "timeout"] });
    let reply = demo.query(demo.alice(), &body).await;
    assert_query_answer(&reply, question, 10);
    let answered = answering(&reply.body);
    assert!(
        answered.len() >= 3,
        "the fake company's tools all talk about checkout timeouts: {answered:?}"
    );
    let github = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["connector"] == json!("github"))
        .unwrap();
    let mentions = |chunk: &&Value| {
        let text = format!("{} {}", chunk["content"], chunk["metadata"]["title"]).to_lowercase();
        text.contains("checkout") || text.contains("timeout")
    };
    assert!(
        github["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| mentions(&c)),
        "{github}"
    );
}

#[tokio::test]
async fn max_results_bounds_the_chunks_of_each_connector() {
    let demo = generous_demo();
    for n in [1usize, 3, 100] {
        let reply = demo
            .query(
                demo.alice(),
                &json!({ "query": "checkout payment timeouts incident", "max_results": n }),
            )
            .await;
        assert_query_answer(&reply, "checkout payment timeouts incident", n);
        if n < 10 {
            let most = reply.body["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["chunks"].as_array().unwrap().len())
                .max()
                .unwrap();
            assert_eq!(most, n, "some connector has more than {n} matches");
        }
    }
    // The default is 10.
    let reply = demo.query(demo.alice(), &ask("checkout")).await;
    assert_query_answer(&reply, "checkout", 10);
}

#[tokio::test]
async fn connectors_scope_the_search_and_duplicates_are_ignored() {
    let demo = generous_demo();
    let reply = demo
        .query(
            demo.alice(),
            &json!({ "query": QUESTION, "connectors": ["slack", "github"] }),
        )
        .await;
    let searched = assert_query_answer(&reply, QUESTION, 10);
    assert_eq!(
        connector_set(&searched),
        BTreeSet::from(["github", "slack"])
    );
    assert_eq!(
        reply.body["search_summary"]["connectors_searched"],
        json!(2)
    );

    let reply = demo
        .query(
            demo.alice(),
            &json!({ "query": QUESTION, "connectors": ["jira", "jira", "github", "jira"] }),
        )
        .await;
    let searched = assert_query_answer(&reply, QUESTION, 10);
    assert_eq!(searched.len(), 2, "duplicates are ignored: {searched:?}");
    assert_eq!(connector_set(&searched), BTreeSet::from(["github", "jira"]));

    let reply = demo
        .query(
            demo.alice(),
            &json!({ "query": QUESTION, "connectors": ["notion"], "max_results": 2 }),
        )
        .await;
    let searched = assert_query_answer(&reply, QUESTION, 2);
    assert_eq!(searched, vec!["notion".to_string()]);
}

/// `chunk_id` → content, over a whole answer.
fn chunks_of(body: &Value) -> BTreeMap<String, String> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["chunks"].as_array().unwrap())
        .map(|c| {
            (
                c["chunk_id"].as_str().unwrap().to_string(),
                c["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_same_question_twice_has_new_query_ids_and_the_same_chunk_ids() {
    let demo = generous_demo();
    let first = demo.query(demo.alice(), &ask(QUESTION)).await;
    let second = demo.query(demo.alice(), &ask(QUESTION)).await;
    assert_query_answer(&first, QUESTION, 10);
    assert_query_answer(&second, QUESTION, 10);
    assert_ne!(
        first.body["query_id"], second.body["query_id"],
        "query_id is unique per request"
    );
    let (a, b) = (chunks_of(&first.body), chunks_of(&second.body));
    assert!(!a.is_empty());
    assert_eq!(a, b, "the same passages have the same chunk ids");
    // Bob asks the same: the same records give the same passages.
    let bob = demo.query(demo.bob(), &ask(QUESTION)).await;
    assert_query_answer(&bob, QUESTION, 10);
    assert_ne!(bob.body["query_id"], first.body["query_id"]);
}

#[tokio::test]
async fn unicode_questions_are_answered() {
    let demo = generous_demo();
    for question in [
        "checkout timeouts 🔥🚀",
        "🔥",
        "結帳逾時 チェックアウト 결제 checkout",
        "מה גרם לפסק הזמן בקופה? checkout",
        "ما سبب انقطاع الدفع checkout",
        "cafe\u{301} checkout na\u{ef}ve",
        "Z\u{364}\u{311}\u{313}a\u{308}\u{307}l\u{36e}g\u{328}o checkout",
        "checkout\u{200b}timeouts\u{feff}",
        "\u{202e}stuoemit tuokcehc",
        "checkout\ttimeouts\nlast week",
        "a\u{0}b checkout",
        "👩‍👩‍👧‍👦 🇫🇷 checkout",
    ] {
        let reply = demo.query(demo.alice(), &ask(question)).await;
        assert_query_answer(&reply, question, 10);
        assert_eq!(
            reply.body["query"].as_str().unwrap(),
            question.trim(),
            "the question comes back as asked"
        );
    }
    // Character counts, not bytes: 2000 four-byte characters are allowed.
    let long = "😀".repeat(2000);
    let reply = demo.query(demo.alice(), &ask(&long)).await;
    assert_query_answer(&reply, &long, 10);
    let long = "é".repeat(2000);
    let reply = demo.query(demo.alice(), &ask(&long)).await;
    assert_query_answer(&reply, &long, 10);
}

#[tokio::test]
async fn a_connector_that_times_out_does_not_fail_the_query() {
    // Every connector call gets 1 ms and every upstream answers after
    // 300 ms: each connector times out, deterministically.
    let demo = Demo::options()
        .env("QUARRY_QUERY__CONNECTOR_DEADLINE_MS", "1")
        .upstream_latency_ms(300)
        .start();
    let reply = demo.query(demo.alice(), &ask(QUESTION)).await;
    let searched = assert_query_answer(&reply, QUESTION, 10);
    assert_eq!(
        connector_set(&searched),
        CONNECTORS.into_iter().collect::<BTreeSet<_>>()
    );
    for result in reply.body["results"].as_array().unwrap() {
        assert_eq!(result["error"]["type"], json!("timeout"), "{result}");
        assert!(
            !result["error"]["message"].as_str().unwrap().is_empty(),
            "{result}"
        );
        assert_eq!(result["chunks"], json!([]), "{result}");
    }
    assert_eq!(reply.body["search_summary"]["total_chunks_found"], json!(0));
    assert_eq!(
        reply.body["search_summary"]["connectors_searched"],
        json!(CONNECTORS.len())
    );
    // Scoped, the same.
    let reply = demo
        .query(
            demo.alice(),
            &json!({ "query": QUESTION, "connectors": ["github"] }),
        )
        .await;
    assert_query_answer(&reply, QUESTION, 10);
    assert_eq!(reply.body["results"][0]["error"]["type"], json!("timeout"));
}

#[tokio::test]
async fn users_query_independently() {
    let demo = generous_demo();
    let (alice_body, bob_body) = (ask(QUESTION), ask("inventory reservation"));
    let (alice, bob) = tokio::join!(
        demo.query(demo.alice(), &alice_body),
        demo.query(demo.bob(), &bob_body)
    );
    assert_query_answer(&alice, QUESTION, 10);
    assert_query_answer(&bob, "inventory reservation", 10);
    assert_eq!(bob.body["query"], json!("inventory reservation"));
}

/// With the embedding model (the server's default): the answer has the same
/// shape, and its scores stay in [0, 1].
#[tokio::test]
async fn semantic_ranking_answers_in_the_same_shape() {
    let demo = Demo::start(&[("QUARRY_RANKING__SEMANTIC", "true")]);
    let answer = demo.query(demo.alice(), &ask(QUESTION)).await;
    assert_query_answer(&answer, QUESTION, 10);
    for chunk in chunks(&answer.body) {
        let ranking = chunk["metadata"]["ranking"].as_str().unwrap_or_default();
        assert!(["semantic", "keyword"].contains(&ranking), "{chunk}");
    }
}

/// With time for every passage, the model scores every returned chunk, and
/// the best chunk across connectors is the record that answers the
/// question, whichever connector it came from.
#[tokio::test]
async fn with_time_enough_every_chunk_is_scored_by_the_model() {
    let demo = Demo::start(&[
        ("QUARRY_RANKING__SEMANTIC", "true"),
        ("QUARRY_RANKING__ANSWER_BUDGET_MS", "600000"),
        ("QUARRY_RANKING__EMBED_BUDGET", "100000"),
    ]);
    let answer = demo.query(demo.alice(), &ask(QUESTION)).await;
    assert_query_answer(&answer, QUESTION, 10);
    let all = chunks(&answer.body);
    assert!(all.len() > 20, "{} chunks", all.len());
    for chunk in &all {
        assert_eq!(chunk["metadata"]["ranking"], json!("semantic"), "{chunk}");
    }
    let best = all
        .iter()
        .max_by(|a, b| {
            let score = |c: &Value| c["relevance_score"].as_f64().unwrap();
            score(a).total_cmp(&score(b))
        })
        .unwrap();
    let text = best["content"].as_str().unwrap().to_lowercase();
    assert!(
        text.contains("checkout") && (text.contains("timeout") || text.contains("times out")),
        "the best chunk across connectors is about checkout timeouts: {text}"
    );
}

/// With the model off, every chunk says it was ranked by its words.
#[tokio::test]
async fn without_the_model_every_chunk_is_ranked_by_keywords() {
    let demo = generous_demo();
    let answer = demo.query(demo.alice(), &ask(QUESTION)).await;
    assert_query_answer(&answer, QUESTION, 10);
    for chunk in chunks(&answer.body) {
        assert_eq!(chunk["metadata"]["ranking"], json!("keyword"), "{chunk}");
    }
}

fn chunks(body: &Value) -> Vec<Value> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["chunks"].as_array().unwrap().clone())
        .collect()
}
