//! One hostile plugin per sandbox guarantee. Each test proves the host
//! refused, and that the fake upstream saw nothing it should not have.

use std::time::Duration;

use fake_saas::Fault;
use quarry::connectors::ErrorKind;
use quarry_tests::{Harness, request};

async fn hostile() -> Harness {
    Harness::start(&["hostile", "github"]).await
}

/// Runs one attack and returns what the host answered to each fetch.
async fn attack(h: &Harness, name: &str) -> Vec<(String, String)> {
    let docs = h
        .search("hostile", &request(name, 10))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    docs.into_iter().map(|d| (d.id, d.content)).collect()
}

fn assert_all_denied(outcomes: &[(String, String)]) {
    assert!(!outcomes.is_empty());
    for (what, outcome) in outcomes {
        assert!(
            outcome.starts_with("denied: "),
            "{what} was not denied: {outcome}"
        );
    }
}

#[tokio::test]
async fn an_infinite_loop_traps_at_the_deadline_and_others_keep_serving() {
    let h = hostile().await;
    let spin = request("infinite-loop", 10);
    let looping = h.search("hostile", &spin);
    let honest = async {
        // Started while the loop spins: the sandbox yields, so it answers.
        tokio::time::sleep(Duration::from_millis(100)).await;
        h.search("github", &request("checkout", 5)).await
    };
    let (looped, answered) = tokio::join!(looping, honest);
    let error = looped.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Timeout, "{error}");
    assert!(!answered.expect("github answers beside the loop").is_empty());
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let h = hostile().await;
    let error = h
        .search("hostile", &request("memory-bomb", 10))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Crashed);
    assert!(error.message.contains("memory limit"), "{error}");
    // The sandbox is not poisoned: the next call works.
    assert!(h.search("hostile", &request("noop", 10)).await.is_ok());
}

#[tokio::test]
async fn hosts_outside_the_manifest_are_unreachable() {
    let h = hostile().await;
    let outcomes = attack(&h, "foreign-hosts").await;
    assert_eq!(outcomes.len(), 12);
    assert_all_denied(&outcomes);
    assert!(
        h.fake.requests().is_empty(),
        "upstream saw {:?}",
        h.fake.requests()
    );
}

#[tokio::test]
async fn methods_the_contract_lacks_cannot_be_sent() {
    let h = hostile().await;
    // PUT/DELETE have no representation in wit/v1; a guest forging the
    // enum's discriminant traps in the host's lifting, before any policy.
    let error = h
        .search("hostile", &request("undeclared-method", 10))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Crashed, "{error}");
    assert!(h.fake.requests().is_empty());
    let wit =
        std::fs::read_to_string(quarry_tests::repo_root().join("wit/v1/connector.wit")).unwrap();
    let methods = wit
        .split("enum method {")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap();
    let names: Vec<&str> = methods
        .split(',')
        .map(|m| m.trim())
        .filter(|m| !m.is_empty())
        .collect();
    assert_eq!(names, ["get", "head", "post"]);
}

#[tokio::test]
async fn post_is_refused_on_read_routes_and_get_cannot_carry_a_body() {
    let h = hostile().await;
    assert_all_denied(&attack(&h, "post-to-read-route").await);
    assert_all_denied(&attack(&h, "get-with-body").await);
    assert!(h.fake.requests().is_empty());
}

#[tokio::test]
async fn graphql_mutations_subscriptions_and_batches_are_refused() {
    let h = hostile().await;
    let outcomes = attack(&h, "graphql-mutation").await;
    assert_eq!(outcomes.len(), 4);
    assert_all_denied(&outcomes);
    assert!(h.fake.requests().is_empty());
}

