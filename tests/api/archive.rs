//! `POST /deep_search`: what `/query` answered is found again, from the
//! archive alone (the fake upstreams see nothing), within date bounds, for
//! its own user only.

use quarry_tests::server::{Demo, Reply, metric_value, unix_now};
use reqwest::Method;
use serde_json::{Value, json};

use super::{GENEROUS, QUESTION, generous_demo};

async fn ask_and_archive(demo: &Demo, token: &str, question: &str) -> Reply {
    let reply = demo
        .query(
            token,
            &json!({ "query": question, "connectors": ["github", "slack", "jira"], "max_results": 3 }),
        )
        .await;
    reply.expect(200, None);
    reply
}

async fn deep_search(demo: &Demo, token: &str, body: &Value) -> Reply {
    demo.call(Method::POST, "/deep_search")
        .token(token)
        .json(body)
        .send()
        .await
}

/// Every chunk of a `/query` answer: (connector, content).
fn chunks_of(answer: &Reply) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for result in answer.body["results"].as_array().expect("results") {
        let connector = result["connector"].as_str().expect("connector");
        for chunk in result["chunks"].as_array().expect("chunks") {
            out.push((
                connector.to_string(),
                chunk["content"].as_str().expect("content").to_string(),
            ));
        }
    }
    out
}

#[track_caller]
fn assert_deep_search_shape(reply: &Reply, term: &str, max_results: usize) -> Vec<Value> {
    reply.expect(200, None);
    let body = &reply.body;
    let id = body["query_id"].as_str().expect("query_id");
    assert!(id.starts_with("ds_") && id.len() > 3, "query_id {id}");
    assert_eq!(body["query"], term);
    assert!(body["duration_ms"].as_u64().is_some());
    let results = body["archive_results"]
        .as_array()
        .expect("archive_results")
        .clone();
    assert!(results.len() <= max_results);
    assert!(body["total_matches"].as_u64().expect("total_matches") >= results.len() as u64);
    let mut previous = f64::INFINITY;
    for result in &results {
        let score = result["similarity_score"]
            .as_f64()
            .expect("similarity_score");
        assert!((0.0..=1.0).contains(&score), "similarity_score {score}");
        assert!(score <= previous, "results are ordered by similarity");
        previous = score;
    }
    results
}

#[tokio::test]
async fn what_a_query_answered_is_found_again_without_calling_any_tool() {
    let demo = generous_demo();
    let answer = ask_and_archive(&demo, demo.alice(), QUESTION).await;
    let query_id = answer.body["query_id"].as_str().unwrap().to_string();
    let archived = chunks_of(&answer);
    assert!(!archived.is_empty(), "the query found something to archive");

    let upstream_before = demo.fake("/_fake/requests/count").await["received"].clone();
    let reply = deep_search(&demo, demo.alice(), &json!({ "query": QUESTION })).await;
    let results = assert_deep_search_shape(&reply, QUESTION, 20);
    assert_eq!(
        demo.fake("/_fake/requests/count").await["received"],
        upstream_before,
        "deep search made no live call"
    );
    assert_eq!(
        results.len(),
        archived.len(),
        "every archived chunk is a match: {reply}"
    );
    assert_eq!(
        reply.body["total_matches"].as_u64(),
        Some(archived.len() as u64)
    );
    for result in &results {
        assert_eq!(result["original_query_id"], query_id.as_str());
        assert_eq!(result["original_query"], QUESTION);
        let chunk = &result["matched_chunk"];
        let pair = (
            chunk["source_connector"].as_str().unwrap().to_string(),
            chunk["content"].as_str().unwrap().to_string(),
        );
        assert!(archived.contains(&pair), "{pair:?} was not in the answer");
        let at = quarry_tests::server::parse_rfc3339_utc(chunk["queried_at"].as_str().unwrap())
            .expect("queried_at is RFC 3339");
        assert!((at - unix_now()).abs() < 300, "queried_at is now-ish");
    }
    // The best match for a chunk's own words is that chunk.
    let (connector, content) = &archived[archived.len() - 1];
    let reply = deep_search(
        &demo,
        demo.alice(),
        &json!({ "query": content, "max_results": 1 }),
    )
    .await;
    let top = &assert_deep_search_shape(&reply, content.trim(), 1)[0];
    assert_eq!(top["matched_chunk"]["content"], content.as_str());
    assert_eq!(top["matched_chunk"]["source_connector"], connector.as_str());
}

