//! The server under measurement: its configuration, a user per client with
//! every vendor connected (through `quarry admin`), and its process.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::EvalLiveArgs;
use super::upstreams::{Upstreams, install};
use crate::config::Config;

/// The product's defaults, with the vendors' connectors, limits that the
/// evaluation does not hit, and the vendors' host names sent to their
/// address. Only keys every build knows, so that a baseline binary reads it
/// too. Returns the file and the configuration.
pub(super) fn server_config(
    args: &EvalLiveArgs,
    data: &Path,
    upstreams: &dyn Upstreams,
) -> Result<(PathBuf, Config)> {
    let plugins = data.join("plugins");
    install(upstreams, &args.plugins_dir, &plugins)?;
    let tls = crate::demo::write_certificates(data, &upstreams.ca_pem())?;
    let listen = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let overrides: Vec<String> = upstreams
        .hosts()
        .iter()
        .map(|host| format!("\"{host}\" = \"{}\"", upstreams.addr()))
        .collect();
    let text = format!(
        r#"
listen = "{listen}"
data_dir = "{data}"
master_key_file = "{master_key}"
plugins_dir = "{plugins}"
[tls]
cert = "{cert}"
key = "{key}"
[upstream]
host_overrides = {{ {overrides} }}
extra_root_certs = ["{vendor_ca}"]
[limits.query]
minute = 100000
day = 1000000
[limits.deep_search]
minute = 100000
day = 1000000
"#,
        data = data.join("server").display(),
        master_key = data.join("master.key").display(),
        plugins = plugins.display(),
        cert = tls.cert.display(),
        key = tls.key.display(),
        vendor_ca = tls.fake_ca.display(),
        overrides = overrides.join(", "),
    );
    let file = data.join("quarry.toml");
    std::fs::write(&file, &text)?;
    let config =
        Config::from_sources(&text, std::env::vars()).context("the eval-live configuration")?;
    Ok((file, config))
}

/// A user per client with every vendor connected, through `quarry admin`
/// (before the server starts); returns each one's API token.
pub(super) fn connect_users(
    bin: &Path,
    config: &Path,
    upstreams: &dyn Upstreams,
    clients: usize,
) -> Result<Vec<String>> {
    let mut tokens = Vec::new();
    for client in 0..clients {
        let email = format!("eval{client}@quarry.test");
        admin(bin, config, &["create-user", &email])?;
        for connection in upstreams.connections(client) {
            let mut args = vec![
                "connect".to_string(),
                email.clone(),
                connection.id.clone(),
                format!("--token={}", connection.token),
            ];
            for (name, value) in &connection.settings {
                args.push(format!("--setting={name}={value}"));
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            admin(bin, config, &args)?;
        }
        let issued = admin(
            bin,
            config,
            &["issue-token", &email, "--ttl-seconds", "86400"],
        )?;
        let issued: Value = serde_json::from_str(issued.trim())?;
        tokens.push(
            issued["token"]
                .as_str()
                .context("issue-token printed no token")?
                .to_string(),
        );
    }
    Ok(tokens)
}

fn admin(bin: &Path, config: &Path, args: &[&str]) -> Result<String> {
    let output = std::process::Command::new(bin)
        .arg("admin")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    if !output.status.success() {
        bail!(
            "quarry admin {} failed: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?)
}

/// The server under measurement, in its own process (ended on drop); its
/// logs go to `server.log` in the data folder.
pub(super) struct Server {
    child: std::process::Child,
    url: String,
}

impl Server {
    pub(super) fn start(bin: &Path, config: &Path, data: &Path) -> Result<Server> {
        let log = std::fs::File::create(data.join("server.log"))?;
        let text = std::fs::read_to_string(config)?;
        let parsed = Config::from_sources(&text, std::env::vars())?;
        let child = std::process::Command::new(bin)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        Ok(Server {
            child,
            url: format!("https://{}/v1/openapi.json", parsed.listen),
        })
    }

    pub(super) async fn wait_until_ready(&self, ca: &Path) -> Result<()> {
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(ca)?)?)
            .build()?;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if client
                .get(&self.url)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("the server did not answer within 120 s (see its server.log)")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server's own account of where a query's time went: the mean of each
/// stage of `/v1/query` and of each connector's calls, from `/metrics`
/// (Prometheus text: `quarry_query_stage_seconds_sum{stage="..."}`, its
/// `_count`, and the same for `quarry_connector_call_seconds` by
/// connector), in milliseconds.
pub(super) async fn stage_means(listen: &str, ca: &Path) -> Result<Vec<(String, f64)>> {
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(ca)?)?)
        .build()?;
    let text = client
        .get(format!("https://{listen}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    let mut sums = std::collections::BTreeMap::<String, (f64, f64)>::new();
    for line in text.lines() {
        for (metric, label, name) in [
            ("quarry_query_stage_seconds", "stage", "stage"),
            ("quarry_connector_call_seconds", "connector", "connector"),
        ] {
            let Some(rest) = line.strip_prefix(metric) else {
                continue;
            };
            let (part, rest) = match (rest.strip_prefix("_sum{"), rest.strip_prefix("_count{")) {
                (Some(rest), _) => (0, rest),
                (_, Some(rest)) => (1, rest),
                _ => continue,
            };
            let Some((labels, value)) = rest.split_once("} ") else {
                continue;
            };
            let Some(key) = labels
                .split(',')
                .find_map(|l| l.strip_prefix(&format!("{label}=\"")))
                .map(|v| v.trim_end_matches('"'))
            else {
                continue;
            };
            let value: f64 = value.trim().parse().unwrap_or(0.0);
            let entry = sums.entry(format!("{name}.{key}")).or_default();
            if part == 0 {
                entry.0 += value;
            } else {
                entry.1 += value;
            }
        }
    }
    Ok(sums
        .into_iter()
        .filter(|(_, (_, count))| *count > 0.0)
        .map(|(key, (sum, count))| (key, sum / count * 1000.0))
        .collect())
}
