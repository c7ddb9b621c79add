//! `DELETE /delete_my_data`: every trace of the user goes (tokens revoked at
//! the vendors, archive, history, idempotency records, profile, grants,
//! webhooks, API tokens), the counts are real, nothing readable stays on
//! disk, and a deletion killed midway finishes at the next start.

use std::path::Path;
use std::sync::Arc;

use quarry::archive::Archive;
use quarry_store::{Audience, TokenCheck};
use quarry_tests::server::{Demo, DemoOptions};
use quarry_tests::shared;
use reqwest::Method;
use serde_json::json;

use quarry_tests::server::CONNECTORS as CONNECTORS_ALL;

use super::GENEROUS;

/// The demo's connectors whose manifests name a revocation endpoint (all
/// but Zendesk, whose revocation is per subdomain and token id, which a
/// manifest cannot express).
fn revocable() -> Vec<&'static str> {
    let dir = quarry_tests::server::built_connectors();
    CONNECTORS_ALL
        .into_iter()
        .filter(|c| {
            let text = std::fs::read_to_string(dir.join(format!("{c}.toml"))).unwrap();
            quarry::connectors::Manifest::parse(&text)
                .unwrap()
                .oauth
                .and_then(|o| o.revoke)
                .is_some()
        })
        .collect()
}

/// A word no tool's data contains: it marks the question in the archive,
/// the history and the idempotency record, so a grep can look for it.
const MARKER: &str = "quokka7f3a";

fn question() -> String {
    format!("checkout timeouts {MARKER}")
}

fn options(data_dir: &Path) -> DemoOptions {
    Demo::options()
        .envs(&GENEROUS)
        .env("QUARRY_LIMITS__DELETE_MY_DATA__MINUTE", "100")
        .env("QUARRY_LIMITS__DELETE_MY_DATA__DAY", "1000")
        .data_dir(data_dir)
}

/// What alice leaves behind before deleting herself: an archived query
/// (with an idempotency record) whose chunks are returned.
struct Traces {
    user_id: String,
    email: String,
    token: String,
    chunks: Vec<String>,
}

async fn leave_traces(demo: &Demo) -> Traces {
    let me = demo.get("/me", Some(demo.alice())).await;
    me.expect(200, None);
    let reply = demo
        .call(Method::POST, "/query")
        .token(demo.alice())
        .idempotency_key("b6f1a3c2-8d4e-4f5a-9b6c-7d8e9f0a1b2c")
        .json(&json!({ "query": question(), "max_results": 2 }))
        .send()
        .await;
    reply.expect(200, None);
    let chunks: Vec<String> = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["chunks"].as_array().unwrap().iter())
        .map(|c| c["content"].as_str().unwrap().to_string())
        .collect();
    assert!(!chunks.is_empty());
    Traces {
        user_id: me.body["user_id"].as_str().unwrap().to_string(),
        email: me.body["email"].as_str().unwrap().to_string(),
        token: demo.alice().to_string(),
        chunks,
    }
}

/// Files under `dir` that contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle)
        {
            hits.push(path.display().to_string());
        }
    }
    hits
}

#[track_caller]
fn assert_no_plaintext(dir: &Path, traces: &Traces) {
    let mut needles: Vec<&[u8]> = vec![MARKER.as_bytes(), traces.token.as_bytes()];
    // Tokens the demo connected alice with (fake-<connector>-alice).
    let tokens: Vec<String> = CONNECTORS_ALL
        .iter()
        .map(|c| format!("fake-{c}-alice"))
        .collect();
    needles.extend(tokens.iter().map(String::as_bytes));
    // A distinctive stretch of each archived chunk.
    let stretches: Vec<String> = traces
        .chunks
        .iter()
        .map(|c| c.chars().take(40).collect())
        .collect();
    needles.extend(stretches.iter().map(String::as_bytes));
    for needle in needles {
        let mut hits = files_containing(dir, needle);
        if shared::database_holds(dir, needle) {
            hits.push("the PostgreSQL database".into());
        }
        assert!(
            hits.is_empty(),
            "{:?} is readable on disk in {hits:?}",
            String::from_utf8_lossy(needle)
        );
    }
}

