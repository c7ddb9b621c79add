//! The checks at the end of a load (and after each restart of the
//! server): each adds what it tested and what it found to the report.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::ledger::{Answer, Endpoint, Ledger, Outcome, State};
use super::report::{Invariant, Report};
use super::rng::Rng;
use super::send::Request;
use super::{Load, OPERATOR_PATH};
use crate::server::Reply;
use crate::webhook_receiver::Delivery;

/// How long deliveries are waited for: a guard against a hang, not a
/// measurement (the worker retries with backoff).
const DELIVERY_PATIENCE: Duration = Duration::from_secs(180);
/// After the expected deliveries arrived, time for a duplicate to arrive
/// if one were on its way.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(3);
/// `/v1/deep_search`'s largest page: a page this full may hide more.
const PAGE: usize = 50;
/// Replays tried after each restart.
const REPLAYS_AFTER_RESTART: usize = 5;

/// A live user the checks act as.
struct Live {
    account: usize,
    user_id: String,
    email: String,
    token: String,
}

impl Load {
    fn live_users(&self) -> Vec<Live> {
        let ledger = self.shared.ledger();
        ledger
            .current_accounts()
            .into_iter()
            .filter(|&i| ledger.accounts[i].state == State::Live)
            .map(|i| Live {
                account: i,
                user_id: ledger.accounts[i].user_id.clone(),
                email: ledger.accounts[i].email.clone(),
                token: ledger.accounts[i].tokens[0].clone(),
            })
            .collect()
    }

    fn problem(&self, invariant: Invariant, detail: String) {
        self.shared.ledger().problem(invariant, detail);
    }

    fn count_check(&self, invariant: Invariant) {
        self.shared.ledger().count_check(invariant);
    }

    /// After a restart: earlier keyed answers replay byte for byte, and
    /// every user's reads answer (no record half written breaks them).
    pub async fn check_after_restart(&self, rng: &mut Rng) {
        for (account, key, body, raw) in self.replay_sample(rng) {
            let token = self.shared.ledger().accounts[account].tokens[0].clone();
            let request = Request::new(Endpoint::Query, &token, Some(account))
                .body(&body)
                .key(&key);
            let reply = self.shared.send(request).await;
            self.judge_replay(&key, &raw, reply.as_ref());
        }
        for user in self.live_users() {
            self.check_reads(&user).await;
        }
    }

    /// Up to a few keyed 200 answers of users still live.
    fn replay_sample(&self, rng: &mut Rng) -> Vec<(usize, String, Value, Vec<u8>)> {
        let ledger = self.shared.ledger();
        let current = ledger.current_accounts();
        let candidates: Vec<_> = ledger
            .keyed
            .iter()
            .filter(|k| current.contains(&k.account))
            .filter(|k| ledger.accounts[k.account].state == State::Live)
            .map(|k| (k.account, k.key.clone(), k.body.clone(), k.raw.clone()))
            .collect();
        rng.sample(&candidates, REPLAYS_AFTER_RESTART)
    }

    fn judge_replay(&self, key: &str, raw: &[u8], reply: Option<&Reply>) {
        self.count_check(Invariant::Replays);
        let Some(reply) = reply else {
            let detail = format!("the replay of key {key} after a restart got no answer");
            return self.problem(Invariant::Replays, detail);
        };
        let replayed = reply.header("idempotent-replayed") == Some("true");
        if reply.status != 200 || !replayed || reply.raw != raw {
            let detail = format!(
                "key {key} after a restart: {} (replayed: {replayed}, same bytes: {})",
                reply,
                reply.raw == raw
            );
            self.problem(Invariant::Replays, detail);
        }
    }

