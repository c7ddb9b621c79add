//! Rate limits: the six headers and what they say, 429 with
//! `retry_after_seconds` and `Retry-After`, the cooldown, independence per
//! endpoint and per user, and exactness under concurrency.
//!
//! A test that counts requests within a window first waits, when the
//! window is about to reset, for the next one ([`avoid_window_edge`]).

use quarry_tests::contract::RATE_LIMIT_HEADERS;
use quarry_tests::server::{Demo, Reply, avoid_window_edge};
use reqwest::Method;
use serde_json::json;

use super::{QUESTION, ask, assert_query_answer};

/// A cheap question (one connector, one chunk).
fn small() -> serde_json::Value {
    json!({ "query": QUESTION, "connectors": ["github"], "max_results": 1 })
}

/// Asserts a 429 that names `endpoint` and gives its wait consistently
/// with the reset header of the exceeded window.
#[track_caller]
fn assert_rate_limited(reply: &Reply, endpoint: &str, window: &str) {
    reply.expect(429, Some("rate_limited"));
    let seconds = reply.body["error"]["retry_after_seconds"]
        .as_i64()
        .unwrap_or_else(|| panic!("retry_after_seconds: {reply}"));
    let header: i64 = reply.int_header("retry-after");
    assert_eq!(seconds, header, "Retry-After and retry_after_seconds agree");
    let message = reply.error_message();
    assert!(
        message.contains(endpoint),
        "the message names the endpoint {endpoint}: {message:?}"
    );
    assert!(
        message.contains(&seconds.to_string()),
        "the message gives the {seconds} seconds to wait: {message:?}"
    );
    let reset = reply.int_header(&format!("x-ratelimit-reset-{window}"));
    let now = reply.server_time();
    assert!(
        (reset - now - seconds).abs() <= 2,
        "retry_after_seconds {seconds} is the time to the {window} reset ({} s)",
        reset - now
    );
    assert_eq!(
        reply.int_header(&format!("x-ratelimit-remaining-{window}")),
        0,
        "nothing remains in the exceeded window"
    );
}

#[tokio::test]
async fn every_response_carries_the_six_headers() {
    // The support checks every response; this test visits each kind.
    let demo = Demo::start(&[]);
    let alice = demo.alice().to_string();
    let replies = vec![
        demo.query(&alice, &small()).await,
        demo.query(&alice, &ask("")).await,
        demo.get("/me", Some(&alice)).await,
        demo.get("/connectors", Some(&alice)).await,
        demo.get("/me", None).await,
        demo.get("/me", Some("qt_nope")).await,
        demo.get("/nope", Some(&alice)).await,
        demo.get("/nope", None).await,
        demo.call(Method::GET, "/query").token(&alice).send().await,
        demo.get("/openapi.json", None).await,
        demo.get("/openapi.yaml", None).await,
        demo.get("/docs", None).await,
        demo.call(Method::POST, "/query")
            .token(&alice)
            .raw(vec![b' '; 70_000], Some("application/json"))
            .send()
            .await,
    ];
    for reply in replies {
        for name in RATE_LIMIT_HEADERS {
            assert!(reply.header(name).is_some(), "{name} missing on {reply}");
        }
        assert!(reply.header("x-request-id").is_some());
    }
}

#[tokio::test]
async fn the_headers_count_down_and_give_the_resets() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "50"),
        ("QUARRY_LIMITS__QUERY__DAY", "500"),
    ]);
    avoid_window_edge(30).await;
    let mut expected = 50;
    let mut expected_day = 500;
    for body in [small(), ask(""), json!({ "nope": 1 }), ask(" "), small()] {
        // Every request counts, failures included.
        let reply = demo.query(demo.alice(), &body).await;
        expected -= 1;
        expected_day -= 1;
        assert_eq!(reply.int_header("x-ratelimit-limit-minute"), 50);
        assert_eq!(reply.int_header("x-ratelimit-limit-day"), 500);
        assert_eq!(
            reply.int_header("x-ratelimit-remaining-minute"),
            expected,
            "{reply}"
        );
        assert_eq!(reply.int_header("x-ratelimit-remaining-day"), expected_day);
        let now = reply.server_time();
        let reset_minute = reply.int_header("x-ratelimit-reset-minute");
        assert_eq!(
            reset_minute % 60,
            0,
            "the minute window is aligned to the clock"
        );
        assert!(
            reset_minute > now - 1 && reset_minute <= now + 60,
            "{reset_minute} vs {now}"
        );
        let reset_day = reply.int_header("x-ratelimit-reset-day");
        assert_eq!(
            reset_day % 86_400,
            0,
            "the day window resets at midnight UTC"
        );
        assert!(reset_day > now - 1 && reset_day <= now + 86_400);
    }
    // The default bucket of GET /me has its own figures.
    let me = demo.get("/me", Some(demo.alice())).await;
    assert_eq!(me.int_header("x-ratelimit-limit-minute"), 120);
    assert_eq!(me.int_header("x-ratelimit-limit-day"), 10_000);
    assert_eq!(me.int_header("x-ratelimit-remaining-minute"), 119);
    // Bob's windows are his own.
    let bob = demo.query(demo.bob(), &small()).await;
    assert_eq!(bob.int_header("x-ratelimit-remaining-minute"), 49);
}