#[tokio::test]
async fn date_bounds_are_inclusive_and_checked() {
    let demo = generous_demo();
    ask_and_archive(&demo, demo.alice(), QUESTION).await;
    let iso = quarry::calendar::rfc3339;
    let now = unix_now();
    let count = |reply: &Reply| reply.body["archive_results"].as_array().map_or(0, Vec::len);

    let around =
        json!({ "query": QUESTION, "date_from": iso(now - 3600), "date_to": iso(now + 3600) });
    let reply = deep_search(&demo, demo.alice(), &around).await;
    assert!(count(&reply) > 0, "{reply}");
    let later = json!({ "query": QUESTION, "date_from": iso(now + 3600) });
    let reply = deep_search(&demo, demo.alice(), &later).await;
    assert_eq!(count(&reply), 0);
    assert_eq!(reply.body["total_matches"], 0);
    let earlier = json!({ "query": QUESTION, "date_to": iso(now - 3600) });
    assert_eq!(count(&deep_search(&demo, demo.alice(), &earlier).await), 0);
    let today = &iso(now)[..10];
    let whole_day = json!({ "query": QUESTION, "date_from": today, "date_to": today });
    assert!(
        count(&deep_search(&demo, demo.alice(), &whole_day).await) > 0,
        "a bare date is the whole day"
    );

    let reversed =
        json!({ "query": QUESTION, "date_from": iso(now + 60), "date_to": iso(now - 60) });
    deep_search(&demo, demo.alice(), &reversed)
        .await
        .expect(400, Some("bad_request"));
    for (field, value) in [
        ("date_from", json!("last tuesday")),
        ("date_to", json!("2026-02-30T00:00:00Z")),
        ("date_from", json!(1_700_000_000)),
        ("max_results", json!(0)),
        ("max_results", json!(51)),
        ("max_results", json!("ten")),
        ("query", json!("   ")),
        ("colour", json!("blue")),
    ] {
        let mut body = json!({ "query": QUESTION });
        body[field] = value;
        deep_search(&demo, demo.alice(), &body)
            .await
            .expect_bad_request_naming(field);
    }
}

#[tokio::test]
async fn each_user_searches_only_their_own_archive() {
    let demo = Demo::start(&[
        GENEROUS[0],
        GENEROUS[1],
        GENEROUS[2],
        GENEROUS[3],
        ("QUARRY_LIMITS__DELETE_MY_DATA__MINUTE", "100"),
        ("QUARRY_LIMITS__DELETE_MY_DATA__DAY", "1000"),
    ]);
    let alices = ask_and_archive(&demo, demo.alice(), QUESTION).await;
    let alice_query = alices.body["query_id"].as_str().unwrap().to_string();
    let reply = deep_search(&demo, demo.bob(), &json!({ "query": QUESTION })).await;
    assert!(
        assert_deep_search_shape(&reply, QUESTION, 20).is_empty(),
        "bob sees nothing of alice's: {reply}"
    );

    let bobs = ask_and_archive(&demo, demo.bob(), "refund policy").await;
    let bob_query = bobs.body["query_id"].as_str().unwrap().to_string();
    for (token, own, other) in [
        (demo.alice(), &alice_query, &bob_query),
        (demo.bob(), &bob_query, &alice_query),
    ] {
        for term in [QUESTION, "refund policy"] {
            let reply =
                deep_search(&demo, token, &json!({ "query": term, "max_results": 50 })).await;
            for result in assert_deep_search_shape(&reply, term, 50) {
                assert_eq!(&result["original_query_id"], own.as_str());
                assert_ne!(&result["original_query_id"], other.as_str());
            }
        }
    }

    // Bob leaves; alice's archive is untouched, and bob's is gone with him.
    demo.delete("/delete_my_data", Some(demo.bob()))
        .await
        .expect(200, None);
    let reply = deep_search(
        &demo,
        demo.alice(),
        &json!({ "query": "refund policy", "max_results": 50 }),
    )
    .await;
    let results = assert_deep_search_shape(&reply, "refund policy", 50);
    assert!(!results.is_empty());
    assert!(
        results
            .iter()
            .all(|r| r["original_query_id"] == alice_query.as_str())
    );
    deep_search(&demo, demo.bob(), &json!({ "query": QUESTION }))
        .await
        .expect(401, Some("unauthorized"));
}

