//! The users' webhook registrations, in their own redb table. Each record
//! is sealed with its user's data key (the secret in it, and the URL, which
//! may carry a token of the receiver's): when the user's key is destroyed,
//! whatever copy is left is noise.

use std::ops::Range;

use anyhow::{Context, Result};
use redb::{ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::store::Store;

/// `user \0 webhook id` → the registration, sealed with the user's data key.
const REGISTRATIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("webhook_registrations");

#[derive(Clone, Serialize, Deserialize)]
pub struct Registration {
    /// `wh_` and 16 hex digits.
    pub id: String,
    pub url: String,
    /// The event types delivered to it (`webhook.test` always is).
    pub events: Vec<String>,
    pub created_at: i64,
    /// `whsec_...`: shown once, at registration.
    pub secret: String,
}

/// Creates the table, so that readers never meet a missing one.
pub fn create_table(txn: &WriteTransaction) -> Result<()> {
    txn.open_table(REGISTRATIONS)?;
    Ok(())
}

fn key(user_id: &str, webhook_id: &str) -> String {
    format!("{user_id}\0{webhook_id}")
}

/// The keys of every registration of a user: `user \0 ...`.
fn user_range(user_id: &str) -> Range<String> {
    format!("{user_id}\0")..format!("{user_id}\u{1}")
}

fn record_id(webhook_id: &str) -> String {
    format!("webhook/{webhook_id}")
}

/// How many registrations the user has, inside a write transaction (so that
/// a limit checked with it holds when the transaction commits).
pub fn count_in(txn: &WriteTransaction, user_id: &str) -> Result<usize> {
    let table = txn.open_table(REGISTRATIONS)?;
    let range = user_range(user_id);
    Ok(table
        .range(range.start.as_str()..range.end.as_str())?
        .count())
}

pub fn insert_in(
    txn: &WriteTransaction,
    store: &Store,
    user_id: &str,
    registration: &Registration,
) -> Result<()> {
    let sealed = store.data_key(user_id)?.encrypt(
        user_id,
        &record_id(&registration.id),
        &serde_json::to_vec(registration)?,
    );
    txn.open_table(REGISTRATIONS)?
        .insert(key(user_id, &registration.id).as_str(), sealed.as_slice())?;
    Ok(())
}

/// Every registration of a user, oldest first.
pub fn list(store: &Store, user_id: &str) -> Result<Vec<Registration>> {
    let sealed: Vec<(String, Vec<u8>)> = {
        let txn = store.db().begin_read()?;
        let table = txn.open_table(REGISTRATIONS)?;
        let range = user_range(user_id);
        let mut out = Vec::new();
        for entry in table.range(range.start.as_str()..range.end.as_str())? {
            let (k, v) = entry?;
            let webhook_id = k.value()[range.start.len()..].to_string();
            out.push((webhook_id, v.value().to_vec()));
        }
        out
    };
    let mut out: Vec<Registration> = sealed
        .iter()
        .map(|(webhook_id, bytes)| open(store, user_id, webhook_id, bytes))
        .collect::<Result<_>>()?;
    out.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(out)
}

/// One registration of a user, if it exists.
pub fn get(store: &Store, user_id: &str, webhook_id: &str) -> Result<Option<Registration>> {
    let sealed = {
        let txn = store.db().begin_read()?;
        let table = txn.open_table(REGISTRATIONS)?;
        table
            .get(key(user_id, webhook_id).as_str())?
            .map(|v| v.value().to_vec())
    };
    sealed
        .map(|bytes| open(store, user_id, webhook_id, &bytes))
        .transpose()
}

/// Removes one registration; whether it existed.
pub fn remove(store: &Store, user_id: &str, webhook_id: &str) -> Result<bool> {
    let txn = store.db().begin_write()?;
    let existed = txn
        .open_table(REGISTRATIONS)?
        .remove(key(user_id, webhook_id).as_str())?
        .is_some();
    txn.commit()?;
    Ok(existed)
}

/// Removes every registration of a user inside the caller's transaction;
/// how many there were.
pub fn remove_user_in(txn: &WriteTransaction, user_id: &str) -> Result<u64> {
    let mut table = txn.open_table(REGISTRATIONS)?;
    let range = user_range(user_id);
    let mut removed = 0;
    table.retain_in(range.start.as_str()..range.end.as_str(), |_, _| {
        removed += 1;
        false
    })?;
    Ok(removed)
}

fn open(store: &Store, user_id: &str, webhook_id: &str, sealed: &[u8]) -> Result<Registration> {
    let plain = store
        .data_key(user_id)?
        .decrypt(user_id, &record_id(webhook_id), sealed)
        .context("a webhook registration does not open")?;
    Ok(serde_json::from_slice(&plain)?)
}
