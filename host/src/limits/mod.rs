//! The one limiter every front door charges: rate limits and attempt
//! throttles.
//!
//! Rate limits: fixed windows aligned to the clock, per subject (a user, or
//! a client address for requests without a valid token, [`address`]) and
//! per bucket (an endpoint of the contract's table, or the default bucket).
//! Attempt throttles ([`attempts`]): how many sign-ins, device codes and
//! single sign-on callbacks may fail in a window, per key.
//!
//! Two places keep the windows:
//! - one process ([`LocalWindows`]): minute windows in memory (losing them
//!   in a restart gives at most a minute's grace); day windows also
//!   written to the store before the request goes on (group commit: one
//!   transaction serves every request waiting at that moment), so a crash
//!   never hands anyone a fresh day. Check-and-charge happens under one
//!   lock, so concurrent requests can never be admitted past the limit;
//! - replicas ([`SharedWindows`]): one Redis script per request checks and
//!   counts both windows at once, on Redis's clock, for every replica.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub mod address;
mod attempts;

use self::attempts::LocalAttempts;
pub use self::attempts::{Attempt, AttemptLimit, Throttle};
use crate::config::{RateLimits, Window};
use crate::coordination::{Redis, SharedAttempts, SharedWindows};
use quarry_store::{Store, now, random_hex};

/// Which allowance a request draws on. Every endpoint has its own: the
/// three of the contract's table with their limits, every other one (named
/// by its route) with the default limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bucket {
    Query,
    DeepSearch,
    DeleteMyData,
    Other(&'static str),
    /// Requests without a valid token, per client address.
    Anonymous,
    /// Requests to the authorization server's endpoints (`/oauth/*`), per
    /// client address, with the anonymous limits.
    OAuth,
    /// OAuth clients registering, or having their metadata document
    /// fetched, per client address.
    ClientRegistration,
    /// OAuth clients registering, everyone's together (one subject).
    AllClientRegistrations,
}

impl Bucket {
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Query => "query",
            Bucket::DeepSearch => "deep_search",
            Bucket::DeleteMyData => "delete_my_data",
            Bucket::Other(route) => route,
            Bucket::Anonymous => "anonymous",
            Bucket::OAuth => "oauth",
            Bucket::ClientRegistration => "client_registration",
            Bucket::AllClientRegistrations => "all_client_registrations",
        }
    }
}

/// The state of a subject's windows after a request, for the headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit_minute: u32,
    pub remaining_minute: u32,
    pub reset_minute: i64,
    pub limit_day: u32,
    pub remaining_day: u32,
    pub reset_day: i64,
    /// Seconds until the window that refused the request resets.
    pub retry_after: i64,
}

impl Decision {
    /// The windows after a request, from the counts of `window` at `now`.
    fn new(window: Window, allowed: bool, (minute, day): (u32, u32), now: i64) -> Decision {
        let reset_minute = now - now.rem_euclid(60) + 60;
        let reset_day = now - now.rem_euclid(86_400) + 86_400;
        let day_full = day >= window.day;
        Decision {
            allowed,
            limit_minute: window.minute,
            remaining_minute: window.minute.saturating_sub(minute),
            reset_minute,
            limit_day: window.day,
            remaining_day: window.day.saturating_sub(day),
            reset_day,
            retry_after: if day_full && !allowed {
                reset_day - now
            } else {
                reset_minute - now
            }
            .max(1),
        }
    }
}

/// When to retry while the windows cannot be read.
const UNAVAILABLE_RETRY_SECONDS: i64 = 2;

/// Where the windows are kept.
enum Windows {
    Local(Arc<LocalWindows>),
    Shared(SharedWindows),
}

/// Where the attempts are kept.
enum Attempts {
    Local(LocalAttempts),
    Shared(SharedAttempts),
}

pub struct Limiter {
    limits: RateLimits,
    windows: Windows,
    attempt_limit: AttemptLimit,
    attempts: Attempts,
}

impl Limiter {
    /// Windows and attempts in this process (one replica).
    pub fn new(limits: RateLimits, attempt_limit: AttemptLimit, store: Arc<Store>) -> Limiter {
        Limiter {
            limits,
            windows: Windows::Local(Arc::new(LocalWindows::new(store))),
            attempt_limit,
            attempts: Attempts::Local(LocalAttempts::new()),
        }
    }

