//! The server under measurement: its configuration, a user with every
//! vendor connected (through `quarry admin`), and its process.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{EvalLiveArgs, SCOPE};
use crate::config::Config;

/// The product's defaults, with the vendors' copies of the GitHub
/// connector, limits that the evaluation does not hit, and the vendors'
/// address for api.github.com. Only keys every build knows, so that a
/// baseline binary reads it too. Returns the file and the configuration.
pub(super) fn server_config(
    args: &EvalLiveArgs,
    data: &Path,
    vendors: SocketAddr,
) -> Result<(PathBuf, Config)> {
    let plugins = data.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    let wasm = std::fs::read(args.plugins_dir.join("github.wasm")).with_context(|| {
        format!(
            "the GitHub connector is missing from {}: build the connectors with \
             `cargo run -p quarry-plugin-builder`",
            args.plugins_dir.display()
        )
    })?;
    let manifest = std::fs::read_to_string(args.plugins_dir.join("github.toml"))?;
    for vendor in 0..args.connectors {
        let id = vendor_id(vendor);
        std::fs::write(plugins.join(format!("{id}.wasm")), &wasm)?;
        let renamed = manifest
            .replacen("id = \"github\"", &format!("id = \"{id}\""), 1)
            .replacen(
                "label = \"GitHub\"",
                &format!("label = \"Vendor {}\"", vendor + 1),
                1,
            );
        std::fs::write(plugins.join(format!("{id}.toml")), renamed)?;
    }
    let vendor_ca = std::fs::read_to_string(data.join("vendor-ca.pem"))?;
    let tls = crate::demo::write_certificates(data, &vendor_ca)?;
    let listen = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
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
host_overrides = {{ "api.github.com" = "{vendors}" }}
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
    );
    let file = data.join("quarry.toml");
    std::fs::write(&file, &text)?;
    let config =
        Config::from_sources(&text, std::env::vars()).context("the eval-live configuration")?;
    Ok((file, config))
}

pub(super) fn vendor_id(vendor: usize) -> String {
    format!("vendor-{}", vendor + 1)
}

/// One user with every vendor connected, through `quarry admin` (before the
/// server starts); returns an API token.
pub(super) fn connect_user(bin: &Path, config: &Path, vendors: usize) -> Result<String> {
    const EMAIL: &str = "eval@quarry.test";
    admin(bin, config, &["create-user", EMAIL])?;
    for vendor in 0..vendors {
        let token = format!("--token=eval-vendor-{vendor}");
        let setting = format!("--setting=scope={SCOPE}");
        admin(
            bin,
            config,
            &["connect", EMAIL, &vendor_id(vendor), &token, &setting],
        )?;
    }
    let issued = admin(
        bin,
        config,
        &["issue-token", EMAIL, "--ttl-seconds", "86400"],
    )?;
    let issued: Value = serde_json::from_str(issued.trim())?;
    Ok(issued["token"]
        .as_str()
        .context("issue-token printed no token")?
        .to_string())
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
