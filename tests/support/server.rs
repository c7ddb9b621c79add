//! The real server over HTTPS: `quarry demo` started as a child process on
//! a free port with a data folder of its own, and a client that trusts its
//! CA. Every response a test sees through [`Demo::call`] (and the
//! `get`/`post`/`delete` shortcuts) is checked against the OpenAPI document
//! by [`crate::contract`], so the document and the server cannot drift apart.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Version};
use serde_json::Value;

use crate::contract;
use crate::shared::{self, SharedBackend};

/// The connectors the demo connects for both users (sorted by id).
pub const CONNECTORS: [&str; 21] = [
    "asana",
    "box",
    "confluence",
    "github",
    "gmail",
    "google-calendar",
    "google-drive",
    "hubspot",
    "intercom",
    "jira",
    "linear",
    "microsoft-files",
    "microsoft-teams",
    "notion",
    "outlook-calendar",
    "outlook-mail",
    "salesforce",
    "sentry",
    "slack",
    "trello",
    "zendesk",
];

/// A demo user and the tokens the demo issued for this start: for `/v1`,
/// and for `/mcp` (another audience).
#[derive(Debug, Clone)]
pub struct DemoUser {
    pub email: String,
    pub token: String,
    pub mcp_token: String,
}

/// How to start a demo; [`Demo::start`] is the common case.
#[derive(Debug, Clone, Default)]
pub struct DemoOptions {
    env: Vec<(String, String)>,
    token_ttl_seconds: Option<u64>,
    data_dir: Option<PathBuf>,
    upstream_latency_ms: Option<u64>,
    shared: Option<Arc<SharedBackend>>,
    replicas: Option<usize>,
    extra_users: usize,
    upstream_faults: Option<String>,
    binary: Option<PathBuf>,
    plugins_dir: Option<PathBuf>,
    args: Vec<String>,
}

impl DemoOptions {
    /// A `QUARRY_*` override (for example `QUARRY_LIMITS__QUERY__MINUTE=5`).
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    pub fn envs(mut self, pairs: &[(&str, &str)]) -> Self {
        for (name, value) in pairs {
            self = self.env(name, value);
        }
        self
    }

    pub fn token_ttl_seconds(mut self, seconds: u64) -> Self {
        self.token_ttl_seconds = Some(seconds);
        self
    }

    /// A data folder that outlives the demo (to restart on the same data).
    pub fn data_dir(mut self, dir: &Path) -> Self {
        self.data_dir = Some(dir.to_path_buf());
        self
    }

    /// Latency the fake upstreams add to every response (slow queries).
    pub fn upstream_latency_ms(mut self, ms: u64) -> Self {
        self.upstream_latency_ms = Some(ms);
        self
    }

    /// Runs on this PostgreSQL database and Redis prefix (several demos
    /// on one backend are replicas of one deployment).
    pub fn shared(mut self, backend: &Arc<SharedBackend>) -> Self {
        self.shared = Some(backend.clone());
        self
    }

    /// `quarry demo --replicas N` (needs a shared backend).
    pub fn replicas(mut self, count: usize) -> Self {
        self.replicas = Some(count);
        self
    }

    /// `quarry demo --extra-users N`: `user1@acme.test`, ... beside alice
    /// and bob.
    pub fn extra_users(mut self, count: usize) -> Self {
        self.extra_users = count;
        self
    }

    /// `quarry demo --upstream-faults SPEC`: faults the fake vendors inject
    /// at random (`fake_saas::chaos`).
    pub fn upstream_faults(mut self, spec: &str) -> Self {
        self.upstream_faults = Some(spec.to_string());
        self
    }

    /// Another `quarry` binary than the tests' build (a benchmark's
    /// release build).
    pub fn binary(mut self, path: &Path) -> Self {
        self.binary = Some(path.to_path_buf());
        self
    }

    /// A plugins folder of the test's own instead of the built connectors
    /// (to install connectors into while the demo runs).
    pub fn plugins_dir(mut self, dir: &Path) -> Self {
        self.plugins_dir = Some(dir.to_path_buf());
        self
    }

    /// One more argument for `quarry demo` (`--fake`, `HOST=ADDR`, ...).
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_string());
        self
    }

    pub fn start(self) -> Demo {
        Demo::spawn(self)
    }
}

