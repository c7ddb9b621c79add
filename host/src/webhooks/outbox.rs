//! The durable outbox: one entry per (event, target) delivery, written in
//! the same transaction as whatever caused the event, so that an event is
//! queued if and only if its cause committed; kept until it is delivered or
//! given up, so that a restart loses nothing (the worker reads it at start).
//!
//! Replicas share one outbox: a worker claims the entries that are due
//! with a lease (moving them to the lease's end and naming itself), attempts
//! them outside any transaction, and records an outcome only while the
//! entry is still its own. So each entry is attempted by one worker at a
//! time, and a worker that dies mid-attempt leaves its entries to another
//! once the lease runs out. (A receiver may still see an attempt twice when
//! a worker dies after sending and before recording: the `webhook-id`
//! header is the same on every attempt, for it to deduplicate.)
//!
//! What is secret in an entry (the target's URL and secret, the payload) is
//! sealed with the master key, not a user's: a `user.deleted` delivery must
//! outlive the deleted user's data key.

use anyhow::{Context, Result};
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};

use quarry_store::keys::MasterKey;
use quarry_store::records::{Bytes, Records, Space, Text, TimeText, Unit, Writer};
use quarry_store::{Counted, Store};

/// Delivery id → [`Entry`] (JSON).
pub(super) const OUTBOX: Space<Text, Bytes> =
    Space::user_owned("webhook_outbox", remove_owner_in, Counted::Nothing);
/// (due time in Unix milliseconds, delivery id): the worker's queue, in
/// the order it is due.
pub(super) const DUE: Space<TimeText, Unit> = Space::shared(
    "webhook_outbox_due",
    "the outbox's queue: (due time, delivery id), removed with its delivery",
);
/// Delivery id → [`GivenUp`] (JSON): deliveries that exhausted the schedule.
pub(super) const GIVEN_UP: Space<Text, Bytes> = Space::shared(
    "webhook_given_up",
    "what is kept of an undeliverable event: no user id and nothing secret; dropped after 30 days",
);

/// How long given-up records are kept.
const GIVEN_UP_TTL_SECONDS: i64 = 30 * 86_400;

/// A pending delivery, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// `dlv_` and 16 hex digits.
    pub id: String,
    pub event_type: String,
    /// The registration delivered to (`None`: an operator's endpoint).
    pub webhook_id: Option<String>,
    /// The user whose registration must still exist (and still subscribe
    /// to the event) at delivery time; `None` when the target list was a
    /// snapshot that decides on its own (`user.deleted`).
    pub owner: Option<String>,
    /// Attempts made so far.
    pub attempts: u32,
    pub due_ms: i64,
    pub queued_at: i64,
    /// The last failure, for the given-up record: never a URL or a secret.
    pub last_error: Option<String>,
    /// The worker that holds the entry until `due_ms` (a claim's lease).
    #[serde(default)]
    pub leased_by: Option<String>,
    /// A [`Message`], sealed with the master key for this entry's id.
    #[serde(with = "base64_bytes")]
    pub sealed: Vec<u8>,
}

/// What an entry seals.
#[derive(Serialize, Deserialize)]
pub struct Message {
    /// `webhook-id`: the same on every attempt.
    pub message_id: String,
    pub url: String,
    pub secret: String,
    /// The body, fixed at enqueue time: every attempt signs the same bytes.
    pub body: String,
}

/// What is kept of a delivery that was given up: nothing secret.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct GivenUp {
    pub delivery_id: String,
    pub message_id: String,
    pub event_type: String,
    pub webhook_id: Option<String>,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub queued_at: i64,
    pub given_up_at: i64,
}

fn record_id(delivery_id: &str) -> String {
    format!("webhook-outbox/{delivery_id}")
}

pub fn seal(master: &MasterKey, delivery_id: &str, message: &Message) -> Result<Vec<u8>> {
    Ok(master.encrypt(&record_id(delivery_id), &serde_json::to_vec(message)?))
}

pub fn unseal(master: &MasterKey, entry: &Entry) -> Result<Message> {
    let plain = master
        .decrypt(&record_id(&entry.id), &entry.sealed)
        .context("the outbox entry does not open")?;
    Ok(serde_json::from_slice(&plain)?)
}

/// Queues an entry inside the caller's transaction.
pub fn insert_in(txn: &mut Writer, entry: &Entry) -> Result<()> {
    txn.put(&OUTBOX, &entry.id, &serde_json::to_vec(entry)?)?;
    txn.put(&DUE, (entry.due_ms, &entry.id), ())
}

/// When the earliest entry is due, if any.
pub fn next_due(store: &Store) -> Result<Option<i64>> {
    let first = store.read()?.first_in(&DUE, ..)?;
    Ok(first.map(|((due_ms, _), ())| due_ms))
}

