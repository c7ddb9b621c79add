//! The v1 API, black-box: the real `quarry demo` binary over HTTPS (see
//! `support/server.rs`), every response checked against the published
//! OpenAPI document (see `support/contract.rs`).
//!
//! Each test starts its own demo (its own port, data folder and users), so
//! the tests are independent and run in parallel.

#[path = "api/archive.rs"]
mod archive;
#[path = "api/auth.rs"]
mod auth;
#[path = "api/crash.rs"]
mod crash;
#[path = "api/deletion.rs"]
mod deletion;
#[path = "api/device.rs"]
mod device;
#[path = "api/document.rs"]
mod document;
#[path = "api/environment.rs"]
mod environment;
#[path = "api/idempotency.rs"]
mod idempotency;
#[path = "api/leaks.rs"]
mod leaks;
#[path = "api/limits.rs"]
mod limits;
#[path = "api/query.rs"]
mod query;
#[path = "api/validation.rs"]
mod validation;
#[path = "api/webhooks.rs"]
mod webhooks;

use std::collections::HashSet;

use quarry_tests::server::{Demo, Reply};
use serde_json::{Value, json};

/// Limits high enough that a test sending many requests never meets them.
pub const GENEROUS: [(&str, &str); 4] = [
    ("QUARRY_LIMITS__QUERY__MINUTE", "100000"),
    ("QUARRY_LIMITS__QUERY__DAY", "1000000"),
    ("QUARRY_LIMITS__DEFAULT__MINUTE", "100000"),
    ("QUARRY_LIMITS__DEFAULT__DAY", "1000000"),
];

/// A demo whose limits the test will not meet.
pub fn generous_demo() -> Demo {
    Demo::start(&GENEROUS)
}

/// A question the fake company's data answers in every tool.
pub const QUESTION: &str = "checkout timeouts";

/// Checks everything a successful `POST /query` promises and returns the
/// connectors that answered, in order.
#[track_caller]
pub fn assert_query_answer(reply: &Reply, asked: &str, max_results: usize) -> Vec<String> {
    reply.expect(200, None);
    let body = &reply.body;
    let query_id = body["query_id"].as_str().expect("query_id");
    assert!(
        query_id.starts_with("qry_") && query_id.len() > 4,
        "query_id {query_id:?}"
    );
    assert_eq!(
        body["query"].as_str().map(str::trim),
        Some(asked.trim()),
        "the response names the question asked"
    );
    let results = body["results"].as_array().expect("results");
    let mut connectors = Vec::new();
    let mut chunk_ids = HashSet::new();
    let mut total = 0;
    for result in results {
        let connector = result["connector"].as_str().expect("connector").to_string();
        assert!(
            !connectors.contains(&connector),
            "{connector} appears twice in results"
        );
        assert!(
            !result["source_label"]
                .as_str()
                .expect("source_label")
                .is_empty(),
            "an empty source_label for {connector}"
        );
        let chunks = result["chunks"].as_array().expect("chunks");
        assert!(
            chunks.len() <= max_results,
            "{connector} returned {} chunks, max_results is {max_results}",
            chunks.len()
        );
        if result.get("error").is_some() {
            assert!(chunks.is_empty(), "a failed connector has no chunks");
        }
        let mut previous = f64::INFINITY;
        for chunk in chunks {
            let id = chunk["chunk_id"].as_str().expect("chunk_id");
            assert!(id.starts_with("chnk_") && id.len() > 5, "chunk_id {id:?}");
            assert!(chunk_ids.insert(id.to_string()), "chunk_id {id} repeated");
            let score = chunk["relevance_score"].as_f64().expect("relevance_score");
            assert!((0.0..=1.0).contains(&score), "relevance_score {score}");
            assert!(
                score <= previous,
                "{connector}'s chunks are not by decreasing relevance: {previous} then {score}"
            );
            previous = score;
            let source = chunk["source_url"].as_str().expect("source_url");
            let url = url::Url::parse(source)
                .unwrap_or_else(|e| panic!("source_url {source:?} is not a URL: {e}"));
            assert_eq!(url.scheme(), "https", "source_url {source}");
            assert!(url.host_str().is_some_and(|h| !h.is_empty()));
            assert!(
                !chunk["content"]
                    .as_str()
                    .expect("content")
                    .trim()
                    .is_empty(),
                "an empty chunk"
            );
            assert!(chunk["metadata"].is_object(), "metadata is an object");
        }
        total += chunks.len();
        connectors.push(connector);
    }
    let summary = &body["search_summary"];
    assert_eq!(
        summary["connectors_searched"].as_u64(),
        Some(results.len() as u64),
        "connectors_searched counts the results"
    );
    assert_eq!(
        summary["total_chunks_found"].as_u64(),
        Some(total as u64),
        "total_chunks_found counts the chunks"
    );
    assert!(summary["duration_ms"].as_u64().is_some(), "duration_ms");
    connectors
}

/// `{"query": text}`
pub fn ask(text: &str) -> Value {
    json!({ "query": text })
}

/// The messages of error bodies must not show how the server is built.
pub const INTERNALS: [&str; 22] = [
    "QueryBody",
    "struct ",
    "serde",
    "axum",
    "hyper",
    "tokio",
    "redb",
    "wasmtime",
    "anyhow",
    ".rs:",
    "src/",
    "panicked",
    "RUST_BACKTRACE",
    "/tmp/",
    "/root",
    "/home/",
    "/work/",
    "target/",
    "i64",
    "u64",
    "usize",
    "Vec<",
];
