//! Every connector held to its vendor's own API description.
//!
//! Each connector (the real component, in the real sandbox) is driven
//! through its code paths against fake-saas: a word, several words, a
//! quoted phrase, a time range, a large page, a question of stop words
//! only, and the vendors' failures (429, 401, 500). Every exchange (the
//! request the connector sent and the answer the fake gave) is then checked
//! by `tests/vendors/validate.py` against the vendor's published
//! description (`vendors/<vendor>/`: GitHub's OpenAPI description, Slack's,
//! Google's discovery documents, Linear's GraphQL schema...), and each
//! OAuth scope of the connector's manifest against the vendor's scope
//! list: a request the vendor would refuse, or an answer in a shape the
//! vendor never gives, fails here rather than for a user with a real
//! token.

use std::path::PathBuf;
use std::process::Command;

use fake_saas::{Fault, RecordedRequest, dataset};
use quarry::connectors::SearchRequest;
use quarry_store::secret::Secret;
use quarry_tests::{Harness, api_host, repo_root};
use serde_json::{Value, json};

/// The connectors held to their vendors' descriptions: every connector of
/// every vendor fake-saas plays.
fn connectors() -> &'static [&'static str] {
    &dataset::CONNECTORS
}

/// A search as the host plans it, with the settings of every connector
/// (each reads only its own).
fn search(terms: &[&str], phrases: &[&str], max_results: u32) -> SearchRequest {
    SearchRequest {
        query: terms.join(" "),
        terms: terms.iter().map(|t| t.to_string()).collect(),
        phrases: phrases.iter().map(|p| p.to_string()).collect(),
        max_results,
        settings: vec![
            ("scope".into(), "org:acme".into()),
            ("subdomain".into(), "acme".into()),
            (
                "instance_url".into(),
                "https://acme.my.salesforce.com".into(),
            ),
            ("workspace".into(), dataset::ASANA_WORKSPACE_GID.into()),
            ("organization".into(), "acme".into()),
        ],
        ..SearchRequest::default()
    }
}

/// The code paths each connector is driven through.
fn scenarios() -> Vec<(&'static str, SearchRequest)> {
    let mut ranged = search(&["checkout", "timeout"], &[], 10);
    ranged.since = Some("2025-03-01T00:00:00Z".into());
    ranged.until = Some("2026-06-30T23:59:59Z".into());
    let mut since_only = search(&["refund"], &[], 10);
    since_only.since = Some("2025-06-01T00:00:00Z".into());
    let mut question_only = search(&[], &[], 10);
    question_only.query = "what is the".into();
    vec![
        ("one word", search(&["checkout"], &[], 10)),
        (
            "several words",
            search(
                &[
                    "checkout", "timeout", "payments", "gateway", "refund", "retries", "mobile",
                ],
                &[],
                10,
            ),
        ),
        ("a phrase", search(&["charge"], &["double charge"], 10)),
        ("a time range", ranged),
        ("a start only", since_only),
        ("a large page", search(&["checkout"], &[], 100)),
        ("no terms", question_only),
    ]
}

/// The failures a vendor documents (in its description, or its facts
/// with their sources), one search each: a refused token, a spent rate
/// limit, a server error.
fn faults(connector: &str) -> Vec<Fault> {
    let documented: &[(u16, Option<u32>)] = match connector {
        // GitHub's search declares 503, not 500.
        "github" => &[(429, Some(17)), (401, None), (503, None)],
        // Trello's search declares only 200 and 429.
        "trello" => &[(429, Some(17))],
        // Confluence's (2021) search declares no 401.
        "confluence" => &[(429, Some(17)), (500, None)],
        // Sentry's search declares 400, 401, 403 and 404: no server error.
        "sentry" => &[(429, Some(17)), (401, None)],
        _ => &[(429, Some(17)), (401, None), (500, None)],
    };
    documented
        .iter()
        .map(|&(status, retry_after)| Fault {
            status: Some(status),
            retry_after,
            count: Some(1),
            ..Fault::default()
        })
        .collect()
}

/// A connection's credential as the host stores it: a Trello connection
/// holds Trello's whole `Authorization` header (its manifest says so).
fn credential(connector: &str) -> Secret {
    match connector {
        "trello" => Secret::new(
            "OAuth oauth_consumer_key=\"quarry\", oauth_token=\"fake-trello-alice\"".to_string(),
        ),
        "hostile" | "wasi-probe" => Secret::new("fake-github-alice".to_string()),
        other => Secret::new(format!("fake-{other}-alice")),
    }
}