/// Claims up to `limit` entries due at `now_ms`, earliest first, for
/// `worker` until `now_ms + lease_ms`; returns them as claimed.
pub fn claim_due(
    store: &Store,
    (now_ms, lease_ms): (i64, i64),
    limit: usize,
    worker: &str,
) -> Result<Vec<Entry>> {
    let mut txn = store.write()?;
    let due = txn.first_n(&DUE, (i64::MIN, "")..(now_ms.saturating_add(1), ""), limit)?;
    let mut claimed = Vec::new();
    for ((due_ms, id), ()) in due {
        txn.remove(&DUE, (due_ms, &id))?;
        // An index entry without its record would be a bug; drop it rather
        // than stop every delivery behind it.
        let Some(bytes) = txn.get(&OUTBOX, &id)? else {
            continue;
        };
        let entry = Entry {
            due_ms: now_ms + lease_ms,
            leased_by: Some(worker.to_string()),
            ..serde_json::from_slice(&bytes)?
        };
        insert_in(&mut txn, &entry)?;
        claimed.push(entry);
    }
    txn.commit()?;
    Ok(claimed)
}

/// Whether `claimed` is still stored as it was claimed: no other worker
/// took it over after the lease ran out.
fn still_claimed(txn: &Writer, claimed: &Entry) -> Result<bool> {
    let Some(bytes) = txn.get(&OUTBOX, &claimed.id)? else {
        return Ok(false);
    };
    let stored: Entry = serde_json::from_slice(&bytes)?;
    Ok(stored.leased_by == claimed.leased_by && stored.due_ms == claimed.due_ms)
}

/// Commits `change` to a claimed entry if the claim still holds.
fn if_still_claimed(
    store: &Store,
    claimed: &Entry,
    change: impl FnOnce(&mut Writer) -> Result<()>,
) -> Result<()> {
    let mut txn = store.write()?;
    if !still_claimed(&txn, claimed)? {
        tracing::warn!(delivery = %claimed.id, "webhook entry taken over by another worker; its outcome here is not recorded");
        return Ok(());
    }
    change(&mut txn)?;
    txn.commit()
}

/// Gives a claimed entry back, due now, for whichever worker claims next.
pub fn release(store: &Store, entry: &Entry) -> Result<()> {
    if_still_claimed(store, entry, |txn| {
        txn.remove(&DUE, (entry.due_ms, &entry.id))?;
        let released = Entry {
            due_ms: crate::webhooks::now_ms(),
            leased_by: None,
            ..entry.clone()
        };
        insert_in(txn, &released)
    })
}

/// Every pending entry (for tests and the operator's eyes).
pub fn pending(store: &Store) -> Result<Vec<Entry>> {
    all_of(store, &OUTBOX)
}

fn all_of<T: serde::de::DeserializeOwned>(
    store: &Store,
    space: &Space<Text, Bytes>,
) -> Result<Vec<T>> {
    let rows = store.read()?.all_in(space, ..)?;
    rows.iter()
        .map(|(_, bytes)| Ok(serde_json::from_slice(bytes)?))
        .collect()
}

/// Moves a claimed entry to a new due time after a failed attempt (and out
/// of the claim). `entry` is the claimed version (its `due_ms` is the
/// indexed one).
pub fn reschedule(store: &Store, entry: &Entry, next: &Entry) -> Result<()> {
    if_still_claimed(store, entry, |txn| {
        txn.remove(&DUE, (entry.due_ms, &entry.id))?;
        insert_in(
            txn,
            &Entry {
                leased_by: None,
                ..next.clone()
            },
        )
    })
}

/// Removes a claimed entry (delivered, or no longer wanted).
pub fn remove(store: &Store, entry: &Entry) -> Result<()> {
    if_still_claimed(store, entry, |txn| remove_in(txn, entry))
}

fn remove_in(txn: &mut Writer, entry: &Entry) -> Result<()> {
    txn.remove(&DUE, (entry.due_ms, &entry.id))?;
    txn.remove(&OUTBOX, &entry.id)?;
    Ok(())
}

/// Removes an entry and records that it was given up (dropping records
/// older than 30 days, so that the table does not grow for ever).
pub fn give_up(store: &Store, entry: &Entry, record: &GivenUp) -> Result<()> {
    if_still_claimed(store, entry, |txn| {
        remove_in(txn, entry)?;
        let horizon = record.given_up_at - GIVEN_UP_TTL_SECONDS;
        txn.retain(&GIVEN_UP, .., |_, bytes| {
            serde_json::from_slice::<GivenUp>(&bytes).is_ok_and(|r| r.given_up_at >= horizon)
        })?;
        txn.put(&GIVEN_UP, &record.delivery_id, &serde_json::to_vec(record)?)
    })
}

/// The deliveries given up in the last 30 days.
pub fn given_up(store: &Store) -> Result<Vec<GivenUp>> {
    all_of(store, &GIVEN_UP)
}

/// Removes, inside the caller's transaction, the pending deliveries that
/// depend on a user's registrations (a deleted user's test events); the
/// snapshot deliveries (`owner: None`) stay.
pub fn remove_owner_in(txn: &mut Writer, user_id: &str) -> Result<u64> {
    let mut owned: Vec<Entry> = Vec::new();
    for (_, bytes) in txn.all_in(&OUTBOX, ..)? {
        let entry: Entry = serde_json::from_slice(&bytes)?;
        if entry.owner.as_deref() == Some(user_id) {
            owned.push(entry);
        }
    }
    for entry in &owned {
        remove_in(txn, entry)?;
    }
    Ok(owned.len() as u64)
}

mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    use super::B64;

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&B64.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        B64.decode(text).map_err(serde::de::Error::custom)
    }
}
