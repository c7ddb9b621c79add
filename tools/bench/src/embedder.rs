//! `embedder`: the embedding paths side by side on the same passages, in
//! one run: passages per second on the ir-dbpedia passages the ranking
//! embeds, and nDCG@10 on ir-dbpedia (`quarry eval-ranking`'s offline
//! figure) for each.
//!
//! The first row is the path the server took before (one caller,
//! all-MiniLM-L6-v2 on candle f32 with each matrix product split over both
//! cores, texts cut at 128 tokens, matrix products without AVX-512). The
//! rows marked "baseline build" run a copy of this benchmark built without
//! the `avx512` feature, which `embedder` builds first; the others go
//! through the scheduler as the server does now (workers, each on one
//! core, batches cut by length) with candle's AVX-512 kernels, and show
//! what a shorter token cap buys and costs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use quarry::rank::eval::{Beir, evaluate};
use quarry::rank::{Embedder, MiniLm, Priority, Scheduler};

/// Passages timed per variant (the first of the corpus, as chunked).
const TIMED: usize = 384;

struct Variant {
    name: &'static str,
    max_tokens: usize,
    /// 0: one caller embeds everything itself (the path before the
    /// scheduler); else the scheduler's worker threads.
    workers: usize,
    /// Threads candle splits each matrix product over (`None`: all cores).
    threads: Option<usize>,
    /// Run by the copy built without AVX-512 kernels.
    baseline_build: bool,
}

const VARIANTS: [Variant; 6] = [
    Variant {
        name: "before: 1 caller, candle on all cores, 128 tokens, no AVX-512",
        max_tokens: 128,
        workers: 0,
        threads: None,
        baseline_build: true,
    },
    Variant {
        name: "scheduler: 2 workers, 1 core each, 128 tokens, no AVX-512",
        max_tokens: 128,
        workers: 2,
        threads: Some(1),
        baseline_build: true,
    },
    Variant {
        name: "scheduler: 2 workers, 1 core each, 128 tokens, AVX-512",
        max_tokens: 128,
        workers: 2,
        threads: Some(1),
        baseline_build: false,
    },
    Variant {
        name: "scheduler: 2 workers, 1 core each, 96 tokens, AVX-512",
        max_tokens: 96,
        workers: 2,
        threads: Some(1),
        baseline_build: false,
    },
    Variant {
        name: "scheduler: 2 workers, 1 core each, 80 tokens, AVX-512 (the server)",
        max_tokens: 80,
        workers: 2,
        threads: Some(1),
        baseline_build: false,
    },
    Variant {
        name: "scheduler: 2 workers, 1 core each, 64 tokens, AVX-512",
        max_tokens: 64,
        workers: 2,
        threads: Some(1),
        baseline_build: false,
    },
];

