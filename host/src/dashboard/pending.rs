//! Redirect flows in flight (connecting a tool, signing in with the
//! identity provider): what a flow started with, kept server-side under
//! the hash of its `state`, sealed with the master key, single use, with
//! an expiry. Expired entries go as new ones are saved; the expiry (and
//! the user a flow belongs to, if any) is stored in the clear before the
//! sealed part, so that sweeping and a user's deletion decrypt nothing,
//! and a space holds at most [`MAX_IN_FLIGHT`] flows.

use anyhow::{Result, ensure};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Store, now};

pub(super) type Table = Space<Text, Bytes>;

/// Flows in flight per table: beyond, new ones are refused (a flood of
/// unfinished sign-ins must not fill the disk).
pub(super) const MAX_IN_FLIGHT: u64 = 10_000;
/// Flows in flight per owner (a signed-in person, or the address that
/// started a sign-in): one person or address cannot take the table.
pub(super) const MAX_IN_FLIGHT_PER_OWNER: usize = 30;

/// Too many flows in flight (for this owner, or in all): a 429.
#[derive(Debug)]
pub(super) struct Full(pub String);

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Full {}

/// The query a flow's callback gets back from the vendor or the
/// identity provider.
#[derive(Deserialize)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
}

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
fn record_id(table: &Table, key: &str) -> String {
    format!("{}/{key}", table.name())
}

/// Saves a flow under its `state`; `owner`: the signed-in user who started
/// it, or the address that started a sign-in.
pub(super) fn save<T: Serialize>(
    store: &Store,
    table: &Table,
    state: &str,
    owner: Option<&str>,
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
    let owner = owner.unwrap_or_default();
    ensure!(owner.len() <= usize::from(u8::MAX), "an owner id is short");
    let mut stored = pending.expires_at.to_be_bytes().to_vec();
    stored.push(owner.len() as u8);
    stored.extend_from_slice(owner.as_bytes());
    stored.extend_from_slice(&sealed);
    let mut txn = store.write()?;
    txn.retain(table, .., |_, v| {
        Clear::of(&v).is_some_and(|c| c.expires_at > t)
    })?;
    if txn.count_in(table, ..)? >= MAX_IN_FLIGHT {
        return Err(Full(format!("{MAX_IN_FLIGHT} flows are in flight already")).into());
    }
    if !owner.is_empty() {
        let mut theirs = 0;
        txn.each(table, .., |_, v: Vec<u8>| {
            if Clear::of(&v).is_some_and(|c| c.owner == owner.as_bytes()) {
                theirs += 1;
            }
            Ok(quarry_store::records::Flow::Continue)
        })?;
        if theirs >= MAX_IN_FLIGHT_PER_OWNER {
            return Err(Full(format!(
                "{MAX_IN_FLIGHT_PER_OWNER} flows of this owner are in flight already"
            ))
            .into());
        }
    }
    txn.put(table, &key, &stored)?;
    txn.commit()
}

/// The clear part before a stored entry's sealed part:
/// `[expiry: i64 BE][owner length: u8][owner]`.
struct Clear<'a> {
    expires_at: i64,
    owner: &'a [u8],
    sealed: &'a [u8],
}

impl<'a> Clear<'a> {
    fn of(stored: &'a [u8]) -> Option<Clear<'a>> {
        let expires_at = i64::from_be_bytes(stored.get(..8)?.try_into().ok()?);
        let owner_len = usize::from(*stored.get(8)?);
        let owner = stored.get(9..9 + owner_len)?;
        let sealed = stored.get(9 + owner_len..)?;
        Some(Clear {
            expires_at,
            owner,
            sealed,
        })
    }
}

/// Removes the flows a user started inside `txn`; how many.
pub(super) fn remove_owned_by(txn: &mut Writer, table: &Table, user_id: &str) -> Result<u64> {
    txn.retain(table, .., |_, v| {
        Clear::of(&v).is_none_or(|c| c.owner != user_id.as_bytes())
    })
}

/// Removes the entry of `state` (single use) and returns it, expired or not.
pub(super) fn take<T: DeserializeOwned>(
    store: &Store,
    table: &Table,
    state: &str,
) -> Result<Option<Pending<T>>> {
    let key = key_of(state);
    let mut txn = store.write()?;
    let stored = txn.remove(table, &key)?;
    txn.commit()?;
    let Some(stored) = stored else {
        return Ok(None);
    };
    let Some(clear) = Clear::of(&stored) else {
        anyhow::bail!("a pending flow is truncated");
    };
    let plain = store
        .master()
        .decrypt(&record_id(table, &key), clear.sealed)?;
    Ok(Some(serde_json::from_slice(&plain)?))
}
