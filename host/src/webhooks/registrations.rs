//! The users' webhook registrations, in their own space. Each record
//! is sealed with its user's data key (the secret in it, and the URL, which
//! may carry a token of the receiver's): when the user's key is destroyed,
//! whatever copy is left is noise.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Counted, Store};

/// `user \0 webhook id` → the registration, sealed with the user's data key.
pub(super) const REGISTRATIONS: Space<Text, Bytes> =
    Space::keyed_by_user("webhook_registrations", Counted::Webhooks);

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

fn key(user_id: &str, webhook_id: &str) -> String {
    format!("{user_id}\0{webhook_id}")
}

/// The start of the keys of every registration of a user.
fn user_prefix(user_id: &str) -> String {
    format!("{user_id}\0")
}

fn record_id(webhook_id: &str) -> String {
    format!("webhook/{webhook_id}")
}

/// How many registrations the user has, inside a write transaction (so that
/// a limit checked with it holds when the transaction commits).
pub fn count_in(txn: &Writer, user_id: &str) -> Result<usize> {
    Ok(txn
        .with_prefix(&REGISTRATIONS, &user_prefix(user_id))?
        .len())
}

pub fn insert_in(
    txn: &mut Writer,
    store: &Store,
    user_id: &str,
    registration: &Registration,
) -> Result<()> {
    let sealed = store.data_key(user_id)?.encrypt(
        user_id,
        &record_id(&registration.id),
        &serde_json::to_vec(registration)?,
    );
    txn.put(&REGISTRATIONS, &key(user_id, &registration.id), &sealed)
}

/// Every registration of a user, oldest first.
pub fn list(store: &Store, user_id: &str) -> Result<Vec<Registration>> {
    let sealed = store
        .read()?
        .with_prefix(&REGISTRATIONS, &user_prefix(user_id))?;
    let mut out: Vec<Registration> = sealed
        .iter()
        .map(|(webhook_id, bytes)| open(store, user_id, webhook_id, bytes))
        .collect::<Result<_>>()?;
    out.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(out)
}

/// One registration of a user, if it exists.
pub fn get(store: &Store, user_id: &str, webhook_id: &str) -> Result<Option<Registration>> {
    let sealed = store
        .read()?
        .get(&REGISTRATIONS, &key(user_id, webhook_id))?;
    sealed
        .map(|bytes| open(store, user_id, webhook_id, &bytes))
        .transpose()
}

/// Removes one registration; whether it existed.
pub fn remove(store: &Store, user_id: &str, webhook_id: &str) -> Result<bool> {
    let mut txn = store.write()?;
    let existed = txn
        .remove(&REGISTRATIONS, &key(user_id, webhook_id))?
        .is_some();
    txn.commit()?;
    Ok(existed)
}

fn open(store: &Store, user_id: &str, webhook_id: &str, sealed: &[u8]) -> Result<Registration> {
    let plain = store
        .data_key(user_id)?
        .decrypt(user_id, &record_id(webhook_id), sealed)
        .context("a webhook registration does not open")?;
    Ok(serde_json::from_slice(&plain)?)
}
