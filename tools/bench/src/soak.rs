//! `quarry-bench soak [--minutes N | --seconds N] [--seed N] [--debug]`: the release
//! `quarry demo` under the mixed load of `quarry_tests::load` (queries
//! with and without idempotency keys and their retries, deep searches,
//! reads, webhook registrations, and deletions of some users) for a
//! bounded time, 15 minutes by default, while the fake upstreams inject
//! latency spikes, 500s, 429s with `Retry-After`, connection resets and
//! trickled bodies (fake-saas's chaos, seeded).
//!
//! It prints the requests by status; p50 and p99 per endpoint; the
//! server's RSS and open file descriptors every 10 s and their slopes
//! after warm-up (least squares); the database file's size at the start
//! and the end; what the fake upstreams injected; and every invariant,
//! pass or fail. It exits non-zero when an invariant fails.
//!
//! Needs what `tools/test` makes: the release server (`cargo build
//! --release -p quarry -p quarry-bench --features quarry/demo`; `--debug`
//! runs the tests' build instead, `target/debug/quarry`, whose dependencies
//! are optimised but whose own code is not: slower answers, the same
//! invariants), the
//! connectors in `target/plugins`, the model, and `target/py` (the webhook
//! receiver's Python).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use fake_saas::Chaos;
use quarry_tests::load::report::Report;
use quarry_tests::load::rng::{Rng, fresh_seed};
use quarry_tests::load::{Load, LoadConfig, Summary};
use quarry_tests::server::{Demo, metric_value};

use crate::{millis, percentile};

/// Users the demo makes beside alice and bob; most are deleted on the way.
const EXTRA_USERS: usize = 6;
const DELETIONS: usize = 4;
const SAMPLE_EVERY: Duration = Duration::from_secs(10);
/// The loaded deep-search indexes' budget, in MiB. Each user's index grows
/// with their archive (this load's users reach 16 MiB within minutes): a
/// budget below what the users' indexes need together makes the server
/// unload and load them again all the time, as a server past its default
/// (1 GiB) would, and keeps memory after warm-up the server's steady state
/// rather than the archive's size.
const INDEX_BUDGET_MIB: &str = "48";
/// The database file's page cache, in MiB: the file grows to about 64 MiB
/// in 15 minutes of this load, so the default cache (64 MiB) would fill
/// for the whole run. A smaller one is full within the warm-up.
const PAGE_CACHE_MIB: &str = "16";

struct Args {
    duration: Duration,
    seed: u64,
    debug: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut parsed = Args {
        duration: Duration::from_secs(15 * 60),
        seed: fresh_seed() % 1_000_000,
        debug: false,
    };
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--debug" {
            parsed.debug = true;
            continue;
        }
        let value: u64 = rest
            .next()
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("{flag} needs a whole number"))?;
        match flag.as_str() {
            "--minutes" => parsed.duration = Duration::from_secs(value * 60),
            "--seconds" => parsed.duration = Duration::from_secs(value),
            "--seed" => parsed.seed = value,
            other => {
                bail!("unknown option {other:?} (known: --minutes, --seconds, --seed, --debug)")
            }
        }
    }
    ensure!(!parsed.duration.is_zero(), "the soak needs some time");
    Ok(parsed)
}

/// The server's resident memory and open file descriptors at a moment,
/// and what its `/metrics` say it keeps in memory then (heap, loaded
/// indexes, embedding cache).
#[derive(Clone, Copy)]
struct Sample {
    seconds: f64,
    rss_kib: f64,
    fds: f64,
    index_mib: f64,
    cached_vectors: f64,
    /// What the allocator has handed out: a leak grows it, fragmentation
    /// does not.
    heap_mib: f64,
}

/// Reads the server's process figures and its memory gauges.
struct Sampler {
    pid: u32,
    metrics_url: String,
    client: reqwest::Client,
}

