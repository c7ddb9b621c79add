//! `fake-saas`: a local HTTPS server that plays the read APIs of SaaS vendors
//! (GitHub, Slack, Notion, Linear, Jira, Confluence, Google Drive, Gmail, Zendesk,
//! HubSpot, Salesforce, Microsoft 365, Asana, Trello, Intercom, and Google Calendar
//! played from data: [`declared`]) for Quarry's tests, benchmarks and demo.
//!
//! # How it is reached
//!
//! The fake listens on one loopback port and serves every vendor host name from it:
//! it generates a CA at start and a leaf certificate signed by it whose SANs are all of
//! [`FakeSaas::hosts`]. A client maps those names to [`FakeSaas::addr`] and trusts
//! [`FakeSaas::ca_cert_pem`]; connectors keep calling the real URLs
//! (`https://api.github.com/search/issues`, …). Requests are dispatched on the `Host`
//! header (HTTP/1.1) or the URI authority (HTTP/2).
//!
//! # Tokens
//!
//! Every vendor API endpoint requires `Authorization: Bearer <token>`. Seeded access
//! tokens are `fake-<vendor>-<user>` for the vendors of [`dataset::VENDORS`] (`github`,
//! `slack`, `notion`, `linear`, `jira`, `confluence`, `google-drive`, `gmail`, `zendesk`,
//! `hubspot`, `salesforce`, `microsoft-365`, `asana`, `trello`, `intercom`,
//! `google-calendar`, `box`), and for the connectors of [`dataset::CONNECTORS_OF_VENDORS`]
//! (Microsoft 365's four: `fake-outlook-mail-alice`), and the users
//! `alice` and `bob` (e.g. `fake-github-alice`); they never
//! expire. Vendors that share an OAuth server (Jira and Confluence; Drive, Gmail and Calendar) tell
//! their codes and tokens apart by the scopes asked for. The OAuth endpoints and [`FakeSaas::issue_token`] mint more, with
//! vendor-looking formats. Revoked, expired and unknown tokens get the vendor's 401
//! shape (Slack: HTTP 200 with `ok:false`).
//!
//! # Search semantics
//!
//! See [`search`]: case-insensitive, whole words (a plural `s` is ignored), a record
//! matches if it contains ANY term (stop words and one-character words dropped,
//! `"quoted phrases"` match as phrases), ranked by the number of distinct terms matched,
//! then by update time (newest first). Vendor sort parameters (`sort=updated&order=asc`, `ORDER BY updated ASC`,
//! Notion's `sort`) only change the order *within* the same number of matched terms.
//! Notion matches page titles only, like the real API. Multi-word `fullText contains`
//! clauses (Drive) need every word. Asana's task search needs every word of `text` and
//! orders by its `sort_by` only (Asana has no relevance order); Intercom's `~` matches
//! whole words.
//!
//! # Faults
//!
//! [`FakeSaas::set_fault`] makes the next requests to a host fail (vendor error shapes,
//! `Retry-After`, GitHub's `x-ratelimit-*`), redirect, return an oversized body, or slow
//! down. Every vendor request is recorded before faults apply ([`FakeSaas::requests`]).
//! [`FakeSaas::set_chaos`] (or `--faults SPEC`) injects faults at random instead, for
//! soaks and crash tests ([`chaos`]).

pub mod chaos;
pub use chaos::Chaos;
pub mod dataset;
pub mod declared;
pub mod fixtures;
mod graphql;
mod http;
mod rate;
mod request_log;
pub mod search;
mod server;
pub mod time;
pub mod tls;
mod tokens;
mod vendors;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Every host name the fake serves, in one list (each plays its vendor).
pub const HOSTS: &[&str] = &[
    // implemented
    "api.github.com",
    "github.com",
    "slack.com",
    "api.notion.com",
    "api.linear.app",
    "linear.app",
    "api.atlassian.com",
    "auth.atlassian.com",
    "www.googleapis.com",
    "gmail.googleapis.com",
    "oauth2.googleapis.com",
    "accounts.google.com",
    "acme.zendesk.com",
    "api.hubapi.com",
    "app.hubspot.com",
    "acme.my.salesforce.com",
    "login.salesforce.com",
    "graph.microsoft.com",
    "login.microsoftonline.com",
    "app.asana.com",
    "api.trello.com",
    "trello.com",
    "api.intercom.io",
    "app.intercom.com",
    "api.box.com",
    "account.box.com",
    "dl.boxcloud.com",
    "sentry.io",
    "us.sentry.io",
    // the operator's identity provider (single sign-on to the dashboard)
    "acme.okta.com",
];

