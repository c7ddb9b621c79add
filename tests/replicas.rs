//! Scale-out: three replicas of one deployment (`quarry demo --replicas 3`)
//! on one PostgreSQL database and one Redis, with a client that picks the
//! replica per request. Whatever replica answers, the user sees one
//! service: one set of limits, one idempotency record, one deletion, one
//! archive, one device flow.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_tests::dashboard_client::{
    Browser, PASSWORD, approve_at_device, collect_device_tokens, signed_in_on,
};
use quarry_tests::server::{Demo, Reply, avoid_window_edge};
use quarry_tests::shared::SharedBackend;
use quarry_tests::webhook_receiver::{Receiver, ReceiverOptions};
use reqwest::Method;
use serde_json::{Value, json};

const REPLICAS: usize = 3;

fn three_replicas(env: &[(&str, &str)]) -> (Arc<SharedBackend>, Demo) {
    let backend = Arc::new(SharedBackend::create());
    let demo = Demo::options()
        .shared(&backend)
        .replicas(REPLICAS)
        .envs(env)
        .start();
    assert_eq!(
        demo.replicas.len(),
        REPLICAS,
        "the first line lists every replica"
    );
    (backend, demo)
}

fn small_query() -> Value {
    json!({ "query": "checkout timeouts", "connectors": ["github"], "max_results": 1 })
}

async fn query_on(demo: &Demo, replica: usize, token: &str, body: &Value) -> Reply {
    demo.call(Method::POST, "/query")
        .on(replica)
        .token(token)
        .json(body)
        .send()
        .await
}

async fn deep_search_on(demo: &Demo, replica: usize, body: &Value) -> Reply {
    demo.call(Method::POST, "/deep_search")
        .on(replica)
        .token(demo.alice())
        .json(body)
        .send()
        .await
}

