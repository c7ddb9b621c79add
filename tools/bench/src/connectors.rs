//! `connectors`: the sandbox's own cost and what each connector costs a
//! question against upstreams that take 200 ms per request.
//!
//! - The cost of one connector call apart from the upstream (instantiate +
//!   call + drop of a connector that does nothing), median and p99.
//! - A table, one row per connector: the requests one search makes, the
//!   dependent round trips among them (read at the fake upstream: requests
//!   that arrive together were sent together) and the p50 over the fixed
//!   questions, against the target (round trips × latency + 60 ms).
//! - Every connector at once, as one query fans out: the connectors stage
//!   at p50, and its ratio to the slowest connector alone (the fan-out).

use std::time::{Duration, Instant};

use anyhow::Result;
use fake_saas::RecordedRequest;
use quarry::connectors::SearchRequest;
use quarry_tests::{Harness, request};

use crate::{QUESTIONS, millis, percentile};

/// Every connector the demo serves: those of every fake vendor.
fn connectors() -> &'static [&'static str] {
    &fake_saas::dataset::CONNECTORS
}

const LATENCY: Duration = Duration::from_millis(200);
/// What the target allows per connector beyond its round trips.
const SLACK_MS: f64 = 60.0;

pub async fn run() -> Result<()> {
    let mut ids = connectors().to_vec();
    ids.push("hostile");
    let h = Harness::start(&ids).await;
    call_cost(&h).await?;
    h.fake.set_latency(LATENCY);
    let alone = per_connector(&h).await?;
    fan_out(&h, alone).await?;
    h.fake.set_latency(Duration::ZERO);
    Ok(())
}

/// Instantiate + call + drop of a connector that does nothing, so that only
/// the sandbox's own cost is measured.
async fn call_cost(h: &Harness) -> Result<()> {
    let noop = request("noop", 1);
    for _ in 0..500 {
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
    println!(
        "  median {:.1} µs (target <= 20)",
        micros(percentile(&mut samples, 0.50))
    );
    println!("  p99    {:.1} µs", micros(percentile(&mut samples, 0.99)));
    Ok(())
}

/// The question as the host plans it for `connector`, with the settings
/// the demo's connections carry.
fn question(connector: &str, text: &str) -> SearchRequest {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let plan = quarry::rank::plan(text, now);
    SearchRequest {
        settings: quarry::demo::demo_settings(connector),
        ..quarry::search::search_request(&plan, 10, 1)
    }
}

/// One row per connector; returns each connector's time alone for each
/// question.
async fn per_connector(h: &Harness) -> Result<Vec<Vec<Duration>>> {
    println!(
        "each connector alone, upstream latency {} ms per request, p50 over {} questions:",
        LATENCY.as_millis(),
        QUESTIONS.len()
    );
    println!("| connector | requests | dependent round trips | p50 ms | target ms | |");
    println!("|---|---|---|---|---|---|");
    let mut all = Vec::new();
    for id in connectors() {
        // Once unmeasured: the component is compiled and cached.
        h.search(id, &question(id, QUESTIONS[0])).await?;
        let mut times = Vec::new();
        let (mut requests, mut rounds) = (0, 0);
        for text in QUESTIONS {
            h.fake.clear_requests();
            let start = Instant::now();
            h.search(id, &question(id, text)).await?;
            times.push(start.elapsed());
            let seen = h.fake.requests();
            requests = requests.max(seen.len());
            rounds = rounds.max(round_trips(&seen));
        }
        all.push(times.clone());
        let p50 = percentile(&mut times, 0.5);
        let target = rounds as f64 * LATENCY.as_secs_f64() * 1e3 + SLACK_MS;
        let verdict = if millis(p50) <= target { "ok" } else { "over" };
        println!(
            "| {id} | {requests} | {rounds} | {:.0} | {target:.0} | {verdict} |",
            millis(p50)
        );
    }
    println!("(requests and round trips: the most over the questions)");
    Ok(all)
}

/// Dependent round trips: a request that arrives a good part of the
/// latency after the round's first one was sent after an answer came back.
fn round_trips(seen: &[RecordedRequest]) -> usize {
    let gap = (LATENCY.as_millis() / 2) as u64;
    let mut arrivals: Vec<u64> = seen.iter().map(|r| r.received_ms).collect();
    arrivals.sort_unstable();
    let mut rounds = 0;
    let mut round_start = None;
    for at in arrivals {
        if round_start.is_none_or(|start| at >= start + gap) {
            rounds += 1;
            round_start = Some(at);
        }
    }
    rounds
}

/// Every connector at once, as a query with all of them connected fans out,
/// against the slowest connector alone on the same question.
async fn fan_out(h: &Harness, alone: Vec<Vec<Duration>>) -> Result<()> {
    let mut slowest: Vec<Duration> = (0..QUESTIONS.len())
        .map(|q| alone.iter().map(|times| times[q]).max().unwrap_or_default())
        .collect();
    let slowest = percentile(&mut slowest, 0.5);
    let mut together = Vec::new();
    for text in QUESTIONS {
        let start = Instant::now();
        let calls = connectors()
            .iter()
            .map(|id| async move { h.search(id, &question(id, text)).await });
        for result in futures::future::join_all(calls).await {
            result?;
        }
        together.push(start.elapsed());
    }
    let total = percentile(&mut together, 0.5);
    println!(
        "all {} connectors at once (the connectors stage of one query), p50 over {} questions:",
        connectors().len(),
        QUESTIONS.len()
    );
    println!(
        "  slowest connector alone: {:.0} ms (p50 over the questions)",
        millis(slowest)
    );
    println!(
        "  all at once:             {:.0} ms (target <= 700)",
        millis(total)
    );
    println!(
        "  fan-out total/slowest:   {:.3} (target <= 1.05)",
        total.as_secs_f64() / slowest.as_secs_f64()
    );
    Ok(())
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