/// How to start the fake.
#[derive(Clone, Debug)]
pub struct FakeSaasConfig {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Added to every vendor response.
    pub latency: Duration,
    /// Faults injected at random from the start ([`chaos`]).
    pub chaos: Option<chaos::Chaos>,
    /// Whether each vendor refuses calls past its declared rate limit
    /// (`rate_limit` in its search declaration), as it does.
    pub rate_limits: bool,
}

impl Default for FakeSaasConfig {
    fn default() -> Self {
        FakeSaasConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            latency: Duration::ZERO,
            chaos: None,
            rate_limits: false,
        }
    }
}

/// One request received by a vendor host (control requests under `/_fake/` are not recorded).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    /// Host name without port, lower case.
    pub host: String,
    pub path: String,
    /// Raw query string, without `?`.
    pub query: Option<String>,
    /// All headers, names in lower case, in received order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When it arrived, in milliseconds since the fake started: requests
    /// that arrive together were sent together (one batch, one round trip).
    #[serde(default)]
    pub received_ms: u64,
    /// What the fake answered (before any latency, reset or trickle the
    /// chaos adds); `None` while the answer is being made.
    #[serde(default)]
    pub response: Option<RecordedResponse>,
}

/// The answer to a recorded request.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordedResponse {
    pub status: u16,
    /// Names in lower case, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// For a search: the citation URLs of the records the answer holds, in
    /// order (empty when it found nothing); `None` for any other request.
    #[serde(default)]
    pub returned: Option<Vec<String>>,
}

impl RecordedResponse {
    /// The body as (lossy) UTF-8.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        value_ignoring_case(&self.headers, name)
    }
}

/// The value of the first pair named `name`, the name compared without regard to ASCII
/// case (as header names, and Salesforce's field names).
pub(crate) fn value_ignoring_case<'a>(
    pairs: &'a [(String, String)],
    name: &str,
) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

impl RecordedRequest {
    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        value_ignoring_case(&self.headers, name)
    }

    /// The body as (lossy) UTF-8.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A fault to inject on the next requests to a host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fault {
    /// Respond with this status and the vendor's error body shape.
    pub status: Option<u16>,
    /// `Retry-After` seconds (with `status`; for 429 a default of 30 is used when absent).
    pub retry_after: Option<u32>,
    /// Extra delay before responding (on top of the global latency).
    pub latency: Option<Duration>,
    /// Number of requests the fault applies to; `None`: until cleared.
    pub count: Option<u32>,
    /// Response body replacing the vendor's error body (with `status`, else with 200).
    pub body: Option<String>,
    /// Respond 302 with this `Location`.
    pub redirect_to: Option<String>,
    /// Respond 200 with a valid JSON body of exactly this many bytes.
    pub oversize_bytes: Option<usize>,
    /// Pages hold at most this many results, whatever size the client asks
    /// for (a vendor with a smaller maximum): exercises clients' pagination.
    pub max_page_size: Option<usize>,
}

/// An access token and its refresh token.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
    /// Lifetime of the access token; `None`: does not expire.
    #[serde(with = "opt_secs")]
    pub expires_in: Option<Duration>,
    pub scope: String,
}

mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs()),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_secs))
    }
}

pub(crate) struct FaultSlot {
    pub fault: Fault,
    pub remaining: Option<u32>,
}