    /// Windows and attempts in Redis, shared by every replica.
    pub fn shared(limits: RateLimits, attempt_limit: AttemptLimit, redis: Redis) -> Limiter {
        Limiter {
            limits,
            windows: Windows::Shared(SharedWindows::new(redis.clone())),
            attempt_limit,
            attempts: Attempts::Shared(SharedAttempts::new(redis)),
        }
    }

    fn window(&self, bucket: Bucket) -> Window {
        match bucket {
            Bucket::Query => self.limits.query,
            Bucket::DeepSearch => self.limits.deep_search,
            Bucket::DeleteMyData => self.limits.delete_my_data,
            Bucket::Other(_) => self.limits.default,
            Bucket::Anonymous | Bucket::OAuth => self.limits.anonymous,
            Bucket::ClientRegistration => self.limits.client_registration,
            Bucket::AllClientRegistrations => self.limits.all_client_registrations,
        }
    }

    /// Counts one request if both windows have room, and says what is left.
    /// Returns once the count is durable (see the module's comment).
    pub async fn charge(&self, subject: &str, bucket: Bucket) -> anyhow::Result<Decision> {
        self.decide(subject, bucket, true).await
    }

    /// The windows as they are, without counting (for replays, which are free).
    pub async fn peek(&self, subject: &str, bucket: Bucket) -> anyhow::Result<Decision> {
        self.decide(subject, bucket, false).await
    }

    async fn decide(
        &self,
        subject: &str,
        bucket: Bucket,
        charge: bool,
    ) -> anyhow::Result<Decision> {
        let window = self.window(bucket);
        match &self.windows {
            Windows::Local(local) => {
                let (decision, change) = local.decide(subject, bucket, window, now(), charge);
                local.persist(change).await?;
                Ok(decision)
            }
            Windows::Shared(shared) => {
                let limits = (window.minute, window.day);
                let counted = shared.count(subject, bucket.name(), limits, charge).await?;
                let counts = (counted.minute, counted.day);
                Ok(Decision::new(window, counted.allowed, counts, counted.now))
            }
        }
    }

    /// What the headers show when the windows cannot be read (Redis is
    /// away): the bucket's limits, nothing remaining until the next window.
    pub fn unknown(&self, bucket: Bucket) -> Decision {
        let window = self.window(bucket);
        let exhausted = Decision::new(window, false, (window.minute, window.day), now());
        Decision {
            retry_after: UNAVAILABLE_RETRY_SECONDS,
            ..exhausted
        }
    }

    /// Commits whatever is pending (at shutdown).
    pub fn flush(&self) {
        if let Windows::Local(local) = &self.windows {
            local.flush();
        }
    }

    /// Starts an attempt under every key (`addr:…`, `email:…`) unless one
    /// of them has used up its failures: `None` then. The attempt counts
    /// as a failure until [`Limiter::not_failed`] takes it back.
    pub async fn begin_attempt(
        &self,
        throttle: Throttle,
        keys: &[String],
    ) -> anyhow::Result<Option<Attempt>> {
        let id = random_hex(8);
        let allowed = self.attempt(throttle, keys, &id, true).await?;
        Ok(allowed.then(|| Attempt {
            throttle,
            keys: keys.to_vec(),
            id,
        }))
    }

    /// Whether any of `keys` has used up its failures (counts nothing).
    pub async fn throttled(&self, throttle: Throttle, keys: &[String]) -> anyhow::Result<bool> {
        Ok(!self.attempt(throttle, keys, "", false).await?)
    }

    /// Counts a failure under every key (for outcomes known only later).
    pub async fn record_failure(&self, throttle: Throttle, keys: &[String]) -> anyhow::Result<()> {
        self.attempt(throttle, keys, &random_hex(8), true).await?;
        Ok(())
    }

    /// Takes back an attempt that did not fail (it succeeded, or never
    /// checked anything), and forgets the failures under `forget` (a
    /// sign-in that succeeded clears its email's).
    pub async fn not_failed(&self, attempt: Attempt, forget: &[String]) -> anyhow::Result<()> {
        let throttle = attempt.throttle.name();
        match &self.attempts {
            Attempts::Local(local) => {
                local.take_back(&scoped(throttle, &attempt.keys), &attempt.id);
                local.forget(&scoped(throttle, forget));
                Ok(())
            }
            Attempts::Shared(shared) => {
                shared
                    .take_back(throttle, &attempt.keys, &attempt.id)
                    .await?;
                shared.forget(throttle, forget).await
            }
        }
    }