#[tokio::test]
async fn over_the_minute_limit_is_429_until_the_window_resets() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "3"),
        ("QUARRY_LIMITS__QUERY__DAY", "1000"),
    ]);
    avoid_window_edge(30).await;
    // One answered, two refused as invalid: every request counts.
    assert_query_answer(&demo.query(demo.alice(), &small()).await, QUESTION, 1);
    for _ in 0..2 {
        demo.query(demo.alice(), &ask(""))
            .await
            .expect(400, Some("bad_request"));
    }
    let refused = demo.query(demo.alice(), &small()).await;
    assert_rate_limited(&refused, "POST /query", "minute");
    let seconds = refused.body["error"]["retry_after_seconds"]
        .as_i64()
        .unwrap();
    assert!((1..=60).contains(&seconds), "{seconds}");
    // The cooldown: every further request is refused, whatever its body.
    for body in [small(), ask(""), json!({ "nope": 1 })] {
        assert_rate_limited(
            &demo.query(demo.alice(), &body).await,
            "POST /query",
            "minute",
        );
    }
    // Per endpoint: GET /me and GET /connectors still answer.
    demo.get("/me", Some(demo.alice())).await.expect(200, None);
    demo.get("/connectors", Some(demo.alice()))
        .await
        .expect(200, None);
    // Per user: Bob still has his allowance.
    let bob = demo.query(demo.bob(), &small()).await;
    assert_query_answer(&bob, QUESTION, 1);
    assert_eq!(bob.int_header("x-ratelimit-remaining-minute"), 2);
}

#[tokio::test]
async fn over_the_day_limit_is_429_until_midnight_utc() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "100"),
        ("QUARRY_LIMITS__QUERY__DAY", "2"),
    ]);
    avoid_window_edge(10).await;
    for _ in 0..2 {
        assert_query_answer(&demo.query(demo.alice(), &small()).await, QUESTION, 1);
    }
    let refused = demo.query(demo.alice(), &small()).await;
    assert_rate_limited(&refused, "POST /query", "day");
    let to_midnight = 86_400 - refused.server_time().rem_euclid(86_400);
    let seconds = refused.body["error"]["retry_after_seconds"]
        .as_i64()
        .unwrap();
    assert!(
        (seconds - to_midnight).abs() <= 2,
        "{seconds} vs {to_midnight}"
    );
    assert_rate_limited(
        &demo.query(demo.alice(), &small()).await,
        "POST /query",
        "day",
    );
    assert_query_answer(&demo.query(demo.bob(), &small()).await, QUESTION, 1);
}

/// Fires 100 copies of a small query at once, over HTTP/2 (one
/// connection, 100 streams) or HTTP/1.1 (a connection per request), at a
/// fresh demo whose minute limit is 20. A burst whose requests were not all
/// decided in one minute window (it straddled a reset) is fired again.
async fn burst_of_100(http1: bool) -> Vec<Reply> {
    for _ in 0..3 {
        let demo = Demo::start(&[
            ("QUARRY_LIMITS__QUERY__MINUTE", "20"),
            ("QUARRY_LIMITS__QUERY__DAY", "100000"),
        ]);
        avoid_window_edge(20).await;
        let body = small();
        let replies = futures::future::join_all((0..100).map(|_| {
            let call = demo
                .call(Method::POST, "/query")
                .token(demo.alice())
                .json(&body);
            if http1 { call.http1() } else { call }.send()
        }))
        .await;
        let windows: std::collections::HashSet<i64> = replies
            .iter()
            .map(|r| r.int_header("x-ratelimit-reset-minute"))
            .collect();
        if windows.len() == 1 {
            return replies;
        }
    }
    panic!("three bursts in a row straddled a minute boundary");
}

#[tokio::test]
async fn a_hundred_parallel_requests_admit_exactly_the_limit() {
    for http1 in [false, true] {
        let replies = burst_of_100(http1).await;
        let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
        let admitted = statuses.iter().filter(|s| **s == 200).count();
        let refused = statuses.iter().filter(|s| **s == 429).count();
        assert_eq!(
            (admitted, refused),
            (20, 80),
            "HTTP/1.1 only: {http1}; statuses: {statuses:?}"
        );
        for reply in replies.iter().filter(|r| r.status.as_u16() == 429) {
            assert_rate_limited(reply, "POST /query", "minute");
        }
        // The admitted ones were told 19, 18, ..., 0 remain, once each.
        let mut remaining: Vec<i64> = replies
            .iter()
            .filter(|r| r.status.as_u16() == 200)
            .map(|r| r.int_header("x-ratelimit-remaining-minute"))
            .collect();
        remaining.sort();
        assert_eq!(remaining, (0..20).collect::<Vec<i64>>());
    }
}

