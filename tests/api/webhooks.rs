//! Webhooks: registration (`POST/GET /webhooks`, `DELETE /webhooks/{id}`),
//! the checks on targets, and deliveries (`POST /webhooks/{id}/test`)
//! verified by the official Standard Webhooks library in
//! `tests/webhooks/receiver.py`: signatures, retries with backoff, and a
//! delivery that survives a restart of the server.

use std::time::Duration;

use quarry_tests::server::{Demo, Reply};
use quarry_tests::webhook_receiver::{Delivery, Receiver, ReceiverOptions};
use reqwest::Method;
use serde_json::{Value, json};

use super::GENEROUS;

/// Generous: a delivery is waited for, not timed.
const PATIENCE: Duration = Duration::from_secs(120);

async fn register(demo: &Demo, token: &str, body: Value) -> Reply {
    demo.post("/webhooks", Some(token), &body).await
}

/// Registers `url` for alice; the registration (with its secret).
async fn register_ok(demo: &Demo, url: &str) -> Value {
    let reply = register(demo, demo.alice(), json!({ "url": url })).await;
    reply.expect(201, None);
    reply.body.clone()
}

async fn list(demo: &Demo, token: &str) -> Vec<Value> {
    let reply = demo.get("/webhooks", Some(token)).await;
    reply.expect(200, None);
    reply.body["webhooks"].as_array().expect("webhooks").clone()
}

async fn send_test(demo: &Demo, token: &str, id: &str) -> Reply {
    demo.call(Method::POST, &format!("/webhooks/{id}/test"))
        .token(token)
        .send()
        .await
}

fn id_of(registration: &Value) -> String {
    registration["id"].as_str().expect("id").to_string()
}

fn secret_of(registration: &Value) -> String {
    registration["secret"].as_str().expect("secret").to_string()
}

#[track_caller]
fn assert_verified(delivery: &Delivery) {
    assert!(
        delivery.verified,
        "the Standard Webhooks library refused a delivery: {delivery:#?}"
    );
}

#[tokio::test]
async fn webhooks_are_registered_listed_and_deleted() {
    let demo = Demo::start(&GENEROUS);
    let created = register_ok(&demo, "http://127.0.0.1:9/hook").await;
    let id = id_of(&created);
    assert!(id.starts_with("wh_") && id.len() > 3, "{created}");
    let secret = secret_of(&created);
    assert!(secret.starts_with("whsec_"), "{created}");
    assert_eq!(created["url"], json!("http://127.0.0.1:9/hook"));
    assert_eq!(created["events"], json!(["user.deleted"]), "the default");
    assert!(created["created_at"].is_string());

    // Listed without the secret, which is shown once only.
    let reply = demo.get("/webhooks", Some(demo.alice())).await;
    reply.expect(200, None);
    let listed = reply.body["webhooks"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], json!(id));
    assert_eq!(listed[0]["events"], json!(["user.deleted"]));
    assert!(listed[0].get("secret").is_none(), "{listed:?}");
    assert!(
        !String::from_utf8_lossy(&reply.raw).contains(&secret),
        "the list never shows a secret"
    );

    // Explicit events, duplicates dropped; each registration its own secret.
    let second = register(
        &demo,
        demo.alice(),
        json!({ "url": "http://127.0.0.1:9/other", "events": ["user.deleted", "user.deleted"] }),
    )
    .await;
    second.expect(201, None);
    assert_eq!(second.body["events"], json!(["user.deleted"]));
    assert_ne!(secret_of(&second.body), secret);
    assert_eq!(list(&demo, demo.alice()).await.len(), 2);

    let reply = demo
        .delete(&format!("/webhooks/{id}"), Some(demo.alice()))
        .await;
    reply.expect(204, None);
    assert!(reply.raw.is_empty());
    let left = list(&demo, demo.alice()).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["id"], second.body["id"]);
    demo.delete(&format!("/webhooks/{id}"), Some(demo.alice()))
        .await
        .expect(404, Some("not_found"));
    demo.delete("/webhooks/wh_0000000000000000", Some(demo.alice()))
        .await
        .expect(404, Some("not_found"));
    send_test(&demo, demo.alice(), &id)
        .await
        .expect(404, Some("not_found"));
}

