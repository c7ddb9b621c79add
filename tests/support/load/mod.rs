//! A mixed load on the real server, shared by the soak (`quarry-bench
//! soak`) and the crash test (`tests/api/crash.rs`), and the invariants it
//! checks ([`report::Invariant`]).
//!
//! Every user of the demo has workers ([`workers`]) that ask `/v1/query`
//! (with and without an `Idempotency-Key`, and retry keyed requests with
//! the same key and body), search their archive, read `/v1/me`,
//! `/v1/connectors` and `/v1/webhooks`, and register webhooks at a
//! receiver that verifies every delivery with the official Standard
//! Webhooks library. The driver deletes some users ([`Load::delete_someone`]).
//! Every answer is recorded and held to the contract as it arrives
//! ([`send`]).
//!
//! The driver may kill the server at any moment ([`Load::detach`], then
//! [`Load::attach`] to the server started on the same data): requests in
//! flight may fail, but what was acknowledged must hold. [`Load::verify`]
//! (server running) and [`Load::verify_store`] (server stopped) check the
//! invariants at the end.

mod checks;
pub mod ledger;
pub mod report;
pub mod rng;
mod send;
mod workers;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use crate::server::{Demo, DemoUser};
use crate::webhook_receiver::{Receiver, ReceiverOptions};
use ledger::{Account, Endpoint, Ledger, Slot, State};
use report::{Invariant, Report};
use rng::Rng;
use send::{Request, Target};

/// The operator's `user.deleted` endpoint's secret (a fixed test secret).
const OPERATOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// Where the operator's deliveries arrive on the receiver.
pub const OPERATOR_PATH: &str = "/hook/operator";
/// Limits the load never meets (the checks' own requests count too).
const GENEROUS_MINUTE: u32 = 100_000;
const GENEROUS_DAY: u32 = 1_000_000;

#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub seed: u64,
    /// Workers playing each user at once.
    pub workers_per_user: usize,
    /// `/v1/query` per user per minute: low enough that the load meets it.
    pub query_limit_minute: u32,
    /// A worker's pause between requests, drawn from this range (ms).
    pub think_ms: (u64, u64),
    /// The longest a worker honours a `Retry-After`.
    pub max_backoff: Duration,
}

impl LoadConfig {
    /// The `(minute, day)` limits of a bucket, as [`Load::server_env`] sets them.
    pub fn limits(&self, bucket: &str) -> (u32, u32) {
        match bucket {
            "query" => (self.query_limit_minute, GENEROUS_DAY),
            "delete_my_data" => (100, 1000),
            _ => (GENEROUS_MINUTE, GENEROUS_DAY),
        }
    }
}

/// What the workers, the driver and the checks share.
pub(crate) struct Shared {
    config: LoadConfig,
    target: RwLock<Option<(Target, u32)>>,
    ledger: Mutex<Ledger>,
    receiver: Receiver,
    stop: AtomicBool,
    counter: AtomicU64,
}

