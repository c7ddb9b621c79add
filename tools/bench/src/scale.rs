//! Scale-out, in one run on this machine: `/v1/query` through the release
//! `quarry demo` (upstream latency 0) on one replica on redb, against one
//! and three replicas on PostgreSQL and Redis. The same load each time: 16
//! clients in this process, each sending its next query as soon as the
//! last is answered, spread round-robin over the replicas, for 20 s.
//!
//! It prints requests/s, p50 and p99 as the clients saw them; CPU time per
//! query of the servers (the quarry process, and PostgreSQL and Redis
//! beside it: this machine runs all of them on its 2 cores); and the mean
//! server time per stage from the replicas' metrics, `auth_limits` first.
//!
//! The engines are the ones the tests use (`tools/engines`): the machine's
//! own, or private ones under `target/engines`. Each configuration gets a
//! database and a Redis key prefix of its own.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use quarry_tests::shared::SharedBackend;

use crate::demo::{Demo, metrics_url};
use crate::{metrics, percentile};

const CLIENTS: usize = 16;
const DURATION: Duration = Duration::from_secs(20);
const WARM_UP: Duration = Duration::from_secs(3);
const STAGES: [&str; 4] = ["auth_limits", "connectors", "ranking", "archive"];

struct Setup {
    name: &'static str,
    replicas: usize,
    shared: bool,
}

const SETUPS: [Setup; 3] = [
    Setup {
        name: "redb, 1 replica",
        replicas: 1,
        shared: false,
    },
    Setup {
        name: "PostgreSQL + Redis, 1 replica",
        replicas: 1,
        shared: true,
    },
    Setup {
        name: "PostgreSQL + Redis, 3 replicas",
        replicas: 3,
        shared: true,
    },
];

