//! The webhooks end to end inside one process: registrations in a real
//! store, the worker delivering to a local receiver.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use super::*;
use crate::config::{OperatorEndpoint, WebhookConfig};

fn lax(schedule: &[u64]) -> WebhookConfig {
    WebhookConfig {
        allow_plain_http: true,
        allow_private_targets: true,
        retry_schedule_seconds: schedule.to_vec(),
        timeout_ms: 5_000,
        ..WebhookConfig::default()
    }
}

fn store() -> (tempfile::TempDir, Arc<Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), None).unwrap());
    (dir, store)
}

/// A receiver that answers each request with the next status of `script`
/// (then 204), and keeps what it received.
struct Receiver {
    url: String,
    seen: Arc<Mutex<Vec<(HeaderMap, String)>>>,
}

async fn receiver(script: Vec<u16>) -> Receiver {
    let seen: Arc<Mutex<Vec<(HeaderMap, String)>>> = Arc::default();
    let script = Arc::new(Mutex::new(script.into_iter()));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post({
            let seen = seen.clone();
            move |headers: HeaderMap, body: String| async move {
                seen.lock().unwrap().push((headers, body));
                let status = script.lock().unwrap().next().unwrap_or(204);
                let status = StatusCode::from_u16(status).unwrap();
                (status, [("retry-after", "0")])
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Receiver { url, seen }
}

/// Polls until `done` holds (a guard against a hang, not a measurement).
async fn eventually(mut done: impl FnMut() -> bool) {
    for _ in 0..600 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not done after 30 s");
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers[name].to_str().unwrap().to_string()
}

fn signed_with(headers: &HeaderMap, body: &str, secret: &str) -> bool {
    let key = signing::key_of(secret).unwrap();
    let timestamp: i64 = header(headers, "webhook-timestamp").parse().unwrap();
    let id = header(headers, "webhook-id");
    header(headers, "webhook-signature") == signing::sign(&key, &id, timestamp, body.as_bytes())
}

/// Checks the signature and the headers; the event.
fn verify(headers: &HeaderMap, body: &str, secret: &str) -> Value {
    assert!(signed_with(headers, body, secret), "bad signature");
    let timestamp: i64 = header(headers, "webhook-timestamp").parse().unwrap();
    assert!(
        (timestamp - now()).abs() < 60,
        "the timestamp is this attempt's"
    );
    assert_eq!(header(headers, "content-type"), "application/json");
    serde_json::from_str(body).unwrap()
}

#[test]
fn events_default_dedupe_and_unknown_ones_are_named() {
    assert_eq!(check_events(None).unwrap(), ["user.deleted"]);
    assert_eq!(check_events(Some(vec![])).unwrap(), ["user.deleted"]);
    assert_eq!(
        check_events(Some(vec!["user.deleted".into(), "user.deleted".into()])).unwrap(),
        ["user.deleted"]
    );
    let error = check_events(Some(vec!["user.created".into()])).unwrap_err();
    assert!(
        error.contains("events") && error.contains("user.created"),
        "{error}"
    );
    let error = check_events(Some(vec!["webhook.test".into()])).unwrap_err();
    assert!(error.contains("webhook.test"), "{error}");
}

#[tokio::test]
async fn registrations_are_per_user_limited_and_sealed() {
    let (dir, store) = store();
    let alice = store.create_user("alice@example.com").unwrap();
    let bob = store.create_user("bob@example.com").unwrap();
    let webhooks = Webhooks::new(store.clone(), lax(&[0])).unwrap();
    let first = webhooks
        .register(&alice.id, "http://127.0.0.1:9/hook", None)
        .await
        .unwrap();
    assert!(first.id.starts_with("wh_") && first.secret.starts_with("whsec_"));
    assert_eq!(first.events, ["user.deleted"]);
    for _ in 1..MAX_PER_USER {
        webhooks
            .register(&alice.id, "http://127.0.0.1:9/hook", None)
            .await
            .unwrap();
    }
    let Err(RegisterError::Invalid(message)) = webhooks
        .register(&alice.id, "http://127.0.0.1:9/hook", None)
        .await
    else {
        panic!("the 21st registration is refused");
    };
    assert!(message.contains("20"), "{message}");
    assert_eq!(webhooks.list(&alice.id).unwrap().len(), MAX_PER_USER);
    assert!(webhooks.list(&bob.id).unwrap().is_empty());
    assert!(!webhooks.unregister(&bob.id, &first.id).unwrap());
    assert!(webhooks.send_test(&bob.id, &first.id).unwrap().is_none());
    assert!(webhooks.unregister(&alice.id, &first.id).unwrap());
    assert!(!webhooks.unregister(&alice.id, &first.id).unwrap());

    let secret = webhooks.list(&alice.id).unwrap()[0].secret.clone();
    drop(webhooks);
    drop(store);
    let file = std::fs::read(dir.path().join("quarry.redb")).unwrap();
    assert!(
        !file.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "secrets are sealed at rest"
    );
}

#[tokio::test]
async fn the_worker_signs_retries_with_the_same_id_and_delivers() {
    let (_dir, store) = store();
    let user = store.create_user("a@example.com").unwrap();
    let receiver = receiver(vec![503, 500]).await;
    let webhooks = Arc::new(Webhooks::new(store, lax(&[0, 0, 0])).unwrap());
    let registration = webhooks
        .register(&user.id, &receiver.url, None)
        .await
        .unwrap();
    webhooks.start();
    let queued = webhooks
        .send_test(&user.id, &registration.id)
        .unwrap()
        .unwrap();
    eventually(|| receiver.seen.lock().unwrap().len() == 3).await;
    eventually(|| webhooks.pending().unwrap().is_empty()).await;
    let seen = receiver.seen.lock().unwrap().clone();
    for (headers, body) in &seen {
        assert_eq!(headers["webhook-id"].to_str().unwrap(), queued.message_id);
        let event = verify(headers, body, &registration.secret);
        assert_eq!(event["type"], json!("webhook.test"));
        assert_eq!(event["data"]["webhook_id"], json!(registration.id));
        assert!(event["timestamp"].as_str().unwrap().ends_with('Z'));
    }
    assert_eq!(seen[0].1, seen[2].1, "every attempt sends the same body");
    webhooks.stop().await;
}

#[tokio::test]
async fn a_delivery_is_given_up_after_the_schedule() {
    let (_dir, store) = store();
    let user = store.create_user("a@example.com").unwrap();
    let receiver = receiver(vec![500; 10]).await;
    let webhooks = Arc::new(Webhooks::new(store, lax(&[0, 0])).unwrap());
    let registration = webhooks
        .register(&user.id, &receiver.url, None)
        .await
        .unwrap();
    webhooks.start();
    webhooks.send_test(&user.id, &registration.id).unwrap();
    eventually(|| !webhooks.given_up().unwrap().is_empty()).await;
    let given_up = webhooks.given_up().unwrap();
    assert_eq!(given_up[0].attempts, 2);
    assert_eq!(
        given_up[0].webhook_id.as_deref(),
        Some(registration.id.as_str())
    );
    let error = given_up[0].last_error.as_deref().unwrap();
    assert!(
        error.contains("500") && !error.contains("127.0.0.1"),
        "{error}"
    );
    assert!(webhooks.pending().unwrap().is_empty());
    assert_eq!(receiver.seen.lock().unwrap().len(), 2);
    webhooks.stop().await;
}

#[tokio::test]
async fn user_deleted_goes_to_the_snapshot_and_the_operator() {
    let (_dir, store) = store();
    let user = store.create_user("a@example.com").unwrap();
    let receiver = receiver(vec![]).await;
    let operator_secret = signing::new_secret();
    let config = WebhookConfig {
        endpoints: vec![OperatorEndpoint {
            url: receiver.url.clone(),
            secret: operator_secret.clone(),
        }],
        ..lax(&[0])
    };
    let webhooks = Arc::new(Webhooks::new(store.clone(), config).unwrap());
    let mine = webhooks
        .register(&user.id, &receiver.url, Some(vec!["user.deleted".into()]))
        .await
        .unwrap();
    // The snapshot, then the user's registrations go and the event is
    // queued in one transaction, as the deletion does it.
    let mut targets = webhooks.targets_of(&user.id).unwrap();
    assert_eq!(targets.len(), 1);
    targets.extend(webhooks.operator_targets());
    let mut txn = store.write().unwrap();
    let removed = quarry_store::remove_user(SPACES, &mut txn, &user.id).unwrap();
    assert_eq!(removed, [0, 1], "no owned deliveries; one registration");
    let queued = webhooks
        .enqueue_in(
            &mut txn,
            USER_DELETED,
            json!({ "user_id": user.id }),
            &targets,
        )
        .unwrap();
    txn.commit().unwrap();
    assert_eq!(queued, 2);
    assert!(webhooks.list(&user.id).unwrap().is_empty());
    webhooks.start();
    webhooks.wake();
    eventually(|| receiver.seen.lock().unwrap().len() == 2).await;
    let seen = receiver.seen.lock().unwrap().clone();
    let mut secrets = vec![mine.secret.as_str(), operator_secret.as_str()];
    for (headers, body) in &seen {
        // Each target verifies with its own secret.
        let at = secrets
            .iter()
            .position(|s| signed_with(headers, body, s))
            .expect("signed with one of the secrets");
        let event = verify(headers, body, secrets.remove(at));
        assert_eq!(event["type"], json!("user.deleted"));
        assert_eq!(event["data"]["user_id"], json!(user.id));
    }
    webhooks.stop().await;
}

#[tokio::test]
async fn pending_deliveries_survive_a_restart_and_removed_registrations_drop_theirs() {
    let (_dir, store) = store();
    let user = store.create_user("a@example.com").unwrap();
    let receiver = receiver(vec![]).await;
    let before = Webhooks::new(store.clone(), lax(&[0])).unwrap();
    let kept = before
        .register(&user.id, &receiver.url, None)
        .await
        .unwrap();
    let removed = before
        .register(&user.id, &receiver.url, None)
        .await
        .unwrap();
    let queued = before.send_test(&user.id, &kept.id).unwrap().unwrap();
    before.send_test(&user.id, &removed.id).unwrap().unwrap();
    assert!(before.unregister(&user.id, &removed.id).unwrap());
    // The worker never ran: a server stopped before delivering.
    drop(before);

    let after = Arc::new(Webhooks::new(store, lax(&[0])).unwrap());
    assert_eq!(after.pending().unwrap().len(), 2);
    after.start();
    eventually(|| after.pending().unwrap().is_empty()).await;
    let seen = receiver.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "only the registration that still exists");
    assert_eq!(seen[0].0["webhook-id"].to_str().unwrap(), queued.message_id);
    verify(&seen[0].0, &seen[0].1, &kept.secret);
    after.stop().await;
}

#[tokio::test]
async fn operator_endpoints_are_checked_at_start() {
    let (_dir, store) = store();
    let bad_secret = WebhookConfig {
        endpoints: vec![OperatorEndpoint {
            url: "https://1.1.1.1/hook".into(),
            secret: "not-a-secret".into(),
        }],
        ..WebhookConfig::default()
    };
    let error = format!(
        "{:#}",
        Webhooks::new(store.clone(), bad_secret).err().unwrap()
    );
    assert!(
        error.contains("endpoints[0].secret") && !error.contains("not-a-secret"),
        "{error}"
    );
    let plain = WebhookConfig {
        endpoints: vec![OperatorEndpoint {
            url: "http://1.1.1.1/hook".into(),
            secret: signing::new_secret(),
        }],
        ..WebhookConfig::default()
    };
    let error = format!("{:#}", Webhooks::new(store, plain).err().unwrap());
    assert!(
        error.contains("endpoints[0]") && error.contains("https"),
        "{error}"
    );
}