#[tokio::test]
async fn another_user_can_neither_see_nor_delete_nor_test_my_webhook() {
    let demo = Demo::start(&GENEROUS);
    let mine = register_ok(&demo, "http://127.0.0.1:9/hook").await;
    let id = id_of(&mine);
    assert!(list(&demo, demo.bob()).await.is_empty());
    let reply = demo
        .delete(&format!("/webhooks/{id}"), Some(demo.bob()))
        .await;
    reply.expect(404, Some("not_found"));
    send_test(&demo, demo.bob(), &id)
        .await
        .expect(404, Some("not_found"));
    let still = list(&demo, demo.alice()).await;
    assert_eq!(still.len(), 1, "bob's attempts removed nothing");
    assert_eq!(still[0]["id"], json!(id));
    // Without a token: 401, as everywhere.
    demo.get("/webhooks", None)
        .await
        .expect(401, Some("unauthorized"));
    demo.delete(&format!("/webhooks/{id}"), None)
        .await
        .expect(401, Some("unauthorized"));
}

#[tokio::test]
async fn bad_registrations_are_400_naming_the_field() {
    let demo = Demo::start(&GENEROUS);
    let alice = demo.alice().to_string();
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "url"),
        (json!({ "url": null }), "url"),
        (json!({ "url": 5 }), "url"),
        (json!({ "url": ["https://1.1.1.1/"] }), "url"),
        (json!({ "url": "" }), "url"),
        (json!({ "url": "not a url" }), "url"),
        (json!({ "url": "/relative" }), "url"),
        (json!({ "url": "ftp://1.1.1.1/hook" }), "url"),
        (json!({ "url": "https://user:pw@1.1.1.1/hook" }), "url"),
        (
            json!({ "url": format!("https://1.1.1.1/{}", "a".repeat(2048)) }),
            "url",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "events": "user.deleted" }),
            "events",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "events": [5] }),
            "events",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "events": null }),
            "events",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "events": ["user.created"] }),
            "user.created",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "events": ["user.deleted", "nope"] }),
            "nope",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "events": ["webhook.test"] }),
            "webhook.test",
        ),
        (
            json!({ "url": "https://1.1.1.1/", "secret": "whsec_x" }),
            "secret",
        ),
    ];
    for (body, field) in cases {
        let reply = register(&demo, &alice, body.clone()).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {reply}");
        reply.expect_bad_request_naming(field);
    }
    let reply = demo
        .call(Method::POST, "/webhooks")
        .token(&alice)
        .raw(
            b"url=https://1.1.1.1/".to_vec(),
            Some("application/x-www-form-urlencoded"),
        )
        .send()
        .await;
    reply.expect(400, Some("bad_request"));
    assert!(
        list(&demo, &alice).await.is_empty(),
        "nothing was registered"
    );

    // At most 20 per user.
    for i in 0..20 {
        register_ok(&demo, &format!("https://1.1.1.1/hook/{i}")).await;
    }
    let reply = register(&demo, &alice, json!({ "url": "https://1.1.1.1/hook/21" })).await;
    reply.expect(400, Some("bad_request"));
    assert!(reply.error_message().contains("20"), "{reply}");
    assert_eq!(list(&demo, &alice).await.len(), 20);
    // bob has his own 20.
    register(&demo, demo.bob(), json!({ "url": "https://1.1.1.1/hook" }))
        .await
        .expect(201, None);

    // The test endpoint takes no parameters.
    let id = id_of(&list(&demo, &alice).await[0]);
    let reply = demo
        .call(Method::POST, &format!("/webhooks/{id}/test"))
        .token(&alice)
        .json(&json!({ "event": "user.deleted" }))
        .send()
        .await;
    reply.expect_bad_request_naming("event");
}

