//! What one worker does, over and over, as one user: a mix of questions
//! (some with an `Idempotency-Key`, some retried with the same key and
//! body), archive searches, reads and webhook registrations.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::ledger::{Answer, Endpoint, Keyed, Registration, State, chunks_of};
use super::report::Invariant;
use super::rng::Rng;
use super::send::{Request, backoff};
use super::{Shared, now_ms};
use crate::server::{CONNECTORS, Reply};

/// Questions the fake company's data answers in several tools.
pub const QUESTIONS: [&str; 10] = [
    "checkout timeouts with large carts",
    "search index rebuild is slow",
    "password reset emails going to spam",
    "load balancer certificate rotation incident",
    "invoice retry double charges",
    "gift cards combined with discount codes",
    "android app crashes in order history",
    "apple pay rollout",
    "refunds in the wrong currency",
    "inventory drift between warehouse and shop",
];

/// Webhook registrations one user attempts at most.
const REGISTRATIONS_PER_USER: usize = 3;

/// The user a worker plays for one step.
#[derive(Clone)]
pub struct Player {
    pub slot: usize,
    pub account: usize,
    pub token: String,
}

/// Plays the slot's current account until the load stops; idles while the
/// account is deleted (a restart of the demo brings a new one) or while
/// there is no server.
pub async fn run(shared: Arc<Shared>, slot: usize, mut rng: Rng) {
    while !shared.stopping() {
        let player = shared
            .ledger()
            .live_account(slot)
            .map(|(account, _, token)| Player {
                slot,
                account,
                token,
            });
        let pause = match player {
            Some(player) if shared.target().is_some() => step(&shared, &player, &mut rng).await,
            _ => Duration::from_millis(200),
        };
        let (low, high) = shared.config.think_ms;
        tokio::time::sleep(pause + rng.millis(low, high)).await;
    }
}

/// One request (or a request and its retry); how long to back off after.
async fn step(shared: &Shared, player: &Player, rng: &mut Rng) -> Duration {
    let reply = match rng.below(100) {
        0..=44 => ask(shared, player, rng).await,
        45..=64 => ask_with_key(shared, player, rng).await,
        65..=79 => search_archive(shared, player, rng).await,
        80..=86 => read(shared, player, Endpoint::Me).await,
        87..=91 => read(shared, player, Endpoint::Connectors).await,
        92..=95 => read(shared, player, Endpoint::ListWebhooks).await,
        _ => register_webhook(shared, player).await,
    };
    backoff(reply.as_ref(), shared.config.max_backoff)
}

/// A `/v1/query` body: a question, two to four connectors, few results
/// (so that one query's chunks fit in one page of `/v1/deep_search`).
pub fn question(rng: &mut Rng) -> Value {
    let count = 2 + rng.below(3);
    let connectors = rng.sample(&CONNECTORS, count);
    json!({
        "query": rng.pick(&QUESTIONS),
        "connectors": connectors,
        "max_results": 1 + rng.below(3),
    })
}

async fn ask(shared: &Shared, player: &Player, rng: &mut Rng) -> Option<Reply> {
    let body = question(rng);
    let request = Request::new(Endpoint::Query, &player.token, Some(player.account)).body(&body);
    let sent_ms = now_ms();
    let reply = shared.send(request).await;
    if let Some(reply) = reply.as_ref().filter(|r| r.status == 200) {
        shared.note_answer(player.account, reply, sent_ms);
    }
    reply
}

/// A question with a new key; half the time sent again at once with the
/// same key and body, as a client that lost the first answer would.
async fn ask_with_key(shared: &Shared, player: &Player, rng: &mut Rng) -> Option<Reply> {
    let key = shared.new_key("q");
    let body = question(rng);
    let send = || {
        let request = Request::new(Endpoint::Query, &player.token, Some(player.account))
            .body(&body)
            .key(&key);
        shared.send(request)
    };
    // Both attempts are noted with the first one's start: when the first
    // answer is lost, the replay's entries are the first attempt's.
    let sent_ms = now_ms();
    let first = send().await;
    shared.note_keyed(player.account, &key, &body, first.as_ref(), sent_ms);
    if !rng.chance(0.5) {
        return first;
    }
    let again = send().await;
    shared.check_retry(player.account, first.as_ref(), again.as_ref());
    shared.note_keyed(player.account, &key, &body, again.as_ref(), sent_ms);
    again
}

async fn search_archive(shared: &Shared, player: &Player, rng: &mut Rng) -> Option<Reply> {
    let body = json!({ "query": rng.pick(&QUESTIONS), "max_results": 5 + rng.below(16) });
    let request =
        Request::new(Endpoint::DeepSearch, &player.token, Some(player.account)).body(&body);
    shared.send(request).await
}