#[tokio::test]
async fn the_guest_cannot_set_credentials_and_never_sees_them() {
    let h = hostile().await;
    let outcomes = attack(&h, "set-authorization").await;
    assert_eq!(outcomes[0].1, "ok 200");
    let seen = h.fake.requests();
    assert_eq!(seen.len(), 1);
    let header = |name: &str| {
        seen[0]
            .headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(header("authorization"), ["Bearer fake-github-alice"]);
    assert!(header("cookie").is_empty());
    assert!(header("proxy-authorization").is_empty());
}

#[tokio::test]
async fn redirects_to_foreign_hosts_are_refused() {
    let h = hostile().await;
    h.fake.set_fault(
        "api.github.com",
        Fault {
            redirect_to: Some("https://evil.example.com/collect".into()),
            ..Fault::default()
        },
    );
    let outcomes = attack(&h, "redirect").await;
    assert!(
        outcomes[0].1.starts_with("denied: redirect refused"),
        "{:?}",
        outcomes
    );
    let seen = h.fake.requests();
    assert_eq!(seen.len(), 1, "only the first hop reaches an upstream");
    assert_eq!(seen[0].host, "api.github.com");
}

#[tokio::test]
async fn responses_over_the_size_cap_are_refused() {
    let h = hostile().await;
    h.fake.set_fault(
        "api.github.com",
        Fault {
            oversize_bytes: Some(3 * 1024 * 1024),
            ..Fault::default()
        },
    );
    let outcomes = attack(&h, "oversize").await;
    assert!(
        outcomes[0]
            .1
            .starts_with("limit: response is larger than 1048576 bytes"),
        "{:?}",
        outcomes
    );
}

#[tokio::test]
async fn fetches_past_the_cap_are_refused() {
    let h = hostile().await;
    let outcomes = attack(&h, "many-fetches").await;
    assert_eq!(outcomes.len(), 50);
    let ok = outcomes.iter().filter(|(_, o)| o == "ok 200").count();
    assert_eq!(ok, 5, "the manifest allows 5 fetches");
    assert!(outcomes[5..].iter().all(|(_, o)| o.starts_with("limit: ")));
    assert_eq!(h.fake.requests().len(), 5);
}

/// A batch is counted against the fetch cap before any request leaves, and
/// one that does not fit is refused whole: nothing reaches the upstream.
#[tokio::test]
async fn a_batch_past_the_fetch_cap_is_refused_whole() {
    let h = hostile().await;
    let outcomes = attack(&h, "batch-over-cap").await;
    assert_eq!(outcomes.len(), 6);
    assert!(
        outcomes.iter().all(|(_, o)| o.starts_with("limit: ")),
        "{outcomes:?}"
    );
    assert_eq!(h.fake.requests().len(), 0);
}

/// Allowed and denied requests in one batch are each answered on their
/// own; the denied ones never reach the upstream.
#[tokio::test]
async fn a_batch_mixing_allowed_and_denied_requests_answers_each() {
    let h = hostile().await;
    let outcomes = attack(&h, "batch-mixed").await;
    let outcomes: Vec<&str> = outcomes.iter().map(|(_, o)| o.as_str()).collect();
    assert_eq!(outcomes.len(), 4);
    assert_eq!(outcomes[0], "ok 200");
    assert!(outcomes[1].starts_with("denied: "), "{outcomes:?}");
    assert_eq!(outcomes[2], "ok 200");
    assert!(outcomes[3].starts_with("denied: "), "{outcomes:?}");
    let seen = h.fake.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter().all(|r| !format!("{r:?}").contains("/user")),
        "{seen:?}"
    );
}

/// A batch never has more requests in flight than the manifest's
/// `max_concurrent_fetches` (2 for the hostile plugin), as the upstream
/// sees it, yet does send them concurrently.
#[tokio::test]
async fn a_batch_keeps_to_the_in_flight_ceiling() {
    let h = hostile().await;
    h.fake.set_latency(Duration::from_millis(150));
    let outcomes = attack(&h, "batch-wide").await;
    assert!(outcomes.iter().all(|(_, o)| o == "ok 200"), "{outcomes:?}");
    assert_eq!(h.fake.requests().len(), 5);
    assert_eq!(
        h.fake.most_in_flight(),
        2,
        "the upstream saw more or fewer than 2 requests at once"
    );
}

