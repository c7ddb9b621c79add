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
