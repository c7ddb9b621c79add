//! A connector author's first hour with the demo: a connector installed
//! into the running demo's plugins folder is connected for its users and
//! answers `/v1/query` from the author's own fake (`fake-saas fixtures`,
//! reached with `--fake` and `--fake-ca`), while the demo's fake vendors
//! still answer the connectors it started with.

use std::path::Path;
use std::time::Duration;

use fake_saas::fixtures::FixtureServer;
use quarry_tests::server::{Demo, built_connectors};
use serde_json::{Value, json};

/// The author's fake plays GitHub's issue search with one issue of its own.
const ROUTES: &str = r#"
[[routes]]
url = "https://api.github.com/search/issues"
file = "issues.json"
"#;

const FIXTURE_URL: &str = "https://github.com/acme-fixtures/roastery/issues/7";

fn issues() -> Value {
    json!({
        "total_count": 1,
        "incomplete_results": false,
        "items": [{
            "number": 7,
            "html_url": FIXTURE_URL,
            "repository_url": "https://api.github.com/repos/acme-fixtures/roastery",
            "title": "Roaster drum overheats during the espresso batch",
            "body": "The espresso batch overheats the roaster drum; only this fixture says so.",
            "state": "open",
            "user": { "login": "fixture-author" },
            "created_at": "2026-11-01T10:00:00Z",
            "updated_at": "2026-11-02T10:00:00Z",
            "labels": [],
            "comments": 0
        }]
    })
}

/// Copies a built connector into `plugins` as `connector install` does:
/// the component, then the manifest, each under a temporary name renamed
/// into place, so that the pair appears whole.
fn install(plugins: &Path, id: &str) {
    for extension in ["wasm", "toml"] {
        let name = format!("{id}.{extension}");
        let temporary = plugins.join(format!(".{name}.partial"));
        std::fs::copy(built_connectors().join(&name), &temporary).unwrap();
        std::fs::rename(&temporary, plugins.join(&name)).unwrap();
    }
}

/// The status of `connector` in the user's `GET /v1/connectors`, if listed.
async fn status(demo: &Demo, token: &str, connector: &str) -> Option<String> {
    let reply = demo.get("/connectors", Some(token)).await;
    reply.expect(200, None);
    reply.body["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == connector)
        .map(|c| c["status"].as_str().unwrap().to_string())
}

/// The chunks one connector answered with: some, and no error.
fn chunks<'a>(reply: &'a Value, connector: &str) -> &'a Vec<Value> {
    let result = reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["connector"] == connector)
        .unwrap_or_else(|| panic!("no result from {connector}: {reply}"));
    assert!(result.get("error").is_none(), "{result}");
    let chunks = result["chunks"].as_array().unwrap();
    assert!(!chunks.is_empty(), "no chunks from {connector}: {reply}");
    chunks
}

/// alice's answer to `query` from `connectors`, three results at most.
async fn alice_asks(demo: &Demo, query: &str, connectors: &[&str]) -> Value {
    let body = json!({ "query": query, "connectors": connectors, "max_results": 3 });
    let reply = demo.query(demo.alice(), &body).await;
    reply.expect(200, None);
    reply.body
}

/// A fixtures folder holding the author's routes and their one issue.
fn authors_fixtures() -> tempfile::TempDir {
    let fixtures = tempfile::tempdir().unwrap();
    std::fs::write(fixtures.path().join("routes.toml"), ROUTES).unwrap();
    std::fs::write(fixtures.path().join("issues.json"), issues().to_string()).unwrap();
    fixtures
}

