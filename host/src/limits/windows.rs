//! The rate-limit windows of one process: minute windows in memory (losing
//! them in a restart gives at most a minute's grace); day windows also
//! written to the store before the request goes on (group commit: one
//! transaction serves every request waiting at that moment), so a crash
//! never hands anyone a fresh day. Check-and-charge happens under one
//! lock, so concurrent requests can never be admitted past the limit.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{Bucket, Decision};
use crate::config::Window;
use quarry_store::Store;

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
pub(super) struct LocalWindows {
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
    pub(super) fn new(store: Arc<Store>) -> LocalWindows {
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
    pub(super) fn decide(
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
    pub(super) async fn persist(self: &Arc<Self>, change: u64) -> anyhow::Result<()> {
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

    pub(super) fn flush(&self) {
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
