//! Scale-out when the engines fail: PostgreSQL or Redis away gives 503 in
//! the contract's error shape (the limits fail closed), service comes back
//! by itself, and restarting either under load loses nothing; and engines
//! that speak TLS only, reached with their certificates checked. Each test
//! runs engines of its own, which it stops and starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quarry_tests::engines::{EngineTls, OwnPostgres, OwnRedis};
use quarry_tests::server::{Demo, Reply};
use quarry_tests::shared::SharedBackend;
use reqwest::Method;
use serde_json::json;

const GENEROUS: [(&str, &str); 4] = [
    ("QUARRY_LIMITS__QUERY__MINUTE", "100000"),
    ("QUARRY_LIMITS__QUERY__DAY", "1000000"),
    ("QUARRY_LIMITS__DEFAULT__MINUTE", "100000"),
    ("QUARRY_LIMITS__DEFAULT__DAY", "1000000"),
];

fn query() -> serde_json::Value {
    json!({ "query": "checkout timeouts", "connectors": ["github"], "max_results": 1 })
}

async fn me(demo: &Demo, replica: usize) -> Reply {
    demo.call(Method::GET, "/me")
        .on(replica)
        .token(demo.alice())
        .send()
        .await
}

#[track_caller]
fn assert_unavailable(reply: &Reply) {
    reply.expect(503, Some("server_error"));
    assert!(
        reply.body["error"]["retry_after_seconds"]
            .as_i64()
            .is_some_and(|s| s >= 1),
        "a 503 says when to retry: {reply}"
    );
    assert!(reply.int_header("retry-after") >= 1);
}