#[tokio::test]
async fn private_and_plain_http_targets_are_refused_unless_the_operator_allows_them() {
    let demo = Demo::start(&[
        ("QUARRY_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "false"),
        ("QUARRY_WEBHOOKS__ALLOW_PLAIN_HTTP", "false"),
    ]);
    let alice = demo.alice().to_string();
    let reply = register(&demo, &alice, json!({ "url": "http://1.1.1.1/hook" })).await;
    reply.expect_bad_request_naming("url");
    assert!(reply.error_message().contains("https"), "{reply}");
    for url in [
        "https://127.0.0.1/hook",
        "https://127.0.0.1:8443/hook",
        "https://10.0.0.1/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://localhost/hook",
    ] {
        let reply = register(&demo, &alice, json!({ "url": url })).await;
        reply.expect_bad_request_naming("url");
        assert!(
            reply.error_message().contains("public"),
            "{url}: {}",
            reply.error_message()
        );
    }
    assert!(list(&demo, &alice).await.is_empty());
    // A public https target is fine (no delivery is made to it here).
    register(&demo, &alice, json!({ "url": "https://1.1.1.1/hook" }))
        .await
        .expect(201, None);
}

#[tokio::test]
async fn a_test_event_is_delivered_signed_and_verified_by_the_standard_library() {
    let demo = Demo::start(&GENEROUS);
    let receiver = Receiver::start(ReceiverOptions::default());
    // A token in the URL, as some receivers want: it must not reach the log.
    let url = format!("{}?token=tok-do-not-log-me", receiver.url());
    let created = register_ok(&demo, &url).await;
    let (id, secret) = (id_of(&created), secret_of(&created));
    // Another registration's secret first: the library must refuse it and
    // accept the right one (the check is not vacuous).
    let other = register(&demo, demo.bob(), json!({ "url": receiver.url() })).await;
    other.expect(201, None);
    receiver.set_secrets(&[&secret_of(&other.body), &secret]);

    let reply = send_test(&demo, demo.alice(), &id).await;
    reply.expect(202, None);
    let message_id = reply.body["message_id"].as_str().expect("message_id");
    assert!(message_id.starts_with("msg_"), "{reply}");
    assert_eq!(reply.body["webhook_id"], json!(id));
    assert_eq!(reply.body["type"], json!("webhook.test"));

    let deliveries = receiver
        .wait_until("the test event", PATIENCE, |d| !d.is_empty())
        .await;
    let delivery = &deliveries[0];
    assert_verified(delivery);
    assert_eq!(
        delivery.secret_index,
        Some(1),
        "verified with its own registration's secret only: {delivery:#?}"
    );
    assert_eq!(delivery.webhook_id, message_id);
    assert_eq!(delivery.path, "/hook?token=tok-do-not-log-me");
    let event = &delivery.payload;
    assert_eq!(event["type"], json!("webhook.test"));
    assert_eq!(event["data"]["webhook_id"], json!(id));
    let timestamp = event["timestamp"].as_str().expect("timestamp");
    assert!(
        quarry_tests::server::parse_rfc3339_utc(timestamp).is_some(),
        "{timestamp}"
    );

    // Once delivered, nothing more comes (a poll, not a timing).
    let again = send_test(&demo, demo.alice(), &id).await;
    again.expect(202, None);
    let deliveries = receiver
        .wait_until("the second test event", PATIENCE, |d| d.len() >= 2)
        .await;
    assert_ne!(
        deliveries[1].webhook_id, message_id,
        "each event has its own id"
    );
    assert_verified(&deliveries[1]);

    let log = demo.log();
    assert!(log.contains("webhook delivered"), "the delivery is logged");
    for secret_text in [secret.as_str(), "tok-do-not-log-me"] {
        assert!(
            !log.contains(secret_text),
            "the server's log shows {secret_text}"
        );
    }
}

#[tokio::test]
async fn failed_deliveries_are_retried_with_backoff_and_the_same_id() {
    let demo = Demo::options()
        .envs(&GENEROUS)
        .env("QUARRY_WEBHOOKS__RETRY_SCHEDULE_SECONDS", "[0,1,1,1]")
        .start();
    let receiver = Receiver::start(ReceiverOptions {
        fail_first: 2,
        ..ReceiverOptions::default()
    });
    let created = register_ok(&demo, &receiver.url()).await;
    receiver.set_secrets(&[&secret_of(&created)]);
    let reply = send_test(&demo, demo.alice(), &id_of(&created)).await;
    reply.expect(202, None);
    let message_id = reply.body["message_id"].as_str().unwrap().to_string();

    let deliveries = receiver
        .wait_until("a delivery after two failures", PATIENCE, |d| {
            d.iter().any(|d| d.status == 204)
        })
        .await;
    let statuses: Vec<u16> = deliveries.iter().map(|d| d.status).collect();
    assert_eq!(statuses, [503, 503, 204], "{deliveries:#?}");
    for (previous, next) in deliveries.iter().zip(&deliveries[1..]) {
        assert_verified(next);
        assert_eq!(
            next.webhook_id, message_id,
            "the id is stable across retries"
        );
        assert_eq!(next.payload, previous.payload, "the same event each time");
        // A lower bound only (the schedule's 1 s less 10% jitter, and the
        // receiver's Retry-After: 1): a slow machine can only add to it.
        let waited = next.received_at - previous.received_at;
        assert!(waited >= 0.9, "retried after {waited:.3} s only");
        assert!(next.webhook_timestamp >= previous.webhook_timestamp);
    }
    assert_verified(&deliveries[0]);
    assert!(
        demo.log().contains("will retry"),
        "failed attempts are logged"
    );
}

#[tokio::test]
async fn a_pending_delivery_survives_a_restart() {
    let data = tempfile::tempdir().expect("temp dir");
    // Attempts every 3 s: the first fails (nothing listens), and the server
    // is killed long before the schedule runs out.
    let schedule = "[0,3,3,3,3,3,3,3,3,3]";
    let options = || {
        Demo::options()
            .envs(&GENEROUS)
            .env("QUARRY_WEBHOOKS__RETRY_SCHEDULE_SECONDS", schedule)
            .data_dir(data.path())
    };
    let mut demo = options().start();
    // A port that nothing listens on now, and that the receiver takes later.
    let port = {
        let mut probe = Receiver::start(ReceiverOptions::default());
        probe.stop();
        probe.port
    };
    let url = format!("http://127.0.0.1:{port}/hook");
    let created = register_ok(&demo, &url).await;
    let reply = send_test(&demo, demo.alice(), &id_of(&created)).await;
    reply.expect(202, None);
    let message_id = reply.body["message_id"].as_str().unwrap().to_string();
    wait_for_log(&demo, "webhook attempt failed").await;
    demo.stop();

    let receiver = Receiver::start(ReceiverOptions {
        port: Some(port),
        ..ReceiverOptions::default()
    });
    receiver.set_secrets(&[&secret_of(&created)]);
    let demo = options().start();
    let deliveries = receiver
        .wait_until("the delivery queued before the restart", PATIENCE, |d| {
            !d.is_empty()
        })
        .await;
    assert_verified(&deliveries[0]);
    assert_eq!(deliveries[0].webhook_id, message_id);
    assert_eq!(deliveries[0].payload["type"], json!("webhook.test"));
    // The registration itself survived too.
    let listed = list(&demo, demo.alice()).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], created["id"]);
}

