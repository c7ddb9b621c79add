//! `/v1/query` under load: the release `quarry demo` (upstream latency 0)
//! driven by `wrk` with 16 connections, and how the server's time splits
//! between stages, read from its Prometheus metrics.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail, ensure};

const DURATION_SECONDS: u32 = 20;
const CONNECTIONS: u32 = 16;

pub fn run(root: &Path) -> Result<()> {
    ensure_wrk()?;
    let binary = root.join("target/release/quarry");
    ensure!(
        binary.exists(),
        "build the server first: cargo build --release -p quarry"
    );
    let data = tempfile::tempdir()?;
    let mut demo = Command::new(&binary)
        .args(["demo", "--listen", "127.0.0.1:0", "--plugins-dir"])
        .arg(root.join("target/plugins"))
        .arg("--data-dir")
        .arg(data.path())
        .env("QUARRY_LIMITS__QUERY__MINUTE", "100000000")
        .env("QUARRY_LIMITS__QUERY__DAY", "1000000000")
        .env("QUARRY_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting quarry demo")?;
    let result = measure(&mut demo, data.path());
    let _ = demo.kill();
    let _ = demo.wait();
    result
}

fn measure(demo: &mut Child, data: &Path) -> Result<()> {
    let mut line = String::new();
    BufReader::new(demo.stdout.take().context("demo stdout")?).read_line(&mut line)?;
    let started: serde_json::Value =
        serde_json::from_str(&line).context("the demo's first line")?;
    let base = started["base_url"]
        .as_str()
        .context("base_url")?
        .to_string();
    let token = started["users"][0]["token"]
        .as_str()
        .context("token")?
        .to_string();
    let script = data.join("query.lua");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.body = '{{\"query\": \"checkout timeouts for large carts\", \"max_results\": 5}}'\n\
             wrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer {token}\"\n\
             done = function(summary, latency, requests)\n  io.write(string.format(\"non2xx %d\\n\", summary.errors.status))\nend\n"
        ),
    )?;
    let metrics_url = base.trim_end_matches("/v1").to_string() + "/metrics";
    let before = scrape(&metrics_url)?;
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
    let after = scrape(&metrics_url)?;
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
        match stage_mean(&before, &after, stage) {
            Some(ms) => println!("  {stage:<12} {ms:.2} ms"),
            None => println!("  {stage:<12} (not measured by this server)"),
        }
    }
    if let Some(ms) = route_mean(&before, &after, "POST /query") {
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

/// The metrics text, fetched with curl against the demo's own CA-less TLS.
fn scrape(url: &str) -> Result<String> {
    let out = Command::new("curl")
        .args(["-sk", url])
        .output()
        .context("curl for /metrics")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn sum_and_count(text: &str, metric: &str, label: &str) -> Option<(f64, f64)> {
    let value = |suffix: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{metric}_{suffix}{{")) && l.contains(label))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
    };
    Some((value("sum")?, value("count")?))
}

fn mean_ms(before: &str, after: &str, metric: &str, label: &str) -> Option<f64> {
    let (s1, c1) = sum_and_count(after, metric, label)?;
    let (s0, c0) = sum_and_count(before, metric, label).unwrap_or((0.0, 0.0));
    (c1 > c0).then(|| (s1 - s0) / (c1 - c0) * 1000.0)
}

fn stage_mean(before: &str, after: &str, stage: &str) -> Option<f64> {
    mean_ms(
        before,
        after,
        "quarry_query_stage_seconds",
        &format!("stage=\"{stage}\""),
    )
}

fn route_mean(before: &str, after: &str, route: &str) -> Option<f64> {
    mean_ms(
        before,
        after,
        "quarry_http_request_seconds",
        &format!("route=\"{route}\""),
    )
}
