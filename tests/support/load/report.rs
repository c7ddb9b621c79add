//! The invariants, and the report that says which held.

use std::collections::BTreeMap;
use std::fmt;

use super::ledger::Problem;

/// What must hold however the server is loaded, faulted or killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Every `/v1/query` answered 200 is in the user's archive, chunk for
    /// chunk (found again through `/v1/deep_search`).
    Archived,
    /// No window let more requests through than its limit, and the
    /// rate-limit headers agree with the configured limits.
    Limits,
    /// A deleted user's tokens are refused and nothing of theirs is left
    /// in the store; a deletion is never half done.
    Deletions,
    /// Each `user.deleted` reaches the operator's endpoint and each of the
    /// user's registered endpoints under exactly one event id.
    WebhooksOnce,
    /// The same `Idempotency-Key` and body get the stored 200 answer, byte
    /// for byte (also after a restart).
    Replays,
    /// Every answer keeps the API contract, and none is a 5xx (also the
    /// reads right after a restart).
    WellFormed,
    /// Only users being deleted are refused (401).
    LiveTokens,
}

impl Invariant {
    pub const ALL: [Invariant; 7] = [
        Invariant::Archived,
        Invariant::Limits,
        Invariant::Deletions,
        Invariant::WebhooksOnce,
        Invariant::Replays,
        Invariant::WellFormed,
        Invariant::LiveTokens,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Invariant::Archived => "every 200 /v1/query is in the archive",
            Invariant::Limits => "no rate limit exceeded",
            Invariant::Deletions => "each deletion complete",
            Invariant::WebhooksOnce => "each user.deleted delivered exactly once",
            Invariant::Replays => "idempotent replays return the stored response",
            Invariant::WellFormed => "every answer well-formed, never a 5xx",
            Invariant::LiveTokens => "only deleted users are refused",
        }
    }
}

/// How each invariant fared: how many times it was put to the test, and
/// what broke it.
#[derive(Debug, Default)]
pub struct Report {
    pub checked: BTreeMap<Invariant, usize>,
    pub problems: Vec<Problem>,
    /// Facts worth printing that are not failures (redeliveries, ...).
    pub notes: Vec<String>,
}

/// At most this many problems are printed per invariant.
const SHOWN: usize = 8;

impl Report {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn failed(&self, invariant: Invariant) -> Vec<&Problem> {
        self.problems
            .iter()
            .filter(|p| p.invariant == invariant)
            .collect()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for invariant in Invariant::ALL {
            let failed = self.failed(invariant);
            let checked = self.checked.get(&invariant).copied().unwrap_or(0);
            let verdict = if failed.is_empty() { "pass" } else { "FAIL" };
            writeln!(
                f,
                "  [{verdict}] {} ({checked} checks, {} failures)",
                invariant.name(),
                failed.len()
            )?;
            for problem in failed.iter().take(SHOWN) {
                writeln!(f, "         - {}", problem.detail)?;
            }
            if failed.len() > SHOWN {
                writeln!(f, "         - ... and {} more", failed.len() - SHOWN)?;
            }
        }
        for note in &self.notes {
            writeln!(f, "  note: {note}")?;
        }
        Ok(())
    }
}
