//! What MCP costs over `/v1`: the same question asked as a `tools/call` of
//! `search` on `/mcp` and as `POST /v1/query`, through the release `quarry
//! demo` (upstream latency 0), one request at a time, alternating (each
//! first in half the pairs), so that both see the same machine and caches. Prints each one's p50 and p99 and the
//! difference of the p50s (the target: at most 5 ms).
//!
//! Both run the same pipeline (`api::query::ask`), archive the answer and
//! draw on the query limits; MCP adds its gate (Host, Origin, the token's
//! audience and scope, one message per POST), rmcp's JSON-RPC and the
//! search tool's shape (an opaque id per passage).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use crate::demo::Demo;
use crate::{QUESTIONS, millis, percentile};

/// Pairs measured (after the warm-up pairs).
const PAIRS: usize = 200;
const WARM_UP_PAIRS: usize = 20;

pub async fn run(root: &Path) -> Result<()> {
    let env = [
        ("QUARRY_LIMITS__QUERY__MINUTE", "100000000"),
        ("QUARRY_LIMITS__QUERY__DAY", "1000000000"),
        ("QUARRY_LIMITS__DEFAULT__MINUTE", "100000000"),
        ("QUARRY_LIMITS__DEFAULT__DAY", "1000000000"),
    ];
    let demo = Demo::start(root, &["--upstream-latency-ms", "0"], &env)?;
    let client = demo.client(1)?;
    let (mut rest, mut mcp) = (Vec::new(), Vec::new());
    for n in 0..WARM_UP_PAIRS + PAIRS {
        let question = QUESTIONS[n % QUESTIONS.len()];
        // Each goes first in half the pairs: the second of a pair finds
        // the passages' vectors in the cache the first filled.
        let (a, b) = if n % 2 == 0 {
            let a = timed(ask_rest(&client, &demo, question)).await?;
            (a, timed(ask_mcp(&client, &demo, question, n)).await?)
        } else {
            let b = timed(ask_mcp(&client, &demo, question, n)).await?;
            (timed(ask_rest(&client, &demo, question)).await?, b)
        };
        if n >= WARM_UP_PAIRS {
            rest.push(a);
            mcp.push(b);
        }
    }
    let (rest50, rest99) = (percentile(&mut rest, 0.5), percentile(&mut rest, 0.99));
    let (mcp50, mcp99) = (percentile(&mut mcp, 0.5), percentile(&mut mcp, 0.99));
    println!("The same question, {PAIRS} times each, alternating, one at a time:");
    println!("{:<30} {:>8} {:>8}", "", "p50 ms", "p99 ms");
    println!(
        "{:<30} {:>8.1} {:>8.1}",
        "POST /v1/query",
        millis(rest50),
        millis(rest99)
    );
    println!(
        "{:<30} {:>8.1} {:>8.1}",
        "MCP tools/call search",
        millis(mcp50),
        millis(mcp99)
    );
    println!(
        "MCP's overhead at p50: {:+.1} ms (target: at most 5 ms)",
        millis(mcp50) - millis(rest50)
    );
    Ok(())
}

async fn timed(request: impl Future<Output = Result<()>>) -> Result<Duration> {
    let started = Instant::now();
    request.await?;
    Ok(started.elapsed())
}

async fn ask_rest(client: &reqwest::Client, demo: &Demo, question: &str) -> Result<()> {
    let response = client
        .post(format!("{}/query", demo.base))
        .bearer_auth(&demo.token)
        .json(&json!({ "query": question }))
        .send()
        .await?;
    ensure!(
        response.status().is_success(),
        "/v1/query: {}",
        response.status()
    );
    response.bytes().await?;
    Ok(())
}

async fn ask_mcp(client: &reqwest::Client, demo: &Demo, question: &str, id: usize) -> Result<()> {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "search", "arguments": { "query": question } },
    });
    let response = client
        .post(&demo.mcp_url)
        .bearer_auth(&demo.mcp_token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body)
        .send()
        .await?;
    ensure!(
        response.status().is_success(),
        "/mcp: {}",
        response.status()
    );
    let answer: Value = response.json().await?;
    ensure!(
        answer["result"]["isError"] == false,
        "tools/call search: {answer}"
    );
    Ok(())
}
