//! What the black-box tests share: the built plugins, the fake upstreams,
//! and a registry wired to reach them; for the API tests, the real server
//! over HTTPS ([`server`]), the OpenAPI document that judges every
//! response ([`contract`]) and a webhook receiver that verifies signatures
//! with the official Standard Webhooks library ([`webhook_receiver`]).
//!
//! The plugins are built once by `tools/plugin-builder` (the README's test
//! command does it first); tests copy the ones they need into a plugins
//! folder of their own.

pub mod contract;
pub mod dashboard_client;
pub mod engines;
pub mod load;
pub mod server;
pub mod shared;
pub mod webhook_receiver;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fake_saas::{FakeSaas, FakeSaasConfig, Fault};
use quarry::connectors::upstream::Upstream;
use quarry::connectors::{
    ConnectorError, Document, ErrorKind, NetworkConfig, Registry, RegistryConfig, Runtime,
    RuntimeConfig, SearchRequest,
};
use quarry_store::secret::Secret;

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the repository")
        .to_path_buf()
}

/// Where `plugin-builder --test-out target/test-plugins` put the components.
pub fn built_plugins() -> PathBuf {
    let dir = std::env::var_os("QUARRY_BUILT_PLUGINS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/test-plugins"));
    assert!(
        dir.join("hostile.wasm").exists(),
        "no built plugins in {}: run `cargo run -p quarry-plugin-builder -- --test-out target/test-plugins` first \
         (the README's test command does)",
        dir.display()
    );
    dir
}

/// Copies the built plugin `id` into `plugins` (as `as_id`).
pub fn install_plugin(plugins: &Path, id: &str, as_id: &str) {
    let built = built_plugins();
    std::fs::copy(
        built.join(format!("{id}.wasm")),
        plugins.join(format!("{as_id}.wasm")),
    )
    .expect("copy wasm");
    let manifest =
        std::fs::read_to_string(built.join(format!("{id}.toml"))).expect("read manifest");
    let manifest = manifest.replacen(&format!("id = \"{id}\""), &format!("id = \"{as_id}\""), 1);
    std::fs::write(plugins.join(format!("{as_id}.toml")), manifest).expect("write manifest");
}

/// The host's view of the network: every vendor host name goes to the fake
/// upstreams on loopback, whose CA is trusted.
pub fn network_for(fake: &FakeSaas) -> NetworkConfig {
    NetworkConfig {
        host_overrides: FakeSaas::hosts()
            .iter()
            .map(|h| (h.to_string(), fake.addr()))
            .collect(),
        extra_root_certs: vec![fake.ca_cert_pem().as_bytes().to_vec()],
    }
}

/// Compiled components are cached across test runs and processes.
pub fn component_cache() -> PathBuf {
    repo_root().join("target/test-component-cache")
}

/// The fake upstreams, a runtime and a registry over a plugins folder of
/// the test's own.
pub struct Harness {
    pub fake: FakeSaas,
    pub registry: Arc<Registry>,
    pub plugins: tempfile::TempDir,
}

impl Harness {
    /// Starts with the given built plugins installed.
    pub async fn start(ids: &[&str]) -> Harness {
        let fake = FakeSaas::start(FakeSaasConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            latency: Duration::ZERO,
            chaos: None,
            rate_limits: false,
        })
        .await
        .expect("start fake-saas");
        let plugins = tempfile::tempdir().expect("temp dir");
        for id in ids {
            install_plugin(plugins.path(), id, id);
        }
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: Some(component_cache()),
            upstream: Arc::new(Upstream::new(&network_for(&fake)).expect("upstream client")),
            ..RuntimeConfig::default()
        })
        .expect("runtime");
        let registry = Registry::open(
            runtime,
            RegistryConfig {
                plugins_dir: plugins.path().to_path_buf(),
                poll_interval: Duration::from_millis(100),
            },
        )
        .await
        .expect("registry");
        assert!(
            registry.problems().is_empty(),
            "plugins refused: {:?}",
            registry.problems()
        );
        Harness {
            fake,
            registry,
            plugins,
        }
    }

    /// Searches `connector` as `user` (whose seeded token it uses).
    pub async fn search_as(
        &self,
        connector: &str,
        user: &str,
        request: &SearchRequest,
    ) -> Result<Vec<Document>, ConnectorError> {
        let vendor = match connector {
            "hostile" | "wasi-probe" => "github",
            other => other,
        };
        let token = Secret::new(format!("fake-{vendor}-{user}"));
        self.registry.search(connector, request, Some(token)).await
    }

    pub async fn search(
        &self,
        connector: &str,
        request: &SearchRequest,
    ) -> Result<Vec<Document>, ConnectorError> {
        self.search_as(connector, "alice", request).await
    }

    /// Makes the next request to `host` fail as `fault` says; the search
    /// after it succeeds again, so one harness can try fault after fault.
    pub fn fail_next(&self, host: &str, fault: Fault) {
        self.fake.set_fault(
            host,
            Fault {
                count: Some(1),
                ..fault
            },
        );
    }

    /// The error a search that must fail ends in.
    pub async fn search_error(&self, connector: &str, request: &SearchRequest) -> ConnectorError {
        match self.search(connector, request).await {
            Ok(docs) => panic!(
                "{connector}: {} documents where an error was due",
                docs.len()
            ),
            Err(error) => error,
        }
    }

    /// Asserts that what every vendor's API can answer with (a 429 with
    /// Retry-After, a 500, a 401) from `host` reaches the caller as the
    /// matching connector error, so the host can back off or re-connect.
    pub async fn assert_common_failures_mapped(
        &self,
        connector: &str,
        host: &str,
        request: &SearchRequest,
    ) {
        self.fail_next(
            host,
            Fault {
                status: Some(429),
                retry_after: Some(17),
                ..Fault::default()
            },
        );
        let error = self.search_error(connector, request).await;
        assert_eq!(error.kind, ErrorKind::RateLimited, "{connector}: {error}");
        assert_eq!(error.retry_after_seconds, Some(17), "{connector}");

        for (status, kind) in [(500, ErrorKind::Upstream), (401, ErrorKind::Unauthorized)] {
            self.fail_next(
                host,
                Fault {
                    status: Some(status),
                    ..Fault::default()
                },
            );
            let error = self.search_error(connector, request).await;
            assert_eq!(error.kind, kind, "{connector} after a {status}: {error}");
        }
    }

    /// Asserts that a token the vendor does not know (mallory has none) is
    /// refused as unauthorized, not as a generic upstream failure.
    pub async fn assert_bad_token_unauthorized(&self, connector: &str, request: &SearchRequest) {
        let error = self
            .search_as(connector, "mallory", request)
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{connector}: {error}");
    }
}

