//! `live`: what one user gets end to end. The release `quarry demo` with
//! every connector, its fake upstreams answering each request after 200 ms,
//! one client asking the fixed questions one after another through
//! `POST /v1/query` (each question once cold, then once more warm), and the
//! server's own split read from its Prometheus metrics: the stages, and the
//! mean call time of each connector.
//!
//! It runs twice: ranked by keywords only (what the connectors and the
//! server cost, before any ranking by meaning), then with the model, as
//! the demo ranks by default.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};

use crate::demo::Demo;
use crate::{QUESTIONS, metrics, millis, percentile};

const LATENCY_MS: u64 = 200;

pub async fn run(root: &Path) -> Result<()> {
    for (semantic, what) in [
        ("false", "ranked by keywords only"),
        ("true", "ranked by the model (the default)"),
    ] {
        println!("== {what}");
        let latency = LATENCY_MS.to_string();
        let demo = Demo::start(
            root,
            &["--upstream-latency-ms", &latency],
            &[("QUARRY_RANKING__SEMANTIC", semantic)],
        )?;
        measure(&demo).await?;
    }
    Ok(())
}

async fn measure(demo: &Demo) -> Result<()> {
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(
            &demo.ca_cert,
        )?)?)
        .build()?;
    let (base, token) = (&demo.base, &demo.token);
    let metrics_url = demo.metrics_url();
    let before = metrics::scrape(&metrics_url)?;
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for times in [&mut cold, &mut warm] {
        for question in QUESTIONS {
            times.push(ask(&client, base, token, question).await?);
        }
    }
    let after = metrics::scrape(&metrics_url)?;
    println!(
        "POST /v1/query end to end, demo with all connectors, upstream latency {LATENCY_MS} ms, one client, {} questions:",
        QUESTIONS.len()
    );
    for (name, times) in [("cold", &mut cold), ("warm", &mut warm)] {
        println!(
            "  {name}: p50 {:.0} ms, p95 {:.0} ms",
            millis(percentile(times, 0.5)),
            millis(percentile(times, 0.95))
        );
    }
    let mut all: Vec<Duration> = cold.iter().chain(&warm).copied().collect();
    println!(
        "  all:  p50 {:.0} ms (target <= 1000)",
        millis(percentile(&mut all, 0.5))
    );
    println!("mean server time per query, by stage:");
    for stage in ["auth_limits", "connectors", "ranking", "archive"] {
        if let Some(ms) = metrics::stage_mean(&before, &after, stage) {
            println!("  {stage:<12} {ms:.0} ms");
        }
    }
    println!("mean call time per connector:");
    for (connector, ms) in metrics::connector_means(&before, &after) {
        println!("  {connector:<14} {ms:.0} ms");
    }
    Ok(())
}

async fn ask(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    question: &str,
) -> Result<Duration> {
    let start = Instant::now();
    let response = client
        .post(format!("{base}/query"))
        .bearer_auth(token)
        .json(&serde_json::json!({"query": question, "max_results": 10}))
        .send()
        .await?;
    let status = response.status();
    let body = response.text().await?;
    ensure!(status.is_success(), "{question:?}: {status} {body}");
    Ok(start.elapsed())
}