/// A running `quarry demo`, killed when dropped.
pub struct Demo {
    child: Option<Child>,
    /// `https://127.0.0.1:PORT/v1`
    pub base_url: String,
    /// `https://127.0.0.1:PORT/mcp`
    pub mcp_url: String,
    pub ca_cert: PathBuf,
    pub users: Vec<DemoUser>,
    /// Negotiates HTTP/2 or HTTP/1.1 by ALPN (HTTP/2 with this server).
    pub client: reqwest::Client,
    /// Speaks HTTP/1.1 only.
    pub client_http1: reqwest::Client,
    /// The demo's fake upstreams (`https://127.0.0.1:PORT`), and a client
    /// that trusts them, for their `/_fake/` control API.
    pub fake_url: String,
    pub fake_client: reqwest::Client,
    pub data_dir: PathBuf,
    /// Every replica's base URL (the first is `base_url`).
    pub replicas: Vec<String>,
    /// The PostgreSQL database and Redis prefix, when not on redb.
    pub shared: Option<Arc<SharedBackend>>,
    stderr_path: PathBuf,
    // Held for their lifetime: removed when the demo is dropped.
    _temp_data: Option<tempfile::TempDir>,
    _logs: tempfile::TempDir,
}

/// One response, already checked against the OpenAPI document.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body parsed as JSON, or `Null` when it is not JSON (or empty).
    pub body: Value,
    pub raw: Vec<u8>,
    pub version: Version,
}

impl Reply {
    /// Reads a whole response. A body labelled JSON that does not parse is
    /// `Null`, with the parse error beside the reply.
    pub async fn read(
        response: reqwest::Response,
    ) -> Result<(Reply, Option<serde_json::Error>), reqwest::Error> {
        let status = response.status();
        let version = response.version();
        let headers = response.headers().clone();
        let raw = response.bytes().await?.to_vec();
        let is_json = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.split(';').next().unwrap_or("").trim() == "application/json");
        let (body, not_json) = match is_json && !raw.is_empty() {
            true => match serde_json::from_slice(&raw) {
                Ok(body) => (body, None),
                Err(e) => (Value::Null, Some(e)),
            },
            false => (Value::Null, None),
        };
        let reply = Reply {
            status,
            headers,
            body,
            raw,
            version,
        };
        Ok((reply, not_json))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| {
            v.to_str()
                .unwrap_or_else(|_| panic!("header {name} is not visible ASCII: {v:?}"))
        })
    }

    /// An integer header, which must be present.
    pub fn int_header(&self, name: &str) -> i64 {
        let value = self
            .header(name)
            .unwrap_or_else(|| panic!("no {name} header in {self}"));
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} is not an integer: {value:?}"))
    }

    /// When the server answered, in Unix seconds, from its `Date` header.
    pub fn server_time(&self) -> i64 {
        let date = self
            .header("date")
            .unwrap_or_else(|| panic!("no Date header in {self}"));
        parse_http_date(date).unwrap_or_else(|| panic!("Date {date:?} is not an IMF-fixdate"))
    }

    /// `error.type` of an error body.
    pub fn error_type(&self) -> &str {
        self.body["error"]["type"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error body: {self}"))
    }

    /// `error.message` of an error body.
    pub fn error_message(&self) -> &str {
        self.body["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error body: {self}"))
    }

    /// Asserts the status and, for errors, the contract's error type.
    #[track_caller]
    pub fn expect(&self, status: u16, error_type: Option<&str>) -> &Reply {
        assert_eq!(self.status.as_u16(), status, "unexpected status: {self}");
        if let Some(kind) = error_type {
            assert_eq!(self.error_type(), kind, "unexpected error type: {self}");
        }
        self
    }

    /// Asserts a 400 `bad_request` whose message names `field`.
    #[track_caller]
    pub fn expect_bad_request_naming(&self, field: &str) -> &Reply {
        self.expect(400, Some("bad_request"));
        let message = self.error_message();
        assert!(
            message.contains(field),
            "the message should name `{field}`: {message:?}"
        );
        self
    }
}

impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = if self.body.is_null() {
            String::from_utf8_lossy(&self.raw[..self.raw.len().min(2000)]).into_owned()
        } else {
            let text = self.body.to_string();
            text.chars().take(4000).collect()
        };
        write!(f, "{} {body}", self.status)
    }
}

/// A request being built: `demo.call(Method::POST, "/query").token(t).json(&body).send().await`.
pub struct Call<'a> {
    demo: &'a Demo,
    method: Method,
    path: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Option<reqwest::Body>,
    http1: bool,
    /// Which replica answers (the first by default).
    replica: usize,
}

impl<'a> Call<'a> {
    /// Sends the call to replica `index` of the demo (`--replicas`).
    pub fn on(mut self, index: usize) -> Self {
        assert!(
            index < self.demo.replicas.len(),
            "the demo has {} replicas",
            self.demo.replicas.len()
        );
        self.replica = index;
        self
    }

    pub fn token(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// A header given as text (must be a valid header value).
    pub fn header(self, name: &str, value: &str) -> Self {
        let value = HeaderValue::from_str(value).expect("a valid header value");
        self.header_value(name, value)
    }

    /// A header given as any bytes the HTTP layer lets through.
    pub fn header_value(mut self, name: &str, value: HeaderValue) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("a valid header name");
        self.headers.push((name, value));
        self
    }

    pub fn idempotency_key(self, key: &str) -> Self {
        self.header("idempotency-key", key)
    }

    /// A JSON body with `Content-Type: application/json`.
    pub fn json(self, body: &Value) -> Self {
        self.raw(
            serde_json::to_vec(body).expect("json"),
            Some("application/json"),
        )
    }

    /// Any body, with the given `Content-Type` (none when `None`).
    pub fn raw(mut self, body: impl Into<Vec<u8>>, content_type: Option<&str>) -> Self {
        if let Some(ct) = content_type {
            self = self.header(CONTENT_TYPE.as_str(), ct);
        }
        self.body = Some(reqwest::Body::from(body.into()));
        self
    }

    /// A body sent without a `Content-Length` (chunked on HTTP/1.1, plain
    /// DATA frames on HTTP/2): the server learns its size only by reading.
    pub fn streamed(mut self, body: Vec<u8>, content_type: &str) -> Self {
        self = self.header(CONTENT_TYPE.as_str(), content_type);
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            body.chunks(8192).map(|c| Ok(c.to_vec())).collect();
        self.body = Some(reqwest::Body::wrap_stream(futures::stream::iter(chunks)));
        self
    }

    /// Over HTTP/1.1 instead of HTTP/2.
    pub fn http1(mut self) -> Self {
        self.http1 = true;
        self
    }

    /// Sends, reads the whole response and checks it against the contract.
    pub async fn send(self) -> Reply {
        let (method, path) = (self.method.clone(), self.path.clone());
        let log = self.demo.log_tail_path();
        match self.try_send().await {
            Ok(reply) => reply,
            Err(e) => panic!(
                "{method} {path}: no response: {e:?}\nserver log:\n{}",
                read_tail(&log)
            ),
        }
    }

    /// Sends and checks against the contract; a transport failure (no
    /// response at all) is returned rather than a panic.
    pub async fn try_send(self) -> Result<Reply, reqwest::Error> {
        let method = self.method.clone();
        let path = self.path.clone();
        let reply = self.try_send_unchecked().await?;
        if let Err(problem) = contract::check_reply(method.as_str(), &path, &reply) {
            panic!(
                "{method} {path}: the response breaks the API contract:\n{problem}\nresponse: {reply}"
            );
        }
        Ok(reply)
    }

    /// Sends without the contract check (for tests of the checker itself).
    pub async fn send_unchecked(self) -> Reply {
        let (method, path) = (self.method.clone(), self.path.clone());
        self.try_send_unchecked()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: no response: {e:?}"))
    }

    async fn try_send_unchecked(self) -> Result<Reply, reqwest::Error> {
        let client = if self.http1 {
            &self.demo.client_http1
        } else {
            &self.demo.client
        };
        let url = format!("{}{}", self.demo.replicas[self.replica], self.path);
        let mut request = client.request(self.method.clone(), url);
        for (name, value) in self.headers {
            request = request.header(name, value);
        }
        if let Some(body) = self.body {
            request = request.body(body);
        }
        let (reply, not_json) = Reply::read(request.send().await?).await?;
        if let Some(e) = not_json {
            panic!(
                "{} {}: the body is labelled JSON but is not ({e}): {}",
                self.method,
                self.path,
                String::from_utf8_lossy(&reply.raw)
            );
        }
        Ok(reply)
    }
}