    /// The reads a user makes answer 200 (`/me` naming the user).
    async fn check_reads(&self, user: &Live) {
        let everything = json!({ "query": "checkout timeouts", "max_results": PAGE });
        for endpoint in [
            Endpoint::Me,
            Endpoint::Connectors,
            Endpoint::ListWebhooks,
            Endpoint::DeepSearch,
        ] {
            let mut request = Request::new(endpoint, &user.token, Some(user.account));
            if endpoint == Endpoint::DeepSearch {
                request = request.body(&everything);
            }
            let reply = self.shared.send(request).await;
            self.count_check(Invariant::WellFormed);
            let fine = match &reply {
                Some(r) if endpoint == Endpoint::Me => {
                    r.status == 200 && r.body["user_id"] == user.user_id.as_str()
                }
                Some(r) => r.status == 200,
                None => false,
            };
            if !fine {
                let got = reply.map_or_else(|| "no answer".to_string(), |r| r.to_string());
                let detail = format!(
                    "{} for {} after a restart: {got}",
                    endpoint.label(),
                    user.email
                );
                self.problem(Invariant::WellFormed, detail);
            }
        }
    }

    /// Every 200 `/v1/query` of a live user is in their archive, chunk for
    /// chunk.
    ///
    /// `/v1/deep_search` returns each distinct chunk once, as its newest
    /// entry in the date window, so the archive is read query by query:
    /// the window between sending a query and reading its answer holds its
    /// entries, and only those of the user's other queries running at the
    /// same moment (a cluster of overlapping windows is read at once, in
    /// halves while a page is full). A chunk of the query must be there
    /// under its own id, or under the id of another query of the cluster
    /// that returned the same chunk (the newer occurrence the search
    /// keeps).
    pub(super) async fn check_archive(&self, report: &mut Report) {
        for user in self.live_users() {
            for cluster in overlapping(self.answers_of(user.account)) {
                let from = cluster.iter().map(|a| a.sent_ms).min().unwrap_or(0) - 1;
                let to = cluster.iter().map(|a| a.received_ms).max().unwrap_or(0) + 1;
                let Some(page) = self.read_window(&user, from, to).await else {
                    let detail = format!("could not read the archive of {}", user.email);
                    report.problem(Invariant::Archived, detail);
                    continue;
                };
                let found = archived_chunks(&page);
                let known = self.answered_query_ids(user.account);
                for answer in &cluster {
                    report.count(Invariant::Archived);
                    let missing = answer
                        .chunks
                        .iter()
                        .filter(|chunk| !kept_for(answer, chunk, &cluster, &known, &found))
                        .count();
                    if missing > 0 {
                        let detail = format!(
                            "{}, answered 200 to {} with {} chunks: {missing} of them are not in the archive",
                            answer.query_id,
                            user.email,
                            answer.chunks.len(),
                        );
                        report.problem(Invariant::Archived, detail);
                    }
                }
            }
        }
    }

    /// The ids of every 200 answer the account was given (with chunks or
    /// not).
    fn answered_query_ids(&self, account: usize) -> BTreeSet<String> {
        self.shared
            .ledger()
            .answers
            .iter()
            .filter(|a| a.account == account)
            .map(|a| a.query_id.clone())
            .collect()
    }

    /// The account's answered queries that returned chunks, oldest first.
    fn answers_of(&self, account: usize) -> Vec<Answer> {
        let mut answers: Vec<Answer> = self
            .shared
            .ledger()
            .answers
            .iter()
            .filter(|a| a.account == account && !a.chunks.is_empty())
            .cloned()
            .collect();
        answers.sort_by_key(|a| a.sent_ms);
        answers
    }

    /// Deep search's results between two instants (ms, inclusive), in
    /// windows halved until each fits in a page: a smaller window hides
    /// fewer older occurrences of a chunk, never more. `None` when the
    /// archive cannot be read, or a single millisecond fills a page.
    async fn read_window(&self, user: &Live, from: i64, to: i64) -> Option<Vec<Value>> {
        let mut results = Vec::new();
        let mut windows = vec![(from, to)];
        while let Some((from, to)) = windows.pop() {
            let page = self.archive_page(user, from, to).await?;
            if page.len() < PAGE {
                results.extend(page);
                continue;
            }
            if to <= from {
                return None;
            }
            let middle = from + (to - from) / 2;
            windows.push((from, middle));
            windows.push((middle + 1, to));
        }
        Some(results)
    }

