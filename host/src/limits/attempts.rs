//! Attempts that may fail only so many times in a window, per key: sign-ins
//! (per address and per email), device codes typed (per person), single
//! sign-on callbacks (per address). An attempt counts as a failure from
//! the moment it starts, so that attempts made at the same moment cannot
//! all pass; one that did not fail is taken back.
//!
//! One process keeps them here, in memory, the least recently used keys
//! forgotten first past a bound (never all at once); replicas share them in
//! Redis ([`crate::coordination::SharedAttempts`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// What is throttled (each has its own keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    SignIn,
    DeviceCode,
    SingleSignOn,
}

impl Throttle {
    pub fn name(self) -> &'static str {
        match self {
            Throttle::SignIn => "sign_in",
            Throttle::DeviceCode => "device_code",
            Throttle::SingleSignOn => "single_sign_on",
        }
    }
}

/// At most `failures` in any `window_seconds`, per key.
#[derive(Debug, Clone, Copy)]
pub struct AttemptLimit {
    pub failures: u32,
    pub window_seconds: i64,
}

/// An attempt under way, counted as a failure until
/// [`crate::limits::Limiter::not_failed`] takes it back.
#[must_use = "an attempt counts as a failure until it is taken back"]
#[derive(Debug)]
pub struct Attempt {
    pub(super) throttle: Throttle,
    pub(super) keys: Vec<String>,
    pub(super) id: String,
}

/// Keys remembered in one process at most; past it the least recently
/// used is forgotten.
const MAX_KEYS_IN_MEMORY: usize = 100_000;

struct Entry {
    /// When each attempt started, and its id.
    times: Vec<(i64, String)>,
    /// The entry's place in the order of use.
    used: u64,
}

/// The attempts of one process: keys by their recent attempts, and the
/// keys in the order they were last used.
pub(super) struct LocalAttempts {
    state: Mutex<Recent>,
    capacity: usize,
}

#[derive(Default)]
struct Recent {
    entries: HashMap<String, Entry>,
    by_use: BTreeMap<u64, String>,
    clock: u64,
}

impl Recent {
    /// The entry of `key`, marked as just used (made, and the least
    /// recently used forgotten, when new).
    fn touch(&mut self, key: &str, capacity: usize) -> &mut Entry {
        self.clock += 1;
        let clock = self.clock;
        if let Some(entry) = self.entries.get_mut(key) {
            self.by_use.remove(&entry.used);
            entry.used = clock;
        } else {
            while self.entries.len() >= capacity {
                let Some((_, oldest)) = self.by_use.pop_first() else {
                    break;
                };
                self.entries.remove(&oldest);
            }
            let entry = Entry {
                times: Vec::new(),
                used: clock,
            };
            self.entries.insert(key.to_string(), entry);
        }
        self.by_use.insert(clock, key.to_string());
        self.entries.get_mut(key).expect("just touched")
    }
}

impl LocalAttempts {
    pub(super) fn new() -> LocalAttempts {
        LocalAttempts::with_capacity(MAX_KEYS_IN_MEMORY)
    }

    fn with_capacity(capacity: usize) -> LocalAttempts {
        LocalAttempts {
            state: Mutex::default(),
            capacity,
        }
    }

    /// Counts attempt `id` under every key (if `count`) unless one is full
    /// at `now`; whether it may go on.
    pub(super) fn begin(
        &self,
        keys: &[String],
        limit: AttemptLimit,
        (id, now): (&str, i64),
        count: bool,
    ) -> bool {
        let mut recent = self.state.lock().expect("attempts lock");
        // Every key is looked at (and so marked as used: a key under
        // attack stays remembered).
        let mut full = false;
        for key in keys {
            if recent.entries.contains_key(key) {
                let entry = recent.touch(key, self.capacity);
                entry
                    .times
                    .retain(|(at, _)| now - at < limit.window_seconds);
                full |= entry.times.len() >= limit.failures as usize;
            }
        }
        if !full && count {
            for key in keys {
                let entry = recent.touch(key, self.capacity);
                entry.times.push((now, id.to_string()));
            }
        }
        !full
    }

    pub(super) fn take_back(&self, keys: &[String], id: &str) {
        let mut recent = self.state.lock().expect("attempts lock");
        for key in keys {
            if let Some(entry) = recent.entries.get_mut(key) {
                entry.times.retain(|(_, other)| other != id);
            }
        }
    }

    pub(super) fn forget(&self, keys: &[String]) {
        let mut recent = self.state.lock().expect("attempts lock");
        for key in keys {
            if let Some(entry) = recent.entries.remove(key) {
                recent.by_use.remove(&entry.used);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: AttemptLimit = AttemptLimit {
        failures: 3,
        window_seconds: 60,
    };

    fn keys(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_full_key_stops_the_attempt_until_its_window_passes() {
        let attempts = LocalAttempts::new();
        let both = keys(&["addr:a", "email:e"]);
        for n in 0..3 {
            assert!(attempts.begin(&both, LIMIT, (&format!("{n}"), 100), true));
        }
        assert!(!attempts.begin(&both, LIMIT, ("3", 100), true));
        // Another address with the same email is stopped by the email.
        assert!(!attempts.begin(&keys(&["addr:b", "email:e"]), LIMIT, ("4", 120), true));
        // Taken back, an attempt frees its place; a window later, all are free.
        attempts.take_back(&both, "0");
        assert!(attempts.begin(&both, LIMIT, ("5", 130), false));
        assert!(attempts.begin(&both, LIMIT, ("6", 161), true));
        attempts.forget(&keys(&["email:e"]));
        assert!(attempts.begin(&keys(&["email:e"]), LIMIT, ("7", 161), false));
    }

    #[test]
    fn past_the_bound_the_least_recently_used_keys_are_forgotten_one_by_one() {
        let attempts = LocalAttempts::with_capacity(3);
        for key in ["a", "b", "c"] {
            for n in 0..3 {
                assert!(attempts.begin(&keys(&[key]), LIMIT, (&format!("{n}"), 10), true));
            }
        }
        // "a" used again: "b" is now the least recently used.
        assert!(!attempts.begin(&keys(&["a"]), LIMIT, ("x", 11), true));
        assert!(attempts.begin(&keys(&["d"]), LIMIT, ("0", 12), true));
        // "b" was forgotten (its failures with it); "a" and "c" were not.
        assert!(attempts.begin(&keys(&["b"]), LIMIT, ("y", 13), false));
        assert!(!attempts.begin(&keys(&["a"]), LIMIT, ("y", 13), false));
        assert!(!attempts.begin(&keys(&["c"]), LIMIT, ("y", 13), false));
    }
}