static STARTS: AtomicUsize = AtomicUsize::new(0);

impl Demo {
    /// A client of the demo whose requests come from `local` (another
    /// loopback address, `127.0.0.N`: another client address to the server).
    pub fn client_from(&self, local: std::net::IpAddr) -> reqwest::Client {
        let ca = std::fs::read(&self.ca_cert).expect("the demo's CA");
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("PEM"))
            .local_address(local)
            .timeout(Duration::from_secs(120))
            .build()
            .expect("client")
    }

    /// Starts a demo with these `QUARRY_*` overrides and the defaults
    /// otherwise (token lifetime 3600 s, a temporary data folder).
    pub fn start(extra_env: &[(&str, &str)]) -> Demo {
        Demo::options().envs(extra_env).start()
    }

    pub fn options() -> DemoOptions {
        DemoOptions::default()
    }

    fn spawn(options: DemoOptions) -> Demo {
        let binary = options.binary.clone().unwrap_or_else(quarry_binary);
        let plugins = options.plugins_dir.clone().unwrap_or_else(built_connectors);
        let (temp_data, data_dir) = match &options.data_dir {
            Some(dir) => (None, dir.clone()),
            None => {
                let temp = tempfile::tempdir().expect("temp dir");
                let path = temp.path().to_path_buf();
                (Some(temp), path)
            }
        };
        seed_component_cache(&data_dir);
        let logs = tempfile::tempdir().expect("temp dir");
        let stderr_path = logs.path().join(format!(
            "demo-{}.log",
            STARTS.fetch_add(1, Ordering::Relaxed)
        ));
        let stderr = std::fs::File::create(&stderr_path).expect("log file");
        let mut command = Command::new(&binary);
        command
            .arg("demo")
            .args(["--listen", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(&data_dir)
            .arg("--plugins-dir")
            .arg(&plugins)
            .arg("--token-ttl-seconds")
            .arg(options.token_ttl_seconds.unwrap_or(3600).to_string());
        if let Some(ms) = options.upstream_latency_ms {
            command.arg("--upstream-latency-ms").arg(ms.to_string());
        }
        let shared = options.shared.clone().or_else(|| {
            shared::requested().then(|| match &options.data_dir {
                Some(dir) => shared::for_data_dir(dir),
                None => Arc::new(SharedBackend::create()),
            })
        });
        if let Some(backend) = &shared {
            command.args(backend.demo_args());
        }
        if let Some(count) = options.replicas {
            command.arg("--replicas").arg(count.to_string());
        }
        if options.extra_users > 0 {
            command
                .arg("--extra-users")
                .arg(options.extra_users.to_string());
        }
        if let Some(spec) = &options.upstream_faults {
            command.arg("--upstream-faults").arg(spec);
        }
        command.args(&options.args);
        // The test's own environment must not change the server's behaviour.
        for (name, _) in std::env::vars_os() {
            let text = name.to_string_lossy();
            if text.starts_with("QUARRY_") || text == "RUST_LOG" {
                command.env_remove(&name);
            }
        }
        command.env("QUARRY_LOG", "info").env("NO_COLOR", "1");
        // Semantic ranking stops embedding at a time budget, so which
        // passages win can vary with the machine's load; these tests check
        // the API, so they rank by keywords alone (deterministic). The
        // model itself is tested in host/rank/src/embed/; a test that
        // wants it sets QUARRY_RANKING__SEMANTIC=true.
        command.env("QUARRY_RANKING__SEMANTIC", "false");
        // Where a person runs it: relative defaults resolve from the root.
        command.current_dir(crate::repo_root());
        for (name, value) in shared.iter().flat_map(|backend| backend.env()) {
            command.env(name, value);
        }
        for (name, value) in &options.env {
            command.env(name, value);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));

        // The first stdout line is the demo's JSON; the rest is drained.
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let read = reader.read_line(&mut line);
            let _ = tx.send(read.map(|_| line));
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        // A guard against a hung start, not a measurement.
        let line = match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(Ok(line)) if !line.trim().is_empty() => line,
            outcome => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "quarry demo did not print its first line ({outcome:?}); its log:\n{}",
                    read_tail(&stderr_path)
                );
            }
        };
        let first: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the demo's first line is not JSON ({e}): {line}"));
        let base_url = first["base_url"]
            .as_str()
            .expect("base_url in the first line")
            .trim_end_matches('/')
            .to_string();
        assert!(
            base_url.starts_with("https://127.0.0.1:") && base_url.ends_with("/v1"),
            "unexpected base_url {base_url}"
        );
        let mcp_url = first["mcp_url"]
            .as_str()
            .expect("mcp_url in the first line")
            .to_string();
        let ca_cert = PathBuf::from(
            first["ca_cert"]
                .as_str()
                .expect("ca_cert in the first line"),
        );
        let users: Vec<DemoUser> = first["users"]
            .as_array()
            .expect("users in the first line")
            .iter()
            .map(|u| DemoUser {
                email: u["email"].as_str().expect("email").to_string(),
                token: u["token"].as_str().expect("token").to_string(),
                mcp_token: u["mcp_token"].as_str().expect("mcp_token").to_string(),
            })
            .collect();
        let pem = std::fs::read(&ca_cert)
            .unwrap_or_else(|e| panic!("cannot read ca_cert {}: {e}", ca_cert.display()));
        let client = client(&pem, false);
        let client_http1 = client_for_http1(&pem);
        let fake_url = first["fake_upstreams"]
            .as_str()
            .expect("fake_upstreams in the first line")
            .to_string();
        let fake_pem = std::fs::read(first["fake_upstreams_ca_cert"].as_str().expect("fake CA"))
            .expect("the fake upstreams' CA");
        // Their certificate names the vendors' hosts, not the address.
        let fake_addr: std::net::SocketAddr = fake_url
            .trim_start_matches("https://")
            .parse()
            .expect("fake_upstreams is https://IP:PORT");
        let fake_client = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&fake_pem).expect("PEM"))
            .resolve("api.github.com", fake_addr)
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client");
        let fake_url = format!("https://api.github.com:{}", fake_addr.port());
        save_component_cache(&data_dir);
        let replicas = first["replicas"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|url| Some(url.as_str()?.trim_end_matches('/').to_string()))
                    .collect()
            })
            .unwrap_or_else(|| vec![base_url.clone()]);
        Demo {
            child: Some(child),
            base_url,
            mcp_url,
            ca_cert,
            users,
            client,
            client_http1,
            fake_url,
            fake_client,
            data_dir,
            replicas,
            shared,
            stderr_path,
            _temp_data: temp_data,
            _logs: logs,
        }
    }

    /// The MCP token of the demo user whose email starts with `name@`.
    pub fn mcp_token(&self, name: &str) -> &str {
        &self.user(name).mcp_token
    }

    /// The token of the demo user whose email starts with `name@`.
    pub fn token(&self, name: &str) -> &str {
        &self.user(name).token
    }

    fn user(&self, name: &str) -> &DemoUser {
        self.users
            .iter()
            .find(|u| u.email.starts_with(&format!("{name}@")))
            .unwrap_or_else(|| panic!("no demo user {name}: {:?}", self.users))
    }

    pub fn alice(&self) -> &str {
        self.token("alice")
    }

    pub fn bob(&self) -> &str {
        self.token("bob")
    }

    /// `/metrics`, outside `/v1` (the demo sets no scrape token: it
    /// answers this machine).
    pub fn metrics_url(&self) -> String {
        self.base_url.trim_end_matches("/v1").to_string() + "/metrics"
    }

    /// `path` is relative to the base URL (`/query`, `/me`, ...).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub fn call(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            demo: self,
            method,
            path: path.to_string(),
            headers: Vec::new(),
            body: None,
            http1: false,
            replica: 0,
        }
    }

    /// `GET url` (a whole URL: pages outside `/v1` too) with the demo's
    /// client, which trusts its CA; not checked against the contract.
    pub async fn fetch(&self, url: &str) -> reqwest::Response {
        self.client.get(url).send().await.unwrap()
    }

    /// `GET path`, with a bearer token when given; checked against the contract.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        with_token(self.call(Method::GET, path), token).send().await
    }

    /// `POST path` with a JSON body; checked against the contract.
    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        with_token(self.call(Method::POST, path), token)
            .json(body)
            .send()
            .await
    }

    /// `DELETE path`; checked against the contract.
    pub async fn delete(&self, path: &str, token: Option<&str>) -> Reply {
        with_token(self.call(Method::DELETE, path), token)
            .send()
            .await
    }

    /// `POST /query` as `token` with this body.
    pub async fn query(&self, token: &str, body: &Value) -> Reply {
        self.post("/query", Some(token), body).await
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    fn log_tail_path(&self) -> PathBuf {
        self.stderr_path.clone()
    }

    /// `GET` on the fake upstreams' control API (`/_fake/revoked`, ...).
    /// Posts JSON to the fake upstreams' control API.
    pub async fn fake_post(&self, path: &str, body: &Value) -> Value {
        let request = self.fake_client.post(format!("{}{path}", self.fake_url));
        Self::fake_answer(path, request.json(body)).await
    }

    pub async fn fake(&self, path: &str) -> Value {
        let request = self.fake_client.get(format!("{}{path}", self.fake_url));
        Self::fake_answer(path, request).await
    }

    async fn fake_answer(path: &str, request: reqwest::RequestBuilder) -> Value {
        request
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .unwrap_or_else(|e| panic!("fake upstreams {path}: {e}"))
            .json()
            .await
            .expect("JSON from the fake upstreams")
    }

    /// Waits (up to a minute) for the server to exit on its own, as when a
    /// failpoint kills it; returns how it ended.
    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn wait_for_exit(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("the demo is running");
        for _ in 0..600 {
            if let Some(status) = child.try_wait().expect("waiting for the demo") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        panic!("the demo did not exit; its log:\n{}", self.log());
    }

    /// Kills the server and waits for it to exit (its data folder stays
    /// while the `Demo` value lives, or for good when it was given).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        self.stop();
    }
}

