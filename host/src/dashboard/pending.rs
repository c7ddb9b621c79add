//! Redirect flows in flight (connecting a tool, signing in with the
//! identity provider): what a flow started with, kept server-side under
//! the hash of its `state`, sealed with the master key, single use, with
//! an expiry. Expired entries go as new ones are saved.

use anyhow::Result;
use redb::{TableDefinition, TableHandle};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::{Store, now};

pub(super) type Table = TableDefinition<'static, &'static str, &'static [u8]>;

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
    let master = store.master();
    let sealed = master.encrypt(&record_id(table, &key), &serde_json::to_vec(&pending)?);
    let txn = store.db().begin_write()?;
    {
        let mut entries = txn.open_table(table)?;
        entries.retain(|k, v| {
            master
                .decrypt(&record_id(table, k), v)
                .ok()
                .and_then(|plain| serde_json::from_slice::<Pending<IgnoredAny>>(&plain).ok())
                .is_some_and(|p| p.expires_at > t)
        })?;
        entries.insert(key.as_str(), sealed.as_slice())?;
    }
    txn.commit()?;
    Ok(())
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
    let Some(sealed) = sealed else {
        return Ok(None);
    };
    let plain = store.master().decrypt(&record_id(table, &key), &sealed)?;
    Ok(Some(serde_json::from_slice(&plain)?))
}
