//! The `quarry` command: `serve`, `admin`, `demo`, `connector`. Kept thin:
//! each subcommand calls into the library.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

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
    },
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
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
        Command::Demo(args) => {
            quarry::logging::init("text");
            quarry::demo::run(args).await
        }
        Command::Connector { command } => std::process::exit(quarry::connector_kit::run(command)),
        Command::EvalRanking {
            dir,
            model_dir,
            bm25_only,
            embed_budget,
            semantic_weight,
        } => {
            quarry::logging::init("text");
            let model = match bm25_only {
                true => None,
                false => Some(quarry::rank::embed::Cached::new(
                    quarry::rank::MiniLm::load(&model_dir)?,
                    1_000_000,
                )),
            };
            let embedder = model.as_ref().map(|m| m as &dyn quarry::rank::Embedder);
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
