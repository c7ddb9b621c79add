//! `/v1/query` under load: the release `quarry demo` (upstream latency 0)
//! driven by `wrk` with 16 connections, and how the server's time splits
//! between stages, read from its Prometheus metrics.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use crate::demo::Demo;
use crate::metrics;

const DURATION_SECONDS: u32 = 20;
const CONNECTIONS: u32 = 16;

pub fn run(root: &Path) -> Result<()> {
    ensure_wrk()?;
    let demo = Demo::start(
        root,
        &[],
        &[
            ("QUARRY_LIMITS__QUERY__MINUTE", "100000000"),
            ("QUARRY_LIMITS__QUERY__DAY", "1000000000"),
        ],
    )?;
    let (base, token, data) = (&demo.base, &demo.token, demo.data.path());
    let script = data.join("query.lua");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.body = '{{\"query\": \"checkout timeouts for large carts\", \"max_results\": 5}}'\n\
             wrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer {token}\"\n\
             done = function(summary, latency, requests)\n  io.write(string.format(\"non2xx %d\\n\", summary.errors.status))\nend\n"
        ),
    )?;
    let metrics_url = demo.metrics_url();
    let before = metrics::scrape(&metrics_url)?;
    let output = Command::new("wrk")
        .args([
            "-t",
            "2",
            "-c",
            &CONNECTIONS.to_string(),
            "-d",
            &format!("{DURATION_SECONDS}s"),
            "--latency",
            "-s",
        ])
        .arg(&script)
        .arg(format!("{base}/query"))
        .output()
        .context("running wrk")?;
    ensure!(
        output.status.success(),
        "wrk failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let after = metrics::scrape(&metrics_url)?;
    let report = String::from_utf8_lossy(&output.stdout);
    println!(
        "POST /v1/query, demo data, upstream latency 0, {CONNECTIONS} connections, {DURATION_SECONDS} s (wrk):"
    );
    for line in report.lines() {
        let t = line.trim();
        if t.starts_with("Requests/sec")
            || t.starts_with("50%")
            || t.starts_with("99%")
            || t.starts_with("non2xx")
        {
            println!("  {t}");
        }
    }
    println!("mean server time per query, by stage:");
    for stage in ["auth_limits", "connectors", "ranking", "archive"] {
        match metrics::stage_mean(&before, &after, stage) {
            Some(ms) => println!("  {stage:<12} {ms:.2} ms"),
            None => println!("  {stage:<12} (not measured by this server)"),
        }
    }
    if let Some(ms) = metrics::route_mean(&before, &after, "POST /query") {
        println!("  {:<12} {ms:.2} ms", "total");
    }
    Ok(())
}

fn ensure_wrk() -> Result<()> {
    if Command::new("wrk").arg("--version").output().is_ok() {
        return Ok(());
    }
    eprintln!("installing wrk (Debian package)");
    let status = Command::new("apt-get")
        .args(["install", "-y", "-q", "wrk"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()?;
    if !status.success() {
        bail!("could not install wrk: run `apt-get install wrk`");
    }
    Ok(())
}