/// Polls until the replica answers `/me` with 200 again (a guard against a
/// hang, not a measurement).
async fn wait_until_served(demo: &Demo, replica: usize) {
    let started = Instant::now();
    loop {
        let reply = me(demo, replica).await;
        if reply.status == 200 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "replica {replica} never recovered: {reply}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn ready(demo: &Demo, replica: usize) -> u16 {
    let url = demo.replicas[replica].trim_end_matches("/v1").to_string() + "/readyz";
    demo.fetch(&url).await.status().as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_an_engine_away_requests_get_503_and_service_comes_back_by_itself() {
    let postgres = OwnPostgres::start();
    let mut redis = OwnRedis::start();
    let backend = Arc::new(SharedBackend::create_on(postgres.url(), redis.url()));
    let demo = Demo::options().shared(&backend).envs(&GENEROUS).start();
    me(&demo, 0).await.expect(200, None);
    assert_eq!(ready(&demo, 0).await, 200);

    // Redis away: the limits cannot be counted, so they fail closed.
    redis.stop();
    assert_unavailable(&me(&demo, 0).await);
    assert_eq!(ready(&demo, 0).await, 503, "not ready without Redis");
    redis.resume();
    wait_until_served(&demo, 0).await;

    // PostgreSQL away: the token cannot be checked; a 503, never a 401.
    postgres.stop();
    assert_unavailable(&me(&demo, 0).await);
    assert_eq!(ready(&demo, 0).await, 503, "not ready without PostgreSQL");
    postgres.resume();
    wait_until_served(&demo, 0).await;
    assert_eq!(ready(&demo, 0).await, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn restarting_postgres_and_redis_under_load_loses_nothing() {
    let postgres = OwnPostgres::start();
    let mut redis = OwnRedis::start();
    let backend = Arc::new(SharedBackend::create_on(postgres.url(), redis.url()));
    let demo = Demo::options()
        .shared(&backend)
        .replicas(2)
        .envs(&GENEROUS)
        .start();
    let stop = AtomicBool::new(false);
    let clients = (0..4).map(|n| {
        let (demo, stop) = (&demo, &stop);
        async move {
            let mut statuses = Vec::new();
            let mut replica = n;
            while !stop.load(Ordering::Relaxed) {
                let reply = demo
                    .call(Method::POST, "/query")
                    .on(replica % 2)
                    .token(demo.alice())
                    .json(&query())
                    .send_unchecked()
                    .await;
                statuses.push(reply.status.as_u16());
                replica += 1;
            }
            statuses
        }
    });
    let restarts = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        redis.stop();
        tokio::time::sleep(Duration::from_secs(1)).await;
        redis.resume();
        tokio::time::sleep(Duration::from_secs(2)).await;
        postgres.stop();
        tokio::time::sleep(Duration::from_secs(1)).await;
        postgres.resume();
        wait_until_served(&demo, 0).await;
        wait_until_served(&demo, 1).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        stop.store(true, Ordering::Relaxed);
    };
    let (statuses, ()) = tokio::join!(futures::future::join_all(clients), restarts);
    let statuses: Vec<u16> = statuses.into_iter().flatten().collect();
    let answered = statuses.iter().filter(|s| **s == 200).count();
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "every request was answered or refused with 503: {statuses:?}"
    );
    assert!(answered > 0, "queries were answered around the restarts");
    // Every query acknowledged with 200 is in alice's history: nothing an
    // answer promised was lost in a restart.
    let store = Arc::new(backend.open_store());
    let alice = store
        .user_by_email("alice@acme.test")
        .unwrap()
        .expect("alice");
    let scheduler = quarry::rank::Scheduler::start(
        Arc::new(quarry::rank::embed::HashedWords::new(384)),
        None,
        1,
        16,
    );
    let archive = quarry::archive::Archive::open(store, scheduler).unwrap();
    let history = archive.history(&alice.id).unwrap();
    assert!(
        history.len() >= answered,
        "{answered} queries answered, {} in the history",
        history.len()
    );
}

/// PostgreSQL and Redis on other machines carry emails, password hashes
/// and tokens: replicas reach them over TLS, the servers' certificates
/// checked against the operator's CA (`sslmode=verify-full` and
/// `sslrootcert` in the URL; `rediss://` and `redis_ca_file`). Here both
/// engines refuse plain connections, so every answer proves TLS; a wrong
/// CA, or asking for no TLS, keeps the server from its database.
#[tokio::test(flavor = "multi_thread")]
async fn replicas_reach_postgres_and_redis_over_tls_checking_their_certificates() {
    let tls = EngineTls::new();
    let postgres = OwnPostgres::start_tls(&tls);
    let redis = OwnRedis::start_tls(&tls);
    let ca = tls.ca().display().to_string();
    let verified = format!("{}?sslmode=verify-full&sslrootcert={ca}", postgres.url());
    let backend = Arc::new(SharedBackend::create_on(verified, redis.url()));
    let demo = Demo::options()
        .shared(&backend)
        .replicas(2)
        .envs(&GENEROUS)
        .env("QUARRY_COORDINATION__REDIS_CA_FILE", &ca)
        .start();
    for replica in 0..2 {
        let reply = demo
            .call(Method::POST, "/query")
            .on(replica)
            .token(demo.alice())
            .json(&query())
            .send()
            .await;
        reply.expect(200, None);
        // The limits were counted in Redis, over TLS.
        assert!(reply.int_header("x-ratelimit-remaining-minute") < 100_000);
    }
    assert_eq!(ready(&demo, 1).await, 200);

    let opens = |url: String| {
        let config = quarry_store::PostgresConfig { url, pool_size: 1 };
        quarry_store::Store::open_shared(&config, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .map(|_| ())
            .map_err(|error| format!("{error:#}"))
    };
    let database = backend.postgres_url.split('?').next().unwrap().to_string();
    let plain = opens(format!("{database}?sslmode=disable")).unwrap_err();
    assert!(
        plain.contains("no encryption") || plain.contains("pg_hba"),
        "{plain}"
    );
    let stranger = EngineTls::new();
    let wrong_ca = format!(
        "{database}?sslmode=verify-full&sslrootcert={}",
        stranger.ca().display()
    );
    let refused = opens(wrong_ca).unwrap_err();
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");
    // A certificate for another name passes verify-ca, not verify-full.
    let by_name = database.replace("127.0.0.1", "127.0.0.2");
    assert!(opens(format!("{by_name}?sslmode=verify-ca&sslrootcert={ca}")).is_ok());
    let other_name = opens(format!("{by_name}?sslmode=verify-full&sslrootcert={ca}"));
    assert!(
        other_name.is_err(),
        "127.0.0.2 is not a name of the certificate"
    );
}
