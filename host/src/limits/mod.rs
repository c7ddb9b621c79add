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
//! - one process (`windows.rs`): minute windows in memory, day counts
//!   also in the store before the request goes on;
//! - replicas ([`SharedWindows`]): one Redis script per request checks and
//!   counts both windows at once, on Redis's clock, for every replica.

use std::sync::Arc;

pub mod address;
mod attempts;
mod windows;

use self::attempts::LocalAttempts;
pub use self::attempts::{Attempt, AttemptLimit, Throttle};
use self::windows::LocalWindows;
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
    pub(super) fn new(
        window: Window,
        allowed: bool,
        (minute, day): (u32, u32),
        now: i64,
    ) -> Decision {
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

/// Why [`Limiter::admit`] turned a request away.
#[derive(Debug)]
pub enum Refused {
    /// A window is full: a 429, to be retried after `retry_after` seconds.
    Full(Decision),
    /// The windows could not be read (the store or Redis is away); the
    /// decision shows nothing remaining until a short retry.
    Unreadable(anyhow::Error, Decision),
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

    /// Charges one request to `subject` in `bucket`: the one way any front
    /// door (`/v1`, `/mcp`, `/oauth/*`, the dashboard) draws on the limits,
    /// each turning a [`Refused`] into its own answer. Counts the request
    /// if both windows have room and returns what is left, once the count
    /// is durable (see the module's comment). Windows that cannot be read
    /// refuse the request: the limits fail closed.
    pub async fn admit(&self, subject: &str, bucket: Bucket) -> Result<Decision, Refused> {
        match self.decide(subject, bucket, true).await {
            Ok(decision) if decision.allowed => Ok(decision),
            Ok(decision) => Err(Refused::Full(decision)),
            Err(error) => Err(Refused::Unreadable(error, self.unknown(bucket))),
        }
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