async fn keyed_on(demo: &Demo, replica: usize, key: &str, body: &Value) -> Reply {
    demo.call(Method::POST, "/query")
        .on(replica)
        .token(demo.alice())
        .idempotency_key(key)
        .json(body)
        .send()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_token_works_on_every_replica() {
    let (_backend, demo) = three_replicas(&[]);
    for replica in 0..REPLICAS {
        let me = demo
            .call(Method::GET, "/me")
            .on(replica)
            .token(demo.alice())
            .send()
            .await;
        me.expect(200, None);
        assert!(me.body["email"].as_str().unwrap().starts_with("alice@"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_parallel_queries_get_exactly_the_minute_limit() {
    let limit = 10;
    let (_backend, demo) = three_replicas(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "10"),
        ("QUARRY_LIMITS__QUERY__DAY", "100000"),
    ]);
    avoid_window_edge(20).await;
    let body = small_query();
    let replies = futures::future::join_all(
        (0..100).map(|i| query_on(&demo, i % REPLICAS, demo.alice(), &body)),
    )
    .await;
    let admitted: Vec<&Reply> = replies.iter().filter(|r| r.status == 200).collect();
    let refused = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!(
        admitted.len(),
        limit,
        "exactly the limit is admitted across replicas"
    );
    assert_eq!(refused, 100 - limit, "every other request is refused");
    // One window: each admitted request saw a different remaining count,
    // and every replica told the same limit and reset.
    let mut remaining: Vec<i64> = admitted
        .iter()
        .map(|r| r.int_header("x-ratelimit-remaining-minute"))
        .collect();
    remaining.sort_unstable();
    assert_eq!(remaining, (0..limit as i64).collect::<Vec<_>>());
    for reply in &replies {
        assert_eq!(reply.int_header("x-ratelimit-limit-minute"), limit as i64);
    }
    let resets: std::collections::BTreeSet<i64> = replies
        .iter()
        .map(|r| r.int_header("x-ratelimit-reset-minute"))
        .collect();
    assert_eq!(
        resets.len(),
        1,
        "one minute window on every replica: {resets:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idempotent_query_made_on_one_replica_replays_on_the_others() {
    let (_backend, demo) = three_replicas(&[]);
    let body = small_query();
    let first = keyed_on(&demo, 0, "across", &body).await;
    first.expect(200, None);
    for replica in 1..REPLICAS {
        let replay = keyed_on(&demo, replica, "across", &body).await;
        replay.expect(200, None);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(
            replay.raw, first.raw,
            "replica {replica} replays byte for byte"
        );
        let other = json!({ "query": "another question", "connectors": ["github"] });
        keyed_on(&demo, replica, "across", &other)
            .await
            .expect(409, Some("conflict"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_in_flight_on_one_replica_is_409_on_another() {
    let backend = Arc::new(SharedBackend::create());
    let demo = Demo::options()
        .shared(&backend)
        .replicas(REPLICAS)
        .upstream_latency_ms(3000)
        .start();
    let body = small_query();
    let slow = keyed_on(&demo, 0, "in-flight", &body);
    let meanwhile = async {
        tokio::time::sleep(Duration::from_millis(800)).await;
        keyed_on(&demo, 1, "in-flight", &body).await
    };
    let (first, second) = tokio::join!(slow, meanwhile);
    first.expect(200, None);
    second.expect(409, Some("conflict"));
    assert!(second.int_header("retry-after") >= 1);
    let replay = keyed_on(&demo, 2, "in-flight", &body).await;
    assert_eq!(
        replay.raw, first.raw,
        "once finished, the key replays anywhere"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn what_one_replica_archived_a_deep_search_on_another_finds_at_once() {
    let (_backend, demo) = three_replicas(&[]);
    let term = json!({ "query": "checkout timeouts" });
    // Replica 1 loads alice's (empty) index first, so that it must notice
    // what replica 0 archives after.
    let before = deep_search_on(&demo, 1, &term).await;
    before.expect(200, None);
    let answered = query_on(&demo, 0, demo.alice(), &small_query()).await;
    answered.expect(200, None);
    let found = deep_search_on(&demo, 1, &term).await;
    found.expect(200, None);
    let results = found.body["archive_results"]
        .as_array()
        .expect("archive_results");
    assert!(
        !results.is_empty(),
        "replica 1 finds what replica 0 archived: {found}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deletion_on_one_replica_is_seen_by_every_replica_and_leaves_nothing_in_the_database() {
    let (backend, demo) = three_replicas(&[]);
    let me = demo.get("/me", Some(demo.alice())).await;
    let user_id = me.body["user_id"].as_str().expect("user_id").to_string();
    let email = me.body["email"].as_str().expect("email").to_string();
    query_on(&demo, 1, demo.alice(), &small_query())
        .await
        .expect(200, None);
    demo.call(Method::DELETE, "/delete_my_data")
        .on(0)
        .token(demo.alice())
        .send()
        .await
        .expect(200, None);
    for replica in 1..REPLICAS {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let refused = demo
                .call(Method::GET, "/me")
                .on(replica)
                .token(demo.alice())
                .send()
                .await;
            if refused.status == 401 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "replica {replica} still serves a deleted user's token: {refused}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // Bob is untouched.
    demo.call(Method::GET, "/me")
        .on(2)
        .token(demo.bob())
        .send()
        .await
        .expect(200, None);
    let bob = demo.get("/me", Some(demo.bob())).await;
    let bob_id = bob.body["user_id"].as_str().expect("user_id");
    let dump = backend.dump();
    // The dump holds records (bob's, keyed by his id), just none of alice's.
    assert!(dump.contains(&hex(bob_id)), "the dump holds bob's records");
    for needle in [user_id.as_str(), email.as_str()] {
        assert!(!dump.contains(needle), "the database still holds {needle}");
        let hex = needle
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        assert!(
            !dump.contains(&hex),
            "the database still holds {needle} (as bytes)"
        );
    }
}

/// How `pg_dump` writes these bytes in a `bytea` (`\x` and hex digits).
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_three_replicas_each_webhook_is_delivered_exactly_once() {
    let (_backend, demo) = three_replicas(&[]);
    let receiver = Receiver::start(ReceiverOptions::default());
    let registered = demo
        .post(
            "/webhooks",
            Some(demo.alice()),
            &json!({ "url": receiver.url() }),
        )
        .await;
    registered.expect(201, None);
    let id = registered.body["id"].as_str().expect("id").to_string();
    receiver.set_secrets(&[registered.body["secret"].as_str().expect("secret")]);
    let events = 12;
    for n in 0..events {
        demo.call(Method::POST, &format!("/webhooks/{id}/test"))
            .on(n % REPLICAS)
            .token(demo.alice())
            .send()
            .await
            .expect(202, None);
    }
    receiver
        .wait_until("every test event", Duration::from_secs(120), |got| {
            got.len() >= events
        })
        .await;
    // Three workers share the outbox: time for a duplicate to show.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = receiver.deliveries();
    let ids: std::collections::BTreeSet<&str> = got.iter().map(|d| d.webhook_id.as_str()).collect();
    assert_eq!(got.len(), events, "no event delivered twice: {got:#?}");
    assert_eq!(ids.len(), events, "every event once");
    assert!(
        got.iter().all(|d| d.verified),
        "signed with the registration's secret"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deletion_whose_replica_died_is_finished_by_another() {
    let backend = Arc::new(SharedBackend::create());
    // Two replicas as processes of their own: the first dies (SIGKILL) once
    // it has revoked alice's tokens.
    let mut dying = Demo::options()
        .shared(&backend)
        .env("QUARRY_FAILPOINT", "deletion:revoked")
        .start();
    let survivor = Demo::options().shared(&backend).start();
    let token = dying.alice().to_string();
    let outcome = dying
        .call(Method::DELETE, "/delete_my_data")
        .token(&token)
        .try_send()
        .await;
    assert!(outcome.is_err(), "the first replica died mid-request");
    dying.wait_for_exit();
    // At once, the survivor refuses alice (her deletion has begun)...
    survivor
        .get("/me", Some(survivor.alice()))
        .await
        .expect(401, Some("unauthorized"));
    // ...and once the dead replica's lease runs out, it adopts the job and
    // finishes it.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let left = backend.sql("SELECT count(*) FROM quarry_records WHERE space = 'deletions'");
        if left.trim() == "0" {
            break;
        }
        assert!(Instant::now() < deadline, "the deletion was never finished");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        survivor.log().contains("resuming a deletion"),
        "the survivor finished it"
    );
    let users = backend.sql("SELECT count(*) FROM quarry_records WHERE space = 'users'");
    assert_eq!(users.trim(), "1", "only bob is left");
    survivor
        .get("/me", Some(survivor.bob()))
        .await
        .expect(200, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_device_code_started_on_one_replica_is_approved_on_another_and_polled_on_a_third() {
    let (_backend, demo) = three_replicas(&[]);
    // The assistant asks A; alice approves at B's /device; the assistant
    // polls C, and its token works on every replica.
    let mut alice = signed_in_on(&demo, 1, "alice").await;
    let device_code = approve_at_device(&demo, &mut alice, "Assistant").await;
    let tokens = collect_device_tokens(&demo, 2, &device_code, "Assistant").await;
    let token = tokens["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("C issues the token B's approval allowed: {tokens}"));
    for replica in 0..REPLICAS {
        demo.call(Method::GET, "/me")
            .on(replica)
            .token(token)
            .send()
            .await
            .expect(200, None);
    }
    // The code is spent everywhere: a second poll, on A, is refused.
    let again = collect_device_tokens(&demo, 0, &device_code, "Assistant").await;
    assert_eq!(again["error"], "invalid_grant", "{again}");
}

/// The sign-in throttle is one for the deployment: five failures per email
/// in the window (the default), whichever replicas they reach, and then
/// every replica refuses, even the right password. (Each replica once kept
/// its own count: three replicas gave a guesser three times the tries.)
#[tokio::test(flavor = "multi_thread")]
async fn sign_in_failures_through_three_replicas_meet_the_limit_of_one() {
    let (_backend, demo) = three_replicas(&[]);
    let mut statuses = Vec::new();
    for n in 0..8 {
        let mut browser = Browser::on(&demo, n % REPLICAS);
        let page = browser
            .sign_in("bob@acme.test", &format!("wrong-{n}"))
            .await;
        statuses.push(page.status.as_u16());
    }
    assert_eq!(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    for replica in 0..REPLICAS {
        let mut browser = Browser::on(&demo, replica);
        let page = browser.sign_in("bob@acme.test", PASSWORD).await;
        assert_eq!(page.status, 429, "replica {replica}: {}", page.text);
        assert!(page.headers.contains_key("retry-after"));
    }
}
