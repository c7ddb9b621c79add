//! Connectors written in Python and JavaScript (examples/connectors),
//! built by `tools/build-foreign` with componentize-py and jco against the
//! same contract (wit/v1), run by the same host in the same sandbox against
//! the fake upstreams.
//!
//! Nothing is skipped: when the build fails, the tests fail and name the
//! script. The tools it needs are installed by tools/test, never here
//! (`QUARRY_NO_INSTALL`). Sizes, compile and call
//! times are printed (`cargo test --test foreign -- --nocapture`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fake_saas::dataset;
use quarry::connectors::{ErrorKind, Runtime, RuntimeConfig, registry};
use quarry_store::secret::Secret;
use quarry_tests::{Harness, repo_root, request};

/// Builds both examples once per test run (the script does nothing when
/// they are up to date, and installs nothing) and returns `target/foreign`.
fn foreign_built() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = repo_root();
        let started = Instant::now();
        let output = Command::new(root.join("tools/build-foreign"))
            .current_dir(&root)
            .env("QUARRY_NO_INSTALL", "1")
            .output()
            .unwrap_or_else(|e| panic!("cannot run tools/build-foreign: {e}"));
        assert!(
            output.status.success(),
            "tools/build-foreign failed, so the Python and JavaScript example connectors could not be built \
             (tools/test installs componentize-py, jco and node first); run it to see why:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        println!(
            "tools/build-foreign: {:.1} s\n{}",
            started.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&output.stdout)
        );
        let dir = root.join("target/foreign");
        // Compiled once here into the tests' component cache, rather than
        // by every test at once.
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: Some(quarry_tests::component_cache()),
            ..RuntimeConfig::default()
        })
        .unwrap();
        for id in ["python-slack", "js-notion"] {
            if let Ok(built) = std::fs::read_to_string(dir.join(format!("{id}.built"))) {
                print!("last build: {built}");
            }
            let wasm = std::fs::read(dir.join(format!("{id}.wasm"))).unwrap();
            let inspection = runtime.inspect(&wasm, Some(1));
            assert!(inspection.problems.is_empty(), "{id}: {:?}", inspection.problems);
            println!(
                "{id}: compiled and linked (or loaded from the component cache) in {:.0} ms",
                inspection.load_time.as_secs_f64() * 1000.0
            );
        }
        dir
    })
}

/// Copies the built pair `id` into the harness's plugins folder as
/// `as_id`, with `edit` applied to its manifest, and loads it; returns
/// how long the load took.
async fn install_foreign(
    h: &Harness,
    id: &str,
    as_id: &str,
    edit: impl Fn(String) -> String,
) -> Duration {
    let built = foreign_built();
    std::fs::copy(
        built.join(format!("{id}.wasm")),
        h.plugins.path().join(format!("{as_id}.wasm")),
    )
    .unwrap();
    let manifest = std::fs::read_to_string(built.join(format!("{id}.toml")))
        .unwrap()
        .replacen(&format!("id = \"{id}\""), &format!("id = \"{as_id}\""), 1);
    std::fs::write(
        h.plugins.path().join(format!("{as_id}.toml")),
        edit(manifest),
    )
    .unwrap();
    let started = Instant::now();
    let report = h.registry.rescan().await;
    let took = started.elapsed();
    assert_eq!(report.loaded, [as_id], "refused: {:?}", report.refused);
    took
}

fn size_mib(path: &Path) -> f64 {
    std::fs::metadata(path).unwrap().len() as f64 / f64::from(1 << 20)
}

fn urls(docs: &[quarry::connectors::Document]) -> HashSet<String> {
    docs.iter().map(|d| d.url.clone()).collect()
}

#[tokio::test]
async fn the_python_connector_searches_slack_like_the_rust_one() {
    let h = Harness::start(&["slack"]).await;
    let load = install_foreign(&h, "python-slack", "python-slack", |m| m).await;
    let token = || Some(Secret::new("fake-slack-alice"));
    let started = Instant::now();
    let docs = h
        .registry
        .search("python-slack", &request("invoice", 10), token())
        .await
        .expect("the Python connector answers");
    let first_call = started.elapsed();
    let started = Instant::now();
    h.registry
        .search("python-slack", &request("invoice", 10), token())
        .await
        .unwrap();
    let second_call = started.elapsed();
    println!(
        "python-slack: {:.1} MiB, loaded in {:.0} ms (compiled, or from the component cache), \
         search {:.1} ms then {:.1} ms (fake upstream included)",
        size_mib(&foreign_built().join("python-slack.wasm")),
        load.as_secs_f64() * 1000.0,
        first_call.as_secs_f64() * 1000.0,
        second_call.as_secs_f64() * 1000.0,
    );
    assert!(!docs.is_empty());
    let permalinks: HashSet<String> = dataset::slack_messages()
        .iter()
        .map(|m| m.permalink.clone())
        .collect();
    assert!(docs.iter().all(|d| permalinks.contains(&d.url)), "{docs:?}");
    let doc = &docs[0];
    assert!(doc.title.starts_with('#') && !doc.content.is_empty() && doc.created_at.is_some());
    // The same answer as the Rust connector's.
    let rust = h.search("slack", &request("invoice", 10)).await.unwrap();
    assert_eq!(urls(&docs), urls(&rust));
    // Every request went to the manifest's one route, with the token the
    // host added (the component never saw it).
    let seen = h.fake.requests();
    assert!(!seen.is_empty());
    for r in seen {
        assert_eq!(
            (r.host.as_str(), r.path.as_str()),
            ("slack.com", "/api/search.messages")
        );
        assert_eq!(r.header("authorization"), Some("Bearer fake-slack-alice"));
    }
}

