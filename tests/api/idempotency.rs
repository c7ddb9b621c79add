//! `Idempotency-Key` on `POST /query`: replays (same body, not charged,
//! marked), conflicts (another body, or the first still running), the key's
//! format, per-user scope, and records that survive a restart.

use std::time::Duration;

use quarry_tests::server::{Demo, Reply, avoid_window_edge};
use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};

use super::{QUESTION, assert_query_answer, generous_demo};

fn small() -> Value {
    json!({ "query": QUESTION, "connectors": ["github", "slack"], "max_results": 2 })
}

async fn keyed(demo: &Demo, token: &str, key: &str, body: &Value) -> Reply {
    demo.call(Method::POST, "/query")
        .token(token)
        .idempotency_key(key)
        .json(body)
        .send()
        .await
}

#[track_caller]
fn assert_replay_of(replay: &Reply, original: &Reply) {
    replay.expect(200, None);
    assert_eq!(
        replay.header("idempotent-replayed"),
        Some("true"),
        "a replay is marked: {replay}"
    );
    assert_eq!(
        replay.body, original.body,
        "a replay is the stored response"
    );
    assert_eq!(replay.raw, original.raw, "byte for byte");
}

#[tokio::test]
async fn the_same_key_and_body_replay_the_response_without_charge() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "50"),
        ("QUARRY_LIMITS__QUERY__DAY", "500"),
    ]);
    avoid_window_edge(30).await;
    let key = "5f0c7a9e-3b1d-4c2a-9e8f-1a2b3c4d5e6f";
    let first = keyed(&demo, demo.alice(), key, &small()).await;
    assert_query_answer(&first, QUESTION, 2);
    assert_eq!(
        first.header("idempotent-replayed"),
        None,
        "the first is not a replay"
    );
    assert_eq!(first.int_header("x-ratelimit-remaining-minute"), 49);
    for _ in 0..3 {
        let replay = keyed(&demo, demo.alice(), key, &small()).await;
        assert_replay_of(&replay, &first);
        assert_eq!(
            replay.int_header("x-ratelimit-remaining-minute"),
            49,
            "a replay is not charged"
        );
        assert_eq!(replay.int_header("x-ratelimit-remaining-day"), 499);
    }
    // The next new request is the second one charged.
    let other = keyed(&demo, demo.alice(), "another-key", &small()).await;
    assert_query_answer(&other, QUESTION, 2);
    assert_ne!(other.body["query_id"], first.body["query_id"]);
    assert_eq!(other.int_header("x-ratelimit-remaining-minute"), 48);
    // Without a key, the same body is a new query.
    let fresh = demo.query(demo.alice(), &small()).await;
    assert_ne!(fresh.body["query_id"], first.body["query_id"]);
    assert_eq!(fresh.header("idempotent-replayed"), None);
}

#[tokio::test]
async fn a_replay_is_served_even_when_the_limit_is_exhausted() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "1000"),
        ("QUARRY_LIMITS__QUERY__DAY", "2"),
    ]);
    avoid_window_edge(10).await;
    let first = keyed(&demo, demo.alice(), "limited", &small()).await;
    assert_query_answer(&first, QUESTION, 2);
    assert_query_answer(&demo.query(demo.alice(), &small()).await, QUESTION, 2);
    demo.query(demo.alice(), &small())
        .await
        .expect(429, Some("rate_limited"));
    let replay = keyed(&demo, demo.alice(), "limited", &small()).await;
    assert_replay_of(&replay, &first);
    // A new key is refused: it would have to run.
    keyed(&demo, demo.alice(), "new", &small())
        .await
        .expect(429, Some("rate_limited"));
}

#[tokio::test]
async fn the_same_key_with_another_body_is_409() {
    let demo = generous_demo();
    let first = keyed(&demo, demo.alice(), "k-1", &small()).await;
    assert_query_answer(&first, QUESTION, 2);
    for other in [
        json!({ "query": "inventory", "connectors": ["github", "slack"], "max_results": 2 }),
        json!({ "query": QUESTION, "connectors": ["github"], "max_results": 2 }),
        json!({ "query": QUESTION, "connectors": ["github", "slack"], "max_results": 3 }),
        json!({ "query": QUESTION }),
    ] {
        let reply = keyed(&demo, demo.alice(), "k-1", &other).await;
        reply.expect(409, Some("conflict"));
        assert!(
            reply.error_message().contains("Idempotency-Key"),
            "{}",
            reply.error_message()
        );
        assert_eq!(reply.header("idempotent-replayed"), None);
    }
    // The record is untouched: the original body still replays.
    assert_replay_of(&keyed(&demo, demo.alice(), "k-1", &small()).await, &first);
}

#[tokio::test]
async fn the_same_key_while_the_first_runs_is_409_with_retry_after() {
    // Upstreams that take 3 s keep the first request running while the
    // second arrives.
    let demo = Demo::options()
        .envs(&super::GENEROUS)
        .upstream_latency_ms(3000)
        .start();
    let body = small();
    let first = keyed(&demo, demo.alice(), "slow", &body);
    let second = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let same = keyed(&demo, demo.alice(), "slow", &body).await;
        // Another body under the key, whichever of the two holds it.
        let other = json!({ "query": "another question", "connectors": ["github"] });
        let different = keyed(&demo, demo.alice(), "slow", &other).await;
        (different, same)
    };
    let (first, (different, same)) = tokio::join!(first, second);
    // Whichever claimed the key first ran; the other was refused.
    let (ran, refused) = if first.status.as_u16() == 200 {
        (first, same)
    } else {
        (same, first)
    };
    assert_query_answer(&ran, QUESTION, 2);
    assert_eq!(ran.header("idempotent-replayed"), None);
    refused.expect(409, Some("conflict"));
    let seconds = refused.body["error"]["retry_after_seconds"]
        .as_i64()
        .unwrap_or_else(|| panic!("retry_after_seconds on an in-progress 409: {refused}"));
    assert!(seconds >= 1);
    assert_eq!(refused.int_header("retry-after"), seconds);
    different.expect(409, Some("conflict"));
    // Once it has finished, the key replays.
    let replay = keyed(&demo, demo.alice(), "slow", &body).await;
    assert_replay_of(&replay, &ran);
}

