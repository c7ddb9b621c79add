//! schemathesis (pinned in `tests/schemathesis/requirements.txt`, installed
//! into `target/py` by `tools/py-env`) against the real `quarry demo` over
//! HTTPS: it reads `/v1/openapi.json`, generates requests for every
//! operation the document describes (valid ones and invalid ones), follows
//! the document's links from one operation's response to the next
//! (stateful testing), and holds every response to the document with every
//! check it has. Its settings are in `tests/schemathesis/schemathesis.toml`.
//!
//! The document is run as served: its servers are relative (`/v1`, and
//! `/` for the OAuth endpoints at the root), resolved against where it was
//! fetched, with no `--url` override. Two runs share one demo:
//! - every operation but one, as alice, with every phase;
//! - `DELETE /v1/delete_my_data`, as bob: it deletes its caller.
//!
//! The test fails on any failure schemathesis reports, and prints its report.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use quarry_tests::contract::contract;
use quarry_tests::repo_root;
use quarry_tests::server::Demo;
use serde_json::Value;

/// Limits the runs do not meet: schemathesis sends thousands of requests,
/// which would otherwise be mostly 429s (documented, but they test nothing).
const LIMITS: [(&str, &str); 15] = [
    ("QUARRY_LIMITS__QUERY__MINUTE", "100000"),
    ("QUARRY_LIMITS__QUERY__DAY", "1000000"),
    ("QUARRY_LIMITS__DEEP_SEARCH__MINUTE", "100000"),
    ("QUARRY_LIMITS__DEEP_SEARCH__DAY", "1000000"),
    ("QUARRY_LIMITS__DELETE_MY_DATA__MINUTE", "100000"),
    ("QUARRY_LIMITS__DELETE_MY_DATA__DAY", "1000000"),
    ("QUARRY_LIMITS__DEFAULT__MINUTE", "100000"),
    ("QUARRY_LIMITS__DEFAULT__DAY", "1000000"),
    // Requests without a valid token (ignored_auth sends many), and the
    // OAuth endpoints, are counted per client address.
    ("QUARRY_LIMITS__ANONYMOUS__MINUTE", "100000"),
    ("QUARRY_LIMITS__ANONYMOUS__DAY", "1000000"),
    ("QUARRY_LIMITS__CLIENT_REGISTRATION__MINUTE", "100000"),
    ("QUARRY_LIMITS__CLIENT_REGISTRATION__DAY", "1000000"),
    ("QUARRY_LIMITS__ALL_CLIENT_REGISTRATIONS__MINUTE", "100000"),
    ("QUARRY_LIMITS__ALL_CLIENT_REGISTRATIONS__DAY", "1000000"),
    // The document describes a server that delivers webhooks over https
    // only; the demo also allows plain http, for receivers on this machine.
    ("QUARRY_WEBHOOKS__ALLOW_PLAIN_HTTP", "false"),
];

/// `QUARRY_TEST_SCHEMATHESIS`, else `target/py/bin/schemathesis`.
fn schemathesis() -> PathBuf {
    if let Some(path) = std::env::var_os("QUARRY_TEST_SCHEMATHESIS") {
        return PathBuf::from(path);
    }
    let path = repo_root().join("target/py/bin/schemathesis");
    assert!(
        path.exists(),
        "no schemathesis at {}: run tools/py-env (tools/test does), or point \
         QUARRY_TEST_SCHEMATHESIS at one",
        path.display()
    );
    path
}

/// What one run of schemathesis said.
struct Outcome {
    name: &'static str,
    success: bool,
    output: String,
    /// `METHOD path` of every operation it tested.
    operations: BTreeSet<String>,
    /// Test cases sent (`scenarios` in its report).
    cases: u64,
    failures: u64,
    seconds: f64,
}