fn with_token<'a>(call: Call<'a>, token: Option<&str>) -> Call<'a> {
    match token {
        Some(token) => call.token(token),
        None => call,
    }
}

fn client(ca_pem: &[u8], http1_only: bool) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(ca_pem).expect("the demo's CA is PEM");
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
        .https_only(false)
        // A guard against a hung server, not a measurement.
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(64);
    if http1_only {
        builder = builder.http1_only();
    }
    builder.build().expect("client")
}

fn client_for_http1(ca_pem: &[u8]) -> reqwest::Client {
    client(ca_pem, true)
}

/// The last 8 KiB of a log file.
fn read_tail(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        let _ = file.read_to_string(&mut text);
    }
    let start = text.len().saturating_sub(8192);
    let start = (start..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    text[start..].to_string()
}

/// The `quarry` executable beside the test binary (`target/debug/quarry`
/// for `target/debug/deps/api-*`), built first: cargo rebuilds it when its
/// sources changed since, so that no test runs a stale binary (`cargo
/// test` builds the binaries of the package under test only, and this one
/// is in another package). The build is the one tools/test makes, so after
/// tools/test it is up to date at once.
pub fn quarry_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            build_quarry();
            let exe = std::env::current_exe().expect("current exe");
            let mut dir = exe.parent().expect("deps folder").to_path_buf();
            if dir.ends_with("deps") {
                dir.pop();
            }
            let binary = dir.join(format!("quarry{}", std::env::consts::EXE_SUFFIX));
            assert!(
                binary.exists(),
                "cargo built no quarry at {}",
                binary.display()
            );
            binary
        })
        .clone()
}