impl Shared {
    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current server and which start of it this is.
    fn target(&self) -> Option<(Target, u32)> {
        self.target
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_target(&self, target: Option<Target>) {
        let mut current = self.target.write().unwrap_or_else(|e| e.into_inner());
        *current = target.map(|t| {
            let mut ledger = self.ledger();
            ledger.epoch += 1;
            (t, ledger.epoch)
        });
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// The load: cheap to clone (a driver can delete from another task).
#[derive(Clone)]
pub struct Load {
    shared: Arc<Shared>,
    workers: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Load {
    /// A load with its webhook receiver started; no worker runs yet.
    pub fn new(config: LoadConfig) -> Load {
        let receiver = Receiver::start(ReceiverOptions {
            // It lives as long as the load, however long a soak lasts.
            max_seconds: Some(24.0 * 3600.0),
            ..ReceiverOptions::default()
        });
        receiver.set_secrets(&[OPERATOR_SECRET]);
        let ledger = Ledger {
            secrets: vec![OPERATOR_SECRET.to_string()],
            ..Ledger::default()
        };
        let shared = Shared {
            config,
            target: RwLock::new(None),
            ledger: Mutex::new(ledger),
            receiver,
            stop: AtomicBool::new(false),
            counter: AtomicU64::new(0),
        };
        Load {
            shared: Arc::new(shared),
            workers: Arc::default(),
        }
    }

    pub fn config(&self) -> &LoadConfig {
        &self.shared.config
    }

    /// The `QUARRY_*` settings the server must run with: the limits the
    /// checks expect, and the operator's `user.deleted` endpoint.
    pub fn server_env(&self) -> Vec<(String, String)> {
        let config = &self.shared.config;
        let mut env = Vec::new();
        for (bucket, name) in [
            ("query", "QUERY"),
            ("deep_search", "DEEP_SEARCH"),
            ("delete_my_data", "DELETE_MY_DATA"),
            ("other", "DEFAULT"),
            // Deleted users' refused tokens count per address: all of the
            // load comes from one.
            ("other", "ANONYMOUS"),
        ] {
            let (minute, day) = config.limits(bucket);
            env.push((format!("QUARRY_LIMITS__{name}__MINUTE"), minute.to_string()));
            env.push((format!("QUARRY_LIMITS__{name}__DAY"), day.to_string()));
        }
        let port = self.shared.receiver.port;
        env.push((
            "QUARRY_WEBHOOKS__ENDPOINTS".into(),
            format!(
                r#"[{{ url = "http://127.0.0.1:{port}{OPERATOR_PATH}", secret = "{OPERATOR_SECRET}" }}]"#
            ),
        ));
        env
    }

    /// Points the load at `demo` (a first start, or a restart on the same
    /// data) and learns its users: a user the load knew under another id
    /// was deleted, and the demo made the email anew.
    pub async fn attach(&self, demo: &Demo) {
        self.shared.set_target(Some(Target::of(demo)));
        for user in &demo.users {
            self.adopt(user).await;
        }
        self.settle_unknown_deletions().await;
    }

    /// The server is gone (killed): workers idle until the next attach.
    pub fn detach(&self) {
        self.shared.set_target(None);
    }

    /// Starts `workers_per_user` workers for every user known so far.
    pub fn start_workers(&self) {
        let slots = self.shared.ledger().slots.len();
        let per_user = self.shared.config.workers_per_user;
        let rng = Rng::new(self.shared.config.seed);
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        for slot in 0..slots {
            for n in 0..per_user {
                let shared = self.shared.clone();
                let rng = rng.fork((slot * per_user + n) as u64 + 1);
                workers.push(tokio::spawn(workers::run(shared, slot, rng)));
            }
        }
    }

    /// Stops the workers after their current request.
    pub async fn stop_workers(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let workers: Vec<_> = std::mem::take(&mut *self.workers.lock().unwrap());
        for worker in workers {
            let _ = worker.await;
        }
    }

    /// Deletes a live user that may be deleted (one of the demo's extra
    /// users), chosen with `rng`, after registering a webhook for them so
    /// that their own endpoint gets `user.deleted` too. Returns the email,
    /// or `None` when no such user is live.
    pub async fn delete_someone(&self, rng: &mut Rng) -> Option<String> {
        let player = self.pick_deletable(rng)?;
        workers::register_webhook(&self.shared, &player).await;
        self.set_state(player.account, State::Deleting);
        let request = Request::new(Endpoint::DeleteMyData, &player.token, Some(player.account));
        let reply = self.shared.send(request).await;
        let state = match reply.as_ref().map(|r| r.status.as_u16()) {
            Some(200) => State::Deleted,
            None => State::Unknown,
            Some(429) => State::Live,
            Some(_) => {
                let detail = format!("DELETE /delete_my_data answered {}", reply.unwrap());
                self.shared.ledger().problem(Invariant::Deletions, detail);
                State::Unknown
            }
        };
        self.set_state(player.account, state);
        let email = self.shared.ledger().accounts[player.account].email.clone();
        Some(email)
    }

    fn pick_deletable(&self, rng: &mut Rng) -> Option<workers::Player> {
        let ledger = self.shared.ledger();
        let candidates: Vec<workers::Player> = (0..ledger.slots.len())
            .filter_map(|slot| {
                let (account, _, token) = ledger.live_account(slot)?;
                ledger.accounts[account]
                    .deletable
                    .then_some(workers::Player {
                        slot,
                        account,
                        token,
                    })
            })
            .collect();
        (!candidates.is_empty()).then(|| rng.pick(&candidates).clone())
    }

    fn set_state(&self, account: usize, state: State) {
        self.shared.ledger().accounts[account].state = state;
    }

    /// Who `user`'s token belongs to, and what that says of the account
    /// the load knew under that email.
    async fn adopt(&self, user: &DemoUser) {
        let Some(user_id) = self.whose(&user.token).await else {
            let detail = format!("GET /me for {} after a start got no user", user.email);
            self.shared.ledger().problem(Invariant::WellFormed, detail);
            return;
        };
        let mut ledger = self.shared.ledger();
        let Some(slot) = ledger.slot_of(&user.email) else {
            let current = new_account(&mut ledger, user, user_id);
            ledger.slots.push(Slot {
                email: user.email.clone(),
                current,
            });
            return;
        };
        let known = ledger.slots[slot].current;
        if ledger.accounts[known].user_id == user_id {
            let tokens = &mut ledger.accounts[known].tokens;
            if !tokens.contains(&user.token) {
                tokens.push(user.token.clone());
            }
            return;
        }
        // The demo creates a user only when none has the email: the one
        // the load knew is gone.
        match ledger.accounts[known].state {
            State::Live => {
                let detail = format!("{} vanished without being deleted", user.email);
                ledger.problem(Invariant::Deletions, detail);
            }
            _ => ledger.accounts[known].state = State::Deleted,
        }
        let current = new_account(&mut ledger, user, user_id);
        ledger.slots[slot].current = current;
    }

    /// The user id a token belongs to (`GET /me`), retried while the
    /// server has just come up; `None` if it never says.
    async fn whose(&self, token: &str) -> Option<String> {
        for _ in 0..20 {
            let request = Request::new(Endpoint::Me, token, None);
            match self.shared.send(request).await {
                Some(reply) if reply.status == 200 => {
                    return reply.body["user_id"].as_str().map(str::to_string);
                }
                Some(reply) if reply.status != 429 => return None,
                _ => tokio::time::sleep(Duration::from_millis(250)).await,
            }
        }
        None
    }

    /// Deletions that got no answer: a token that still works says the
    /// deletion never began; a refused one, that it finished.
    async fn settle_unknown_deletions(&self) {
        let unknown: Vec<(usize, String)> = {
            let ledger = self.shared.ledger();
            let current = ledger.current_accounts();
            current
                .into_iter()
                .filter(|&i| ledger.accounts[i].state == State::Unknown)
                .map(|i| (i, ledger.accounts[i].tokens[0].clone()))
                .collect()
        };
        for (account, token) in unknown {
            let request = Request::new(Endpoint::Me, &token, None);
            match self.shared.send(request).await.map(|r| r.status.as_u16()) {
                Some(200) => self.set_state(account, State::Live),
                Some(401) => self.set_state(account, State::Deleted),
                _ => {}
            }
        }
    }

    /// Requests by status (`"none"`: no answer), and the latencies of
    /// each endpoint's answers.
    pub fn summary(&self) -> Summary {
        let ledger = self.shared.ledger();
        let mut summary = Summary::default();
        for outcome in &ledger.outcomes {
            let status = outcome
                .status
                .map_or_else(|| "no answer".to_string(), |s| s.to_string());
            *summary.by_status.entry(status).or_default() += 1;
            if outcome.status.is_some() {
                summary
                    .latencies
                    .entry(outcome.endpoint.label())
                    .or_default()
                    .push(outcome.latency);
            }
        }
        summary.users_deleted = ledger
            .accounts
            .iter()
            .filter(|a| a.state == State::Deleted)
            .count();
        summary.queries_answered = ledger.answers.len();
        summary
    }

    /// Checks every invariant that needs the server (it must be running
    /// and the workers stopped).
    pub async fn verify(&self) -> Report {
        self.settle_unknown_deletions().await;
        let mut report = Report::default();
        self.check_webhooks(&mut report).await;
        self.check_deleted_tokens(&mut report).await;
        self.check_archive(&mut report).await;
        // Last: the checks' own requests are charged too.
        self.check_limits(&mut report);
        self.take_problems(&mut report);
        report
    }

    /// Checks, on the store of a stopped server, that nothing of a
    /// deleted user is left.
    pub fn verify_store(&self, data_dir: &std::path::Path, report: &mut Report) {
        self.check_store(data_dir, report);
    }
}

/// What the load did, for a report.
#[derive(Debug, Default)]
pub struct Summary {
    pub by_status: std::collections::BTreeMap<String, usize>,
    pub latencies: std::collections::BTreeMap<&'static str, Vec<Duration>>,
    pub users_deleted: usize,
    pub queries_answered: usize,
}

fn new_account(ledger: &mut Ledger, user: &DemoUser, user_id: String) -> usize {
    // The demo's first two users (alice and bob) carry the load throughout.
    let deletable = !["alice@", "bob@"].iter().any(|p| user.email.starts_with(p));
    ledger.accounts.push(Account {
        email: user.email.clone(),
        user_id,
        tokens: vec![user.token.clone()],
        state: State::Live,
        deletable,
        registrations: 0,
    });
    ledger.accounts.len() - 1
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
