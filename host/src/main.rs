//! The `quarry` command: `serve`, `admin`, `demo`. Kept thin: each
//! subcommand calls into the library.

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
    }
}