/// Opens the data folder the way the server does (the server has exited)
/// and checks that nothing of the user is left in any record.
async fn assert_nothing_left(dir: &Path, traces: &Traces) {
    let store = Arc::new(shared::open_store(dir));
    assert_eq!(store.user(&traces.user_id).unwrap(), None, "profile");
    assert!(
        store.data_key(&traces.user_id).is_err(),
        "the data key is destroyed"
    );
    assert!(
        store.grants(&traces.user_id).map_or(true, |g| g.is_empty()),
        "grants"
    );
    assert_eq!(
        store.check_token(&traces.token, Audience::V1).unwrap(),
        TokenCheck::Unknown,
        "the API token"
    );
    let scheduler = quarry::rank::Scheduler::start(
        Arc::new(quarry::rank::embed::HashedWords::new(384)),
        None,
        1,
        16,
    );
    let archive = Archive::open(store.clone(), scheduler).unwrap();
    assert_eq!(
        archive.entry_count(&traces.user_id).unwrap(),
        0,
        "archive entries"
    );
    assert!(
        archive
            .history(&traces.user_id)
            .map_or(true, |h| h.is_empty()),
        "history"
    );
    drop(archive);
    drop(store);
    assert_no_plaintext(dir, traces);
    // Not even in freed pages of the database file: the user's id (every
    // record's key carries it) is nowhere in the data folder.
    assert_not_on_disk(dir, "the user's id", traces.user_id.as_bytes());
}

#[track_caller]
fn assert_not_on_disk(dir: &Path, what: &str, needle: &[u8]) {
    let hits = files_containing(dir, needle);
    assert!(hits.is_empty(), "{what} is still on disk in {hits:?}");
}

#[tokio::test]
async fn deletion_removes_every_trace_and_reports_real_counts() {
    let data = tempfile::tempdir().unwrap();
    let mut demo = options(data.path()).start();
    let traces = leave_traces(&demo).await;
    let webhook = demo
        .post(
            "/webhooks",
            Some(demo.alice()),
            &json!({ "url": "https://127.0.0.1:9/never-answers", "events": ["user.deleted"] }),
        )
        .await;
    webhook.expect(201, None);
    demo.stop();
    // Before deletion too, nothing readable is on disk.
    assert_no_plaintext(data.path(), &traces);
    let wrapped_key = shared::open_store(data.path())
        .wrapped_data_key(&traces.user_id)
        .unwrap()
        .expect("alice has a data key");
    let demo = options(data.path()).start();
    // The restart issued alice a new token; the old one still counts.
    let alice = demo.alice().to_string();
    let archived = {
        let reply = demo
            .post(
                "/deep_search",
                Some(&alice),
                &json!({ "query": question(), "max_results": 50 }),
            )
            .await;
        reply.expect(200, None);
        reply.body["total_matches"].as_u64().unwrap()
    };
    assert_eq!(archived, traces.chunks.len() as u64);

    let reply = demo.delete("/delete_my_data", Some(&alice)).await;
    reply.expect(200, None);
    assert_eq!(reply.body["status"], "deletion_confirmed");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("permanent")
    );
    let details = &reply.body["details"];
    let revocable = revocable();
    assert_eq!(
        details["oauth_tokens_revoked"],
        revocable.len() as u64,
        "{reply}"
    );
    assert_eq!(details["archive_entries_removed"], archived);
    assert_eq!(details["webhooks_unregistered"], 1);
    assert_eq!(details["profile_deleted"], true);
    assert_eq!(details["query_history_deleted"], true);

    let revoked = demo.fake("/_fake/revoked").await;
    for connector in CONNECTORS_ALL {
        let token = format!("fake-{connector}-alice");
        assert_eq!(
            revoked
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == token.as_str()),
            revocable.contains(&connector),
            "{token} was revoked at the vendor if its manifest says how: {revoked}"
        );
    }
    for token in [alice.as_str(), traces.token.as_str()] {
        demo.get("/me", Some(token))
            .await
            .expect(401, Some("unauthorized"));
    }
    // Bob is untouched.
    demo.get("/me", Some(demo.bob())).await.expect(200, None);
    drop(demo);
    assert_nothing_left(data.path(), &traces).await;
    // The email and the wrapped data key are not left in freed pages of
    // the database file either. (This demo was not started again after the
    // deletion: a start makes alice anew, with her email.)
    assert_not_on_disk(data.path(), "the email", traces.email.as_bytes());
    assert_not_on_disk(data.path(), "the wrapped data key", &wrapped_key);
}

