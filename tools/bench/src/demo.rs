//! The release `quarry demo`, started for a benchmark and stopped when
//! dropped: its address, a user's token, its CA and its metrics URL.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, ensure};

pub struct Demo {
    process: Child,
    /// Where the demo keeps its data (removed when dropped).
    pub data: tempfile::TempDir,
    /// `https://127.0.0.1:PORT/v1`.
    pub base: String,
    /// The first demo user's bearer token.
    pub token: String,
    /// `https://127.0.0.1:PORT/mcp`, and the first user's token for it.
    pub mcp_url: String,
    pub mcp_token: String,
    /// The PEM file of the CA that signed the server's certificate.
    pub ca_cert: PathBuf,
    /// Every replica's base URL (`--replicas`; the first is `base`).
    pub replicas: Vec<String>,
}

impl Demo {
    /// Starts `target/release/quarry demo` with every built connector,
    /// with extra flags and `QUARRY_*` settings.
    pub fn start(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Demo> {
        let binary = root.join("target/release/quarry");
        ensure!(
            binary.exists(),
            "build the server first: cargo build --release -p quarry --features demo"
        );
        let data = tempfile::tempdir()?;
        let mut command = Command::new(&binary);
        command
            .args(["demo", "--listen", "127.0.0.1:0", "--plugins-dir"])
            .arg(root.join("target/plugins"))
            .arg("--data-dir")
            .arg(data.path())
            .args(args)
            .env("QUARRY_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut process = command.spawn().context("starting quarry demo")?;
        let mut line = String::new();
        let stdout = process.stdout.take().context("demo stdout")?;
        BufReader::new(stdout).read_line(&mut line)?;
        let started: serde_json::Value =
            serde_json::from_str(&line).context("the demo's first line")?;
        let field = |pointer: &str| {
            started
                .pointer(pointer)
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .with_context(|| format!("{pointer} in the demo's first line"))
        };
        let replicas = started["replicas"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|u| u.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Demo {
            replicas,
            base: field("/base_url")?,
            token: field("/users/0/token")?,
            mcp_url: field("/mcp_url")?,
            mcp_token: field("/users/0/mcp_token")?,
            ca_cert: field("/ca_cert")?.into(),
            process,
            data,
        })
    }

    pub fn metrics_url(&self) -> String {
        metrics_url(&self.base)
    }

    /// An HTTP client that trusts the demo's CA (and only it).
    pub fn client(&self, connections: usize) -> Result<reqwest::Client> {
        let pem = std::fs::read(&self.ca_cert).context("the demo's CA")?;
        Ok(reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&pem)?)
            .pool_max_idle_per_host(connections)
            .timeout(std::time::Duration::from_secs(60))
            .build()?)
    }

    /// The server's process id (for its CPU time).
    pub fn pid(&self) -> u32 {
        self.process.id()
    }
}

/// The metrics URL beside a replica's base URL.
pub fn metrics_url(base: &str) -> String {
    base.trim_end_matches("/v1").to_string() + "/metrics"
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}
