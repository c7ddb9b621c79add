//! `fake-saas fixtures --dir DIR`, the binary: its one JSON line, and the
//! routes of DIR/routes.toml answered over HTTPS with its CA.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

const ROUTES: &str = r#"
[[routes]]
url = "https://api.acme.example/v1/search"
query = { q = "throttled" }
status = 429
headers = { "retry-after" = "7" }
body = '{"error": "slow down"}'

[[routes]]
url = "https://api.acme.example/v1/search"
file = "search.json"

[[routes]]
method = "POST"
url = "https://login.acme.example/oauth/{tenant}/token"
body_contains = "grant_type=refresh_token"
file = "token.json"
"#;

/// The binary, killed when dropped.
struct Fixtures(Child);

impl Drop for Fixtures {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `fake-saas fixtures --dir dir` and reads its first line.
fn start(dir: &Path) -> (Fixtures, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-saas"))
        .args(["fixtures", "--dir"])
        .arg(dir)
        .arg("--ca-out")
        .arg(dir.join("ca.pem"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start fake-saas fixtures");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let fixtures = Fixtures(child);
    let first: Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
    (fixtures, first)
}

/// A client that trusts the fake's CA and sends its hosts to it.
fn client_for(first: &Value) -> Client {
    let pem = std::fs::read(first["ca_cert"].as_str().unwrap()).unwrap();
    let addr = first["addr"].as_str().unwrap().parse().unwrap();
    let mut builder = Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .tls_built_in_root_certs(false);
    for host in first["hosts"].as_array().unwrap() {
        builder = builder.resolve(host.as_str().unwrap(), addr);
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn serves_the_routes_of_its_folder_over_https() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("routes.toml"), ROUTES).unwrap();
    std::fs::write(dir.path().join("search.json"), r#"{"results": [1]}"#).unwrap();
    std::fs::write(dir.path().join("token.json"), r#"{"access_token": "t2"}"#).unwrap();
    let (_fixtures, first) = start(dir.path());
    let addr = first["addr"].as_str().unwrap();
    assert_eq!(
        first["hosts"],
        json!(["api.acme.example", "login.acme.example"])
    );
    let ca = dir.path().join("ca.pem").canonicalize().unwrap();
    assert_eq!(
        first["demo_args"],
        json!([
            "--fake",
            format!("api.acme.example={addr}"),
            "--fake",
            format!("login.acme.example={addr}"),
            "--fake-ca",
            ca.display().to_string(),
        ]),
        "the quarry demo flags that reach it"
    );
    let client = client_for(&first);

    let search = client
        .get("https://api.acme.example/v1/search?q=checkout&limit=5")
        .send()
        .await
        .unwrap();
    assert_eq!(search.status(), StatusCode::OK);
    assert_eq!(search.headers()["content-type"], "application/json");
    assert_eq!(
        search.json::<Value>().await.unwrap(),
        json!({"results": [1]})
    );

    // The first route that matches answers: the query picks the 429.
    let throttled = client
        .get("https://api.acme.example/v1/search?limit=5&q=throttled")
        .send()
        .await
        .unwrap();
    assert_eq!(throttled.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(throttled.headers()["retry-after"], "7");

    let token = client
        .post("https://login.acme.example/oauth/acme/token")
        .form(&[("grant_type", "refresh_token"), ("refresh_token", "r1")])
        .send()
        .await
        .unwrap();
    assert_eq!(token.json::<Value>().await.unwrap()["access_token"], "t2");

    // No route: a 404 that says which request, and lists the routes.
    let missing = client
        .get("https://api.acme.example/v2/search?q=x")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body: Value = missing.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("GET https://api.acme.example/v2/search?q=x"),
        "{body}"
    );
    assert_eq!(body["routes"].as_array().unwrap().len(), 3, "{body}");

    // Edited while it runs: the next request sees the new file.
    std::fs::write(dir.path().join("search.json"), r#"{"results": [2]}"#).unwrap();
    let search = client
        .get("https://api.acme.example/v1/search?q=checkout")
        .send()
        .await
        .unwrap();
    assert_eq!(
        search.json::<Value>().await.unwrap(),
        json!({"results": [2]})
    );
}

#[test]
fn a_bad_folder_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("routes.toml"),
        "[[routes]]\nurl = \"https://api.acme.example/v1/search\"\nfile = \"nope.json\"\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_fake-saas"))
        .args(["fixtures", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "no line when it does not serve");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("route 1 (GET https://api.acme.example/v1/search)")
            && stderr.contains("file nope.json: there is no such file"),
        "{stderr}"
    );
}

/// A search answered from data: the vendor's own records, its declared
/// rules (every word, newest first, pages of two), paging and time bounds.
#[tokio::test]
async fn answers_a_declared_search_from_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let declaration = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("declarations/gmail.toml"),
    )
    .unwrap()
    .replace("default = 100, max = 500", "default = 2, max = 500");
    std::fs::write(dir.path().join("search.toml"), declaration).unwrap();
    let records = json!([
        {"id": "e1", "summary": "Checkout postmortem", "description": "502s after the certificate rotation",
         "updated": "2025-02-04T10:00:00Z"},
        {"id": "e2", "summary": "Checkout review", "description": "Payment provider timeouts",
         "updated": "2025-02-06T10:00:00Z"},
        {"id": "e3", "summary": "Planning", "description": "Quarterly goals",
         "updated": "2025-02-07T10:00:00Z"},
        {"id": "e4", "summary": "Checkout retro", "description": "What the incident taught us",
         "updated": "2025-02-08T10:00:00Z"},
    ]);
    std::fs::write(dir.path().join("events.json"), records.to_string()).unwrap();
    std::fs::write(
        dir.path().join("routes.toml"),
        r#"
[[searches]]
url = "https://calendar.acme.example/v3/events"
declaration = "search.toml"
records = "events.json"
text = "q"
updated = "/updated"
updated_min = "updatedMin"
page_size = "maxResults"
page_token = "pageToken"
items = "/items"
next_page_token = "/nextPageToken"
envelope = { kind = "calendar#events" }
fields = { subject = "/summary", body = "/description", from = "/organizer", to = "/attendees" }
"#,
    )
    .unwrap();
    let (_fixtures, first) = start(dir.path());
    let client = client_for(&first);
    let get = |query: String| {
        let client = client.clone();
        async move {
            let response = client
                .get(format!("https://calendar.acme.example/v3/events?{query}"))
                .send()
                .await
                .unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        }
    };
    let ids = |body: &Value| -> Vec<String> {
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };

    let (status, page) = get("q=checkout".into()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["kind"], "calendar#events");
    assert_eq!(ids(&page), ["e4", "e2"], "newest first, two a page");
    let token = page["nextPageToken"].as_str().unwrap().to_string();
    let (_, next) = get(format!("q=checkout&pageToken={token}")).await;
    assert_eq!(ids(&next), ["e1"]);
    assert!(next.get("nextPageToken").is_none());

    // Every word must match (Gmail's rule, declared), in any field.
    let (_, both) = get("q=checkout%20certificate".into()).await;
    assert_eq!(ids(&both), ["e1"]);
    let (_, later) = get("q=checkout&updatedMin=2025-02-05T00:00:00Z&maxResults=10".into()).await;
    assert_eq!(ids(&later), ["e4", "e2"]);

    let (status, refused) = get("q=checkout&pageToken=forged".into()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
}
