//! Benchmarks that print their figures.
//!
//! ```text
//! cargo run --release -p quarry-bench -- connectors
//! cargo run --release -p quarry-bench -- api      # needs target/release/quarry
//! cargo run --release -p quarry-bench -- archive [10000,100000,1000000]
//! cargo run --release -p quarry-bench -- embedder [--no-quality]
//! ```
//!
//! `connectors`: the cost of one connector call apart from the upstream
//! (instantiate + call + drop, median and p99), and the fan-out of five
//! connectors against upstreams that each take 50 ms (total time over the
//! slowest connector's time alone; the target is at most 1.1).

use std::time::{Duration, Instant};

mod api;
mod archive;
mod embedder;

use anyhow::{Result, bail};
use quarry_tests::{Harness, request};

const CONNECTORS: [&str; 5] = ["github", "slack", "notion", "linear", "jira"];

#[tokio::main]
async fn main() -> Result<()> {
    let which = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "connectors".into());
    match which.as_str() {
        "connectors" => connectors().await,
        "api" => tokio::task::block_in_place(|| api::run(&quarry_tests::repo_root())),
        "archive" => {
            let sizes: Vec<usize> = match std::env::args().nth(2) {
                Some(list) => list.split(',').map(str::parse).collect::<Result<_, _>>()?,
                None => vec![10_000, 100_000, 1_000_000],
            };
            archive::run(&quarry_tests::repo_root(), &sizes).await
        }
        "embedder" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            let quality = !args.iter().any(|a| a == "--no-quality");
            match args.iter().position(|a| a == "--variant") {
                Some(at) => {
                    let n = args.get(at + 1).and_then(|n| n.parse().ok());
                    let Some(n) = n else {
                        bail!("--variant needs a number");
                    };
                    embedder::run_variant(&quarry_tests::repo_root(), n, quality).await
                }
                None => embedder::run(quality),
            }
        }
        other => bail!("unknown benchmark {other:?} (known: connectors, api, archive, embedder)"),
    }
}

async fn connectors() -> Result<()> {
    let mut ids = CONNECTORS.to_vec();
    ids.push("hostile");
    let h = Harness::start(&ids).await;
    call_cost(&h).await?;
    fan_out(&h).await
}

/// Instantiate + call + drop of a connector that does nothing, so that only
/// the sandbox's own cost is measured.
async fn call_cost(h: &Harness) -> Result<()> {
    let noop = request("noop", 1);
    for _ in 0..200 {
        h.search("hostile", &noop).await?;
    }
    let mut samples = Vec::with_capacity(5000);
    for _ in 0..5000 {
        let start = Instant::now();
        h.search("hostile", &noop).await?;
        samples.push(start.elapsed());
    }
    println!(
        "connector call apart from the upstream (instantiate + call + drop), {} calls:",
        samples.len()
    );
    println!("  median {:.1} µs", micros(percentile(&mut samples, 0.50)));
    println!("  p99    {:.1} µs", micros(percentile(&mut samples, 0.99)));
    Ok(())
}

/// Five connectors at once against upstreams with 50 ms latency each.
async fn fan_out(h: &Harness) -> Result<()> {
    h.fake.set_latency(Duration::from_millis(50));
    let question = request("checkout timeout", 10);
    let mut alone = Vec::new();
    for id in CONNECTORS {
        let mut runs: Vec<Duration> = Vec::new();
        for _ in 0..7 {
            let start = Instant::now();
            h.search(id, &question).await?;
            runs.push(start.elapsed());
        }
        let median = percentile(&mut runs, 0.5);
        println!("  {id:<7} alone: {:.1} ms (median of 7)", millis(median));
        alone.push(median);
    }
    let slowest = alone.iter().copied().max().unwrap_or_default();
    let mut together = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        let calls = CONNECTORS.iter().map(|id| h.search(id, &question));
        for result in futures::future::join_all(calls).await {
            result?;
        }
        together.push(start.elapsed());
    }
    let total = percentile(&mut together, 0.5);
    println!(
        "fan-out of {} connectors, upstream latency 50 ms per fetch:",
        CONNECTORS.len()
    );
    println!("  slowest connector alone: {:.1} ms", millis(slowest));
    println!(
        "  all five in parallel:    {:.1} ms (median of 15)",
        millis(total)
    );
    println!(
        "  ratio total/slowest:     {:.3} (target <= 1.1)",
        total.as_secs_f64() / slowest.as_secs_f64()
    );
    h.fake.set_latency(Duration::ZERO);
    Ok(())
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