/// State shared by the server tasks and the [`FakeSaas`] handle.
pub(crate) struct Shared {
    pub requests: Mutex<request_log::RequestLog>,
    pub faults: Mutex<HashMap<String, FaultSlot>>,
    pub latency: Mutex<Duration>,
    /// The vendors' rate-limit windows, when they are enforced.
    pub rate_limits: Mutex<Option<rate::Windows>>,
    pub chaos: chaos::State,
    pub tokens: Mutex<tokens::Tokens>,
    pub idp: Mutex<vendors::okta::Idp>,
    pub addr: SocketAddr,
    pub ca_pem: String,
    pub started: std::time::Instant,
    pub concurrency: Concurrency,
    /// Documents served as they were posted (`/_fake/documents/<name>`):
    /// an MCP client's Client ID Metadata Document, say.
    pub documents: Mutex<HashMap<String, bytes::Bytes>>,
}

/// Vendor requests being answered right now, and the most seen at once.
#[derive(Default)]
pub(crate) struct Concurrency {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// Counts one vendor request as in flight until dropped.
pub(crate) struct InFlight<'a>(&'a Concurrency);

impl Concurrency {
    pub(crate) fn enter(&self) -> InFlight<'_> {
        let now = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        InFlight(self)
    }

    fn most(&self) -> usize {
        self.most.load(SeqCst)
    }

    fn forget_most(&self) {
        self.most.store(0, SeqCst);
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Records a request as it arrives; returns its place, for its answer.
    pub(crate) fn record(&self, r: RecordedRequest) -> usize {
        lock(&self.requests).push(r)
    }

    /// Records the answer to the request at `place` (unless the record was
    /// cleared, or has forgotten it, meanwhile).
    pub(crate) fn record_answer(
        &self,
        place: usize,
        method: &str,
        path: &str,
        answer: RecordedResponse,
    ) {
        lock(&self.requests).answer(place, method, path, answer);
    }

    /// The fault for a request to `host` (an exact host entry first, then `*`), counting it.
    pub(crate) fn take_fault(&self, host: &str) -> Option<Fault> {
        let mut faults = lock(&self.faults);
        let key = if faults.contains_key(host) {
            host.to_string()
        } else if faults.contains_key("*") {
            "*".to_string()
        } else {
            return None;
        };
        let slot = faults.get_mut(&key)?;
        let fault = slot.fault.clone();
        if let Some(r) = slot.remaining.as_mut() {
            *r = r.saturating_sub(1);
            if *r == 0 {
                faults.remove(&key);
            }
        }
        Some(fault)
    }

    pub(crate) fn set_fault(&self, host: &str, fault: Fault) {
        let remaining = fault.count;
        if remaining == Some(0) {
            lock(&self.faults).remove(&host.to_ascii_lowercase());
            return;
        }
        lock(&self.faults).insert(host.to_ascii_lowercase(), FaultSlot { fault, remaining });
    }

    pub(crate) fn latency(&self) -> Duration {
        *lock(&self.latency)
    }

    pub(crate) fn tokens(&self) -> std::sync::MutexGuard<'_, tokens::Tokens> {
        lock(&self.tokens)
    }

    pub(crate) fn idp(&self) -> std::sync::MutexGuard<'_, vendors::okta::Idp> {
        lock(&self.idp)
    }
}

