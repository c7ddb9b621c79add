//! `fake-saas --listen 127.0.0.1:0 [--latency-ms N] [--faults SPEC] [--ca-out PATH]`
//!
//! Prints one JSON line on stdout as soon as it listens:
//! `{"addr":"127.0.0.1:PORT","ca_cert":"<path of the CA PEM>","hosts":[...]}`,
//! then serves until SIGINT or SIGTERM. Logs go to stderr (`RUST_LOG` filters them).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use fake_saas::chaos::Chaos;
use fake_saas::{FakeSaas, FakeSaasConfig};

#[derive(Parser, Debug)]
#[command(
    name = "fake-saas",
    version,
    about = "A local HTTPS server that plays the SaaS vendors' read APIs (GitHub, Slack, Notion, Linear, Jira, Confluence, Google Drive, Gmail, Zendesk, HubSpot, Salesforce, Microsoft 365, Asana, Trello, Intercom)"
)]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Latency added to every vendor response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Faults injected at random into vendor requests, e.g. `soak,seed=7`
    /// or `error=0.1,throttle=0.05,retry_after=2` (see `fake_saas::chaos`).
    #[arg(long)]
    faults: Option<String>,
    /// Where to write the CA certificate (PEM). Default: a file in the temp directory.
    #[arg(long)]
    ca_out: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let fake = FakeSaas::start(FakeSaasConfig {
        listen: args.listen,
        latency: Duration::from_millis(args.latency_ms),
        chaos: Chaos::parse(args.faults.as_deref().unwrap_or("off"))
            .map_err(|e| anyhow::anyhow!("--faults: {e}"))?,
    })
    .await?;
    let ca_path = match args.ca_out {
        Some(p) => p,
        None => std::env::temp_dir().join(format!(
            "fake-saas-ca-{}-{}.pem",
            std::process::id(),
            fake.addr().port()
        )),
    };
    std::fs::write(&ca_path, fake.ca_cert_pem())
        .with_context(|| format!("writing the CA to {}", ca_path.display()))?;
    let ca_path = std::fs::canonicalize(&ca_path).unwrap_or(ca_path);
    let line = serde_json::json!({
        "addr": fake.addr().to_string(),
        "ca_cert": ca_path.display().to_string(),
        "hosts": FakeSaas::hosts(),
    });
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")?;
        out.flush()?;
    }
    wait_for_signal().await?;
    tracing::info!("shutting down");
    fake.shutdown().await;
    Ok(())
}

#[cfg(unix)]
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

#[cfg(not(unix))]
async fn wait_for_signal() -> anyhow::Result<()> {
    tokio::signal::ctrl_c().await?;
    Ok(())
}
