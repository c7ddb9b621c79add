//! `fake-saas --listen 127.0.0.1:0 [--latency-ms N] [--faults SPEC] [--ca-out PATH]`
//! plays the vendors; `fake-saas fixtures --dir DIR [--listen ADDR] [--ca-out PATH]`
//! serves a vendor of your own from JSON files ([`fake_saas::fixtures`]).
//!
//! Prints one JSON line on stdout as soon as it listens:
//! `{"addr":"127.0.0.1:PORT","ca_cert":"<path of the CA PEM>","hosts":[...]}`,
//! then serves until SIGINT or SIGTERM. Logs go to stderr (`RUST_LOG` filters them).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use fake_saas::chaos::Chaos;
use fake_saas::fixtures::FixtureServer;
use fake_saas::{FakeSaas, FakeSaasConfig};

#[derive(Parser, Debug)]
#[command(
    name = "fake-saas",
    version,
    about = "A local HTTPS server that plays the SaaS vendors' read APIs (GitHub, Slack, Notion, Linear, Jira, Confluence, Google Drive, Gmail, Zendesk, HubSpot, Salesforce, Microsoft 365, Asana, Trello, Intercom, Google Calendar)",
    args_conflicts_with_subcommands = true
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
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
    /// Refuse calls past each vendor's declared rate limit, as the vendor
    /// does (declarations/*.toml, `rate_limit`).
    #[arg(long)]
    rate_limits: bool,
    /// Where to write the CA certificate (PEM). Default: a file in the temp directory.
    #[arg(long)]
    ca_out: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve a vendor of your own from JSON files: DIR/routes.toml maps
    /// each route (method, https URL, query and body to match) to a file
    /// and a status. Prints `{"addr","ca_cert","hosts","demo_args"}` on one
    /// line; `demo_args` are the `quarry demo` flags that reach it.
    #[command(after_help = FIXTURES_HELP)]
    Fixtures {
        /// The fixtures folder: its routes.toml and the files it names.
        #[arg(long)]
        dir: PathBuf,
        /// Address to listen on (port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Where to write the CA certificate (PEM). Default: a file in the temp directory.
        #[arg(long)]
        ca_out: Option<PathBuf>,
    },
    /// Write the fictional company as a retrieval benchmark in BEIR's
    /// format (corpus.jsonl, queries.jsonl, qrels/test.tsv): every record a
    /// document, every story's title a question, its records the relevant
    /// ones (for `quarry eval-live`).
    Beir {
        /// The folder to write.
        #[arg(long)]
        out: PathBuf,
    },
}

const FIXTURES_HELP: &str = r#"DIR/routes.toml:

  [[routes]]
  method = "GET"                              # the default
  url = "https://api.acme.example/v1/search"  # a {name} path segment matches any one
  query = { q = "checkout" }                  # parameters that must have these values
  status = 200                                # the default
  file = "search.json"                        # the body (or body = "..."), served as JSON
  headers = { "retry-after" = "30" }          # optional

  [[routes]]
  method = "POST"
  url = "https://api.acme.example/v1/query"
  body_contains = "checkout"                  # text the request body must contain
  file = "query.json"

  [[searches]]                                # a search answered from data
  url = "https://api.acme.example/v1/events"
  declaration = "search.toml"                 # the vendor's search rules
  records = "events.json"                     # a JSON array, in the vendor's shape
  text = "q"                                  # the words' parameter
  updated = "/updated"                        # each record's time
  page_size = "limit"
  page_token = "cursor"
  items = "/items"                            # where the answer holds the page
  next_page_token = "/next"                   # (or offset = "offset", total = "/total")
  fields = { title = "/title", body = "/body" }   # the declaration's fields
  # More keys (a FROM,TO range, link templates, the vendor's error body,
  # text searched but not returned): the doc of src/declared/mod.rs.

The first matching route answers, [[routes]] before [[searches]]; no match
is a 404 listing the routes. The files are read again on every request:
edit them while it runs."#;

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
    match args.command {
        Some(Command::Fixtures {
            dir,
            listen,
            ca_out,
        }) => return serve_fixtures(&dir, listen, ca_out).await,
        Some(Command::Beir { out }) => {
            let (documents, questions, judgements) = fake_saas::dataset::beir::write_beir(&out)?;
            eprintln!(
                "fake-saas beir: {documents} documents, {questions} questions, {judgements} judgements in {}",
                out.display()
            );
            return Ok(());
        }
        None => {}
    }
    let fake = FakeSaas::start(FakeSaasConfig {
        listen: args.listen,
        latency: Duration::from_millis(args.latency_ms),
        chaos: Chaos::parse(args.faults.as_deref().unwrap_or("off"))
            .map_err(|e| anyhow::anyhow!("--faults: {e}"))?,
        rate_limits: args.rate_limits,
    })
    .await?;
    let ca_path = write_ca(args.ca_out, "fake-saas-ca", fake.addr(), fake.ca_cert_pem())?;
    print_line(&serde_json::json!({
        "addr": fake.addr().to_string(),
        "ca_cert": ca_path.display().to_string(),
        "hosts": FakeSaas::hosts(),
    }))?;
    wait_for_signal().await?;
    tracing::info!("shutting down");
    fake.shutdown().await;
    Ok(())
}

async fn serve_fixtures(
    dir: &std::path::Path,
    listen: SocketAddr,
    ca_out: Option<PathBuf>,
) -> anyhow::Result<()> {
    let fake = FixtureServer::start(dir, listen).await?;
    let ca_path = write_ca(
        ca_out,
        "fake-saas-fixtures-ca",
        fake.addr(),
        fake.ca_cert_pem(),
    )?;
    let mut demo_args = Vec::new();
    for host in fake.hosts() {
        demo_args.push("--fake".to_string());
        demo_args.push(format!("{host}={}", fake.addr()));
    }
    demo_args.push("--fake-ca".to_string());
    demo_args.push(ca_path.display().to_string());
    print_line(&serde_json::json!({
        "addr": fake.addr().to_string(),
        "ca_cert": ca_path.display().to_string(),
        "hosts": fake.hosts(),
        "demo_args": demo_args,
    }))?;
    wait_for_signal().await?;
    tracing::info!("shutting down");
    fake.shutdown().await;
    Ok(())
}

/// Writes the CA to `ca_out`, or to a file of the temp directory named
/// after `prefix`, this process and the port; returns its absolute path.
fn write_ca(
    ca_out: Option<PathBuf>,
    prefix: &str,
    addr: SocketAddr,
    pem: &str,
) -> anyhow::Result<PathBuf> {
    let path = ca_out.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "{prefix}-{}-{}.pem",
            std::process::id(),
            addr.port()
        ))
    });
    std::fs::write(&path, pem).with_context(|| format!("writing the CA to {}", path.display()))?;
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

/// The one line on stdout a caller waits for.
fn print_line(line: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
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