/// `quarry demo` run with `args`, which it refuses: what it said.
fn refused_demo(args: &[&str]) -> String {
    let output = std::process::Command::new(quarry_tests::server::quarry_binary())
        .arg("demo")
        .args(args)
        .output()
        .unwrap();
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn a_connector_installed_after_start_answers_from_the_authors_fake() {
    let plugins = tempfile::tempdir().unwrap();
    install(plugins.path(), "slack");
    let fixtures = authors_fixtures();
    let fake = FixtureServer::start(fixtures.path(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let ca = fixtures.path().join("ca.pem");
    std::fs::write(&ca, fake.ca_cert_pem()).unwrap();
    let demo = Demo::options()
        .plugins_dir(plugins.path())
        .arg("--fake")
        .arg(&format!("api.github.com={}", fake.addr()))
        .arg("--fake-ca")
        .arg(ca.to_str().unwrap())
        // Instead of the demo's own value for GitHub's required setting.
        .arg("--setting")
        .arg("github:scope=repo:acme-fixtures/roastery")
        .start();
    assert_eq!(status(&demo, demo.alice(), "github").await, None);

    // The demo's own fake vendors still answer: --fake and --fake-ca add
    // to its routes and CAs.
    let reply = alice_asks(&demo, "invoice", &["slack"]).await;
    assert!(
        chunks(&reply, "slack").iter().all(|c| c["source_url"]
            .as_str()
            .unwrap()
            .starts_with("https://acme.slack.com/")),
        "{reply}"
    );

    install(plugins.path(), "github");
    // A guard against a hung reload, not a measurement: the watcher polls
    // every second, then the component compiles.
    let mut connected = false;
    for _ in 0..600 {
        if status(&demo, demo.alice(), "github").await.as_deref() == Some("connected") {
            connected = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        connected,
        "github was never connected for alice:\n{}",
        demo.log()
    );
    assert_eq!(
        status(&demo, demo.bob(), "github").await.as_deref(),
        Some("connected"),
        "every demo user is connected"
    );

    let reply = alice_asks(&demo, "roaster drum overheats", &["github"]).await;
    let github = chunks(&reply, "github");
    assert!(
        github.iter().all(|c| c["source_url"] == FIXTURE_URL),
        "{reply}"
    );
    assert!(
        github.iter().any(|c| c["content"]
            .as_str()
            .unwrap()
            .contains("only this fixture says so")),
        "{reply}"
    );
    // The connector asked the author's fake with alice's demo credential
    // and the setting given.
    let asked = fake.requests();
    assert!(!asked.is_empty());
    for request in &asked {
        assert_eq!(
            (request.host.as_str(), request.path.as_str()),
            ("api.github.com", "/search/issues")
        );
        let authorization = request
            .headers
            .iter()
            .find(|(name, _)| name == "authorization")
            .map(|(_, value)| value.as_str());
        assert_eq!(authorization, Some("Bearer fake-github-alice"));
        let query = request.query.as_deref().unwrap_or_default();
        let q = url::form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| name == "q")
            .map(|(_, value)| value.into_owned())
            .unwrap_or_default();
        assert!(q.contains("repo:acme-fixtures/roastery"), "{q}");
    }
}

#[tokio::test]
async fn fixtures_served_by_the_demo_itself_answer_for_their_vendor() {
    let plugins = tempfile::tempdir().unwrap();
    install(plugins.path(), "github");
    install(plugins.path(), "slack");
    let fixtures = authors_fixtures();
    let demo = Demo::options()
        .plugins_dir(plugins.path())
        .arg("--fixtures")
        .arg(fixtures.path().to_str().unwrap())
        .start();
    let reply = alice_asks(&demo, "invoice retry", &["github", "slack"]).await;
    assert!(
        chunks(&reply, "github")
            .iter()
            .all(|c| c["source_url"] == FIXTURE_URL),
        "the fixtures answer for api.github.com: {reply}"
    );
    // The demo's fake vendors answer for the other hosts (`chunks` checks
    // that there are some).
    chunks(&reply, "slack");
}

#[test]
fn a_bad_fake_flag_is_refused_with_the_reason() {
    let stderr = refused_demo(&["--fake", "https://api.acme.example=127.0.0.1:9443"]);
    assert!(stderr.contains("is not a host name"), "{stderr}");
}

/// The demo publishes its users' passwords and tokens and lets webhooks
/// reach private addresses: it listens beyond this machine only when told.
#[test]
fn the_demo_listens_beyond_this_machine_only_when_told() {
    let stderr = refused_demo(&["--listen", "0.0.0.0:0"]);
    assert!(
        stderr.contains("reachable from other machines") && stderr.contains("--expose"),
        "{stderr}"
    );
}
