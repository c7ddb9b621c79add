//! The durable outbox: one entry per (event, target) delivery, written in
//! the same transaction as whatever caused the event, so that an event is
//! queued if and only if its cause committed; kept until it is delivered or
//! given up, so that a restart loses nothing (the worker reads it at start).
//!
//! What is secret in an entry (the target's URL and secret, the payload) is
//! sealed with the master key, not a user's: a `user.deleted` delivery must
//! outlive the deleted user's data key.

use anyhow::{Context, Result};
use base64::engine::general_purpose::STANDARD as B64;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::store::keys::MasterKey;

/// Delivery id → [`Entry`] (JSON).
const OUTBOX: TableDefinition<&str, &[u8]> = TableDefinition::new("webhook_outbox");
/// (due time in Unix milliseconds, delivery id): the worker's queue, in
/// the order it is due.
const DUE: TableDefinition<(i64, &str), ()> = TableDefinition::new("webhook_outbox_due");
/// Delivery id → [`GivenUp`] (JSON): deliveries that exhausted the schedule.
const GIVEN_UP: TableDefinition<&str, &[u8]> = TableDefinition::new("webhook_given_up");

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

pub fn create_tables(txn: &WriteTransaction) -> Result<()> {
    txn.open_table(OUTBOX)?;
    txn.open_table(DUE)?;
    txn.open_table(GIVEN_UP)?;
    Ok(())
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
pub fn insert_in(txn: &WriteTransaction, entry: &Entry) -> Result<()> {
    txn.open_table(OUTBOX)?
        .insert(entry.id.as_str(), serde_json::to_vec(entry)?.as_slice())?;
    txn.open_table(DUE)?
        .insert((entry.due_ms, entry.id.as_str()), ())?;
    Ok(())
}

/// When the earliest entry is due, if any.
pub fn next_due(db: &Database) -> Result<Option<i64>> {
    let txn = db.begin_read()?;
    let table = txn.open_table(DUE)?;
    Ok(table.first()?.map(|(k, _)| k.value().0))
}

/// Up to `limit` entries due at `now_ms`, earliest first.
pub fn due(db: &Database, now_ms: i64, limit: usize) -> Result<Vec<Entry>> {
    let txn = db.begin_read()?;
    let due = txn.open_table(DUE)?;
    let outbox = txn.open_table(OUTBOX)?;
    let mut out = Vec::new();
    for item in due.range((i64::MIN, "")..(now_ms.saturating_add(1), ""))? {
        if out.len() >= limit {
            break;
        }
        let (key, _) = item?;
        let (_, id) = key.value();
        // An index entry without its record would be a bug; skip it rather
        // than stop every delivery behind it.
        if let Some(bytes) = outbox.get(id)? {
            out.push(serde_json::from_slice(bytes.value())?);
        }
    }
    Ok(out)
}

/// Every pending entry (for tests and the operator's eyes).
pub fn pending(db: &Database) -> Result<Vec<Entry>> {
    let txn = db.begin_read()?;
    let table = txn.open_table(OUTBOX)?;
    table
        .iter()?
        .map(|item| Ok(serde_json::from_slice(item?.1.value())?))
        .collect()
}

/// Moves an entry to a new due time after a failed attempt. `entry` is the
/// version read before the attempt (its `due_ms` is the indexed one).
pub fn reschedule(db: &Database, entry: &Entry, next: &Entry) -> Result<()> {
    let txn = db.begin_write()?;
    {
        let mut due = txn.open_table(DUE)?;
        due.remove((entry.due_ms, entry.id.as_str()))?;
        due.insert((next.due_ms, next.id.as_str()), ())?;
        txn.open_table(OUTBOX)?
            .insert(next.id.as_str(), serde_json::to_vec(next)?.as_slice())?;
    }
    txn.commit()?;
    Ok(())
}

/// Removes an entry (delivered, or no longer wanted).
pub fn remove(db: &Database, entry: &Entry) -> Result<()> {
    let txn = db.begin_write()?;
    remove_in(&txn, entry)?;
    txn.commit()?;
    Ok(())
}

fn remove_in(txn: &WriteTransaction, entry: &Entry) -> Result<()> {
    txn.open_table(DUE)?
        .remove((entry.due_ms, entry.id.as_str()))?;
    txn.open_table(OUTBOX)?.remove(entry.id.as_str())?;
    Ok(())
}

/// Removes an entry and records that it was given up (dropping records
/// older than 30 days, so that the table does not grow for ever).
pub fn give_up(db: &Database, entry: &Entry, record: &GivenUp) -> Result<()> {
    let txn = db.begin_write()?;
    remove_in(&txn, entry)?;
    {
        let mut table = txn.open_table(GIVEN_UP)?;
        let horizon = record.given_up_at - GIVEN_UP_TTL_SECONDS;
        table.retain(|_, bytes| {
            serde_json::from_slice::<GivenUp>(bytes).is_ok_and(|r| r.given_up_at >= horizon)
        })?;
        table.insert(
            record.delivery_id.as_str(),
            serde_json::to_vec(record)?.as_slice(),
        )?;
    }
    txn.commit()?;
    Ok(())
}

/// The deliveries given up in the last 30 days.
pub fn given_up(db: &Database) -> Result<Vec<GivenUp>> {
    let txn = db.begin_read()?;
    let table = txn.open_table(GIVEN_UP)?;
    table
        .iter()?
        .map(|item| Ok(serde_json::from_slice(item?.1.value())?))
        .collect()
}

/// Removes, inside the caller's transaction, the pending deliveries that
/// depend on a user's registrations (a deleted user's test events); the
/// snapshot deliveries (`owner: None`) stay.
pub fn remove_owner_in(txn: &WriteTransaction, user_id: &str) -> Result<()> {
    let owned: Vec<Entry> = {
        let table = txn.open_table(OUTBOX)?;
        let mut out = Vec::new();
        for item in table.iter()? {
            let entry: Entry = serde_json::from_slice(item?.1.value())?;
            if entry.owner.as_deref() == Some(user_id) {
                out.push(entry);
            }
        }
        out
    };
    for entry in &owned {
        remove_in(txn, entry)?;
    }
    Ok(())
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
