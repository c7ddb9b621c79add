//! A short run of `quarry eval-live`, vendor-true and lenient, through the
//! real binary: the figures come from the full runs (the README's
//! commands); this holds the evaluation itself to working, on the fictional
//! company written as a benchmark (`fake-saas beir`), so that it needs no
//! data from outside the repository.

use std::collections::HashMap;
use std::process::Command;

use quarry_tests::repo_root;
use quarry_tests::server::quarry_binary;

/// The figures a run printed, by name.
fn figures(stdout: &str) -> HashMap<String, String> {
    stdout
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn eval_live(dir: &std::path::Path, mode: &[&str]) -> HashMap<String, String> {
    let output = Command::new(quarry_binary())
        .arg("eval-live")
        .arg(dir)
        .args(["--queries", "3", "--upstream-latency-ms", "0"])
        .arg("--plugins-dir")
        .arg(repo_root().join("target/test-plugins"))
        .args(mode)
        .current_dir(repo_root())
        .output()
        .expect("quarry eval-live runs");
    assert!(
        output.status.success(),
        "eval-live {mode:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    figures(&String::from_utf8_lossy(&output.stdout))
}

fn number(figures: &HashMap<String, String>, name: &str) -> f64 {
    figures
        .get(name)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no figure {name} in {figures:?}"))
}

#[test]
fn eval_live_measures_vendor_true_and_lenient_vendors() {
    let set = tempfile::tempdir().expect("a folder");
    fake_saas::dataset::beir::write_beir(set.path()).expect("the company as a benchmark");

    let vendor_true = eval_live(set.path(), &[]);
    assert_eq!(number(&vendor_true, "queries"), 3.0);
    let ndcg = number(&vendor_true, "nDCG@10");
    assert!(ndcg > 0.0 && ndcg <= 1.0, "{vendor_true:?}");
    let zero = number(&vendor_true, "zero_result_rate");
    assert!((0.0..=1.0).contains(&zero), "{vendor_true:?}");
    for vendor in ["github", "slack", "jira", "confluence", "zendesk", "notion"] {
        assert!(
            vendor_true.contains_key(&format!("zero_result_rate.{vendor}")),
            "{vendor}: {vendor_true:?}"
        );
    }
    assert!(number(&vendor_true, "ceiling_nDCG@10") > 0.0);
    assert!(vendor_true.contains_key("mean_ms.stage.connectors"));

    let lenient = eval_live(set.path(), &["--lenient"]);
    assert!(number(&lenient, "nDCG@10") > 0.0, "{lenient:?}");
    assert!(lenient.contains_key("zero_result_rate.vendor-1"));
}
