//! The `quarry` command: `serve`, `admin`, `demo`, `connector`. Kept thin:
//! each subcommand calls into the library.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

/// jemalloc returns freed memory to the system, where glibc's malloc kept
/// it (see host/Cargo.toml); `/metrics` reports its figures. The
/// `system-allocator` feature leaves it out, to measure the two side by
/// side.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "quarry",
    version,
    about = "Read-only questions over a company's business tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API server.
    Serve {
        /// The configuration file (TOML); QUARRY_* variables override it.
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Manage users, tokens and connections (with the server stopped: the
    /// database is opened directly).
    Admin {
        #[arg(long, short)]
        config: Option<PathBuf>,
        #[command(subcommand)]
        action: quarry::admin::Action,
    },
    /// Start fake upstreams and the server with demo users, all embedded.
    #[cfg(feature = "demo")]
    Demo(quarry::demo::DemoArgs),
    /// Write, check and install connectors: `new`, `check`, `install`.
    Connector {
        #[command(subcommand)]
        command: quarry::connector_kit::ConnectorCommand,
    },
    /// Measure the ranking of /v1/query on a BEIR-format folder.
    EvalRanking {
        /// Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv.
        dir: PathBuf,
        /// The embedding model folder (from tools/fetch-model).
        #[arg(long, default_value = quarry::rank::embed::DEFAULT_MODEL_DIR)]
        model_dir: PathBuf,
        /// Rank by BM25 alone (no embeddings), for comparison.
        #[arg(long)]
        bm25_only: bool,
        /// Most passages embedded per query.
        #[arg(long, default_value_t = 100)]
        embed_budget: usize,
        /// Semantic weights of the fusion to evaluate, comma-separated
        /// (vectors are computed once and reused across weights).
        /// (Default: the server's own weight.)
        #[arg(long, value_delimiter = ',')]
        semantic_weight: Vec<f32>,
        /// Cut texts at this many tokens before embedding.
        #[arg(long, default_value_t = quarry::rank::embed::MAX_TOKENS)]
        max_tokens: usize,
        /// The model's weights: int8 (ONNX Runtime) or f32 (candle).
        #[arg(long, default_value = "int8")]
        precision: quarry::rank::embed::Precision,
        /// ONNX Runtime's shared library (int8).
        #[arg(long, default_value = quarry::rank::embed::DEFAULT_ONNXRUNTIME)]
        onnxruntime: PathBuf,
        /// Print the keyword → model relevance calibration table instead.
        #[arg(long)]
        calibrate: bool,
    },
    /// Measure /v1/query live: a BEIR folder served by fake vendors through
    /// the real server, asked by concurrent clients.
    #[cfg(feature = "demo")]
    EvalLive(quarry::eval_live::EvalLiveArgs),
}

impl Command {
    /// Whether the command runs the server (and its embedding workers).
    fn serves(&self) -> bool {
        match self {
            Command::Serve { .. } => true,
            #[cfg(feature = "demo")]
            Command::Demo(_) => true,
            _ => false,
        }
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if cli.command.serves() {
        one_core_per_embedding_worker();
    }
    tokio::runtime::Runtime::new()?.block_on(run(cli))
}

/// The server embeds with one worker thread per core (`[ranking]
/// embed_workers`), each running the model on its own core: candle's
/// matrix products then stay on the calling thread instead of splitting
/// every product across both cores (measured with `quarry-bench embedder`:
/// 2 workers × 1 thread embed about 15% more passages per second than one
/// worker × 2 threads, and concurrent queries overlap). candle reads
/// `RAYON_NUM_THREADS` at each product; an operator's own value wins.
fn one_core_per_embedding_worker() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // SAFETY: no other thread exists yet (the runtime starts after).
        unsafe { std::env::set_var("RAYON_NUM_THREADS", "1") };
    }
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Serve { config } => {
            let config = quarry::config::Config::load(config.as_deref())?;
            quarry::logging::init(&config.log_format);
            quarry::server::start(config)
                .await?
                .serve_until_signal()
                .await
        }
        Command::Admin { config, action } => {
            quarry::logging::init("text");
            let config = quarry::config::Config::load(config.as_deref())?;
            quarry::admin::run(&config, action)
        }
        #[cfg(feature = "demo")]
        Command::Demo(args) => {
            quarry::logging::init("text");
            quarry::demo::run(args).await
        }
        Command::Connector { command } => std::process::exit(quarry::connector_kit::run(command)),
        #[cfg(feature = "demo")]
        Command::EvalLive(args) => {
            quarry::logging::init("text");
            quarry::eval_live::run(args).await
        }
        Command::EvalRanking {
            dir,
            model_dir,
            bm25_only,
            embed_budget,
            semantic_weight,
            max_tokens,
            precision,
            onnxruntime,
            calibrate,
        } => {
            quarry::logging::init("text");
            let model = match bm25_only {
                true => None,
                false => {
                    let model = quarry::rank::embed::LocalModel {
                        precision,
                        onnxruntime,
                        max_tokens,
                        ..quarry::rank::embed::LocalModel::at(&model_dir)
                    };
                    Some(quarry::rank::embed::Cached::new(model.load()?, 1_000_000))
                }
            };
            let embedder = model.as_ref().map(|m| m as &dyn quarry::rank::Embedder);
            if calibrate {
                let embedder = embedder.context("--calibrate needs the model")?;
                let table = quarry::rank::eval::calibrate(&dir, embedder)?;
                let knots: Vec<String> = table.iter().map(|v| format!("{v:.3}")).collect();
                println!("calibration [{}]", knots.join(", "));
                return Ok(());
            }
            let weights = match (bm25_only, semantic_weight.is_empty()) {
                (true, _) => vec![0.0],
                (false, true) => vec![quarry::rank::fuse::SEMANTIC_WEIGHT],
                (false, false) => semantic_weight,
            };
            for weight in weights {
                let report = quarry::rank::eval::evaluate(&dir, embedder, embed_budget, weight)?;
                if embedder.is_some() {
                    println!("semantic weight {weight}");
                }
                println!("nDCG@10 {:.4}", report.ndcg_at_10);
                println!("recall@10 {:.4}", report.recall_at_10);
                println!(
                    "ranking ms/query (median) {:.1}",
                    report.median_ranking.as_secs_f64() * 1000.0
                );
                println!(
                    "ranking ms/query (mean) {:.1}",
                    report.mean_ranking.as_secs_f64() * 1000.0
                );
                println!("queries {}", report.queries);
            }
            Ok(())
        }
    }
}