/// `cargo build -p quarry --bin quarry --features demo,failpoints`: the
/// demo's fake vendors and the crash tests' failpoints.
fn build_quarry() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    // What cargo set for this test binary (its package's name and folder,
    // its OUT_DIR...) is not the build's: build scripts that watch those
    // variables (ring's) would see them changed, and everything above ring
    // (rustls, reqwest, the server) would be compiled again here and again
    // by the next `cargo build` from a shell.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_this_test = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&&*name);
        if set_for_this_test {
            command.env_remove(&*name);
        }
    }
    let output = command
        .args(["build", "--quiet", "-p", "quarry", "--bin", "quarry"])
        .args(["--features", "demo,failpoints"])
        .current_dir(crate::repo_root())
        .output()
        .expect("cannot run cargo to build the quarry binary");
    assert!(
        output.status.success(),
        "building the quarry binary failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Where the plugin builder put the demo's connectors.
pub fn built_connectors() -> PathBuf {
    let dir = crate::repo_root().join("target/plugins");
    for id in CONNECTORS {
        assert!(
            dir.join(format!("{id}.wasm")).exists() && dir.join(format!("{id}.toml")).exists(),
            "connector {id} is not built in {}: run `cargo run -q -p quarry-plugin-builder -- --test-out target/test-plugins`",
            dir.display()
        );
    }
    dir
}

/// Compiled components shared by every demo the tests start: each demo
/// compiles into `<data>/cache/components`; copying the artifacts between
/// demos spares each start the compilation (the server still checks every
/// artifact's key, and recompiles what does not match).
fn shared_component_cache() -> PathBuf {
    crate::repo_root().join("target/test-api-component-cache")
}

fn seed_component_cache(data_dir: &Path) {
    let target = data_dir.join("cache/components");
    copy_missing(&shared_component_cache(), &target);
}

fn save_component_cache(data_dir: &Path) {
    copy_missing(
        &data_dir.join("cache/components"),
        &shared_component_cache(),
    );
}

/// Copies the files of `from` that `to` lacks, each through a temporary
/// name and a rename, so that concurrent copies never expose half a file.
fn copy_missing(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    if std::fs::create_dir_all(to).is_err() {
        return;
    }
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().ends_with(".cwasm") || to.join(&name).exists() {
            continue;
        }
        let temp = to.join(format!(
            ".{}.{}.{}",
            name.to_string_lossy(),
            std::process::id(),
            STARTS.fetch_add(1, Ordering::Relaxed)
        ));
        if std::fs::copy(entry.path(), &temp).is_ok() {
            let _ = std::fs::rename(&temp, to.join(&name));
        }
        let _ = std::fs::remove_file(&temp);
    }
}