/// A running fake server. Dropping it without [`FakeSaas::shutdown`] stops accepting
/// connections too (the accept loop ends when the handle is dropped).
pub struct FakeSaas {
    shared: Arc<Shared>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl FakeSaas {
    /// Generates the certificates, binds the port and starts serving.
    pub async fn start(config: FakeSaasConfig) -> anyhow::Result<FakeSaas> {
        let certs = tls::generate(HOSTS)?;
        let listener = tokio::net::TcpListener::bind(config.listen).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            requests: Mutex::default(),
            faults: Mutex::new(HashMap::new()),
            latency: Mutex::new(config.latency),
            rate_limits: Mutex::new(config.rate_limits.then(rate::Windows::default)),
            chaos: chaos::State::default(),
            tokens: Mutex::new(tokens::Tokens::new()),
            idp: Mutex::new(vendors::okta::Idp::new()),
            addr,
            ca_pem: certs.ca_pem.clone(),
            started: std::time::Instant::now(),
            concurrency: Concurrency::default(),
            documents: Mutex::new(HashMap::new()),
        });
        shared.chaos.set(config.chaos);
        // Build the dataset now rather than on the first request.
        let _ = dataset::docs();
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(server::serve(
            listener,
            certs.server_config()?,
            shared.clone(),
            stop_rx,
        ));
        tracing::info!(%addr, "fake-saas listening");
        Ok(FakeSaas {
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address it listens on (map every host of [`FakeSaas::hosts`] to it).
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// PEM of the CA that signed the server certificate.
    pub fn ca_cert_pem(&self) -> &str {
        &self.shared.ca_pem
    }

    /// The vendor host names served.
    pub fn hosts() -> &'static [&'static str] {
        HOSTS
    }

    /// The vendor requests received so far, in order: the newest, as many
    /// as the record keeps (`request_log::MAX_BYTES` of them).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).kept()
    }

    /// How many vendor requests were received since the start or the last
    /// clear (those the record no longer keeps included).
    pub fn request_count(&self) -> usize {
        lock(&self.shared.requests).count()
    }

    /// The recorded vendor requests from place `from` up to (not including)
    /// `to` ([`FakeSaas::request_count`]'s numbering), of those still kept.
    pub fn requests_between(&self, from: usize, to: usize) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).between(from, to)
    }

    /// Forgets the recorded requests, and the most seen in flight at once.
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
        self.shared.concurrency.forget_most();
    }

    /// The most vendor requests that were being answered at the same time
    /// since the start or the last [`FakeSaas::clear_requests`].
    pub fn most_in_flight(&self) -> usize {
        self.shared.concurrency.most()
    }

    /// Applies `fault` to the next `fault.count` vendor requests to `host` (all of them
    /// when `count` is `None`), replacing any fault set for that host. `host` `"*"`
    /// applies to every host that has no fault of its own.
    pub fn set_fault(&self, host: &str, fault: Fault) {
        self.shared.set_fault(host, fault);
    }

    /// Removes every fault.
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// Injects faults at random into every later vendor request (a fault
    /// set with [`FakeSaas::set_fault`] wins where it applies); `None` ends it.
    pub fn set_chaos(&self, chaos: Option<chaos::Chaos>) {
        self.shared.chaos.set(chaos);
    }

    /// The chaos in force and what it injected:
    /// `{"spec": ..., "requests": n, "injected": {"spike": n, ...}}`.
    pub fn chaos_report(&self) -> serde_json::Value {
        self.shared.chaos.report()
    }

    /// Turns the vendors' declared rate limits on or off (windows start
    /// afresh).
    pub fn set_rate_limits(&self, on: bool) {
        *lock(&self.shared.rate_limits) = on.then(rate::Windows::default);
    }

    /// Sets the latency added to every vendor response.
    pub fn set_latency(&self, latency: Duration) {
        *lock(&self.shared.latency) = latency;
    }

    /// Mints a token pair for a vendor (one of [`dataset::VENDORS`]) and a user, valid
    /// like the seeded tokens. `expires_in: None` never expires.
    ///
    /// # Panics
    /// On an unknown vendor name.
    pub fn issue_token(&self, vendor: &str, user: &str, expires_in: Option<Duration>) -> TokenPair {
        let v = tokens::Vendor::parse(vendor)
            .unwrap_or_else(|| panic!("fake-saas: unknown vendor {vendor:?}"));
        self.shared
            .tokens()
            .issue(v, user, expires_in, v.default_scope(), None)
    }

    /// Tokens revoked through the vendors' revocation endpoints (with the partner token of
    /// each pair), in order.
    pub fn revoked_tokens(&self) -> Vec<String> {
        self.shared.tokens().revoked()
    }

    /// Stops accepting, lets in-flight requests finish (up to 2 s) and returns.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FakeSaas {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
    }
}