async fn run(harness: &Harness, connector: &str, request: &SearchRequest) {
    // Errors are the validator's to judge: a refused request is a mismatch
    // it reports with the vendor's reason.
    let _ = harness
        .registry
        .search(connector, request, Some(credential(connector)))
        .await;
}

/// Drives `connector` through every scenario and failure; returns what it
/// exchanged with the fake.
async fn exchanges(harness: &Harness, connector: &str) -> Vec<RecordedRequest> {
    harness.fake.clear_requests();
    for (_, request) in scenarios() {
        run(harness, connector, &request).await;
    }
    for fault in faults(connector) {
        harness.fake.set_fault(api_host(connector), fault);
        run(harness, connector, &search(&["checkout"], &[], 10)).await;
        harness.fake.clear_faults();
    }
    if connector == "asana" {
        // Without Premium, task search answers 402: the typeahead path.
        harness.fake.set_fault(
            "app.asana.com",
            Fault {
                status: Some(402),
                count: Some(2),
                ..Fault::default()
            },
        );
        run(harness, connector, &search(&["launch", "apple"], &[], 10)).await;
        harness.fake.clear_faults();
    }
    harness.fake.requests()
}

/// The exchanges as `validate.py` reads them.
fn to_json(connector: &str, exchanges: &[RecordedRequest]) -> Value {
    let exchanges: Vec<Value> = exchanges
        .iter()
        .map(|r| {
            let url = match &r.query {
                Some(query) => format!("https://{}{}?{query}", r.host, r.path),
                None => format!("https://{}{}", r.host, r.path),
            };
            let response = r.response.as_ref().map(|a| {
                json!({
                    "status": a.status,
                    "headers": a.headers,
                    "body": a.body_text(),
                })
            });
            json!({
                "method": r.method,
                "url": url,
                "headers": r.headers,
                "body": (!r.body.is_empty()).then(|| r.body_text()),
                "response": response,
            })
        })
        .collect();
    json!({ "connector": connector, "exchanges": exchanges })
}

fn python() -> PathBuf {
    repo_root().join("target/py/bin/python")
}

/// Runs the validator on one connector's exchanges; its report on failure.
fn validate(connector: &str, exchanges: &[RecordedRequest]) -> Result<String, String> {
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(file.path(), to_json(connector, exchanges).to_string()).expect("written");
    let output = Command::new(python())
        .arg(repo_root().join("tests/vendors/validate.py"))
        .arg(file.path())
        .current_dir(repo_root())
        .output()
        .expect("target/py (tools/py-env) runs tests/vendors/validate.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() {
        Ok(report)
    } else {
        Err(report)
    }
}

#[tokio::test]
async fn every_request_and_answer_matches_the_vendors_description() {
    let harness = Harness::start(connectors()).await;
    let mut failures = Vec::new();
    for &connector in connectors() {
        let exchanges = exchanges(&harness, connector).await;
        assert!(
            exchanges.iter().any(|e| e.response.is_some()),
            "{connector}: no exchange was recorded"
        );
        match validate(connector, &exchanges) {
            Ok(report) => eprintln!("{report}"),
            Err(report) => failures.push(report),
        }
    }
    assert!(
        failures.is_empty(),
        "requests or answers that the vendors' descriptions refuse:\n{}",
        failures.join("\n")
    );
}

/// The validator refuses what it must: a request the connectors never
/// send, with a parameter GitHub does not declare, fails. (A validator that
/// passes everything would make the test above pass too.)
#[tokio::test]
async fn an_undeclared_parameter_fails_the_check() {
    let harness = Harness::start(&["github"]).await;
    let mut exchanges = exchanges(&harness, "github").await;
    let search = exchanges
        .iter_mut()
        .find(|e| e.path == "/search/issues")
        .expect("a search");
    search.query = Some(format!(
        "{}&sorting=sideways",
        search.query.clone().unwrap_or_default()
    ));
    let report = validate("github", &exchanges).expect_err("an undeclared parameter");
    assert!(report.contains("sorting"), "{report}");
}

/// The validator's own tests: hand-made exchanges per kind of description
/// (OpenAPI, Swagger 2.0, Google discovery, GraphQL, facts) that must pass,
/// and some that must fail for a given reason.
#[test]
fn the_validator_passes_and_refuses_what_it_must() {
    let output = Command::new(python())
        .arg(repo_root().join("tests/vendors/test_validate.py"))
        .current_dir(repo_root())
        .output()
        .expect("target/py (tools/py-env) runs tests/vendors/test_validate.py");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