pub async fn run(root: &Path, args: &[String]) -> Result<()> {
    let args = parse(args)?;
    let build = if args.debug { "debug" } else { "release" };
    let binary = root.join("target").join(build).join("quarry");
    ensure!(
        binary.exists(),
        "build the server first: cargo build --release -p quarry -p quarry-bench --features quarry/demo \
         (or tools/test's build, with --debug)"
    );
    let load = Load::new(LoadConfig {
        seed: args.seed,
        workers_per_user: 2,
        query_limit_minute: 40,
        think_ms: (50, 400),
        max_backoff: Duration::from_secs(5),
    });
    let chaos = Chaos::soak(args.seed);
    let env = load.server_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut demo = Demo::options()
        .binary(&binary)
        .envs(&env)
        // The model ranks, as in production (the tests rank by words).
        .env("QUARRY_RANKING__SEMANTIC", "true")
        .env("QUARRY_ARCHIVE__INDEX_MEMORY_MIB", INDEX_BUDGET_MIB)
        .env("QUARRY_STORAGE__CACHE_MIB", PAGE_CACHE_MIB)
        .extra_users(EXTRA_USERS)
        .upstream_faults(&chaos.spec())
        .start();
    let pid = demo.pid().context("the demo's process id")?;
    let database = demo.data_dir.join("quarry.redb");
    let size_at_start = file_size(&database);
    println!(
        "soak: {} s, {build} build, seed {}, {} users ({EXTRA_USERS} deletable), \
         indexes' budget {INDEX_BUDGET_MIB} MiB, page cache {PAGE_CACHE_MIB} MiB, faults: {}",
        args.duration.as_secs(),
        args.seed,
        demo.users.len(),
        chaos.spec()
    );
    load.attach(&demo).await;
    load.start_workers();
    let sampler = Sampler {
        pid,
        metrics_url: demo.metrics_url(),
        client: demo.client.clone(),
    };
    let samples = drive(&load, &sampler, args.duration, args.seed).await;
    load.stop_workers().await;
    let size_at_end = file_size(&database);
    let injected = demo.fake("/_fake/chaos").await;
    let mut report = load.verify().await;
    demo.stop();
    load.verify_store(&demo.data_dir, &mut report);

    print_requests(&load.summary());
    print_resources(&samples, args.duration);
    println!(
        "database file: {:.1} MiB at the start, {:.1} MiB at the end",
        size_at_start as f64 / 1048576.0,
        size_at_end as f64 / 1048576.0
    );
    println!("injected by the fake upstreams: {injected}");
    print_report(&report);
    if !report.passed() {
        bail!("an invariant failed (seed {})", args.seed);
    }
    Ok(())
}

/// Runs the load for `duration`: samples the server every 10 s and
/// deletes a user at evenly spaced moments.
async fn drive(load: &Load, sampler: &Sampler, duration: Duration, seed: u64) -> Vec<Sample> {
    let started = Instant::now();
    let mut rng = Rng::new(seed).fork(u64::MAX);
    let mut samples = vec![sampler.sample(0.0).await];
    let mut next_sample = SAMPLE_EVERY;
    let mut deletions = (1..=DELETIONS as u32).map(|k| duration * k / (DELETIONS as u32 + 1));
    let mut next_deletion = deletions.next();
    while started.elapsed() < duration {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = started.elapsed();
        if now >= next_sample {
            samples.push(sampler.sample(now.as_secs_f64()).await);
            next_sample += SAMPLE_EVERY;
        }
        if next_deletion.is_some_and(|at| now >= at) {
            match load.delete_someone(&mut rng).await {
                Some(email) => eprintln!("soak: deleted {email} at {} s", now.as_secs()),
                None => eprintln!("soak: nobody left to delete at {} s", now.as_secs()),
            }
            next_deletion = deletions.next();
        }
    }
    samples.push(sampler.sample(started.elapsed().as_secs_f64()).await);
    samples
}