    /// The archive's entries between two instants (ms, inclusive).
    async fn archive_page(&self, user: &Live, from: i64, to: i64) -> Option<Vec<Value>> {
        let body = json!({
            "query": "checkout timeouts",
            "max_results": PAGE,
            "date_from": iso_ms(from),
            "date_to": iso_ms(to),
        });
        for _ in 0..10 {
            let request =
                Request::new(Endpoint::DeepSearch, &user.token, Some(user.account)).body(&body);
            match self.shared.send(request).await {
                Some(reply) if reply.status == 200 => {
                    return reply.body["archive_results"].as_array().cloned();
                }
                Some(reply) if reply.status != 429 => return None,
                _ => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
        None
    }

    /// A deleted user's every token is refused; no deletion is left
    /// without an outcome.
    pub(super) async fn check_deleted_tokens(&self, report: &mut Report) {
        let accounts: Vec<(usize, String, State, Vec<String>)> = {
            let ledger = self.shared.ledger();
            ledger
                .accounts
                .iter()
                .enumerate()
                .map(|(i, a)| (i, a.email.clone(), a.state, a.tokens.clone()))
                .collect()
        };
        for (account, email, state, tokens) in accounts {
            match state {
                State::Live => continue,
                State::Deleting | State::Unknown => {
                    let detail =
                        format!("the deletion of {email} has no outcome: neither done nor undone");
                    report.problem(Invariant::Deletions, detail);
                    continue;
                }
                State::Deleted => {}
            }
            for token in tokens {
                report.count(Invariant::Deletions);
                let request = Request::new(Endpoint::Me, &token, Some(account));
                let reply = self.shared.send(request).await;
                if reply.as_ref().map(|r| r.status.as_u16()) != Some(401) {
                    let got = reply.map_or_else(|| "no answer".to_string(), |r| r.to_string());
                    let detail = format!("a token of deleted {email}: GET /me answered {got}");
                    report.problem(Invariant::Deletions, detail);
                }
            }
        }
    }

    /// Nothing of a deleted user is left in the store of the stopped
    /// server: profile, data key, grants, tokens, archive, history.
    pub(super) fn check_store(&self, data_dir: &Path, report: &mut Report) {
        let deleted: Vec<(String, String, Vec<String>)> = {
            let ledger = self.shared.ledger();
            ledger
                .accounts
                .iter()
                .filter(|a| a.state == State::Deleted)
                .map(|a| (a.email.clone(), a.user_id.clone(), a.tokens.clone()))
                .collect()
        };
        let store = Arc::new(crate::shared::open_store(data_dir));
        let scheduler = quarry::rank::Scheduler::start(
            Arc::new(quarry::rank::embed::HashedWords::new(384)),
            None,
            1,
            16,
        );
        let archive = match quarry::archive::Archive::open(store.clone(), scheduler) {
            Ok(archive) => archive,
            Err(error) => {
                let detail = format!("the archive of the stopped server does not open: {error:#}");
                return report.problem(Invariant::Deletions, detail);
            }
        };
        for (email, user_id, tokens) in deleted {
            report.count(Invariant::Deletions);
            let mut left = Vec::new();
            if !matches!(store.user(&user_id), Ok(None)) {
                left.push("the profile");
            }
            if store.data_key(&user_id).is_ok() {
                left.push("the data key");
            }
            if !store.grants(&user_id).map_or(true, |g| g.is_empty()) {
                left.push("grants");
            }
            let known = |t: &String| {
                !matches!(
                    store.check_token(t, quarry_store::Audience::V1),
                    Ok(quarry_store::TokenCheck::Unknown)
                )
            };
            if tokens.iter().any(known) {
                left.push("an API token");
            }
            if archive.entry_count(&user_id).map_or(true, |n| n > 0) {
                left.push("archive entries");
            }
            if !archive.history(&user_id).map_or(true, |h| h.is_empty()) {
                left.push("query history");
            }
            if !left.is_empty() {
                let detail = format!("deleted {email} ({user_id}) left {}", left.join(", "));
                report.problem(Invariant::Deletions, detail);
            }
        }
    }

    /// No window let more requests through than its limit; the headers
    /// name the configured limits; a 429 comes only when a window is full.
    pub(super) fn check_limits(&self, report: &mut Report) {
        let ledger = self.shared.ledger();
        let tally = Tally::of(&ledger);
        let config = self.config();
        for outcome in ledger.outcomes.iter().filter(|o| o.user_id.is_some()) {
            let (Some(status), Some(windows)) = (outcome.status, outcome.windows) else {
                continue;
            };
            if status == 401 {
                continue;
            }
            report.count(Invariant::Limits);
            let bucket = outcome.endpoint.bucket();
            let expected = config.limits(bucket);
            if (windows.minute.limit, windows.day.limit) != expected {
                let detail = format!(
                    "{} shows limits {}/min {}/day, configured {}/min {}/day",
                    outcome.endpoint.label(),
                    windows.minute.limit,
                    windows.day.limit,
                    expected.0,
                    expected.1
                );
                report.problem(Invariant::Limits, detail);
            }
            if status == 429 {
                tally.check_refusal(outcome, report);
            }
        }
        tally.check_windows(config, report);
    }

    /// The problems found on the way, and what was checked on the way.
    pub(super) fn take_problems(&self, report: &mut Report) {
        let mut ledger = self.shared.ledger();
        report.problems.append(&mut ledger.problems);
        for (invariant, count) in std::mem::take(&mut ledger.checked) {
            *report.checked.entry(invariant).or_default() += count;
        }
    }
}

/// A user's bucket in one minute window of one start of the server.
type MinuteKey = (String, &'static str, u32, i64);
/// A user's bucket in one day window (days survive restarts).
type DayKey = (String, &'static str, i64);

/// The charged answers of each window, by what each had remaining.
#[derive(Default)]
struct Tally {
    minutes: HashMap<MinuteKey, Vec<u32>>,
    days: HashMap<DayKey, Vec<u32>>,
    /// Answers marked as replays (free, except one that raced the request
    /// it repeats), by user, bucket and minute window.
    replays: HashMap<(String, &'static str, i64), usize>,
    /// Requests that got no answer (maybe charged), by user and bucket.
    lost: HashMap<(String, &'static str), usize>,
}

impl Tally {
    fn of(ledger: &Ledger) -> Tally {
        let mut tally = Tally::default();
        for outcome in &ledger.outcomes {
            let Some(user) = outcome.user_id.clone() else {
                continue;
            };
            let bucket = outcome.endpoint.bucket();
            let Some(status) = outcome.status else {
                *tally.lost.entry((user, bucket)).or_default() += 1;
                continue;
            };
            // 401: charged to the address; 429: refused, not counted.
            let Some(w) = outcome.windows.filter(|_| status != 401 && status != 429) else {
                continue;
            };
            if outcome.replayed {
                *tally
                    .replays
                    .entry((user, bucket, w.minute.reset))
                    .or_default() += 1;
                continue;
            }
            let minute = (user.clone(), bucket, outcome.epoch, w.minute.reset);
            tally
                .minutes
                .entry(minute)
                .or_default()
                .push(w.minute.remaining);
            let day = (user, bucket, w.day.reset);
            tally.days.entry(day).or_default().push(w.day.remaining);
        }
        tally
    }

    /// Each charged request has its own count: no two answers of one
    /// window show the same remaining, and no more than the limit went
    /// through.
    fn check_windows(&self, config: &super::LoadConfig, report: &mut Report) {
        for ((user, bucket, epoch, reset), remaining) in &self.minutes {
            let limit = config.limits(bucket).0;
            let window = format!("{bucket} minute window ending {reset} (start {epoch})");
            check_counts(&window, user, remaining, limit, report);
        }
        for ((user, bucket, reset), remaining) in &self.days {
            let limit = config.limits(bucket).1;
            let window = format!("{bucket} day window ending {reset}");
            check_counts(&window, user, remaining, limit, report);
        }
    }

    /// A 429 of a minute window: the window had seen its limit (counting,
    /// generously, every answer of any start, replays and lost requests).
    fn check_refusal(&self, outcome: &Outcome, report: &mut Report) {
        let (Some(user), Some(w)) = (outcome.user_id.clone(), outcome.windows) else {
            return;
        };
        if w.minute.remaining != 0 && w.day.remaining != 0 {
            let detail = format!(
                "a 429 of {} with room left in both windows",
                outcome.endpoint.label()
            );
            return report.problem(Invariant::Limits, detail);
        }
        if w.day.remaining == 0 {
            return;
        }
        let bucket = outcome.endpoint.bucket();
        let charged: usize = self
            .minutes
            .iter()
            .filter(|((u, b, _, r), _)| *u == user && *b == bucket && *r == w.minute.reset)
            .map(|(_, remaining)| remaining.len())
            .sum();
        let replays = self.replays.get(&(user.clone(), bucket, w.minute.reset));
        let lost = self.lost.get(&(user.clone(), bucket)).copied().unwrap_or(0);
        let seen = charged + replays.copied().unwrap_or(0) + lost;
        if seen < w.minute.limit as usize {
            let detail = format!(
                "a 429 of {} in a minute window that had let {seen} of {} requests through",
                outcome.endpoint.label(),
                w.minute.limit
            );
            report.problem(Invariant::Limits, detail);
        }
    }
}

fn check_counts(window: &str, user: &str, remaining: &[u32], limit: u32, report: &mut Report) {
    report.count(Invariant::Limits);
    if remaining.len() > limit as usize {
        let detail = format!(
            "{user}'s {window} let {} requests through, limit {limit}",
            remaining.len()
        );
        report.problem(Invariant::Limits, detail);
    }
    let distinct: BTreeSet<u32> = remaining.iter().copied().collect();
    if distinct.len() != remaining.len() {
        let detail = format!(
            "{user}'s {window}: {} answers share {} counts (two requests counted as one)",
            remaining.len(),
            distinct.len()
        );
        report.problem(Invariant::Limits, detail);
    }
}

impl Load {
    /// Each deleted user's `user.deleted` reaches the operator and each of
    /// their acknowledged registrations under exactly one event id; no
    /// live user's does.
    pub(super) async fn check_webhooks(&self, report: &mut Report) {
        let expected = self.expected_deliveries();
        let deliveries = self.wait_for_deliveries(&expected).await;
        let mut ids: HashMap<(String, String), BTreeSet<String>> = HashMap::new();
        let mut redelivered = 0;
        for delivery in &deliveries {
            let Some(key) = self.judge_delivery(delivery, &expected, report) else {
                continue;
            };
            if !ids
                .entry(key)
                .or_default()
                .insert(delivery.webhook_id.clone())
            {
                redelivered += 1;
            }
        }
        for target in &expected {
            report.count(Invariant::WebhooksOnce);
            let key = (target.path.clone(), target.user_id.clone());
            let count = ids.get(&key).map_or(0, BTreeSet::len);
            let fine = count == 1 || (!target.required && count == 0);
            if !fine {
                let detail = format!(
                    "{} of deleted {}: {count} distinct user.deleted events",
                    target.path, target.email
                );
                report.problem(Invariant::WebhooksOnce, detail);
            }
        }
        report.notes.push(format!(
            "webhooks: {} deliveries, {redelivered} repeated an event id already delivered",
            deliveries.len()
        ));
    }

    /// Waits until every required delivery has arrived (or patience ran
    /// out: the check reports what is missing), then a moment more.
    async fn wait_for_deliveries(&self, expected: &[Expected]) -> Vec<Delivery> {
        let started = Instant::now();
        loop {
            let deliveries = self.shared.receiver.deliveries();
            let arrived = |target: &Expected| {
                deliveries.iter().any(|d| {
                    d.path == target.path && d.payload["data"]["user_id"] == target.user_id.as_str()
                })
            };
            let done = expected.iter().filter(|t| t.required).all(arrived);
            if done || started.elapsed() > DELIVERY_PATIENCE {
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        tokio::time::sleep(DUPLICATE_WINDOW).await;
        self.shared.receiver.deliveries()
    }

    /// Where each deleted user's `user.deleted` must go: the operator's
    /// endpoint and every registration of theirs (required when it was
    /// acknowledged; one whose answer was lost may or may not exist).
    fn expected_deliveries(&self) -> Vec<Expected> {
        let ledger = self.shared.ledger();
        let mut expected = Vec::new();
        for (index, account) in ledger.accounts.iter().enumerate() {
            if account.state != State::Deleted {
                continue;
            }
            let target = |path: &str, required| Expected {
                path: path.to_string(),
                user_id: account.user_id.clone(),
                email: account.email.clone(),
                required,
            };
            expected.push(target(OPERATOR_PATH, true));
            for registration in ledger.registrations.iter().filter(|r| r.account == index) {
                expected.push(target(&registration.path, registration.acknowledged));
            }
        }
        expected
    }

    /// A delivery's (path, user id), when it is a verified `user.deleted`
    /// someone expected; anything else is reported (an unverifiable
    /// delivery to a registration whose secret was never learnt aside).
    fn judge_delivery(
        &self,
        delivery: &Delivery,
        expected: &[Expected],
        report: &mut Report,
    ) -> Option<(String, String)> {
        let ledger = self.shared.ledger();
        let secret_known = delivery.path == OPERATOR_PATH
            || ledger
                .registrations
                .iter()
                .any(|r| r.path == delivery.path && r.acknowledged);
        if !delivery.verified {
            if secret_known {
                let detail = format!(
                    "an unverified delivery to {}: {:?}",
                    delivery.path, delivery.error
                );
                report.problem(Invariant::WebhooksOnce, detail);
            }
            return None;
        }
        if delivery.payload["type"] != "user.deleted" {
            return None;
        }
        let user_id = delivery.payload["data"]["user_id"]
            .as_str()
            .unwrap_or_default();
        let key = (delivery.path.clone(), user_id.to_string());
        if !expected
            .iter()
            .any(|t| (t.path.as_str(), t.user_id.as_str()) == (&key.0, &key.1))
        {
            let detail = format!(
                "user.deleted at {} for {user_id}, who was not deleted",
                delivery.path
            );
            report.problem(Invariant::WebhooksOnce, detail);
            return None;
        }
        Some(key)
    }
}

/// A place a `user.deleted` must (or may) arrive.
struct Expected {
    path: String,
    user_id: String,
    email: String,
    required: bool,
}

/// Answers (oldest first) grouped where their windows overlap.
fn overlapping(answers: Vec<Answer>) -> Vec<Vec<Answer>> {
    let mut clusters: Vec<Vec<Answer>> = Vec::new();
    let mut end = i64::MIN;
    for answer in answers {
        let overlaps = answer.sent_ms <= end;
        end = end.max(answer.received_ms);
        match clusters.last_mut() {
            Some(cluster) if overlaps => cluster.push(answer),
            _ => clusters.push(vec![answer]),
        }
    }
    clusters
}

/// (connector, content) → the query ids a deep search page shows it under.
fn archived_chunks(page: &[Value]) -> HashMap<(String, String), BTreeSet<String>> {
    let mut found: HashMap<(String, String), BTreeSet<String>> = HashMap::new();
    for result in page {
        let chunk = &result["matched_chunk"];
        let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
        found
            .entry((text(&chunk["source_connector"]), text(&chunk["content"])))
            .or_default()
            .insert(text(&result["original_query_id"]));
    }
    found
}

/// Whether `chunk` of `answer` is in the archive: under its own query id,
/// or under a newer occurrence the search keeps instead: another query of
/// the cluster that returned it too, or a query whose answer the load
/// never read (the server died before it was sent, or it failed after
/// archiving), which the ledger cannot tell apart.
fn kept_for(
    answer: &Answer,
    chunk: &(String, String),
    cluster: &[Answer],
    known: &BTreeSet<String>,
    found: &HashMap<(String, String), BTreeSet<String>>,
) -> bool {
    let Some(ids) = found.get(chunk) else {
        return false;
    };
    ids.iter().any(|id| {
        *id == answer.query_id
            || !known.contains(id)
            || cluster
                .iter()
                .any(|other| other.query_id == *id && other.chunks.contains(chunk))
    })
}

impl Report {
    fn problem(&mut self, invariant: Invariant, detail: String) {
        self.problems
            .push(super::ledger::Problem { invariant, detail });
    }

    fn count(&mut self, invariant: Invariant) {
        *self.checked.entry(invariant).or_default() += 1;
    }
}

/// RFC 3339 with milliseconds (`2026-11-15T09:30:00.125Z`).
fn iso_ms(ms: i64) -> String {
    let seconds = quarry::calendar::rfc3339(ms.div_euclid(1000));
    format!("{}.{:03}Z", &seconds[..19], ms.rem_euclid(1000))
}
