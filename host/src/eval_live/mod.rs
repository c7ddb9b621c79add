//! `quarry eval-live DIR`: the ranking users get, measured through the
//! real API.
//!
//! A BEIR folder's corpus is split across N vendors (document `i` goes to
//! vendor `i mod N`). Each vendor is a fake GitHub whose issue search
//! answers with its BM25 top-k over its share, after the given latency, as
//! a vendor's keyword search would; each is reached by its own copy of the
//! real GitHub connector component, in the real sandbox. The real server
//! (HTTPS, every layer of `/v1/query`) answers every judged query, asked by
//! C concurrent clients with `max_results` 10; each answer's chunks are
//! merged across connectors by `relevance_score`, as an assistant would,
//! and scored with nDCG@10 and recall@10 against the judgements.
//!
//! It also prints the ceiling: the candidates the vendors returned for each
//! query, ranked offline with every passage embedded and no deadline. The
//! live figure is judged against it.
//!
//! - [`vendors`]: the fake vendors (GitHub's issue search over BM25);
//! - [`server`]: the server under measurement, its configuration and user;
//! - [`clients`]: the concurrent clients asking every judged query;
//! - [`scores`]: nDCG@10 and recall@10 of the answers, and the ceiling.

mod clients;
mod scores;
mod server;
mod vendors;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::rank::MiniLm;
use crate::rank::eval::Beir;
use clients::ask_all;
use scores::{percentile, score_ceiling, score_live};
use server::{Server, connect_user, server_config};
use vendors::Vendors;

#[derive(clap::Args, Debug)]
pub struct EvalLiveArgs {
    /// Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv.
    pub dir: PathBuf,
    /// Vendors (connectors) the corpus is split across (at least 3).
    #[arg(long, default_value_t = 3)]
    pub connectors: usize,
    /// Latency each vendor adds to every response.
    #[arg(long, default_value_t = 200)]
    pub upstream_latency_ms: u64,
    /// Clients asking at once.
    #[arg(long, default_value_t = 1)]
    pub clients: usize,
    /// Ask only the first K judged queries (default: all).
    #[arg(long)]
    pub queries: Option<usize>,
    /// The built connectors (the GitHub connector is used).
    #[arg(long, default_value = "target/plugins")]
    pub plugins_dir: PathBuf,
    /// The `quarry` binary to measure (default: this one), so that another
    /// build (the baseline) is measured the same way.
    #[arg(long)]
    pub server_bin: Option<PathBuf>,
}

/// The question every client asks with.
const MAX_RESULTS: usize = 10;
/// The GitHub connector's required setting: any scope will do.
const SCOPE: &str = "repo:eval/corpus";

pub async fn run(args: EvalLiveArgs) -> Result<()> {
    if args.connectors < 3 {
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
        .take(args.queries.unwrap_or(usize::MAX))
        .collect();
    let vendors = Vendors::new(&beir, args.connectors, args.upstream_latency_ms);
    let data = tempfile::tempdir()?;
    let vendor_addr = vendors.clone().serve(data.path()).await?;
    let (config_file, config) = server_config(&args, data.path(), vendor_addr)?;
    let bin = match &args.server_bin {
        Some(bin) => bin.clone(),
        None => std::env::current_exe()?,
    };
    let token = connect_user(&bin, &config_file, args.connectors)?;
    let server = Server::start(&bin, &config_file, data.path())?;
    let listen_ca = data.path().join("tls/ca.pem");
    server.wait_until_ready(&listen_ca).await?;
    eprintln!(
        "eval-live: {} queries, {} documents over {} vendors at {} ms, {} client(s)",
        judged.len(),
        beir.corpus.len(),
        args.connectors,
        args.upstream_latency_ms,
        args.clients
    );
    let base = format!("https://{}/v1", config.listen);
    let answers = ask_all(&beir, &judged, &base, &token, &listen_ca, args.clients).await;
    drop(server);
    let answers = answers?;

    let live = score_live(&beir, &answers);
    let model = MiniLm::load_with(&config.ranking.model_dir, config.ranking.max_tokens)?;
    let (ceiling, missing) = score_ceiling(&beir, &answers, &vendors, &model, args.connectors)?;
    if missing > 0 {
        eprintln!("eval-live: {missing} queries had no recorded vendor candidates");
    }
    let mut latencies: Vec<u64> = answers.iter().map(|a| a.millis).collect();
    latencies.sort_unstable();
    println!("queries {}", answers.len());
    println!("clients {}", args.clients);
    println!("nDCG@10 {:.4}", live.ndcg);
    println!("recall@10 {:.4}", live.recall);
    println!("p50_ms {}", percentile(&latencies, 0.50));
    println!("p95_ms {}", percentile(&latencies, 0.95));
    println!("model_share {:.4}", live.model_share);
    let mut deep: Vec<u64> = answers.iter().map(|a| a.deep_search_millis).collect();
    deep.sort_unstable();
    println!("deep_search_p50_ms {}", percentile(&deep, 0.50));
    println!("deep_search_p99_ms {}", percentile(&deep, 0.99));
    println!("ceiling_nDCG@10 {:.4}", ceiling);
    if ceiling > 0.0 {
        println!("live/ceiling {:.4}", live.ndcg / ceiling);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