impl Sampler {
    async fn sample(&self, seconds: f64) -> Sample {
        let pid = self.pid;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let rss_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0);
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
        let metrics = self.metrics().await;
        let gauge = |name: &str| metric_value(&metrics, name).unwrap_or(f64::NAN);
        Sample {
            seconds,
            rss_kib,
            fds: fds as f64,
            index_mib: gauge("quarry_archive_index_bytes") / 1048576.0,
            cached_vectors: gauge("quarry_embedding_cache_vectors"),
            heap_mib: gauge("quarry_heap_allocated_bytes") / 1048576.0,
        }
    }

    /// The server's `/metrics` text (empty when it does not answer).
    async fn metrics(&self) -> String {
        let reply = self.client.get(&self.metrics_url).send().await;
        match reply {
            Ok(reply) => reply.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn print_requests(summary: &Summary) {
    let total: usize = summary.by_status.values().sum();
    println!(
        "requests: {total}; {} queries answered 200; {} users deleted",
        summary.queries_answered, summary.users_deleted
    );
    for (status, count) in &summary.by_status {
        println!("  {status:<10} {count}");
    }
    println!(
        "{:<28} {:>7} {:>9} {:>9}",
        "endpoint", "answers", "p50 ms", "p99 ms"
    );
    for (endpoint, latencies) in &summary.latencies {
        let mut latencies = latencies.clone();
        println!(
            "{endpoint:<28} {:>7} {:>9.1} {:>9.1}",
            latencies.len(),
            millis(percentile(&mut latencies, 0.50)),
            millis(percentile(&mut latencies, 0.99))
        );
    }
}

/// The samples, and the slopes after warm-up (a third of the run, at most
/// three minutes: the caches and the model's buffers fill first).
fn print_resources(samples: &[Sample], duration: Duration) {
    println!(
        "server RSS and open file descriptors; the heap the Rust code holds (jemalloc's \
         allocated bytes); the deep-search indexes loaded (usearch's memory, beside that \
         heap); the vectors the embedding cache keeps:"
    );
    for s in samples {
        println!(
            "  {:>6.0} s  RSS {:>6.1} MiB  {:>4} fds  heap {:>6.1} MiB  indexes {:>5.1} MiB  cache {:>6} vectors",
            s.seconds,
            s.rss_kib / 1024.0,
            s.fds,
            s.heap_mib,
            s.index_mib,
            s.cached_vectors
        );
    }
    let warm_up = (duration.as_secs_f64() / 3.0).min(180.0);
    let after: Vec<&Sample> = samples.iter().filter(|s| s.seconds >= warm_up).collect();
    let minutes: Vec<f64> = after.iter().map(|s| s.seconds / 60.0).collect();
    let rss: Vec<f64> = after.iter().map(|s| s.rss_kib).collect();
    let fds: Vec<f64> = after.iter().map(|s| s.fds).collect();
    let heap: Vec<f64> = after.iter().map(|s| s.heap_mib * 1024.0).collect();
    match (
        slope(&minutes, &rss),
        slope(&minutes, &fds),
        slope(&minutes, &heap),
    ) {
        (Some(rss), Some(fds), Some(heap)) => println!(
            "slope after {warm_up:.0} s of warm-up ({} samples): RSS {rss:+.1} KiB/min, \
             heap allocated {heap:+.1} KiB/min, fds {fds:+.2}/min",
            after.len()
        ),
        _ => println!("too few samples after {warm_up:.0} s of warm-up for a slope"),
    }
}

/// The least-squares slope of `y` against `x`.
fn slope(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    if x.len() < 3 {
        return None;
    }
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let covariance: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let variance: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    (variance > 0.0).then(|| covariance / variance)
}

fn print_report(report: &Report) {
    let verdict = if report.passed() {
        "all hold"
    } else {
        "FAILED"
    };
    println!("invariants ({verdict}):\n{report}");
}

#[cfg(test)]
mod tests {
    #[test]
    fn slope_of_a_line() {
        let x = [0.0, 1.0, 2.0, 3.0];
        let y = [5.0, 7.0, 9.0, 11.0];
        assert_eq!(super::slope(&x, &y), Some(2.0));
        assert_eq!(super::slope(&x[..2], &y[..2]), None);
    }
}