#[tokio::test]
async fn the_javascript_connector_searches_notion_through_a_query_route() {
    let h = Harness::start(&["notion"]).await;
    let load = install_foreign(&h, "js-notion", "js-notion", |m| m).await;
    let (page, word) = quarry_tests::notion_page_and_title_word();
    let started = Instant::now();
    let docs = h
        .registry
        .search(
            "js-notion",
            &request(&word, 5),
            Some(Secret::new("fake-notion-alice")),
        )
        .await
        .expect("the JavaScript connector answers");
    println!(
        "js-notion: {:.1} MiB, loaded in {:.0} ms (compiled, or from the component cache), \
         search with {} fetches {:.1} ms (fake upstream included)",
        size_mib(&foreign_built().join("js-notion.wasm")),
        load.as_secs_f64() * 1000.0,
        h.fake.requests().len(),
        started.elapsed().as_secs_f64() * 1000.0,
    );
    // The page's text comes from its blocks: a GET route.
    quarry_tests::assert_finds_notion_page(&docs, page);
    // The search itself was a POST with a JSON body: a query route.
    let seen = h.fake.requests();
    let search = seen
        .iter()
        .find(|r| r.path == "/v1/search")
        .expect("a search request");
    assert_eq!(search.method, "POST");
    let body: serde_json::Value = serde_json::from_slice(&search.body).unwrap();
    assert_eq!(body["query"], word);
    assert!(
        seen.iter()
            .all(|r| r.header("authorization") == Some("Bearer fake-notion-alice"))
    );
    // The Rust connector finds the same page.
    let rust = h.search("notion", &request(&word, 5)).await.unwrap();
    assert!(urls(&rust).contains(&page.url));
}

/// The manifest, not the language, decides: without a route for its
/// search, each example's fetch is denied and nothing reaches upstream.
#[tokio::test]
async fn foreign_connectors_get_the_same_sandbox() {
    let h = Harness::start(&[]).await;
    install_foreign(&h, "python-slack", "py-no-route", |m| {
        m.replace("api/search.messages", "api/auth.test")
    })
    .await;
    install_foreign(&h, "js-notion", "js-no-route", |m| {
        m.replace(
            "url = \"https://api.notion.com/v1/search\"",
            // Still a search-named POST route (the manifest check refuses
            // a query route that names no search), but not the one it asks.
            "url = \"https://api.notion.com/v1/pages/search\"",
        )
    })
    .await;
    for (id, vendor) in [("py-no-route", "slack"), ("js-no-route", "notion")] {
        let error = h
            .registry
            .search(
                id,
                &request("invoice", 5),
                Some(Secret::new(format!("fake-{vendor}-alice"))),
            )
            .await
            .expect_err("the fetch is denied");
        assert_eq!(error.kind, ErrorKind::Denied, "{id}: {error}");
        assert!(error.message.contains("route"), "{id}: {error}");
    }
    assert!(h.fake.requests().is_empty(), "{:?}", h.fake.requests());
    // Their WASI imports (all of WASI 0.2 for Python, sockets included)
    // go to the deny-all context: tests/sandbox.rs shows what it refuses.
}

/// `quarry connector check` accepts both, and lists their WASI imports.
#[test]
fn the_check_accepts_both_and_shows_their_imports() {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        ..RuntimeConfig::default()
    })
    .unwrap();
    for (id, wasi) in [("python-slack", true), ("js-notion", true)] {
        let wasm = foreign_built().join(format!("{id}.wasm"));
        let found = registry::inspect(&runtime, id, &wasm, &wasm.with_extension("toml"), true);
        assert!(found.problems.is_empty(), "{id}: {:?}", found.problems);
        let component = found.component.unwrap();
        let imports = &component.imports;
        assert!(imports.contains(&"quarry:connector/http@1.0.0".to_string()));
        assert_eq!(imports.iter().any(|i| i.starts_with("wasi:")), wasi);
        assert!(
            !imports.iter().any(|i| i.starts_with("wasi:http")),
            "{id} imports WASI's HTTP: {imports:?}"
        );
        println!(
            "{id}: {} imports ({} WASI), contract {}",
            imports.len(),
            imports.iter().filter(|i| i.starts_with("wasi:")).count(),
            component.contract.as_deref().unwrap_or("?"),
        );
    }
}