/// With the embedding model on, deep search matches by meaning: a
/// paraphrase sharing no word with the archived text still ranks it above
/// an unrelated question would.
#[tokio::test]
async fn deep_search_uses_the_embedding_model() {
    let demo = Demo::start(&[
        GENEROUS[0],
        GENEROUS[1],
        ("QUARRY_RANKING__SEMANTIC", "true"),
    ]);
    ask_and_archive(&demo, demo.alice(), QUESTION).await;
    let best = |reply: &Reply| {
        reply.body["archive_results"][0]["similarity_score"]
            .as_f64()
            .unwrap_or(0.0)
    };
    let related = deep_search(
        &demo,
        demo.alice(),
        &json!({ "query": "payment page is slow and requests expire", "max_results": 1 }),
    )
    .await;
    let unrelated = deep_search(
        &demo,
        demo.alice(),
        &json!({ "query": "a recipe for banana bread", "max_results": 1 }),
    )
    .await;
    assert_deep_search_shape(&related, "payment page is slow and requests expire", 1);
    assert!(
        best(&related) > best(&unrelated) + 0.1,
        "related {} vs unrelated {}",
        best(&related),
        best(&unrelated)
    );
}

/// Asking one question three times archives its chunks three times; a deep
/// search returns each chunk once, as the newest answer that returned it,
/// and counts distinct chunks.
#[tokio::test]
async fn a_chunk_archived_by_several_queries_is_found_once() {
    let demo = generous_demo();
    let mut answers = Vec::new();
    for _ in 0..3 {
        let answer = ask_and_archive(&demo, demo.alice(), QUESTION).await;
        let query_id = answer.body["query_id"].as_str().unwrap().to_string();
        answers.push((query_id, chunks_of(&answer)));
    }
    // Each chunk, and the newest answer that returned it.
    let mut newest: Vec<((String, String), String)> = Vec::new();
    for (query_id, chunks) in &answers {
        for pair in chunks {
            match newest.iter_mut().find(|(known, _)| known == pair) {
                Some((_, last)) => *last = query_id.clone(),
                None => newest.push((pair.clone(), query_id.clone())),
            }
        }
    }
    let archived: usize = answers.iter().map(|(_, chunks)| chunks.len()).sum();
    assert!(
        newest.len() < archived,
        "the answers repeat chunks: {archived} archived, {} distinct",
        newest.len()
    );

    let reply = deep_search(
        &demo,
        demo.alice(),
        &json!({ "query": QUESTION, "max_results": 50 }),
    )
    .await;
    let results = assert_deep_search_shape(&reply, QUESTION, 50);
    assert_eq!(results.len(), newest.len(), "each chunk once: {reply}");
    assert_eq!(
        reply.body["total_matches"].as_u64(),
        Some(newest.len() as u64)
    );
    for result in &results {
        let chunk = &result["matched_chunk"];
        let pair = (
            chunk["source_connector"].as_str().unwrap().to_string(),
            chunk["content"].as_str().unwrap().to_string(),
        );
        let (_, query_id) = newest
            .iter()
            .find(|(known, _)| *known == pair)
            .unwrap_or_else(|| panic!("{pair:?} was not in an answer"));
        assert_eq!(result["original_query_id"], query_id.as_str(), "{pair:?}");
    }

    // Fewer results than chunks: still as many as asked, all distinct.
    let fewer = newest.len().min(3) as u64;
    let reply = deep_search(
        &demo,
        demo.alice(),
        &json!({ "query": QUESTION, "max_results": fewer }),
    )
    .await;
    let results = assert_deep_search_shape(&reply, QUESTION, fewer as usize);
    assert_eq!(results.len() as u64, fewer, "{reply}");
    let distinct: std::collections::HashSet<String> = results
        .iter()
        .map(|r| {
            let chunk = &r["matched_chunk"];
            format!("{}\n{}", chunk["source_connector"], chunk["content"])
        })
        .collect();
    assert_eq!(distinct.len() as u64, fewer, "distinct: {reply}");
}

/// `/metrics` tells an operator what the process keeps in memory: the
/// loaded deep-search indexes and the allocator's figures.
#[tokio::test]
async fn the_metrics_show_the_indexes_and_the_heap_in_memory() {
    let demo = Demo::start(&[]);
    let token = demo.alice().to_string();
    ask_and_archive(&demo, &token, QUESTION).await;
    deep_search(&demo, &token, &json!({ "query": "checkout" }))
        .await
        .expect(200, None);
    let reply = demo.fetch(&demo.metrics_url()).await;
    let text = reply.text().await.unwrap();
    let gauge = |name: &str| {
        metric_value(&text, name).unwrap_or_else(|| panic!("{name} in /metrics:\n{text}"))
    };
    assert!(gauge("quarry_archive_loaded_indexes") >= 1.0);
    assert!(gauge("quarry_archive_index_bytes") > 0.0);
    let allocated = gauge("quarry_heap_allocated_bytes");
    assert!(allocated > 0.0);
    assert!(gauge("quarry_heap_resident_bytes") >= allocated);
    assert!(gauge("quarry_embedding_cache_vectors") >= 0.0);
}