async fn read(shared: &Shared, player: &Player, endpoint: Endpoint) -> Option<Reply> {
    let request = Request::new(endpoint, &player.token, Some(player.account));
    shared.send(request).await
}

/// Registers a webhook for `user.deleted` at a path of the receiver of
/// its own (a few per user; after that, lists them).
pub async fn register_webhook(shared: &Shared, player: &Player) -> Option<Reply> {
    let Some(path) = shared.new_registration(player) else {
        return read(shared, player, Endpoint::ListWebhooks).await;
    };
    let url = format!("http://127.0.0.1:{}{path}", shared.receiver.port);
    let body = json!({ "url": url, "events": ["user.deleted"] });
    let request = Request::new(
        Endpoint::RegisterWebhook,
        &player.token,
        Some(player.account),
    )
    .body(&body);
    let reply = shared.send(request).await;
    if let Some(reply) = reply.as_ref().filter(|r| r.status == 201) {
        shared.acknowledge_registration(&path, reply);
    }
    reply
}

impl Shared {
    /// A new idempotency key or path name, unique in this run.
    pub(crate) fn new_key(&self, prefix: &str) -> String {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{prefix}-{}-{n}", self.config.seed)
    }

    /// A 200 answer to `/v1/query`, sent at `sent_ms`: its chunks must be
    /// found in the archive. A replay of an answer already noted is not
    /// noted again: its entries were archived when the query first ran.
    pub(crate) fn note_answer(&self, account: usize, reply: &Reply, sent_ms: i64) {
        let query_id = reply.body["query_id"].as_str().unwrap_or_default();
        let answer = Answer {
            account,
            query_id: query_id.to_string(),
            chunks: chunks_of(&reply.body),
            sent_ms,
            received_ms: now_ms(),
        };
        let mut ledger = self.ledger();
        if !ledger.answers.iter().any(|a| a.query_id == answer.query_id) {
            ledger.answers.push(answer);
        }
    }

    /// The answer to a keyed request: a 200 is archived, and (the first
    /// time) becomes what every replay of the key must return.
    fn note_keyed(
        &self,
        account: usize,
        key: &str,
        body: &Value,
        reply: Option<&Reply>,
        sent_ms: i64,
    ) {
        let Some(reply) = reply.filter(|r| r.status == 200) else {
            return;
        };
        self.note_answer(account, reply, sent_ms);
        let mut ledger = self.ledger();
        if ledger.keyed.iter().any(|k| k.key == key) {
            return;
        }
        ledger.keyed.push(Keyed {
            account,
            key: key.to_string(),
            body: body.clone(),
            raw: reply.raw.clone(),
        });
    }

    /// A retry with the same key and body after a 200 is that 200 again,
    /// marked as a replay (or no answer at all: the server died).
    fn check_retry(&self, account: usize, first: Option<&Reply>, again: Option<&Reply>) {
        let (Some(first), Some(again)) = (first, again) else {
            return;
        };
        if first.status != 200 {
            return;
        }
        let mut ledger = self.ledger();
        ledger.count_check(Invariant::Replays);
        if again.status == 401 && ledger.accounts[account].state != State::Live {
            return;
        }
        let replayed = again.header("idempotent-replayed") == Some("true");
        if again.status != 200 || !replayed || again.raw != first.raw {
            ledger.problem(
                Invariant::Replays,
                format!(
                    "a retry with the same key got {} (replayed: {replayed}, same bytes: {}) after {first}",
                    again.status,
                    again.raw == first.raw
                ),
            );
        }
    }

    /// The receiver path of the player's next registration, noted before
    /// it is sent (the server may die with it in flight); `None` when the
    /// user has made enough.
    fn new_registration(&self, player: &Player) -> Option<String> {
        let mut ledger = self.ledger();
        let account = &mut ledger.accounts[player.account];
        if account.registrations >= REGISTRATIONS_PER_USER {
            return None;
        }
        account.registrations += 1;
        let path = format!("/hook/{}", self.new_key(&format!("u{}", player.slot)));
        ledger.registrations.push(Registration {
            account: player.account,
            path: path.clone(),
            acknowledged: false,
        });
        Some(path)
    }

    /// A 201: the registration exists; the receiver learns its secret.
    fn acknowledge_registration(&self, path: &str, reply: &Reply) {
        let mut ledger = self.ledger();
        if let Some(registration) = ledger.registrations.iter_mut().find(|r| r.path == path) {
            registration.acknowledged = true;
        }
        if let Some(secret) = reply.body["secret"].as_str() {
            ledger.secrets.push(secret.to_string());
            let secrets: Vec<&str> = ledger.secrets.iter().map(String::as_str).collect();
            self.receiver.set_secrets(&secrets);
        }
    }
}
