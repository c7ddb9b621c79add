//! The one way the load sends a request: to whichever server is current,
//! recorded with its status, rate-limit headers and latency, and held to
//! the contract as it arrives.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::Shared;
use super::ledger::{Endpoint, Outcome, State, Window, Windows};
use super::report::Invariant;
use crate::contract;
use crate::server::{Demo, Reply};

/// The server the load talks to now.
#[derive(Clone)]
pub struct Target {
    pub base_url: String,
    pub client: reqwest::Client,
}

impl Target {
    pub fn of(demo: &Demo) -> Target {
        Target {
            base_url: demo.base_url.clone(),
            client: demo.client.clone(),
        }
    }
}

/// One request of the load.
pub struct Request<'a> {
    pub endpoint: Endpoint,
    /// The path under `/v1` (`/query`, `/webhooks/wh_...`).
    pub path: String,
    pub token: &'a str,
    /// The account it is sent as, when the load knows it.
    pub account: Option<usize>,
    pub body: Option<&'a Value>,
    pub idempotency_key: Option<&'a str>,
}

impl<'a> Request<'a> {
    pub fn new(endpoint: Endpoint, token: &'a str, account: Option<usize>) -> Request<'a> {
        Request {
            endpoint,
            path: endpoint.path().to_string(),
            token,
            account,
            body: None,
            idempotency_key: None,
        }
    }

    pub fn body(mut self, body: &'a Value) -> Request<'a> {
        self.body = Some(body);
        self
    }

    pub fn key(mut self, key: &'a str) -> Request<'a> {
        self.idempotency_key = Some(key);
        self
    }
}

impl Shared {
    /// Sends `request` to the current server and records what came of it.
    /// `None` when there is no server right now or no answer came.
    pub(crate) async fn send(&self, request: Request<'_>) -> Option<Reply> {
        let (target, epoch) = self.target()?;
        let started = Instant::now();
        let result = execute(&target, &request).await;
        let latency = started.elapsed();
        let reply = result.ok();
        if let Some(reply) = &reply {
            self.judge(&request, reply);
        }
        self.record(epoch, &request, reply.as_ref(), latency);
        reply
    }

    /// Holds an answer to the contract, and to what the load knows.
    fn judge(&self, request: &Request<'_>, reply: &Reply) {
        let method = request.endpoint.method();
        let what = format!("{} {}", method, request.path);
        let mut ledger = self.ledger();
        ledger.count_check(Invariant::WellFormed);
        if let Err(problem) = contract::check_reply(method.as_str(), &request.path, reply) {
            ledger.problem(Invariant::WellFormed, format!("{what}: {problem}"));
        }
        if reply.status.is_server_error() {
            ledger.problem(Invariant::WellFormed, format!("{what} answered {reply}"));
        }
        if let Some(account) = request.account {
            let state = ledger.accounts[account].state;
            ledger.count_check(Invariant::LiveTokens);
            if reply.status == 401 && state == State::Live {
                let email = ledger.accounts[account].email.clone();
                ledger.problem(
                    Invariant::LiveTokens,
                    format!("{what}: {email}, not being deleted, was refused: {reply}"),
                );
            }
        }
    }

    fn record(&self, epoch: u32, request: &Request<'_>, reply: Option<&Reply>, latency: Duration) {
        let mut ledger = self.ledger();
        let user_id = request
            .account
            .map(|index| ledger.accounts[index].user_id.clone());
        ledger.outcomes.push(Outcome {
            epoch,
            user_id,
            endpoint: request.endpoint,
            status: reply.map(|r| r.status.as_u16()),
            latency,
            replayed: reply.is_some_and(|r| r.header("idempotent-replayed") == Some("true")),
            windows: reply.and_then(windows_of),
        });
    }
}

async fn execute(target: &Target, request: &Request<'_>) -> Result<Reply, reqwest::Error> {
    let url = format!("{}{}", target.base_url, request.path);
    let mut builder = target
        .client
        .request(request.endpoint.method(), url)
        .bearer_auth(request.token);
    if let Some(key) = request.idempotency_key {
        builder = builder.header("idempotency-key", key);
    }
    if let Some(body) = request.body {
        builder = builder.json(body);
    }
    // A body labelled JSON that is not stays `Null`: the contract check
    // reports it.
    let (reply, _) = Reply::read(builder.send().await?).await?;
    Ok(reply)
}

/// The six rate-limit headers, when all are there and are numbers.
fn windows_of(reply: &Reply) -> Option<Windows> {
    let number = |name: String| -> Option<i64> {
        reply
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    };
    let window = |span: &str| -> Option<Window> {
        // Wrapped, not refused: a count out of range fails the checks.
        Some(Window {
            limit: number(format!("x-ratelimit-limit-{span}"))? as u32,
            remaining: number(format!("x-ratelimit-remaining-{span}"))? as u32,
            reset: number(format!("x-ratelimit-reset-{span}"))?,
        })
    };
    Some(Windows {
        minute: window("minute")?,
        day: window("day")?,
    })
}

/// How long to wait after an answer: the `Retry-After` of a 429 or 409
/// (capped), a moment when no answer came (the server is away).
pub fn backoff(reply: Option<&Reply>, cap: Duration) -> Duration {
    match reply {
        None => Duration::from_millis(200),
        Some(reply) if matches!(reply.status.as_u16(), 409 | 429) => {
            let seconds = reply
                .header("retry-after")
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(1);
            Duration::from_secs(seconds).min(cap)
        }
        Some(_) => Duration::ZERO,
    }
}