/// Asserts what every connector's answer must be: each document cites a
/// record the fake holds (`known`), carries an RFC 3339 UTC time, and
/// appears once.
pub fn assert_cited_once(connector: &str, docs: &[Document], known: &HashSet<String>) {
    for doc in docs {
        assert!(
            known.contains(&doc.url),
            "{connector}: {} is not a record's citation URL",
            doc.url
        );
        assert!(
            doc.updated_at.as_deref().is_some_and(|t| t.ends_with('Z')),
            "{connector}: times are RFC 3339 UTC"
        );
    }
    let ids: HashSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids.len(), docs.len(), "{connector}: duplicate documents");
}

/// The host of a connector's search API: where the fake's faults are set.
pub fn api_host(connector: &str) -> &'static str {
    match connector {
        "github" => "api.github.com",
        "slack" => "slack.com",
        "notion" => "api.notion.com",
        "linear" => "api.linear.app",
        "jira" | "confluence" => "api.atlassian.com",
        "google-drive" | "google-calendar" => "www.googleapis.com",
        "gmail" => "gmail.googleapis.com",
        "zendesk" => "acme.zendesk.com",
        "hubspot" => "api.hubapi.com",
        "salesforce" => "acme.my.salesforce.com",
        "microsoft-files" | "outlook-mail" | "outlook-calendar" | "microsoft-teams" => {
            "graph.microsoft.com"
        }
        "asana" => "app.asana.com",
        "trello" => "api.trello.com",
        "intercom" => "api.intercom.io",
        "box" => "api.box.com",
        "sentry" => "us.sentry.io",
        other => panic!("no host for {other}"),
    }
}

/// A search as the host would plan it for a plain keyword question.
pub fn request(query: &str, max_results: u32) -> SearchRequest {
    SearchRequest {
        query: query.to_string(),
        terms: query.split_whitespace().map(|t| t.to_lowercase()).collect(),
        max_results,
        settings: vec![("scope".into(), "repo:acme/shop".into())],
        ..SearchRequest::default()
    }
}

/// A Notion page of the fake company with content, and a word of its title
/// (longer than five letters, lower case) that finds it.
pub fn notion_page_and_title_word() -> (&'static fake_saas::dataset::NotionPage, String) {
    let page = fake_saas::dataset::notion_pages()
        .iter()
        .find(|p| !p.blocks.is_empty())
        .expect("a Notion page with blocks");
    let word = page
        .title
        .split_whitespace()
        .find(|w| w.len() > 5)
        .expect("a long word in its title")
        .to_lowercase();
    (page, word)
}

/// Asserts that `docs` hold `page` (from [`notion_page_and_title_word`]):
/// found by its address, with its title and its first block's text.
pub fn assert_finds_notion_page(docs: &[Document], page: &fake_saas::dataset::NotionPage) {
    let doc = docs
        .iter()
        .find(|d| d.url == page.url)
        .expect("the Notion page is found by its title");
    assert_eq!(doc.title, page.title);
    assert!(
        doc.content.contains(page.blocks[0].text.trim()),
        "the page's text comes from its blocks"
    );
}