/// The process is killed (SIGKILL, by a failpoint) at each step of a
/// deletion; the next start finishes it, and nothing of the user survives.
#[tokio::test]
async fn a_deletion_killed_midway_finishes_at_the_next_start() {
    for failpoint in [
        "deletion:recorded",
        "deletion:revoked",
        "deletion:key-destroyed",
    ] {
        let data = tempfile::tempdir().unwrap();
        let mut demo = options(data.path())
            .env("QUARRY_FAILPOINT", failpoint)
            .start();
        let traces = leave_traces(&demo).await;
        let outcome = demo
            .call(Method::DELETE, "/delete_my_data")
            .token(&traces.token)
            .try_send()
            .await;
        assert!(outcome.is_err(), "{failpoint}: the server died mid-request");
        let status = demo.wait_for_exit();
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9), "{failpoint}: killed by SIGKILL");
        }
        drop(demo);

        let demo = options(data.path()).start();
        assert!(
            demo.log().contains("resuming a deletion"),
            "{failpoint}: the deletion resumed at start"
        );
        demo.get("/me", Some(&traces.token))
            .await
            .expect(401, Some("unauthorized"));
        if failpoint == "deletion:recorded" {
            // Killed before revoking: the revocations happen on resume.
            let revoked = demo.fake("/_fake/revoked").await;
            assert!(
                revoked
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t == "fake-slack-alice"),
                "{failpoint}: {revoked}"
            );
        }
        drop(demo);
        assert_nothing_left(data.path(), &traces).await;
    }
}

/// `user.deleted` goes, signed, to the operator's endpoint and to the
/// endpoints the user had registered, verified by the official Standard
/// Webhooks library.
#[tokio::test]
async fn user_deleted_is_signed_and_sent_to_the_operator_and_the_user() {
    use quarry_tests::webhook_receiver::{Receiver, ReceiverOptions};
    let operator = Receiver::start(ReceiverOptions::default());
    let users = Receiver::start(ReceiverOptions::default());
    let operator_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    operator.set_secrets(&[operator_secret]);
    let endpoints = format!(
        r#"[{{ url = "{}", secret = "{operator_secret}" }}]"#,
        operator.url()
    );
    let data = tempfile::tempdir().unwrap();
    let demo = options(data.path())
        .env("QUARRY_WEBHOOKS__ENDPOINTS", &endpoints)
        .start();
    let me = demo.get("/me", Some(demo.alice())).await;
    let user_id = me.body["user_id"].as_str().unwrap().to_string();
    let registration = demo
        .post(
            "/webhooks",
            Some(demo.alice()),
            &json!({ "url": users.url(), "events": ["user.deleted"] }),
        )
        .await;
    registration.expect(201, None);
    users.set_secrets(&[registration.body["secret"].as_str().unwrap()]);

    let reply = demo.delete("/delete_my_data", Some(demo.alice())).await;
    reply.expect(200, None);
    let patience = std::time::Duration::from_secs(120);
    for (who, receiver) in [("operator", &operator), ("user", &users)] {
        let deliveries = receiver
            .wait_until(
                &format!("user.deleted at the {who}'s endpoint"),
                patience,
                |d| !d.is_empty(),
            )
            .await;
        let delivery = &deliveries[0];
        assert!(delivery.verified, "{who}: {delivery:#?}");
        assert_eq!(delivery.payload["type"], "user.deleted");
        assert_eq!(delivery.payload["data"]["user_id"], user_id.as_str());
        assert_eq!(
            delivery.payload["data"]["details"]["webhooks_unregistered"], 1,
            "{who}: the event carries the deletion's counts"
        );
    }
}

/// Deletions of one user started at the same moment end in one
/// `user.deleted`, not one per request.
#[tokio::test(flavor = "multi_thread")]
async fn deletions_started_at_once_send_one_user_deleted() {
    use quarry_tests::webhook_receiver::{Receiver, ReceiverOptions};
    let operator = Receiver::start(ReceiverOptions::default());
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    operator.set_secrets(&[secret]);
    let endpoints = format!(r#"[{{ url = "{}", secret = "{secret}" }}]"#, operator.url());
    let data = tempfile::tempdir().unwrap();
    let demo = options(data.path())
        .env("QUARRY_WEBHOOKS__ENDPOINTS", &endpoints)
        .start();
    let token = demo.alice().to_string();
    let deletions = (0..6).map(|_| demo.delete("/delete_my_data", Some(&token)));
    let replies = futures::future::join_all(deletions).await;
    assert!(
        replies.iter().any(|r| r.status == 200),
        "one of them deleted: {:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let patience = std::time::Duration::from_secs(120);
    operator
        .wait_until("user.deleted at the operator", patience, |d| !d.is_empty())
        .await;
    // Time for a second one to arrive, if one were queued.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let deliveries = operator
        .wait_until("the deliveries", patience, |d| !d.is_empty())
        .await;
    let deleted: Vec<_> = deliveries
        .iter()
        .filter(|d| d.payload["type"] == "user.deleted")
        .collect();
    assert_eq!(deleted.len(), 1, "{deliveries:#?}");
}