/// Runs every variant, each in its own process: the thread settings take
/// effect when a process starts (rayon sizes its pool once), as they do in
/// the server (`quarry serve` sets `RAYON_NUM_THREADS=1` at start).
pub fn run(repo: &Path, quality: bool) -> Result<()> {
    let current = std::env::current_exe()?;
    let baseline = build_baseline(repo)?;
    println!("embedder benchmark: {TIMED} ir-dbpedia passages per variant, 4 concurrent jobs");
    println!("| variant | passages/s | × before | nDCG@10 |");
    println!("|---|---|---|---|");
    let mut before = None;
    for (n, variant) in VARIANTS.iter().enumerate() {
        let binary = if variant.baseline_build {
            &baseline
        } else {
            &current
        };
        let mut child = Command::new(binary);
        child.args(["embedder", "--variant", &n.to_string()]);
        if !quality {
            child.arg("--no-quality");
        }
        match variant.threads {
            Some(threads) => child.env("RAYON_NUM_THREADS", threads.to_string()),
            None => child.env_remove("RAYON_NUM_THREADS"),
        };
        let output = child.output()?;
        if !output.status.success() {
            bail!(
                "variant {n} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let line = String::from_utf8(output.stdout)?;
        let mut fields = line.split_whitespace();
        let rate: f64 = fields.next().context("no rate")?.parse()?;
        let ndcg = fields.next().unwrap_or("-");
        let base = *before.get_or_insert(rate);
        println!(
            "| {} | {rate:.1} | {:.2} | {ndcg} |",
            variant.name,
            rate / base
        );
    }
    Ok(())
}

/// Builds this benchmark without the `avx512` feature and keeps the copy
/// as `quarry-bench-baseline`, then builds it back as it was (cargo keeps
/// both builds, so the second is only a copy).
fn build_baseline(repo: &Path) -> Result<PathBuf> {
    let release = repo.join("target/release");
    let cargo = |features: &[&str]| -> Result<()> {
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(repo)
            .args(["build", "--quiet", "--release", "-p", "quarry-bench"])
            .args(features)
            .status()
            .context("running cargo")?;
        ensure!(status.success(), "cargo build {features:?} failed");
        Ok(())
    };
    eprintln!("building the baseline (no AVX-512 kernels); the first time takes minutes");
    cargo(&["--no-default-features"])?;
    let baseline = release.join("quarry-bench-baseline");
    std::fs::copy(release.join("quarry-bench"), &baseline)?;
    cargo(&[])?;
    Ok(baseline)
}

/// Measures one variant in this process and prints `<passages/s> <nDCG@10>`.
pub async fn run_variant(repo: &Path, n: usize, quality: bool) -> Result<()> {
    let variant = VARIANTS.get(n).context("no such variant")?;
    let data = repo.join("../shared/data/ir-dbpedia");
    let model_dir = repo.join(quarry::rank::embed::DEFAULT_MODEL_DIR);
    let passages = corpus_passages(&data)?;
    let model = Arc::new(MiniLm::load_with(&model_dir, variant.max_tokens)?);
    // Warm the weights and the allocator.
    model.embed(
        &passages[..16]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )?;
    let rate = match variant.workers {
        0 => one_caller(&model, &passages)?,
        workers => scheduled(model.clone(), workers, &passages).await?,
    };
    let ndcg = match quality {
        true => format!(
            "{:.4}",
            evaluate(&data, Some(model.as_ref()), 100, 1.0)?.ndcg_at_10
        ),
        false => "-".to_string(),
    };
    println!("{rate:.2} {ndcg}");
    Ok(())
}

/// The passages the ranking would embed: the corpus's documents chunked.
fn corpus_passages(data: &Path) -> Result<Vec<String>> {
    let beir = Beir::load(data)?;
    let mut out = Vec::new();
    for (i, document) in beir.corpus.iter().enumerate() {
        for passage in
            quarry::rank::chunk("corpus", i, &document.id, &document.title, &document.text)
        {
            out.push(passage.text);
            if out.len() == TIMED {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Before the scheduler: one call embeds everything, in batches of 16.
fn one_caller(model: &MiniLm, passages: &[String]) -> Result<f64> {
    let texts: Vec<&str> = passages.iter().map(String::as_str).collect();
    let started = Instant::now();
    model.embed(&texts)?;
    Ok(passages.len() as f64 / started.elapsed().as_secs_f64())
}

/// Through the scheduler, as four concurrent queries would submit.
async fn scheduled(model: Arc<MiniLm>, workers: usize, passages: &[String]) -> Result<f64> {
    let scheduler = Scheduler::start(model, None, workers, quarry::rank::scheduler::DEFAULT_BATCH);
    let started = Instant::now();
    let jobs = passages.chunks(passages.len().div_ceil(4)).map(|part| {
        let scheduler = scheduler.clone();
        let part = part.to_vec();
        async move { scheduler.embed_all("bench", &part, Priority::Live).await }
    });
    for vectors in futures::future::join_all(jobs).await {
        vectors?;
    }
    Ok(passages.len() as f64 / started.elapsed().as_secs_f64())
}
