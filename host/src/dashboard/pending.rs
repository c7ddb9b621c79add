//! Redirect flows in flight (connecting a tool, signing in with the
//! identity provider): what a flow started with, kept server-side under
//! the hash of its `state`, sealed with the master key, single use, with
//! an expiry. Expired entries go as new ones are saved; the expiry is
//! stored in the clear before the sealed part, so that sweeping decrypts
//! nothing, and a table holds at most [`MAX_IN_FLIGHT`] flows.

use anyhow::Result;
use redb::{ReadableTableMetadata, TableDefinition, TableHandle};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::{Store, now};

pub(super) type Table = TableDefinition<'static, &'static str, &'static [u8]>;

/// Flows in flight per table: beyond, new ones are refused (a flood of
/// unfinished sign-ins must not fill the disk).
pub(super) const MAX_IN_FLIGHT: u64 = 10_000;

/// What was saved, with its expiry.
#[derive(Serialize, Deserialize)]
pub(super) struct Pending<T> {
    pub expires_at: i64,
    pub value: T,
}

fn key_of(state: &str) -> String {
    hex::encode(Sha256::digest(state.as_bytes()))
}

/// The associated data of a sealed entry: its table and key.
fn record_id(table: Table, key: &str) -> String {
    format!("{}/{key}", table.name())
}

pub(super) fn create_table(store: &Store, table: Table) -> Result<()> {
    let txn = store.db().begin_write()?;
    txn.open_table(table)?;
    txn.commit()?;
    Ok(())
}

pub(super) fn save<T: Serialize>(
    store: &Store,
    table: Table,
    state: &str,
    value: &T,
    ttl_seconds: i64,
) -> Result<()> {
    let key = key_of(state);
    let t = now();
    let pending = Pending {
        expires_at: t + ttl_seconds,
        value,
    };
    let sealed = store
        .master()
        .encrypt(&record_id(table, &key), &serde_json::to_vec(&pending)?);
    let mut stored = pending.expires_at.to_be_bytes().to_vec();
    stored.extend_from_slice(&sealed);
    let txn = store.db().begin_write()?;
    {
        let mut entries = txn.open_table(table)?;
        entries.retain(|_, v| expiry(v).is_some_and(|at| at > t))?;
        anyhow::ensure!(
            entries.len()? < MAX_IN_FLIGHT,
            "{MAX_IN_FLIGHT} flows are in flight already"
        );
        entries.insert(key.as_str(), stored.as_slice())?;
    }
    txn.commit()?;
    Ok(())
}

/// The clear expiry before a stored entry's sealed part.
fn expiry(stored: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(stored.get(..8)?.try_into().ok()?))
}

/// Removes the entry of `state` (single use) and returns it, expired or not.
pub(super) fn take<T: DeserializeOwned>(
    store: &Store,
    table: Table,
    state: &str,
) -> Result<Option<Pending<T>>> {
    let key = key_of(state);
    let txn = store.db().begin_write()?;
    let sealed = txn
        .open_table(table)?
        .remove(key.as_str())?
        .map(|v| v.value().to_vec());
    txn.commit()?;
    let Some(stored) = sealed else {
        return Ok(None);
    };
    let sealed = stored.get(8..).unwrap_or_default();
    let plain = store.master().decrypt(&record_id(table, &key), sealed)?;
    Ok(Some(serde_json::from_slice(&plain)?))
}
