//! `archive`: the archive at 10 k, 100 k and 1 M chunks for one user, built
//! through the archive's own code (record → indexer → sealed index), then:
//! the write cost per archived query, indexing throughput, the time to load
//! and decrypt the stored index, its memory, and deep search latency.
//!
//! Chunk texts are ir-dbpedia passages (each with a passage of another
//! article appended, so that no two are alike); vectors come from the
//! words embedder (`HashedWords`, 384 dimensions: what a server with the
//! model off indexes), because the model embeds about 60 passages a second
//! here and a million would take hours. Index and search costs depend on
//! the dimensions, not on what made the vectors; the model's own cost per
//! search term is measured separately and printed beside.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use quarry::archive::{Archive, ArchivedChunk};
use quarry::rank::Embedder;
use quarry::rank::embed::HashedWords;
use quarry_store::Store;
use serde_json::Value;

/// Chunks per archived query (five connectors, ten results each).
const CHUNKS_PER_QUERY: usize = 50;
const SEARCHES: usize = 300;

pub async fn run(repo: &Path, sizes: &[usize]) -> Result<()> {
    let data = repo.join("../shared/data/ir-dbpedia");
    let passages = read_texts(&data.join("corpus.jsonl"), "text")?;
    let queries = read_texts(&data.join("queries.jsonl"), "text")?;
    println!(
        "archive benchmark: {} passages, {} search terms, {CHUNKS_PER_QUERY} chunks per archived query",
        passages.len(),
        queries.len()
    );
    model_term_cost(repo, &queries);
    for &size in sizes {
        one_size(size, &passages, &queries).await?;
    }
    Ok(())
}

async fn one_size(size: usize, passages: &[String], queries: &[String]) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let store = Arc::new(Store::open(dir.path(), None)?);
    let user = store.create_user("bench@acme.test")?;
    let embedder: Arc<dyn Embedder> = Arc::new(HashedWords::new(384));
    let scheduler = quarry::rank::Scheduler::start(embedder.clone(), None, 1, 16);
    let archive = Archive::open(store.clone(), scheduler)?;

    // Write: one record() per query, as /v1/query does.
    let mut writes = Vec::new();
    let started = Instant::now();
    let queries_total = size.div_ceil(CHUNKS_PER_QUERY);
    // The newest tenth of the archive, for the windowed searches.
    let mut newest_tenth_from = 0;
    for q in 0..queries_total {
        if q == queries_total * 9 / 10 {
            std::thread::sleep(Duration::from_millis(2));
            newest_tenth_from = now_ms();
        }
        let texts: Vec<String> = (0..CHUNKS_PER_QUERY)
            .map(|i| q * CHUNKS_PER_QUERY + i)
            .take_while(|&n| n < size)
            .map(|n| chunk_text(passages, n))
            .collect();
        let chunks: Vec<ArchivedChunk<'_>> = texts
            .iter()
            .map(|t| ArchivedChunk::text_only("github", t))
            .collect();
        let question = &queries[q % queries.len()];
        let t = Instant::now();
        archive.record(&user.id, &format!("qry_{q:08}"), question, &chunks)?;
        writes.push(t.elapsed());
    }
    let writing = started.elapsed();

    // Index: the indexer's own path (embed, store vectors, add, seal).
    let t = Instant::now();
    archive.index_now(&user.id).await?;
    let indexing = t.elapsed();
    let memory = archive.index_memory_bytes(&user.id).unwrap_or(0);

    // Load: a cold start reads and decrypts the sealed index.
    archive.unload(&user.id);
    let rss_before = rss_bytes();
    let t = Instant::now();
    archive.preload(&user.id).await?;
    let loading = t.elapsed();
    let rss_after = rss_bytes();

    // Search: terms the archive never saw, no date bounds, then a window.
    let mut latencies = Vec::new();
    for term in queries.iter().cycle().take(SEARCHES) {
        let t = Instant::now();
        let outcome = archive.search(&user.id, term, None, None, 20).await?;
        latencies.push(t.elapsed());
        assert!(!outcome.found.is_empty());
    }
    let mut windowed = Vec::new();
    let mut in_window = 0;
    for term in queries.iter().cycle().take(SEARCHES / 3) {
        let t = Instant::now();
        let outcome = archive
            .search(&user.id, term, Some(newest_tenth_from), None, 20)
            .await?;
        windowed.push(t.elapsed());
        in_window = outcome.total_matches;
    }
    let db_bytes = std::fs::metadata(dir.path().join("quarry.redb"))?.len();

    println!("\n{size} archived chunks ({} queries)", writes.len());
    println!(
        "  archive write per query ({CHUNKS_PER_QUERY} chunks, one commit): p50 {} p99 {}  ({:.0} chunks/s)",
        ms(percentile(&mut writes, 0.50)),
        ms(percentile(&mut writes, 0.99)),
        size as f64 / writing.as_secs_f64()
    );
    println!(
        "  indexing (embed + store vectors + HNSW add + seal): {:.1} s ({:.0} chunks/s)",
        indexing.as_secs_f64(),
        size as f64 / indexing.as_secs_f64()
    );
    println!(
        "  load + decrypt the stored index: {}  (process memory +{:.0} MiB)",
        ms(loading),
        (rss_after.saturating_sub(rss_before)) as f64 / (1 << 20) as f64
    );
    println!(
        "  index memory: {:.1} MiB ({:.0} bytes per chunk); database file {:.1} MiB",
        memory as f64 / (1 << 20) as f64,
        memory as f64 / size as f64,
        db_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "  deep search, top 20 of all ({} searches): p50 {} p99 {}",
        latencies.len(),
        ms(percentile(&mut latencies, 0.50)),
        ms(percentile(&mut latencies, 0.99))
    );
    println!(
        "  deep search within a date window ({in_window} chunks in it): p50 {} p99 {}",
        ms(percentile(&mut windowed, 0.50)),
        ms(percentile(&mut windowed, 0.99))
    );
    Ok(())
}

/// What the model adds to a deep search: embedding the term.
fn model_term_cost(repo: &Path, queries: &[String]) {
    let dir = repo.join(quarry::rank::embed::DEFAULT_MODEL_DIR);
    let Ok(model) = quarry::rank::MiniLm::load(&dir) else {
        println!(
            "(model not found in {}: its term cost is not measured; run tools/fetch-model)",
            dir.display()
        );
        return;
    };
    let mut times = Vec::new();
    for term in queries.iter().take(50) {
        let t = Instant::now();
        let _ = model.embed(&[term.as_str()]);
        times.push(t.elapsed());
    }
    println!(
        "all-MiniLM-L6-v2, one search term: p50 {} p99 {} (added to every deep search when the model is on)",
        ms(percentile(&mut times, 0.50)),
        ms(percentile(&mut times, 0.99))
    );
}

fn chunk_text(passages: &[String], n: usize) -> String {
    let first = &passages[n % passages.len()];
    let second = &passages[(n / passages.len() * 7919 + n) % passages.len()];
    let tail: String = second
        .split_whitespace()
        .take(25)
        .collect::<Vec<_>>()
        .join(" ");
    format!("{first} {tail}")
}

fn read_texts(path: &Path, field: &str) -> Result<Vec<String>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l)?;
            Ok(v[field].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
