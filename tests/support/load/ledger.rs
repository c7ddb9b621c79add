//! What the load has seen: the users it plays, every answer it got, what
//! was acknowledged (and so must hold), and the problems found on the way.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::report::Invariant;

/// The endpoints the load calls: each one's rate-limit bucket and how the
/// report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    Query,
    DeepSearch,
    DeleteMyData,
    Me,
    Connectors,
    ListWebhooks,
    RegisterWebhook,
}

impl Endpoint {
    pub fn label(self) -> &'static str {
        match self {
            Endpoint::Query => "POST /v1/query",
            Endpoint::DeepSearch => "POST /v1/deep_search",
            Endpoint::DeleteMyData => "DELETE /v1/delete_my_data",
            Endpoint::Me => "GET /v1/me",
            Endpoint::Connectors => "GET /v1/connectors",
            Endpoint::ListWebhooks => "GET /v1/webhooks",
            Endpoint::RegisterWebhook => "POST /v1/webhooks",
        }
    }

    pub fn method(self) -> reqwest::Method {
        match self {
            Endpoint::Query | Endpoint::DeepSearch | Endpoint::RegisterWebhook => {
                reqwest::Method::POST
            }
            Endpoint::DeleteMyData => reqwest::Method::DELETE,
            Endpoint::Me | Endpoint::Connectors | Endpoint::ListWebhooks => reqwest::Method::GET,
        }
    }

    /// The path under `/v1`.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Query => "/query",
            Endpoint::DeepSearch => "/deep_search",
            Endpoint::DeleteMyData => "/delete_my_data",
            Endpoint::Me => "/me",
            Endpoint::Connectors => "/connectors",
            Endpoint::ListWebhooks | Endpoint::RegisterWebhook => "/webhooks",
        }
    }

    /// The server's rate-limit bucket (`api/routes.rs`): the three of the
    /// contract's table, and one per route for the rest.
    pub fn bucket(self) -> &'static str {
        match self {
            Endpoint::Query => "query",
            Endpoint::DeepSearch => "deep_search",
            Endpoint::DeleteMyData => "delete_my_data",
            Endpoint::Me => "me",
            Endpoint::Connectors => "connectors",
            Endpoint::ListWebhooks | Endpoint::RegisterWebhook => "webhooks",
        }
    }
}

/// Where a user stands, as far as the load knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Live,
    /// Its `DELETE /delete_my_data` was sent and has not been answered.
    Deleting,
    /// Deleted: answered 200, or found deleted after the server came back.
    Deleted,
    /// Its deletion got no answer (the server died): done or not, to be
    /// found out.
    Unknown,
}

/// One user, from their creation to their deletion (the demo makes a new
/// user under the same email at its next start).
#[derive(Clone, Debug)]
pub struct Account {
    pub email: String,
    pub user_id: String,
    /// Every `/v1` token seen for it (one per start of the demo).
    pub tokens: Vec<String>,
    pub state: State,
    /// The demo's first two users are never deleted: they carry the load
    /// from start to end.
    pub deletable: bool,
    /// Webhook registrations attempted.
    pub registrations: usize,
}

/// One email's place in the load: its workers play whichever account is
/// the current one.
#[derive(Clone, Debug)]
pub struct Slot {
    pub email: String,
    pub current: usize,
}

/// The six rate-limit headers of an answer: its minute and day windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    pub minute: Window,
    pub day: Window,
}

/// One window as an answer's headers show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub limit: u32,
    pub remaining: u32,
    /// When the window ends (Unix seconds).
    pub reset: i64,
}

/// One request and what came of it.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Which start of the server it went to (1 for the first).
    pub epoch: u32,
    /// The user charged for it, when the load knows (`None` for probes
    /// that learn who the token belongs to).
    pub user_id: Option<String>,
    pub endpoint: Endpoint,
    /// `None`: no answer (the server was killed, or the connection broke).
    pub status: Option<u16>,
    pub latency: Duration,
    /// Marked `Idempotent-Replayed`.
    pub replayed: bool,
    pub windows: Option<Windows>,
}

/// A `/v1/query` answered 200: its chunks must be in the archive.
#[derive(Clone, Debug)]
pub struct Answer {
    pub account: usize,
    pub query_id: String,
    /// (connector, content) of every chunk, sorted.
    pub chunks: Vec<(String, String)>,
    /// When the request was sent and its answer read (Unix ms, this
    /// machine's clock, which the server shares): its entries were
    /// archived in between.
    pub sent_ms: i64,
    pub received_ms: i64,
}

/// The first 200 answer to an `Idempotency-Key`: every replay of the same
/// key and body must return these bytes.
#[derive(Clone, Debug)]
pub struct Keyed {
    pub account: usize,
    pub key: String,
    pub body: Value,
    pub raw: Vec<u8>,
}

/// A webhook registration a user asked for.
#[derive(Clone, Debug)]
pub struct Registration {
    pub account: usize,
    /// The receiver's path it names (`/hook/...`).
    pub path: String,
    /// Answered 201: it exists, and its secret is known.
    pub acknowledged: bool,
}

/// A broken invariant, found on the way or at the end.
#[derive(Clone, Debug)]
pub struct Problem {
    pub invariant: Invariant,
    pub detail: String,
}

#[derive(Default)]
pub struct Ledger {
    /// Starts of the server so far.
    pub epoch: u32,
    pub accounts: Vec<Account>,
    pub slots: Vec<Slot>,
    pub outcomes: Vec<Outcome>,
    pub answers: Vec<Answer>,
    pub keyed: Vec<Keyed>,
    pub registrations: Vec<Registration>,
    /// The secrets the webhook receiver verifies with (the operator's first).
    pub secrets: Vec<String>,
    pub problems: Vec<Problem>,
    /// How many times each invariant was put to the test on the way.
    pub checked: std::collections::BTreeMap<Invariant, usize>,
}

impl Ledger {
    pub fn problem(&mut self, invariant: Invariant, detail: String) {
        self.problems.push(Problem { invariant, detail });
    }

    pub fn count_check(&mut self, invariant: Invariant) {
        *self.checked.entry(invariant).or_default() += 1;
    }

    pub fn slot_of(&self, email: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.email == email)
    }

    /// The accounts whose slot still plays them.
    pub fn current_accounts(&self) -> BTreeSet<usize> {
        self.slots.iter().map(|s| s.current).collect()
    }

    /// The account's index and first token, when its slot plays a live one.
    pub fn live_account(&self, slot: usize) -> Option<(usize, String, String)> {
        let index = self.slots.get(slot)?.current;
        let account = &self.accounts[index];
        (account.state == State::Live).then(|| {
            (
                index,
                account.user_id.clone(),
                account.tokens.first().cloned().unwrap_or_default(),
            )
        })
    }
}

/// The (connector, content) pairs of a `/v1/query` answer, sorted.
pub fn chunks_of(answer: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for result in answer["results"].as_array().into_iter().flatten() {
        let connector = result["connector"].as_str().unwrap_or_default();
        for chunk in result["chunks"].as_array().into_iter().flatten() {
            let content = chunk["content"].as_str().unwrap_or_default();
            out.push((connector.to_string(), content.to_string()));
        }
    }
    out.sort();
    out
}