#[tokio::test]
async fn endpoints_outside_the_table_have_a_bucket_each() {
    // The contract: "Limits apply per authenticated user and per endpoint,
    // independently of one another. A burst on one endpoint does not reduce
    // the allowance of another." The document: "one bucket per endpoint".
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__DEFAULT__MINUTE", "1000"),
        ("QUARRY_LIMITS__DEFAULT__DAY", "2"),
    ]);
    avoid_window_edge(10).await;
    demo.get("/me", Some(demo.alice())).await.expect(200, None);
    demo.get("/me", Some(demo.alice())).await.expect(200, None);
    let refused = demo.get("/me", Some(demo.alice())).await;
    assert_rate_limited(&refused, "GET /me", "day");
    // POST /query has its own table entry.
    assert_query_answer(&demo.query(demo.alice(), &small()).await, QUESTION, 1);
    // GET /connectors is another endpoint: the burst on GET /me must not
    // have used its allowance.
    let connectors = demo.get("/connectors", Some(demo.alice())).await;
    assert_eq!(
        connectors.status.as_u16(),
        200,
        "a burst on GET /me reduced the allowance of GET /connectors: {connectors}"
    );
}

#[tokio::test]
async fn requests_without_a_valid_token_are_limited_per_address() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__ANONYMOUS__MINUTE", "1000"),
        ("QUARRY_LIMITS__ANONYMOUS__DAY", "3"),
    ]);
    avoid_window_edge(10).await;
    for _ in 0..3 {
        demo.get("/me", Some("qt_guess"))
            .await
            .expect(401, Some("unauthorized"));
    }
    let refused = demo.get("/me", Some("qt_guess")).await;
    refused.expect(429, Some("rate_limited"));
    assert_eq!(
        refused.int_header("retry-after"),
        refused.body["error"]["retry_after_seconds"]
            .as_i64()
            .unwrap()
    );
    // The same address, without a token: the same bucket.
    demo.get("/openapi.json", None)
        .await
        .expect(429, Some("rate_limited"));
    demo.query("qt_guess", &small())
        .await
        .expect(429, Some("rate_limited"));
    // A valid token has its own buckets.
    demo.get("/me", Some(demo.alice())).await.expect(200, None);
    assert_query_answer(&demo.query(demo.alice(), &small()).await, QUESTION, 1);
}

#[tokio::test]
async fn a_refused_oversized_body_names_the_endpoint() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "1000"),
        ("QUARRY_LIMITS__QUERY__DAY", "1"),
    ]);
    avoid_window_edge(10).await;
    assert_query_answer(&demo.query(demo.alice(), &small()).await, QUESTION, 1);
    let reply = demo
        .call(Method::POST, "/query")
        .token(demo.alice())
        .raw(vec![b' '; 70_000], Some("application/json"))
        .send()
        .await;
    assert_rate_limited(&reply, "POST /query", "day");
}

/// Starts a demo on `data` with a day limit of 2 on `POST /query`, spends
/// it with two (refused, but counted) requests, and kills the server
/// `pause` after the last answer; the next start must still refuse.
async fn day_count_after_a_kill(pause: std::time::Duration) -> Reply {
    let data = tempfile::tempdir().expect("temp dir");
    let limits = [
        ("QUARRY_LIMITS__QUERY__MINUTE", "1000"),
        ("QUARRY_LIMITS__QUERY__DAY", "2"),
    ];
    avoid_window_edge(30).await;
    let mut demo = Demo::options().envs(&limits).data_dir(data.path()).start();
    for _ in 0..2 {
        demo.query(demo.alice(), &ask(""))
            .await
            .expect(400, Some("bad_request"));
    }
    tokio::time::sleep(pause).await;
    demo.stop();
    drop(demo);
    let demo = Demo::options().envs(&limits).data_dir(data.path()).start();
    demo.query(demo.alice(), &small()).await
}

#[tokio::test]
async fn day_counts_survive_a_restart() {
    // "Day counters are persisted so that a restart does not hand a user a
    // fresh day" (DESIGN.md). Given time to write them:
    let reply = day_count_after_a_kill(std::time::Duration::from_secs(3)).await;
    assert_rate_limited(&reply, "POST /query", "day");
}

#[tokio::test]
async fn day_counts_acknowledged_before_a_crash_are_not_lost() {
    // "A response waits for the commit of its batch, so nothing
    // acknowledged is lost" (DESIGN.md): a kill right after the answers
    // must not hand the user back the requests it counted.
    let reply = day_count_after_a_kill(std::time::Duration::ZERO).await;
    assert_rate_limited(&reply, "POST /query", "day");
}