/// An unlabelled sample's value in a Prometheus text exposition (what
/// `/metrics` answers).
pub fn metric_value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// Seconds since the Unix epoch, by this machine's clock (the server's).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// Waits, when fewer than `margin` seconds are left in the current minute
/// (or UTC day), until the next one starts: a test that counts requests in a
/// window must not see the window reset under it.
pub async fn avoid_window_edge(margin: i64) {
    loop {
        let now = unix_now();
        let left_in_minute = 60 - now.rem_euclid(60);
        let left_in_day = 86_400 - now.rem_euclid(86_400);
        if left_in_minute > margin && left_in_day > margin {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Parses an HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`)
/// into Unix seconds.
pub fn parse_http_date(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? + 1;
    let day: u32 = day.parse().ok()?;
    let year: u32 = year.parse().ok()?;
    parse_rfc3339_utc(&format!("{year:04}-{month:02}-{day:02}T{time}Z"))
}

/// Parses an RFC 3339 UTC time (`2025-03-17T10:30:00Z`, fractions allowed)
/// into Unix seconds.
pub fn parse_rfc3339_utc(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if !text.is_ascii() || bytes.len() < 20 || !text.ends_with('Z') {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> { text.get(range)?.parse().ok() };
    if &text[4..5] != "-" || &text[7..8] != "-" || !matches!(&text[10..11], "T" | "t") {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // The fake's calendar (jiff), not another copy of the civil-date sums.
    let days = fake_saas::time::days_from_civil(y, m as u32, d as u32);
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339() {
        assert_eq!(parse_rfc3339_utc("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_utc("2025-03-17T10:30:00Z"),
            Some(1_742_207_400)
        );
        assert_eq!(
            parse_rfc3339_utc("2000-02-29T23:59:59.5Z"),
            Some(951_868_799)
        );
        assert_eq!(parse_rfc3339_utc("2025-03-17 10:30:00"), None);
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
    }
}
