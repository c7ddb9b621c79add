//! Server-side refresh of connectors' OAuth tokens against the fake
//! vendors' token endpoints: a token near expiry is renewed before use,
//! parallel queries refresh it once, and a refresh the vendor refuses
//! marks the connection as needing the user to connect again.

use std::sync::Arc;
use std::time::Duration;

use quarry::connectors::upstream::Upstream;
use quarry::oauth::{Refresher, Vendors};
use quarry_store::secret::Secret;
use quarry_store::{Grant, GrantStatus, Store, now};
use quarry_tests::{Harness, network_for};

struct Setup {
    harness: Harness,
    store: Arc<Store>,
    refresher: Refresher,
    user: String,
    _data: tempfile::TempDir,
}

async fn setup() -> Setup {
    let harness = Harness::start(&["slack"]).await;
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(data.path(), None).unwrap());
    let user = store.create_user("alice@acme.test").unwrap().id;
    let client = Upstream::new(&network_for(&harness.fake))
        .unwrap()
        .client()
        .clone();
    let vendors = Arc::new(Vendors::new(client, Default::default()));
    let refresher = Refresher::new(store.clone(), harness.registry.clone(), vendors);
    Setup {
        harness,
        store,
        refresher,
        user,
        _data: data,
    }
}

/// A slack grant whose access token expires in `seconds`.
fn expiring_grant(setup: &Setup, seconds: i64) -> Grant {
    let pair = setup.harness.fake.issue_token(
        "slack",
        "alice",
        Some(Duration::from_secs(seconds.max(1) as u64)),
    );
    let pair = serde_json::to_value(pair).unwrap();
    Grant {
        access_token: Secret::new(pair["access_token"].as_str().unwrap()),
        refresh_token: Some(Secret::new(pair["refresh_token"].as_str().unwrap())),
        expires_at: Some(now() + seconds),
        settings: Vec::new(),
        status: GrantStatus::Connected,
        connected_at: now(),
    }
}

fn token_requests(setup: &Setup) -> usize {
    setup
        .harness
        .fake
        .requests()
        .iter()
        .filter(|r| r.path.contains("oauth.v2.access"))
        .count()
}

#[tokio::test]
async fn a_token_near_expiry_is_refreshed_once_for_parallel_queries() {
    let s = setup().await;
    let grant = expiring_grant(&s, 30);
    let old = grant.access_token.expose().to_string();
    s.store.put_grant(&s.user, "slack", &grant).unwrap();

    let calls = (0..5).map(|_| s.refresher.fresh(&s.user, "slack", grant.clone()));
    let fresh = futures::future::join_all(calls).await;
    let renewed = fresh[0].access_token.expose().to_string();
    assert_ne!(renewed, old, "a new access token");
    assert!(
        fresh.iter().all(|g| g.access_token.expose() == renewed),
        "all five use the one refresh"
    );
    assert_eq!(
        token_requests(&s),
        1,
        "single flight: one call to the token endpoint"
    );
    let stored = s.store.grant(&s.user, "slack").unwrap().unwrap();
    assert_eq!(
        stored.access_token.expose(),
        renewed,
        "the renewed grant is stored"
    );
    assert!(stored.expires_at.unwrap() > now() + 120);

    // The renewed token works at the vendor.
    let documents = s
        .harness
        .registry
        .search(
            "slack",
            &quarry_tests::request("checkout timeouts", 5),
            Some(stored.access_token.clone()),
        )
        .await
        .expect("the refreshed token searches");
    assert!(!documents.is_empty());

    // A token far from expiry is left alone.
    let again = s.refresher.fresh(&s.user, "slack", stored.clone()).await;
    assert_eq!(again.access_token.expose(), renewed);
    assert_eq!(token_requests(&s), 1);
}

#[tokio::test]
async fn a_refused_refresh_marks_the_connection_for_reconnection() {
    let s = setup().await;
    let mut grant = expiring_grant(&s, 30);
    // A refresh token the vendor never issued (or revoked): invalid_grant.
    grant.refresh_token = Some(Secret::new("xoxe-1-not-a-real-refresh-token"));
    s.store.put_grant(&s.user, "slack", &grant).unwrap();
    let result = s.refresher.fresh(&s.user, "slack", grant).await;
    assert_eq!(result.status, GrantStatus::NeedsReconnect);
    assert_eq!(
        s.store.grant(&s.user, "slack").unwrap().unwrap().status,
        GrantStatus::NeedsReconnect,
        "stored, so /v1/me and /v1/connectors show it"
    );
}