/// Polls the server's log for `text` (a guard against a hang, not a timing).
async fn wait_for_log(demo: &Demo, text: &str) {
    let started = std::time::Instant::now();
    while !demo.log().contains(text) {
        assert!(
            started.elapsed() < PATIENCE,
            "the server never logged {text:?}:\n{}",
            demo.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A TCP server that accepts connections and never answers: a webhook
/// target that holds each delivery until the server's timeout.
struct Tarpit {
    port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Tarpit {
    async fn start() -> Tarpit {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                held.push(socket);
            }
        });
        Tarpit { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// One user's endpoint that never answers, fed a stream of test events,
/// holds at most its share of each delivery pass (2 attempts): another
/// user's event goes out in the next pass at the latest, while the tarpit
/// has taken at most two passes' share, not after the whole stream timed
/// out (when one registration could take every worker, the tarpit took 8
/// at once and the other user's event waited behind all 24).
#[tokio::test]
async fn a_tarpit_webhook_does_not_hold_up_other_users_deliveries() {
    let demo = Demo::options()
        .envs(&GENEROUS)
        // Long enough that all 25 events are queued before the first pass
        // ends, however busy the machine.
        .env("QUARRY_WEBHOOKS__TIMEOUT_MS", "15000")
        .start();
    let tarpit = Tarpit::start().await;
    let stalled = register_ok(&demo, &format!("http://127.0.0.1:{}/hook", tarpit.port)).await;
    let receiver = Receiver::start(ReceiverOptions::default());
    let bobs = register(&demo, demo.bob(), json!({ "url": receiver.url() })).await;
    bobs.expect(201, None);
    receiver.set_secrets(&[&secret_of(&bobs.body)]);
    for _ in 0..24 {
        send_test(&demo, demo.alice(), &id_of(&stalled))
            .await
            .expect(202, None);
    }
    send_test(&demo, demo.bob(), &id_of(&bobs.body))
        .await
        .expect(202, None);
    let deliveries = receiver
        .wait_until("bob's test event", PATIENCE, |d| !d.is_empty())
        .await;
    assert_verified(&deliveries[0]);
    let held = tarpit.accepted();
    assert!(
        held <= 4,
        "alice's endpoint took {held} deliveries before bob's went out; at most 2 a pass are hers"
    );
}