/// Runs schemathesis on the demo's document with these extra arguments,
/// as the user whose token is `token`.
fn run(name: &'static str, demo: &Demo, token: &str, args: &[&str]) -> Outcome {
    let reports = repo_root().join("target/schemathesis").join(name);
    let _ = std::fs::remove_dir_all(&reports);
    std::fs::create_dir_all(&reports).expect("the reports folder");
    let started = Instant::now();
    let output = Command::new(schemathesis())
        .arg("--config-file")
        .arg(repo_root().join("tests/schemathesis/schemathesis.toml"))
        .arg("--no-color")
        .arg("run")
        .arg(format!("{}/openapi.json", demo.base_url))
        .arg("--report-dir")
        .arg(&reports)
        .args(args)
        .env("QUARRY_ST_CA", &demo.ca_cert)
        .env("QUARRY_ST_TOKEN", token)
        // Wide enough that its report is not cut at 80 columns.
        .env("COLUMNS", "160")
        // Its caches stay in the reports folder.
        .current_dir(&reports)
        .output()
        .expect("schemathesis runs (tools/py-env installs it into target/py)");
    let seconds = started.elapsed().as_secs_f64();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let (operations, cases, failures) = figures(&reports);
    Outcome {
        name,
        success: output.status.success(),
        output: text,
        operations,
        cases,
        failures,
        seconds,
    }
}

/// The operations tested, the cases sent and the failures found, from the
/// run's NDJSON report.
fn figures(reports: &Path) -> (BTreeSet<String>, u64, u64) {
    let mut operations = BTreeSet::new();
    let (mut cases, mut failures) = (0, 0);
    let Ok(entries) = std::fs::read_dir(reports) else {
        return (operations, cases, failures);
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().ends_with(".ndjson") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let Ok(event) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(finished) = event.get("ScenarioFinished") else {
                continue;
            };
            let recorder = &finished["recorder"];
            match recorder["label"].as_str() {
                // The stateful phase's scenarios chain several operations.
                Some("Stateful tests") | None => {}
                Some(label) => {
                    operations.insert(label.to_string());
                }
            }
            cases += recorder["cases"].as_object().map_or(0, |c| c.len() as u64);
            failures += recorder["checks"]
                .as_object()
                .map(|checks| {
                    checks
                        .values()
                        .flat_map(|list| list.as_array().into_iter().flatten())
                        .filter(|check| check["status"] == "FAILURE")
                        .count() as u64
                })
                .unwrap_or(0);
        }
    }
    (operations, cases, failures)
}

/// `METHOD path` of every operation the document describes, with the path
/// as schemathesis labels it (relative to the operation's server).
fn documented() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let paths = contract().document["paths"]
        .as_object()
        .expect("paths in the document");
    for (path, item) in paths {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                out.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    out
}

#[test]
fn schemathesis_finds_no_failure_in_any_operation() {
    let demo = Demo::options().envs(&LIMITS).start();
    let outcomes = [
        run(
            "everything_but_deletion",
            &demo,
            demo.alice(),
            // An include filter rather than an exclude: schemathesis
            // leaves out the operation that serves the document it reads
            // (GET /openapi.json) unless a filter names it.
            &["--include-path-regex", r"^/(?!delete_my_data$)"],
        ),
        run(
            "delete_my_data",
            &demo,
            demo.bob(),
            // Its token dies with its user: no links to follow from it.
            &[
                "--include-operation-id",
                "deleteMyData",
                "--phases",
                "examples,coverage,fuzzing",
            ],
        ),
    ];

    let mut tested = BTreeSet::new();
    let mut problems = Vec::new();
    for outcome in &outcomes {
        eprintln!(
            "schemathesis {}: {} operations, {} cases, {} failures, {:.0} s",
            outcome.name,
            outcome.operations.len(),
            outcome.cases,
            outcome.failures,
            outcome.seconds
        );
        if !outcome.success || outcome.failures > 0 {
            problems.push(format!(
                "schemathesis ({}) reported failures:\n{}",
                outcome.name, outcome.output
            ));
        }
        tested.extend(outcome.operations.iter().cloned());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));

    let untested: Vec<_> = documented().difference(&tested).cloned().collect();
    assert!(
        untested.is_empty(),
        "schemathesis tested no case of {untested:?}; it tested {tested:?}"
    );
}