    async fn attempt(
        &self,
        throttle: Throttle,
        keys: &[String],
        id: &str,
        count: bool,
    ) -> anyhow::Result<bool> {
        let limit = self.attempt_limit;
        match &self.attempts {
            Attempts::Local(local) => {
                let keys = scoped(throttle.name(), keys);
                Ok(local.begin(&keys, limit, (id, now()), count))
            }
            Attempts::Shared(shared) => {
                let limits = (limit.failures, limit.window_seconds);
                shared.begin(throttle.name(), keys, limits, id, count).await
            }
        }
    }
}

/// Keys of one throttle apart from another's.
fn scoped(throttle: &str, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| format!("{throttle}:{key}")).collect()
}

#[derive(Default, Clone, Copy)]
struct Counts {
    minute_start: i64,
    minute: u32,
    day_start: i64,
    day: u32,
}

/// Day counters to write, by (subject, bucket, day), and the number of the
/// latest change.
type Pending = (BTreeMap<(String, Bucket, i64), u64>, u64);

/// The windows of one process.
pub struct LocalWindows {
    store: Arc<Store>,
    counts: Mutex<HashMap<(String, Bucket), Counts>>,
    /// Day counters changed since the last commit, and the number of the
    /// latest change.
    dirty: Mutex<Pending>,
    /// Every change up to this number is in the store.
    committed: AtomicU64,
    commit_lock: tokio::sync::Mutex<()>,
    /// The day whose first commit dropped the counters of the days before.
    swept_day: std::sync::atomic::AtomicI64,
}

/// Windows kept in memory before those not used this minute are dropped
/// (a subject dropped comes back with its day count from the store).
const MAX_WINDOWS_IN_MEMORY: usize = 10_000;

impl LocalWindows {
    fn new(store: Arc<Store>) -> LocalWindows {
        LocalWindows {
            store,
            counts: Mutex::default(),
            dirty: Mutex::default(),
            committed: AtomicU64::new(0),
            commit_lock: tokio::sync::Mutex::new(()),
            swept_day: std::sync::atomic::AtomicI64::new(0),
        }
    }

    /// The decision, and the change to the day counters it made, to wait
    /// for with [`LocalWindows::persist`] (0: nothing to persist).
    fn decide(
        &self,
        subject: &str,
        bucket: Bucket,
        window: Window,
        now: i64,
        count: bool,
    ) -> (Decision, u64) {
        let minute_start = now - now.rem_euclid(60);
        let day_start = now - now.rem_euclid(86_400);
        let mut all = self.counts.lock().expect("limiter lock");
        if all.len() >= MAX_WINDOWS_IN_MEMORY {
            // Addresses and users not seen this minute: their day counts
            // are in the store (each charge waited for its commit).
            all.retain(|_, counts| counts.minute_start == minute_start);
        }
        let key = (subject.to_string(), bucket);
        let counts = all.entry(key).or_insert_with(|| Counts {
            day_start: -1,
            minute_start: -1,
            ..Counts::default()
        });
        if counts.minute_start != minute_start {
            counts.minute_start = minute_start;
            counts.minute = 0;
        }
        if counts.day_start != day_start {
            counts.day_start = day_start;
            // First use of this day in this process: resume from the store.
            counts.day = self
                .store
                .day_count(subject, bucket.name(), day_start)
                .unwrap_or(0) as u32;
        }
        let minute_full = counts.minute >= window.minute;
        let day_full = counts.day >= window.day;
        let allowed = !minute_full && !day_full;
        let mut change = 0;
        if allowed && count {
            counts.minute += 1;
            counts.day += 1;
            let mut dirty = self.dirty.lock().expect("limiter lock");
            dirty.0.insert(
                (subject.to_string(), bucket, day_start),
                u64::from(counts.day),
            );
            dirty.1 += 1;
            change = dirty.1;
        }
        let counts = (counts.minute, counts.day);
        (Decision::new(window, allowed, counts, now), change)
    }

    /// Returns once the day counters, up to `change`, are in the store.
    /// Requests arriving while a commit runs are served by the next one.
    async fn persist(self: &Arc<Self>, change: u64) -> anyhow::Result<()> {
        if change == 0 || self.committed.load(Ordering::Acquire) >= change {
            return Ok(());
        }
        let _turn = self.commit_lock.lock().await;
        if self.committed.load(Ordering::Acquire) >= change {
            return Ok(());
        }
        let limiter = self.clone();
        tokio::task::spawn_blocking(move || limiter.commit()).await?
    }