struct Figures {
    requests: usize,
    failures: usize,
    per_second: f64,
    p50: Duration,
    p99: Duration,
    quarry_cpu_ms: f64,
    engines_cpu_ms: f64,
    stages: Vec<(&'static str, Option<f64>)>,
}

pub async fn run(root: &Path) -> Result<()> {
    find_engines(root)?;
    println!(
        "POST /v1/query, demo data, upstream latency 0, {CLIENTS} clients, {} s per setup:",
        DURATION.as_secs()
    );
    println!(
        "{:<32} {:>8} {:>8} {:>8} {:>11} {:>11}  stage means (ms)",
        "setup", "req/s", "p50 ms", "p99 ms", "CPU quarry", "CPU engines"
    );
    let mut redb_p50 = None;
    for setup in &SETUPS {
        let figures = measure(root, setup).await?;
        let stages: Vec<String> = figures
            .stages
            .iter()
            .map(|(stage, ms)| match ms {
                Some(ms) => format!("{stage} {ms:.2}"),
                None => format!("{stage} -"),
            })
            .collect();
        println!(
            "{:<32} {:>8.1} {:>8.1} {:>8.1} {:>8.2} ms {:>8.2} ms  {}",
            setup.name,
            figures.per_second,
            ms(figures.p50),
            ms(figures.p99),
            figures.quarry_cpu_ms,
            figures.engines_cpu_ms,
            stages.join(", ")
        );
        if figures.failures > 0 {
            println!(
                "  ({} of {} requests failed)",
                figures.failures, figures.requests
            );
        }
        match (setup.shared, redb_p50) {
            (false, _) => redb_p50 = Some(figures.p50),
            (true, Some(base)) if setup.replicas == 1 => println!(
                "  p50 against redb's: {:+.1}%",
                (ms(figures.p50) / ms(base) - 1.0) * 100.0
            ),
            _ => {}
        }
    }
    Ok(())
}

async fn measure(root: &Path, setup: &Setup) -> Result<Figures> {
    let backend = setup.shared.then(SharedBackend::create);
    let replicas = setup.replicas.to_string();
    let mut args = vec!["--replicas", replicas.as_str()];
    let shared_args = backend
        .as_ref()
        .map(SharedBackend::demo_args)
        .unwrap_or_default();
    args.extend(shared_args.iter().map(String::as_str));
    let mut env = vec![
        (
            "QUARRY_LIMITS__QUERY__MINUTE".to_string(),
            "100000000".to_string(),
        ),
        (
            "QUARRY_LIMITS__QUERY__DAY".to_string(),
            "1000000000".to_string(),
        ),
    ];
    env.extend(backend.iter().flat_map(SharedBackend::env));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let demo = Demo::start(root, &args, &env)?;
    let client = demo.client(CLIENTS)?;
    let urls: Vec<String> = match demo.replicas.is_empty() {
        true => vec![demo.base.clone()],
        false => demo.replicas.clone(),
    };
    load(&client, &urls, &demo.token, WARM_UP).await;
    let before: Vec<String> = urls
        .iter()
        .map(|u| metrics::scrape(&metrics_url(u)))
        .collect::<Result<_>>()?;
    let (quarry_before, engines_before) = (cpu_of(&[demo.pid()]), cpu_of(&engine_pids()));
    let started = Instant::now();
    let mut latencies = load(&client, &urls, &demo.token, DURATION).await;
    let elapsed = started.elapsed();
    let (quarry_after, engines_after) = (cpu_of(&[demo.pid()]), cpu_of(&engine_pids()));
    let after: Vec<String> = urls
        .iter()
        .map(|u| metrics::scrape(&metrics_url(u)))
        .collect::<Result<_>>()?;
    let failures = latencies.iter().filter(|(_, ok)| !ok).count();
    let requests = latencies.len();
    let mut times: Vec<Duration> = latencies.drain(..).map(|(t, _)| t).collect();
    let per_query = |cpu: Duration| cpu.as_secs_f64() * 1000.0 / requests.max(1) as f64;
    Ok(Figures {
        requests,
        failures,
        per_second: requests as f64 / elapsed.as_secs_f64(),
        p50: percentile(&mut times, 0.50),
        p99: percentile(&mut times, 0.99),
        quarry_cpu_ms: per_query(quarry_after.saturating_sub(quarry_before)),
        engines_cpu_ms: per_query(engines_after.saturating_sub(engines_before)),
        stages: STAGES
            .iter()
            .map(|s| (*s, stage_mean(&before, &after, s)))
            .collect(),
    })
}

/// `CLIENTS` loops sending queries until `how_long` has passed; each
/// answer's latency and whether it was a 200.
async fn load(
    client: &reqwest::Client,
    urls: &[String],
    token: &str,
    how_long: Duration,
) -> Vec<(Duration, bool)> {
    let deadline = Instant::now() + how_long;
    let body =
        serde_json::json!({ "query": "checkout timeouts for large carts", "max_results": 5 });
    let clients = (0..CLIENTS).map(|n| {
        let body = &body;
        async move {
            let mut seen = Vec::new();
            let mut next = n;
            while Instant::now() < deadline {
                let url = format!("{}/query", urls[next % urls.len()]);
                next += 1;
                let sent = Instant::now();
                let ok = client
                    .post(&url)
                    .bearer_auth(token)
                    .json(body)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                seen.push((sent.elapsed(), ok));
            }
            seen
        }
    });
    futures::future::join_all(clients)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The mean of a stage over every replica's metrics.
fn stage_mean(before: &[String], after: &[String], stage: &str) -> Option<f64> {
    let label = format!("stage=\"{stage}\"");
    let metric = "quarry_query_stage_seconds";
    let (mut sum, mut count) = (0.0, 0.0);
    for (before, after) in before.iter().zip(after) {
        let (s1, c1) = metrics::sum_and_count(after, metric, &label)?;
        let (s0, c0) = metrics::sum_and_count(before, metric, &label).unwrap_or((0.0, 0.0));
        sum += s1 - s0;
        count += c1 - c0;
    }
    (count > 0.0).then(|| sum / count * 1000.0)
}

/// Sets `QUARRY_TEST_POSTGRES_URL` and `QUARRY_TEST_REDIS_URL` from
/// `tools/engines` unless they are set (it starts private engines when the
/// machine has none).
fn find_engines(root: &Path) -> Result<()> {
    if std::env::var_os("QUARRY_TEST_POSTGRES_URL").is_some()
        && std::env::var_os("QUARRY_TEST_REDIS_URL").is_some()
    {
        return Ok(());
    }
    let out = std::process::Command::new(root.join("tools/engines"))
        .output()
        .context("running tools/engines")?;
    anyhow::ensure!(
        out.status.success(),
        "tools/engines: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((name, value)) = line.trim_start_matches("export ").split_once('=') {
            // SAFETY: set before any other thread of this benchmark reads
            // the environment (the runtime's workers do not).
            unsafe { std::env::set_var(name, value) };
        }
    }
    Ok(())
}

/// The processes of PostgreSQL and Redis on this machine.
fn engine_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.starts_with("postgres") || comm.starts_with("redis-server"))
        })
        .collect()
}

/// User and system CPU time of these processes so far.
fn cpu_of(pids: &[u32]) -> Duration {
    // utime and stime are fields 14 and 15 of /proc/PID/stat, in clock
    // ticks (100 per second on Linux).
    let ticks: u64 = pids
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            let after_name = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = after_name.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    Duration::from_millis(ticks * 10)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
