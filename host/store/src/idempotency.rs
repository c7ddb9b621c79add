//! Requests with an `Idempotency-Key`: one record per (user, key), sealed
//! with the user's data key (it holds a question and what was found).
//!
//! The record carries the request's state, so that whichever replica
//! answers sees the same thing: `Running` while a request holds the key
//! (with a lease, so that a replica that died mid-request does not hold it
//! for ever), `Answered` once a 200 is stored for replays. Claiming reads
//! and writes the record in one write transaction, and writers are
//! serialised on every backend, so two replicas cannot both claim a key.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::Counted;
use super::records::{Bytes, Records, Space, Text, Writer};
use super::{Store, now};

/// `user \0 key` → idempotency record.
pub(super) const IDEMPOTENCY: Space<Text, Bytes> =
    Space::keyed_by_user("idempotency", Counted::Nothing);

/// Idempotency records are kept this long.
pub const IDEMPOTENCY_TTL_SECONDS: i64 = 24 * 3600;

/// How long a running request holds its key without finishing: longer than
/// any query runs, short enough that a key held by a replica that died is
/// free again soon.
pub const IDEMPOTENCY_LEASE_SECONDS: i64 = 120;

/// A stored request with an `Idempotency-Key`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdempotencyRecord {
    /// SHA-256 of the request body: the same key with another body conflicts.
    pub body_hash: String,
    pub state: RequestState,
    pub created_at: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RequestState {
    /// A request holds the key until it finishes or `lease_until` passes.
    Running { lease_until: i64 },
    /// The stored answer, replayed to a repeated request.
    Answered { status: u16, body: Vec<u8> },
}

/// What a claim found.
#[derive(Debug)]
pub enum ClaimOutcome {
    /// The key is this request's until it is answered or released.
    Claimed,
    /// Another request with this key and body is running.
    Running,
    /// The key was used with another body.
    OtherBody,
    /// The key was answered (by a request that finished meanwhile).
    Answered(IdempotencyRecord),
}

impl Store {
    /// The record of `(user, key)`, unless older than 24 hours.
    pub fn idempotency_record(
        &self,
        user_id: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        self.live_record(&self.read()?, user_id, key)
    }

    /// Takes `(user, key)` for a request with `body_hash`, unless a live
    /// record says otherwise.
    pub fn claim_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        body_hash: &str,
    ) -> Result<ClaimOutcome> {
        let mut txn = self.write()?;
        let t = now();
        if let Some(record) = self.live_record(&txn, user_id, key)? {
            let held = match &record.state {
                RequestState::Running { lease_until } => *lease_until > t,
                RequestState::Answered { .. } => true,
            };
            if held {
                return Ok(match record.state {
                    _ if record.body_hash != body_hash => ClaimOutcome::OtherBody,
                    RequestState::Running { .. } => ClaimOutcome::Running,
                    RequestState::Answered { .. } => ClaimOutcome::Answered(record),
                });
            }
        }
        let running = IdempotencyRecord {
            body_hash: body_hash.to_string(),
            state: RequestState::Running {
                lease_until: t + IDEMPOTENCY_LEASE_SECONDS,
            },
            created_at: t,
        };
        self.put_idempotency_in(&mut txn, user_id, key, &running)?;
        txn.commit()?;
        Ok(ClaimOutcome::Claimed)
    }

    /// Stores the answer of a claimed key, for replays.
    pub fn answer_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        body_hash: &str,
        (status, body): (u16, &[u8]),
    ) -> Result<()> {
        let answered = IdempotencyRecord {
            body_hash: body_hash.to_string(),
            state: RequestState::Answered {
                status,
                body: body.to_vec(),
            },
            created_at: now(),
        };
        let mut txn = self.write()?;
        self.put_idempotency_in(&mut txn, user_id, key, &answered)?;
        txn.commit()
    }

    /// Frees a claimed key that was not answered (the request failed: the
    /// same key may run it again), unless another request took it over.
    pub fn release_idempotency_key(&self, user_id: &str, key: &str, body_hash: &str) -> Result<()> {
        let mut txn = self.write()?;
        let ours = self.live_record(&txn, user_id, key)?.is_some_and(|r| {
            r.body_hash == body_hash && matches!(r.state, RequestState::Running { .. })
        });
        if ours {
            txn.remove(&IDEMPOTENCY, &idempotency_key(user_id, key))?;
            txn.commit()?;
        }
        Ok(())
    }

    fn live_record(
        &self,
        txn: &impl Records,
        user_id: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        let id = idempotency_key(user_id, key);
        let Some(sealed) = txn.get(&IDEMPOTENCY, &id)? else {
            return Ok(None);
        };
        let plain = self.data_key(user_id)?.decrypt(user_id, &id, &sealed)?;
        // A record written by an earlier version (without a state) is
        // treated as absent: it was at most a day old, and is replaced.
        let Ok(record) = serde_json::from_slice::<IdempotencyRecord>(&plain) else {
            return Ok(None);
        };
        Ok((now() - record.created_at < IDEMPOTENCY_TTL_SECONDS).then_some(record))
    }

    fn put_idempotency_in(
        &self,
        txn: &mut Writer,
        user_id: &str,
        key: &str,
        record: &IdempotencyRecord,
    ) -> Result<()> {
        if !self.has_data_key_in(txn, user_id)? {
            bail!("user {user_id} is being deleted");
        }
        let id = idempotency_key(user_id, key);
        let sealed = self
            .data_key(user_id)?
            .encrypt(user_id, &id, &serde_json::to_vec(record)?);
        txn.put(&IDEMPOTENCY, &id, &sealed)
    }
}

fn idempotency_key(user_id: &str, key: &str) -> String {
    format!("{user_id}\0{key}")
}
