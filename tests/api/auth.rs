//! Bearer tokens (missing, malformed, unknown, expired → 401 with
//! `X-Token-Expired`), and what a valid token sees: `GET /me` and
//! `GET /connectors`.

use std::time::Duration;

use quarry_tests::server::{CONNECTORS, Demo, Reply, parse_rfc3339_utc, unix_now};
use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::json;

use super::QUESTION;

#[track_caller]
fn assert_unauthorized(reply: &Reply, expired: bool) {
    reply.expect(401, Some("unauthorized"));
    assert_eq!(
        reply.header("x-token-expired"),
        Some(if expired { "true" } else { "false" }),
        "X-Token-Expired: {reply}"
    );
    let challenge = reply.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.to_ascii_lowercase().starts_with("bearer"),
        "a 401 names the Bearer scheme (RFC 6750): {challenge:?}"
    );
    assert!(!reply.error_message().is_empty());
}

#[tokio::test]
async fn a_missing_token_is_401_not_expired() {
    let demo = Demo::start(&[]);
    assert_unauthorized(&demo.get("/me", None).await, false);
    assert_unauthorized(&demo.get("/connectors", None).await, false);
    assert_unauthorized(
        &demo
            .post("/query", None, &json!({ "query": QUESTION }))
            .await,
        false,
    );
    // Authentication comes before validation: an invalid body is still a 401.
    assert_unauthorized(
        &demo.post("/query", None, &json!({ "query": "" })).await,
        false,
    );
    let raw = demo
        .call(Method::POST, "/query")
        .raw("{not json", Some("text/plain"))
        .send()
        .await;
    assert_unauthorized(&raw, false);
}

#[tokio::test]
async fn malformed_and_unknown_tokens_are_401_not_expired() {
    let demo = Demo::start(&[]);
    let alice = demo.alice().to_string();
    let values = [
        "Bearer".to_string(),
        "Bearer ".to_string(),
        "Bearer qt_".to_string(),
        "Basic YWxpY2U6c2VjcmV0".to_string(),
        format!("Token {alice}"),
        alice.clone(),
        format!("Bearer {alice}x"),
        format!("Bearer {}", &alice[..alice.len() - 1]),
        format!("Bearer {}", alice.to_uppercase()),
        "Bearer qt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_string(),
        "Bearer not-a-quarry-token".to_string(),
        format!("Bearer {}", "x".repeat(4000)),
        format!("Bearer {alice} {alice}"),
    ];
    for value in &values {
        let reply = demo
            .call(Method::GET, "/me")
            .header("authorization", value)
            .send()
            .await;
        assert_unauthorized(&reply, false);
        let reply = demo
            .call(Method::POST, "/query")
            .header("authorization", value)
            .json(&json!({ "query": QUESTION }))
            .send()
            .await;
        assert_unauthorized(&reply, false);
    }
    // Bytes that are not text.
    let reply = demo
        .call(Method::GET, "/me")
        .header_value(
            "authorization",
            HeaderValue::from_bytes(b"Bearer qt_\xff\xfe").unwrap(),
        )
        .send()
        .await;
    assert_unauthorized(&reply, false);
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let demo = Demo::start(&[]);
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let reply = demo
            .call(Method::GET, "/me")
            .header("authorization", &format!("{scheme} {}", demo.alice()))
            .send()
            .await;
        reply.expect(200, None);
    }
}

#[tokio::test]
async fn an_expired_token_is_401_expired() {
    let demo = Demo::options().token_ttl_seconds(1).start();
    // Tokens were issued before the demo printed them; 1 s later they are
    // expired. Waiting a little more keeps clear of the second's edge.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for token in [demo.alice().to_string(), demo.bob().to_string()] {
        assert_unauthorized(&demo.get("/me", Some(&token)).await, true);
        assert_unauthorized(&demo.get("/connectors", Some(&token)).await, true);
        assert_unauthorized(
            &demo
                .post("/query", Some(&token), &json!({ "query": QUESTION }))
                .await,
            true,
        );
    }
    // An unknown token is still "not expired" on the same server.
    assert_unauthorized(&demo.get("/me", Some("qt_unknown")).await, false);
}

#[tokio::test]
async fn me_names_the_user_their_connectors_and_the_token_expiry() {
    let demo = Demo::start(&[]);
    let alice = demo.get("/me", Some(demo.alice())).await;
    alice.expect(200, None);
    let bob = demo.get("/me", Some(demo.bob())).await;
    bob.expect(200, None);
    assert_eq!(alice.body["email"], json!("alice@acme.test"));
    assert_eq!(bob.body["email"], json!("bob@acme.test"));
    let alice_id = alice.body["user_id"].as_str().unwrap();
    let bob_id = bob.body["user_id"].as_str().unwrap();
    assert!(
        alice_id.starts_with("usr_") && alice_id.len() > 4,
        "{alice_id}"
    );
    assert!(bob_id.starts_with("usr_"), "{bob_id}");
    assert_ne!(alice_id, bob_id);
    for me in [&alice, &bob] {
        let expires = me.body["token_expires_at"].as_str().unwrap();
        let expires = parse_rfc3339_utc(expires)
            .unwrap_or_else(|| panic!("token_expires_at {expires:?} is not RFC 3339 UTC"));
        let now = unix_now();
        // Issued at the demo's start with a 3600 s lifetime.
        assert!(
            expires > now + 3000 && expires <= now + 3601,
            "token_expires_at is {} s from now",
            expires - now
        );
        let mut ids: Vec<&str> = me.body["connectors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["status"], json!("connected"), "{c}");
                assert!(!c["label"].as_str().unwrap().is_empty());
                c["id"].as_str().unwrap()
            })
            .collect();
        ids.sort();
        assert_eq!(ids, CONNECTORS);
    }
}

#[tokio::test]
async fn connectors_lists_every_connected_tool() {
    let demo = Demo::start(&[]);
    for token in [demo.alice().to_string(), demo.bob().to_string()] {
        let reply = demo.get("/connectors", Some(&token)).await;
        reply.expect(200, None);
        let list = reply.body["connectors"].as_array().unwrap();
        let mut ids: Vec<&str> = list
            .iter()
            .map(|c| {
                assert_eq!(c["connected"], json!(true), "{c}");
                assert_eq!(c["status"], json!("connected"), "{c}");
                assert!(!c["label"].as_str().unwrap().is_empty(), "{c}");
                assert!(!c["description"].as_str().unwrap().is_empty(), "{c}");
                c["id"].as_str().unwrap()
            })
            .collect();
        ids.sort();
        assert_eq!(ids, CONNECTORS);
        // The ids are the ones /query accepts.
        let scoped = demo
            .post(
                "/query",
                Some(&token),
                &json!({ "query": QUESTION, "connectors": ids, "max_results": 1 }),
            )
            .await;
        scoped.expect(200, None);
    }
}
