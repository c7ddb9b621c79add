//! The webhook receiver of the black-box tests: `tests/webhooks/receiver.py`,
//! which verifies every delivery with the official Standard Webhooks
//! library, run by the Python of `target/py` (made by `tools/py-env`, which
//! `tools/test` runs). Each request it receives becomes a JSON line that the
//! test reads back as a [`Delivery`].

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The interpreter: `QUARRY_TEST_PYTHON`, else `target/py/bin/python`.
pub fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("QUARRY_TEST_PYTHON") {
        return PathBuf::from(path);
    }
    let path = crate::repo_root().join("target/py/bin/python");
    assert!(
        path.exists(),
        "no Python with the standardwebhooks library at {}: run tools/py-env \
         (tools/test does), or point QUARRY_TEST_PYTHON at a Python that has it",
        path.display()
    );
    path
}

/// How to start a receiver.
#[derive(Debug, Clone, Default)]
pub struct ReceiverOptions {
    /// Requests answered 503 with `Retry-After: 1` before the first 204.
    pub fail_first: u32,
    /// A fixed port (to come back on the same URL); any free one otherwise.
    pub port: Option<u16>,
    /// How long it lives at most (the script's default: 15 minutes).
    pub max_seconds: Option<f64>,
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// 1 for the first request, 2 for the next...
    pub n: u64,
    /// What the receiver answered.
    pub status: u16,
    /// Whether the library verified the signature with one of the secrets.
    pub verified: bool,
    /// Which secret (in the order given) verified it.
    pub secret_index: Option<usize>,
    pub error: Option<String>,
    /// The verified event (`Null` when not verified).
    pub payload: Value,
    pub webhook_id: String,
    pub webhook_timestamp: i64,
    pub path: String,
    /// When it arrived (Unix seconds).
    pub received_at: f64,
}

/// A running receiver, killed when dropped.
pub struct Receiver {
    child: Option<Child>,
    pub port: u16,
    out: PathBuf,
    secrets: PathBuf,
    _dir: tempfile::TempDir,
}

impl Receiver {
    pub fn start(options: ReceiverOptions) -> Receiver {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("deliveries.jsonl");
        let secrets = dir.path().join("secrets");
        let script = crate::repo_root().join("tests/webhooks/receiver.py");
        let mut child = Command::new(python())
            .arg(&script)
            .arg("--out")
            .arg(&out)
            .arg("--secret-file")
            .arg(&secrets)
            .args(["--fail-first", &options.fail_first.to_string()])
            .args(["--port", &options.port.unwrap_or(0).to_string()])
            .args(
                options
                    .max_seconds
                    .map(|s| ["--max-seconds".to_string(), s.to_string()])
                    .into_iter()
                    .flatten(),
            )
            // It exits when this pipe closes: no receiver outlives its test.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", script.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // A guard against a hung start, not a measurement.
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
        let Ok(port) = line.trim().parse::<u16>() else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the webhook receiver did not print its port (got {line:?}); is standardwebhooks \
                 installed in {}? run tools/py-env",
                python().display()
            );
        };
        Receiver {
            child: Some(child),
            port,
            out,
            secrets,
            _dir: dir,
        }
    }

    /// `http://127.0.0.1:PORT/hook`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// The secrets it verifies with, from the next request on.
    pub fn set_secrets(&self, secrets: &[&str]) {
        let temp = self.secrets.with_extension("partial");
        std::fs::write(&temp, secrets.join("\n")).expect("write secrets");
        std::fs::rename(&temp, &self.secrets).expect("rename secrets");
    }

    /// Every request so far, in order.
    pub fn deliveries(&self) -> Vec<Delivery> {
        read_deliveries(&self.out)
    }

    /// Polls until `done` holds for the requests so far; returns them.
    /// `timeout` guards against a hang; it is not a measurement.
    pub async fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&[Delivery]) -> bool,
    ) -> Vec<Delivery> {
        let started = Instant::now();
        loop {
            let deliveries = self.deliveries();
            if done(&deliveries) {
                return deliveries;
            }
            assert!(
                started.elapsed() < timeout,
                "the webhook receiver still waits for {what} after {timeout:?}; it got: {deliveries:#?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Kills it (the port is free again).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The complete lines of the receiver's file (one being written is skipped).
fn read_deliveries(path: &Path) -> Vec<Delivery> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a receiver line is not JSON ({e}): {line}"));
            Delivery {
                n: v["n"].as_u64().unwrap_or_default(),
                status: v["status"].as_u64().unwrap_or_default() as u16,
                verified: v["verified"] == Value::Bool(true),
                secret_index: v["secret_index"].as_u64().map(|i| i as usize),
                error: v["error"].as_str().map(str::to_string),
                payload: v["payload"].clone(),
                webhook_id: v["webhook_id"].as_str().unwrap_or_default().to_string(),
                webhook_timestamp: v["webhook_timestamp"]
                    .as_str()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or_default(),
                path: v["path"].as_str().unwrap_or_default().to_string(),
                received_at: v["received_at"].as_f64().unwrap_or_default(),
            }
        })
        .collect()
}
