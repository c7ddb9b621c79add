//! The plugins folder is watched: new and changed connectors are swapped in
//! without a restart, calls in flight finish on the version they started
//! on, and a broken replacement is refused while the old version serves.

use std::time::Duration;

use quarry_tests::{Harness, install_plugin, request};

/// Waits (bounded) until `check` holds; the watcher polls every 100 ms.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

#[tokio::test]
async fn a_replaced_plugin_serves_new_calls_while_old_calls_finish() {
    let h = Harness::start(&["github"]).await;
    let _watch = h.registry.watch();
    let old_digest = h.registry.get("github").unwrap().component.digest.clone();
    // Slow upstream: these calls are in flight across the swap.
    h.fake.set_latency(Duration::from_millis(600));
    let in_flight: Vec<_> = (0..8)
        .map(|_| {
            let registry = h.registry.clone();
            tokio::spawn(async move {
                let token = quarry_store::secret::Secret::new("fake-github-alice");
                registry
                    .search("github", &request("checkout", 5), Some(token))
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    // Replace github with a different component (the WASI probe).
    install_plugin(h.plugins.path(), "wasi-probe", "github");
    eventually("the new version is loaded", || {
        h.registry.get("github").unwrap().component.digest != old_digest
    })
    .await;
    h.fake.set_latency(Duration::ZERO);
    for call in in_flight {
        let docs = call
            .await
            .unwrap()
            .expect("an in-flight call finishes on the old version");
        assert!(
            docs.iter()
                .all(|d| d.url.starts_with("https://github.com/acme/")),
            "old version's results"
        );
    }
    let docs = h.search("github", &request("checkout", 5)).await.unwrap();
    assert_eq!(
        docs[0].content, "env=0 args=0 cwd=none",
        "new calls reach the new version"
    );
}

#[tokio::test]
async fn a_broken_replacement_is_refused_and_the_old_version_keeps_serving() {
    let h = Harness::start(&["github"]).await;
    let _watch = h.registry.watch();
    std::fs::write(h.plugins.path().join("github.wasm"), b"\0asm garbage").unwrap();
    eventually("the broken version is refused", || {
        h.registry.problems().contains_key("github")
    })
    .await;
    assert!(
        h.registry.problems()["github"].contains("github.wasm"),
        "{:?}",
        h.registry.problems()
    );
    let docs = h
        .search("github", &request("checkout", 5))
        .await
        .expect("the old version serves");
    assert!(!docs.is_empty());

    // A manifest that breaks the rules is refused the same way.
    install_plugin(h.plugins.path(), "github", "github");
    eventually("the repaired version loads", || {
        !h.registry.problems().contains_key("github")
    })
    .await;
    let toml = h.plugins.path().join("github.toml");
    let bad = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("method = \"GET\"", "method = \"POST\"");
    std::fs::write(&toml, bad).unwrap();
    eventually("the bad manifest is refused", || {
        h.registry.problems().contains_key("github")
    })
    .await;
    assert!(h.registry.problems()["github"].contains("not marked as a query route"));
    assert!(h.search("github", &request("checkout", 5)).await.is_ok());
}

#[tokio::test]
async fn new_plugins_appear_and_removed_ones_go() {
    let h = Harness::start(&["github"]).await;
    let _watch = h.registry.watch();
    assert!(h.registry.get("slack").is_none());
    install_plugin(h.plugins.path(), "slack", "slack");
    eventually("slack is loaded", || h.registry.get("slack").is_some()).await;
    assert!(
        !h.search("slack", &request("invoice", 5))
            .await
            .unwrap()
            .is_empty()
    );
    std::fs::remove_file(h.plugins.path().join("slack.wasm")).unwrap();
    eventually("slack is unloaded", || h.registry.get("slack").is_none()).await;
}
