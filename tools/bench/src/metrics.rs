//! The server's Prometheus metrics, read by the benchmarks: a scrape
//! before and one after a run give the run's means.

use std::process::Command;

use anyhow::{Context, Result};

/// The metrics text, fetched with curl against the demo's own CA-less TLS.
pub fn scrape(url: &str) -> Result<String> {
    let out = Command::new("curl")
        .args(["-sk", url])
        .output()
        .context("curl for /metrics")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn sum_and_count(text: &str, metric: &str, label: &str) -> Option<(f64, f64)> {
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

pub fn stage_mean(before: &str, after: &str, stage: &str) -> Option<f64> {
    mean_ms(
        before,
        after,
        "quarry_query_stage_seconds",
        &format!("stage=\"{stage}\""),
    )
}

pub fn route_mean(before: &str, after: &str, route: &str) -> Option<f64> {
    mean_ms(
        before,
        after,
        "quarry_http_request_seconds",
        &format!("route=\"{route}\""),
    )
}

/// The mean call time of each connector over the run, by name.
pub fn connector_means(before: &str, after: &str) -> Vec<(String, f64)> {
    let metric = "quarry_connector_call_seconds_count{connector=\"";
    let mut names: Vec<String> = after
        .lines()
        .filter_map(|l| l.strip_prefix(metric))
        .filter_map(|rest| rest.split('"').next().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let label = format!("connector=\"{name}\"");
            let ms = mean_ms(before, after, "quarry_connector_call_seconds", &label)?;
            Some((name, ms))
        })
        .collect()
}