    /// Writes the changed day counters in one transaction.
    fn commit(&self) -> anyhow::Result<()> {
        let (batch, upto) = {
            let mut dirty = self.dirty.lock().expect("limiter lock");
            (std::mem::take(&mut dirty.0), dirty.1)
        };
        let rows: Vec<(String, String, i64, u64)> = batch
            .into_iter()
            .map(|((subject, bucket, day), count)| (subject, bucket.name().to_string(), day, count))
            .collect();
        // The first commit of a day drops the counters of the days
        // before the one before it.
        let newest = rows.iter().map(|(_, _, day, _)| *day).max();
        let forget = newest
            .filter(|day| self.swept_day.fetch_max(*day, Ordering::AcqRel) < *day)
            .map(|day| day - 86_400);
        self.store.put_day_counts(&rows, forget)?;
        self.committed.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    fn flush(&self) {
        if let Err(error) = self.commit() {
            tracing::error!(%error, "could not persist day counters");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows() -> (tempfile::TempDir, Arc<Store>, LocalWindows) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), None).unwrap());
        (dir, store.clone(), LocalWindows::new(store))
    }

    fn charge(l: &LocalWindows, subject: &str, bucket: Bucket, window: Window, t: i64) -> Decision {
        l.decide(subject, bucket, window, t, true).0
    }

    #[test]
    fn minute_windows_reset_on_the_minute() {
        let (_d, _s, l) = windows();
        let w = Window {
            minute: 2,
            day: 100,
        };
        let t = 1_700_000_080; // 40 s into a minute
        assert!(charge(&l, "u", Bucket::Query, w, t).allowed);
        let second = charge(&l, "u", Bucket::Query, w, t);
        assert_eq!(second.remaining_minute, 0);
        let refused = charge(&l, "u", Bucket::Query, w, t + 5);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, 15);
        assert_eq!(refused.reset_minute, t + 20);
        assert!(
            charge(&l, "u", Bucket::Query, w, t + 20).allowed,
            "a new minute"
        );
        assert!(charge(&l, "v", Bucket::Query, w, t).allowed, "per subject");
        assert!(
            charge(&l, "u", Bucket::Other("GET /me"), w, t).allowed,
            "per bucket"
        );
    }

    #[test]
    fn day_counts_survive_a_restart() {
        let (_d, store, l) = windows();
        let w = Window {
            minute: 100,
            day: 3,
        };
        let t = 1_700_000_000;
        for _ in 0..3 {
            assert!(charge(&l, "u", Bucket::Query, w, t).allowed);
        }
        l.flush();
        let again = LocalWindows::new(store);
        let refused = charge(&again, "u", Bucket::Query, w, t + 120);
        assert!(!refused.allowed);
        assert_eq!(refused.reset_day, t - t.rem_euclid(86_400) + 86_400);
        assert_eq!(refused.retry_after, refused.reset_day - (t + 120));
    }

    #[test]
    fn windows_of_subjects_gone_quiet_leave_memory_but_keep_their_day() {
        let (_d, store, l) = windows();
        let w = Window {
            minute: 100,
            day: 3,
        };
        let t = 1_700_000_040;
        for _ in 0..3 {
            assert!(charge(&l, "u", Bucket::Query, w, t).allowed);
        }
        l.flush();
        for n in 0..MAX_WINDOWS_IN_MEMORY {
            charge(&l, &format!("addr:{n}"), Bucket::Anonymous, w, t);
        }
        l.flush();
        // A minute later, the next subject finds the map full: those not
        // seen this minute go.
        charge(&l, "newcomer", Bucket::Anonymous, w, t + 60);
        assert!(l.counts.lock().unwrap().len() < 10, "evicted");
        // "u" comes back with its day count, read from the store.
        assert!(!charge(&l, "u", Bucket::Query, w, t + 61).allowed);
        // The counters of days gone by are dropped by a day's first commit.
        let days_later = t + 3 * 86_400;
        charge(&l, "u", Bucket::Query, w, days_later);
        l.flush();
        assert!(store.day_counter_count().unwrap() < 5, "old days dropped");
    }

    #[test]
    fn peeking_does_not_count() {
        let (_d, _s, l) = windows();
        let w = Window { minute: 1, day: 10 };
        let peeked = l.decide("u", Bucket::Query, w, 60, false).0;
        assert_eq!(peeked.remaining_minute, 1);
        assert!(charge(&l, "u", Bucket::Query, w, 60).allowed);
    }
}
