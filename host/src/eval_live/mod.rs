//! `quarry eval-live DIR`: the ranking users get, measured through the
//! real API, against vendors that search the way the real ones do.
//!
//! A BEIR folder's corpus is spread across vendors (document `i` goes to
//! vendor `i mod N`). By default the vendors are fake-saas's, each
//! searching as its documentation says (its declaration: AND or OR, the
//! fields searched, the order, page caps) and answering in its own shape,
//! each reached by its real connector in the real sandbox: what a user's
//! question finds depends on what the connectors ask. `--lenient` instead
//! gives N copies of GitHub's issue search that answer with the BM25 top-k
//! of the OR of every word, for comparison.
//!
//! The real server (HTTPS, every layer of `/v1/query`) answers every judged
//! query, asked by C concurrent clients (each a user of its own) with
//! `max_results` 10; each answer's chunks are merged across connectors by
//! `relevance_score`, as an assistant would, and scored with nDCG@10 and
//! recall@10 against the judgements. It also prints the ceiling (what the
//! vendors returned for each query, ranked offline with every passage
//! embedded and no deadline) and how often a search found nothing.
//!
//! - [`vendor_true`]: the corpus in fake-saas's vendors;
//! - [`lenient`]: the BM25 vendors;
//! - [`upstreams`]: what the evaluation needs of either;
//! - [`server`]: the server under measurement, its configuration and users;
//! - [`clients`]: the concurrent clients asking every judged query;
//! - [`scores`]: nDCG@10 and recall@10 of the answers, the ceiling, the
//!   share of empty searches.

mod clients;
mod lenient;
mod scores;
mod server;
mod upstreams;
mod vendor_true;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::rank::eval::Beir;
use clients::ask_all;
use lenient::Lenient;
use scores::{percentile, score_ceilings, score_live, zero_result_rates};
use server::{Server, connect_users, server_config, stage_means};
use upstreams::Upstreams;
use vendor_true::VendorTrue;

#[derive(clap::Args, Debug)]
pub struct EvalLiveArgs {
    /// Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv.
    pub dir: PathBuf,
    /// The vendors the corpus is spread across, each searching as its
    /// documentation says and reached by its own connector.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "github,slack,jira,confluence,zendesk,notion"
    )]
    pub vendors: Vec<String>,
    /// Lenient vendors instead: copies of GitHub's issue search answering
    /// with the BM25 top-k of the OR of every word.
    #[arg(long)]
    pub lenient: bool,
    /// With `--lenient`: how many vendors (at least 3).
    #[arg(long, default_value_t = 3)]
    pub connectors: usize,
    /// Latency each vendor adds to every response.
    #[arg(long, default_value_t = 200)]
    pub upstream_latency_ms: u64,
    /// Clients asking at once.
    #[arg(long, default_value_t = 1)]
    pub clients: usize,
    /// Skip the first K judged queries.
    #[arg(long, default_value_t = 0)]
    pub skip: usize,
    /// Ask only the next K judged queries (default: all).
    #[arg(long)]
    pub queries: Option<usize>,
    /// The built connectors.
    #[arg(long, default_value = "target/plugins")]
    pub plugins_dir: PathBuf,
    /// The `quarry` binary to measure (default: this one), so that another
    /// build (the baseline) is measured the same way.
    #[arg(long)]
    pub server_bin: Option<PathBuf>,
    /// Also write one JSON line per question to this file: its nDCG@10
    /// live and offline (the ceiling), and what each search sent and how
    /// many judged documents it returned; for seeing where a figure comes
    /// from.
    #[arg(long)]
    pub per_query: Option<PathBuf>,
}

/// The question every client asks with.
const MAX_RESULTS: usize = 10;

pub async fn run(args: EvalLiveArgs) -> Result<()> {
    if args.lenient && args.connectors < 3 {
        bail!("--connectors must be at least 3");
    }
    // The vendors serve TLS before the server (which also does this) starts.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let beir = Arc::new(Beir::load(&args.dir)?);
    let judged: Vec<usize> = beir
        .queries
        .iter()
        .enumerate()
        .filter(|(_, q)| beir.qrels.contains_key(&q.id))
        .map(|(i, _)| i)
        .skip(args.skip)
        .take(args.queries.unwrap_or(usize::MAX))
        .collect();
    let upstreams: Arc<dyn Upstreams> = if args.lenient {
        Arc::new(Lenient::start(&beir, args.connectors, args.upstream_latency_ms).await?)
    } else {
        Arc::new(VendorTrue::start(&beir, &args.vendors, args.upstream_latency_ms).await?)
    };
    let data = tempfile::tempdir()?;
    let (config_file, config) = server_config(&args, data.path(), &*upstreams)?;
    let bin = match &args.server_bin {
        Some(bin) => bin.clone(),
        None => std::env::current_exe()?,
    };
    let tokens = connect_users(&bin, &config_file, &*upstreams, args.clients.max(1))?;
    let server = Server::start(&bin, &config_file, data.path())?;
    let listen_ca = data.path().join("tls/ca.pem");
    server.wait_until_ready(&listen_ca).await?;
    let connectors: Vec<String> = upstreams
        .connectors()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    eprintln!(
        "eval-live: {} queries, {} documents over {} ({}) at {} ms, {} client(s)",
        judged.len(),
        beir.corpus.len(),
        connectors.join(", "),
        if args.lenient {
            "lenient"
        } else {
            "vendor-true"
        },
        args.upstream_latency_ms,
        tokens.len(),
    );
    let base = format!("https://{}/v1", config.listen);
    let answers = ask_all(
        &beir,
        &judged,
        &base,
        &tokens,
        &listen_ca,
        upstreams.clone(),
    )
    .await;
    let stages = stage_means(&config.listen.to_string(), &listen_ca).await;
    drop(server);
    let answers = answers?;

    let live = score_live(&beir, &answers);
    let model = config.ranking.local_model().load()?;
    let ceilings = score_ceilings(&beir, &answers, &model)?;
    let ceiling = ceilings.iter().sum::<f64>() / ceilings.len().max(1) as f64;
    if let Some(path) = &args.per_query {
        scores::write_per_query(path, &beir, &answers, &ceilings)?;
    }
    let (zero, per_connector) = zero_result_rates(&answers, &connectors);
    let mut latencies: Vec<u64> = answers.iter().map(|a| a.millis).collect();
    latencies.sort_unstable();
    println!("queries {}", answers.len());
    println!("clients {}", tokens.len());
    println!("nDCG@10 {:.4}", live.ndcg);
    println!("recall@10 {:.4}", live.recall);
    println!("p50_ms {}", percentile(&latencies, 0.50));
    println!("p95_ms {}", percentile(&latencies, 0.95));
    println!("model_share {:.4}", live.model_share);
    let mut deep: Vec<u64> = answers.iter().map(|a| a.deep_search_millis).collect();
    deep.sort_unstable();
    println!("deep_search_p50_ms {}", percentile(&deep, 0.50));
    println!("deep_search_p99_ms {}", percentile(&deep, 0.99));
    println!("ceiling_nDCG@10 {ceiling:.4}");
    if ceiling > 0.0 {
        println!("live/ceiling {:.4}", live.ndcg / ceiling);
    }
    for (stage, millis) in stages.unwrap_or_default() {
        println!("mean_ms.{stage} {millis:.0}");
    }
    println!("zero_result_rate {zero:.4}");
    for (connector, rate, searches) in per_connector {
        println!("zero_result_rate.{connector} {rate:.4} ({searches} searches)");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
