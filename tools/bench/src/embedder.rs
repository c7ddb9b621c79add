//! `embedder`: the local model's precisions side by side on the same
//! passages, in one run: passages per second on the ir-dbpedia passages the
//! ranking embeds (through the scheduler, as the server embeds: four
//! concurrent jobs, workers of one core each, texts cut at the server's 80
//! tokens), nDCG@10 on ir-dbpedia (`quarry eval-ranking`'s offline figure),
//! and beside them the most this CPU could do: the model's arithmetic per
//! passage against the cores' peak rate for that precision.
//!
//! Each variant runs in its own process: thread settings take effect when a
//! process starts (rayon sizes its pool once), as in the server (`quarry
//! serve` sets `RAYON_NUM_THREADS=1` at start).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use quarry::rank::embed::{LocalModel, MAX_TOKENS, Precision};
use quarry::rank::eval::{Beir, evaluate};
use quarry::rank::{Embedder, Priority, Scheduler};

/// Passages timed per variant (the first of the corpus, as chunked).
const TIMED: usize = 384;

struct Variant {
    precision: Precision,
    workers: usize,
}

const VARIANTS: [Variant; 4] = [
    Variant {
        precision: Precision::F32,
        workers: 1,
    },
    Variant {
        precision: Precision::F32,
        workers: 2,
    },
    Variant {
        precision: Precision::Int8,
        workers: 1,
    },
    Variant {
        precision: Precision::Int8,
        workers: 2,
    },
];

/// all-MiniLM-L6-v2's shape.
const LAYERS: f64 = 6.0;
const HIDDEN: f64 = 384.0;

/// Multiply-adds per cycle per core at peak, counted as two operations:
/// AVX-512 with two FMA units (16 f32 lanes × 2 × 2), and VNNI's
/// `vpdpbusd` on the same two ports (64 int8 products × 2 × 2). A CPU
/// with one FMA unit has half of each.
const F32_OPS_PER_CYCLE: f64 = 64.0;
const INT8_OPS_PER_CYCLE: f64 = 256.0;

pub fn run(repo: &Path, quality: bool) -> Result<()> {
    let current = std::env::current_exe()?;
    let data = repo.join("../shared/data/ir-dbpedia");
    let passages = corpus_passages(&data)?;
    let tokens = mean_tokens(repo, &passages)?;
    let per_passage = operations_per_passage(tokens);
    let (cores, ghz) = cpu();
    println!(
        "embedder benchmark: {TIMED} ir-dbpedia passages per variant (mean {tokens:.1} tokens at a cap of \
         {MAX_TOKENS}), 4 concurrent jobs; {cores} cores at {ghz:.2} GHz"
    );
    println!(
        "arithmetic per passage: {:.2} G operations (6 layers: projections and feed-forward 24·L·d², attention 4·L²·d)",
        per_passage / 1e9
    );
    println!(
        "| precision | workers | passages/s | × f32 (same workers) | peak of these cores (passages/s) | share of peak | nDCG@10 |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut f32_rates = [0.0f64; 3];
    for (n, variant) in VARIANTS.iter().enumerate() {
        let mut child = Command::new(&current);
        child
            .args(["embedder", "--variant", &n.to_string()])
            .env("RAYON_NUM_THREADS", "1");
        if !quality {
            child.arg("--no-quality");
        }
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
        let ops_per_cycle = match variant.precision {
            Precision::F32 => {
                f32_rates[variant.workers] = rate;
                F32_OPS_PER_CYCLE
            }
            Precision::Int8 => INT8_OPS_PER_CYCLE,
        };
        let peak = variant.workers.min(cores) as f64 * ghz * 1e9 * ops_per_cycle / per_passage;
        println!(
            "| {:?} | {} | {rate:.1} | {:.2} | {peak:.0} | {:.0}% | {ndcg} |",
            variant.precision,
            variant.workers,
            rate / f32_rates[variant.workers],
            100.0 * rate / peak
        );
    }
    Ok(())
}

/// Measures one variant in this process and prints `<passages/s> <nDCG@10>`.
pub async fn run_variant(repo: &Path, n: usize, quality: bool) -> Result<()> {
    let variant = VARIANTS.get(n).context("no such variant")?;
    let data = repo.join("../shared/data/ir-dbpedia");
    let passages = corpus_passages(&data)?;
    let model: Arc<dyn Embedder> = Arc::from(local_model(repo, variant).load()?);
    // Warm the weights and the allocator.
    let warm: Vec<&str> = passages[..16].iter().map(String::as_str).collect();
    model.embed(&warm)?;
    let rate = scheduled(model.clone(), variant.workers, &passages).await?;
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

fn local_model(repo: &Path, variant: &Variant) -> LocalModel {
    LocalModel {
        precision: variant.precision,
        onnxruntime: repo.join(quarry::rank::embed::DEFAULT_ONNXRUNTIME),
        workers: variant.workers,
        ..LocalModel::at(&repo.join(quarry::rank::embed::DEFAULT_MODEL_DIR))
    }
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

/// Tokens per passage the model sees (after the cap), on average.
fn mean_tokens(repo: &Path, passages: &[String]) -> Result<f64> {
    let texts: Vec<&str> = passages.iter().map(String::as_str).collect();
    let model = repo.join(quarry::rank::embed::DEFAULT_MODEL_DIR);
    let counts = quarry::rank::embed::token_counts(&model, &texts, MAX_TOKENS)?;
    Ok(counts.iter().sum::<usize>() as f64 / passages.len() as f64)
}

/// Operations (a multiply-add counts two) of one passage of `tokens`
/// tokens through the model: per layer the four attention projections
/// (4·L·d² multiply-adds) and the feed-forward's two (2·L·d·4d), then the
/// attention scores and the weighted sum (2·L²·d).
fn operations_per_passage(tokens: f64) -> f64 {
    let per_layer = 2.0 * (12.0 * tokens * HIDDEN * HIDDEN + 2.0 * tokens * tokens * HIDDEN);
    LAYERS * per_layer
}

/// (cores, GHz): the cores this process may use, and the nominal clock
/// from /proc/cpuinfo's model name (`@ 2.50GHz`) or its current MHz.
fn cpu() -> (usize, f64) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let nominal = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.rsplit_once('@'))
        .and_then(|(_, clock)| clock.trim().trim_end_matches("GHz").parse::<f64>().ok());
    let current = || {
        info.lines()
            .find(|l| l.starts_with("cpu MHz"))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|mhz| mhz.trim().parse::<f64>().ok())
            .map(|mhz| mhz / 1000.0)
    };
    (cores, nominal.or_else(current).unwrap_or(1.0))
}

/// Through the scheduler, as four concurrent queries would submit.
async fn scheduled(model: Arc<dyn Embedder>, workers: usize, passages: &[String]) -> Result<f64> {
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