#[tokio::test]
async fn keys_must_be_1_to_255_visible_ascii_characters() {
    let demo = generous_demo();
    let values: Vec<HeaderValue> = vec![
        HeaderValue::from_static(""),
        HeaderValue::from_str(&"k".repeat(256)).unwrap(),
        HeaderValue::from_str(&"k".repeat(1000)).unwrap(),
        HeaderValue::from_bytes("clé".as_bytes()).unwrap(),
        HeaderValue::from_bytes(b"key\xff").unwrap(),
        HeaderValue::from_static("a key"),
        HeaderValue::from_static("key\t1"),
    ];
    for value in values {
        let reply = demo
            .call(Method::POST, "/query")
            .token(demo.alice())
            .header_value("idempotency-key", value.clone())
            .json(&small())
            .send()
            .await;
        assert_eq!(reply.status.as_u16(), 400, "key {value:?}: {reply}");
        reply.expect_bad_request_naming("Idempotency-Key");
    }
    for key in [
        "k".repeat(255),
        "5f0c7a9e-3b1d-4c2a-9e8f-1a2b3c4d5e6f".to_string(),
        "checkout-report-2025-03-17".to_string(),
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".to_string(),
        "x".to_string(),
    ] {
        let reply = keyed(&demo, demo.alice(), &key, &small()).await;
        assert_query_answer(&reply, QUESTION, 2);
        let replay = keyed(&demo, demo.alice(), &key, &small()).await;
        assert_replay_of(&replay, &reply);
    }
}

#[tokio::test]
async fn keys_are_scoped_per_user() {
    let demo = generous_demo();
    let key = "shared-key";
    let alice = keyed(&demo, demo.alice(), key, &small()).await;
    assert_query_answer(&alice, QUESTION, 2);
    // Bob's same key with the same body is his own new request.
    let bob = keyed(&demo, demo.bob(), key, &small()).await;
    assert_query_answer(&bob, QUESTION, 2);
    assert_eq!(
        bob.header("idempotent-replayed"),
        None,
        "not Alice's response"
    );
    assert_ne!(bob.body["query_id"], alice.body["query_id"]);
    // Bob's other body conflicts with Bob's record only.
    let other = json!({ "query": "inventory", "connectors": ["github"] });
    keyed(&demo, demo.bob(), key, &other)
        .await
        .expect(409, Some("conflict"));
    let carol_key = "bob-only";
    assert_query_answer(
        &keyed(&demo, demo.bob(), carol_key, &other).await,
        "inventory",
        10,
    );
    let alice_other = keyed(&demo, demo.alice(), carol_key, &small()).await;
    assert_query_answer(&alice_other, QUESTION, 2);
    assert_eq!(alice_other.header("idempotent-replayed"), None);
    // Each replays their own.
    assert_replay_of(&keyed(&demo, demo.alice(), key, &small()).await, &alice);
    assert_replay_of(&keyed(&demo, demo.bob(), key, &small()).await, &bob);
}

#[tokio::test]
async fn only_successes_are_stored() {
    let demo = generous_demo();
    // A refused request does not take the key.
    for _ in 0..2 {
        keyed(&demo, demo.alice(), "after-error", &json!({ "query": "" }))
            .await
            .expect(400, Some("bad_request"));
    }
    keyed(
        &demo,
        demo.alice(),
        "after-error",
        &json!({ "query": QUESTION, "connectors": ["nope"] }),
    )
    .await
    .expect(400, Some("bad_request"));
    let ok = keyed(&demo, demo.alice(), "after-error", &small()).await;
    assert_query_answer(&ok, QUESTION, 2);
    assert_eq!(ok.header("idempotent-replayed"), None);
    assert_replay_of(
        &keyed(&demo, demo.alice(), "after-error", &small()).await,
        &ok,
    );
}

#[tokio::test]
async fn records_survive_a_restart() {
    let data = tempfile::tempdir().expect("temp dir");
    let key = "survives-restart";
    let mut first_demo = Demo::options().data_dir(data.path()).start();
    let first = keyed(&first_demo, first_demo.alice(), key, &small()).await;
    assert_query_answer(&first, QUESTION, 2);
    let first_alice_id =
        first_demo.get("/me", Some(first_demo.alice())).await.body["user_id"].clone();
    first_demo.stop(); // killed, not shut down gracefully
    drop(first_demo);

    let demo = Demo::options().data_dir(data.path()).start();
    let me = demo.get("/me", Some(demo.alice())).await;
    assert_eq!(
        me.body["user_id"], first_alice_id,
        "the demo reuses its users"
    );
    let replay = keyed(&demo, demo.alice(), key, &small()).await;
    assert_replay_of(&replay, &first);
    // And a different body is still a conflict.
    keyed(&demo, demo.alice(), key, &json!({ "query": "inventory" }))
        .await
        .expect(409, Some("conflict"));
    // Bob never used the key.
    let bob = keyed(&demo, demo.bob(), key, &small()).await;
    assert_eq!(bob.header("idempotent-replayed"), None);
}