/// A batch of slow requests still ends at the call's deadline (2 s for
/// the hostile plugin, below the 10 s fetch timeout), and other calls go
/// on being served.
#[tokio::test]
async fn a_batch_of_slow_requests_ends_at_the_call_deadline() {
    let h = hostile().await;
    h.fake.set_fault(
        "api.github.com",
        Fault {
            latency: Some(Duration::from_secs(30)),
            count: Some(3),
            ..Fault::default()
        },
    );
    let error = h
        .search("hostile", &request("batch-slow", 10))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Timeout, "{error}");
    assert!(h.search("hostile", &request("noop", 10)).await.is_ok());
}

/// Within a batch the credential goes exactly where a single fetch would
/// send it: to the hosts of `auth.hosts`, replacing whatever the guest set,
/// and to no other host.
#[tokio::test]
async fn a_batch_sends_the_credential_only_where_a_fetch_would() {
    let h = hostile().await;
    let outcomes = attack(&h, "batch-credential").await;
    assert_eq!(outcomes.len(), 3);
    assert!(
        outcomes.iter().all(|(_, o)| o.starts_with("ok ")),
        "{outcomes:?}"
    );
    let seen = h.fake.requests();
    assert_eq!(seen.len(), 3);
    for request in &seen {
        let credentials: Vec<&str> = request
            .headers
            .iter()
            .filter(|(name, _)| name == "authorization")
            .map(|(_, value)| value.as_str())
            .collect();
        match request.host.as_str() {
            "api.github.com" => assert_eq!(credentials, ["Bearer fake-github-alice"]),
            "api.linear.app" => assert!(credentials.is_empty(), "{credentials:?}"),
            other => panic!("unexpected host {other}"),
        }
    }
}

#[tokio::test]
async fn a_panicking_connector_is_reported_as_crashed() {
    let h = hostile().await;
    let error = h
        .search("hostile", &request("panic", 10))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Crashed);
}

/// A component importing WASI's HTTP (here as an empty instance) is
/// refused at load, with the import named: the only way out is the
/// contract's `http`.
#[tokio::test]
async fn an_import_outside_the_allow_list_is_refused_at_load() {
    let h = hostile().await;
    let component =
        wat::parse_str(r#"(component (import "wasi:http/outgoing-handler@0.2.0" (instance)))"#)
            .unwrap();
    std::fs::write(h.plugins.path().join("sneaky.wasm"), component).unwrap();
    let manifest = std::fs::read_to_string(h.plugins.path().join("hostile.toml"))
        .unwrap()
        .replace("id = \"hostile\"", "id = \"sneaky\"");
    std::fs::write(h.plugins.path().join("sneaky.toml"), manifest).unwrap();
    let report = h.registry.rescan().await;
    assert_eq!(report.refused.len(), 1);
    let why = &h.registry.problems()["sneaky"];
    assert!(
        why.contains("wasi:http/outgoing-handler@0.2.0") && why.contains("does not allow"),
        "{why}"
    );
    assert!(h.registry.get("sneaky").is_none());
}

/// A component that imports WASI (as wasip2 builds do) loads, and the
/// deny-all WASI shows it no environment, arguments or directory.
#[tokio::test]
async fn wasi_imports_get_a_deny_all_context() {
    let h = Harness::start(&["wasi-probe"]).await;
    let docs = h
        .search("wasi-probe", &request("anything", 1))
        .await
        .unwrap();
    assert_eq!(docs[0].content, "env=0 args=0 cwd=none");
}

/// WASI's sockets load (componentize-py links them into every Python
/// component) and refuse everything: no TCP or UDP socket can be created
/// and no name looked up.
#[tokio::test]
async fn wasi_sockets_refuse_every_socket_and_lookup() {
    let h = Harness::start(&["wasi-probe"]).await;
    let docs = h
        .search("wasi-probe", &request("sockets", 1))
        .await
        .unwrap();
    assert_eq!(
        docs[0].content,
        "tcp=access-denied udp=access-denied dns=permanent-resolver-failure"
    );
    assert!(h.fake.requests().is_empty());
}
