//! Benchmarks that print their figures.
//!
//! ```text
//! cargo run --release -p quarry-bench -- connectors
//! cargo run --release -p quarry-bench -- live     # needs target/release/quarry
//! cargo run --release -p quarry-bench -- api      # needs target/release/quarry
//! cargo run --release -p quarry-bench -- archive [10000,100000,1000000]
//! cargo run --release -p quarry-bench -- embedder [--no-quality]
//! cargo run --release -p quarry-bench -- scale    # needs target/release/quarry
//! cargo run --release -p quarry-bench -- soak [--minutes 15] [--seed N]   # needs target/release/quarry
//! ```
//!
//! Each module's comment says what it measures.

use std::time::Duration;

mod api;
mod archive;
mod connectors;
mod demo;
mod embedder;
mod live;
mod mcp;
mod metrics;
mod scale;
mod soak;

use anyhow::{Result, bail};

/// The fixed questions the connector and end-to-end benchmarks ask, each
/// about a different story of the demo's fake company.
pub const QUESTIONS: [&str; 12] = [
    "checkout timeouts with large carts",
    "search index rebuild is slow",
    "password reset emails going to spam",
    "load balancer certificate rotation incident",
    "invoice retry double charges EU customers",
    "gift cards combined with discount codes",
    "android app crashes in order history",
    "apple pay rollout",
    "canada sales tax",
    "refunds in the wrong currency",
    "black friday readiness",
    "inventory drift between warehouse and shop",
];

#[tokio::main]
async fn main() -> Result<()> {
    let which = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "connectors".into());
    match which.as_str() {
        "connectors" => connectors::run().await,
        "live" => live::run(&quarry_tests::repo_root()).await,
        "api" => tokio::task::block_in_place(|| api::run(&quarry_tests::repo_root())),
        "scale" => scale::run(&quarry_tests::repo_root()).await,
        "mcp" => mcp::run(&quarry_tests::repo_root()).await,
        "soak" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            soak::run(&quarry_tests::repo_root(), &args).await
        }
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
                None => embedder::run(&quarry_tests::repo_root(), quality),
            }
        }
        other => {
            bail!(
                "unknown benchmark {other:?} (known: connectors, live, api, scale, mcp, soak, archive, embedder)"
            )
        }
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
