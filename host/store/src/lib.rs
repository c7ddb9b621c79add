//! Storage (crate `quarry-store`): the only crate that knows what backs the
//! service. It alone depends on redb and PostgreSQL's client.
//!
//! Everything else sees [`records`]: named spaces of ordered records, read
//! and written in transactions through [`Store::read`] and
//! [`Store::write`]. The embedded backend is one redb file in the data
//! folder (`embedded.rs`); another transactional ordered store can sit
//! behind the same interface.
//!
//! This module also owns the records every part shares: users and their
//! data keys ([`keys`]: envelope encryption), API tokens, dashboard
//! passwords, connector grants, idempotency records and day counters.
//! Anything secret or personal is encrypted with the user's data key
//! before it reaches the backend.
//!
//! Two backends: redb, embedded (`embedded.rs`: one process, the default),
//! and PostgreSQL (`postgres.rs`, with its schema in `migrations/`),
//! shared by replicas.

mod accounts;
mod counters;
mod embedded;
mod grants;
mod idempotency;
pub mod keys;
mod leases;
mod legacy;
mod migrations;
mod postgres;
mod postgres_tls;
pub mod private;
pub mod records;
/// `Secret` and constant-time comparison, from their own crate (the
/// sandbox needs them and not the store).
pub use quarry_secret as secret;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use rand::RngCore;

pub use self::accounts::{
    Audience, Permission, Scope, TOKEN_PREFIX, TokenCheck, TokenInfo, User, issue_token_in,
    revoke_token_hash_in, token_hash, token_id, user_exists_in,
};
pub use self::grants::{Grant, GrantStatus};
pub use self::idempotency::{
    ClaimOutcome, IDEMPOTENCY_LEASE_SECONDS, IDEMPOTENCY_TTL_SECONDS, IdempotencyRecord,
    RequestState,
};
use self::keys::DataKey;
pub use self::keys::MasterKey;
pub use self::postgres::PostgresConfig;
pub use self::postgres_tls::is_loopback_host;
pub use self::records::owner::{Counted, Declared, Owner, Removal, UserData, remove_user};
use self::records::{Backend, Bytes, Reader, Records, Space, Text, Unit, Writer};

/// `user` → their data key, wrapped by the master key.
const DATA_KEYS: Space<Text, Bytes> = Space::keyed_by_user("data_keys", Counted::Nothing);

/// One record, `pending`, while records removed by a deletion may still be
/// readable in the backend's files; [`Store::purge_removed`] clears it.
/// Written in the deletion's own commit, so that a crash before the purge
/// leaves it for the next start.
pub const PURGE: Space<Text, Unit> = Space::shared(
    "purge",
    "one marker, no user: a deletion's removed records are still to be purged from the files",
);
const PURGE_PENDING: &str = "pending";

/// The embedded file's page cache, in MiB, unless the operator says
/// otherwise (`[storage] cache_mib`).
pub const DEFAULT_PAGE_CACHE_MIB: usize = 64;

pub struct Store {
    backend: Box<dyn Backend>,
    master: MasterKey,
    /// Unwrapped data keys, by user.
    data_keys: Mutex<HashMap<String, Arc<DataKey>>>,
}

impl Store {
    /// Opens (or creates) `<data_dir>/quarry.redb`.
    /// The master key is `master_key`, or else the key file in the data
    /// folder (see [`MasterKey::load`]).
    pub fn open(data_dir: &Path, master_key: Option<&str>) -> Result<Store> {
        let cache_bytes = DEFAULT_PAGE_CACHE_MIB << 20;
        Store::open_with(
            data_dir,
            MasterKey::load(master_key, data_dir)?,
            cache_bytes,
        )
    }

    /// Opens (or creates) `<data_dir>/quarry.redb`, with this master key
    /// and a page cache of at most `cache_bytes`.
    pub fn open_with(data_dir: &Path, master: MasterKey, cache_bytes: usize) -> Result<Store> {
        private::folder(data_dir)?;
        let backend = embedded::Redb::open(&data_dir.join("quarry.redb"), cache_bytes)?;
        Ok(Store::with_backend(Box::new(backend), master))
    }

    /// Connects to the PostgreSQL database that replicas share, bringing
    /// its schema up to date. The master key is the operator's (never in
    /// the database it protects).
    pub fn open_shared(postgres: &PostgresConfig, master_key: &str) -> Result<Store> {
        let backend = postgres::Postgres::open(postgres)?;
        let master = MasterKey::load(Some(master_key), Path::new("."))?;
        Ok(Store::with_backend(Box::new(backend), master))
    }

    fn with_backend(backend: Box<dyn Backend>, master: MasterKey) -> Store {
        Store {
            backend,
            master,
            data_keys: Mutex::default(),
        }
    }

    /// A read transaction: one consistent snapshot of every space.
    pub fn read(&self) -> Result<Reader> {
        Ok(Reader::new(self.backend.read()?))
    }

    /// A write transaction: its changes commit together or not at all.
    pub fn write(&self) -> Result<Writer> {
        Ok(Writer::new(self.backend.write()?))
    }

    /// The names of the spaces that hold records.
    pub fn spaces(&self) -> Result<Vec<String>> {
        self.backend.spaces()
    }

    /// Whether this process is the only one using the records (the
    /// embedded backend), rather than one replica of several.
    pub fn exclusive(&self) -> bool {
        self.backend.exclusive()
    }

    /// Notes, in `txn`, that it removes records that must leave the disk
    /// ([`Store::purge_removed`] then does it, now or at the next start).
    pub fn mark_for_purge_in(&self, txn: &mut Writer) -> Result<()> {
        txn.put(&PURGE, PURGE_PENDING, ())
    }

    /// Makes the records removed since the last purge unreadable from the
    /// data folder's files (the embedded file is rewritten without them;
    /// see [`Backend::purge_removed`]), when one is due. The marker goes
    /// with the purge, under the writer lock: deletions that committed
    /// before it share it, and one that commits after it waits for it and
    /// is purged by the next.
    pub fn purge_removed(&self) -> Result<()> {
        self.backend
            .purge_removed(&mut |txn| Ok(txn.remove(&PURGE, PURGE_PENDING)?.is_some()))
    }

    /// The key that wraps data keys, for records that outlive a user's key.
    pub fn master(&self) -> &MasterKey {
        &self.master
    }

    // ---- data keys --------------------------------------------------------

    /// Whether the user still has a data key, read inside `txn`: writers of
    /// a user's records check it in their own transaction, so that nothing
    /// is written for a user whose deletion has destroyed the key.
    pub fn has_data_key_in(&self, txn: &Writer, user_id: &str) -> Result<bool> {
        txn.contains(&DATA_KEYS, user_id)
    }

    /// Destroys the user's wrapped data key inside `txn` and forgets the
    /// unwrapped copy: from the commit on, every record sealed with it is
    /// noise (crypto-shredding), wherever a copy of it survives.
    pub fn destroy_data_key_in(&self, txn: &mut Writer, user_id: &str) -> Result<()> {
        txn.remove(&DATA_KEYS, user_id)?;
        self.forget_data_key(user_id);
        Ok(())
    }

    /// Drops the unwrapped copy of a user's key from memory.
    pub fn forget_data_key(&self, user_id: &str) {
        self.data_keys.lock().expect("key cache").remove(user_id);
    }

    /// The user's data key, unwrapped (and cached in memory).
    /// The user's data key as stored (wrapped by the master key), for the
    /// tests that check it leaves the disk with the user.
    pub fn wrapped_data_key(&self, user_id: &str) -> Result<Option<Vec<u8>>> {
        self.read()?.get(&DATA_KEYS, user_id)
    }

    pub fn data_key(&self, user_id: &str) -> Result<Arc<DataKey>> {
        if let Some(key) = self.data_keys.lock().expect("key cache").get(user_id) {
            return Ok(key.clone());
        }
        let Some(wrapped) = self.read()?.get(&DATA_KEYS, user_id)? else {
            bail!("user {user_id} has no data key (deleted?)")
        };
        let key = Arc::new(self.master.unwrap_data_key(user_id, &wrapped)?);
        self.data_keys
            .lock()
            .expect("key cache")
            .insert(user_id.to_string(), key.clone());
        Ok(key)
    }
}

/// The store's spaces, a user's in the order a deletion removes them (the
/// email index reads the profile before the profile goes).
pub const SPACES: &[Declared] = &[
    accounts::USERS_BY_EMAIL.declared(),
    accounts::USERS.declared(),
    DATA_KEYS.declared(),
    accounts::TOKENS.declared(),
    accounts::TOKENS_BY_USER.declared(),
    accounts::PASSWORDS.declared(),
    grants::GRANTS.declared(),
    idempotency::IDEMPOTENCY.declared(),
    counters::DAY_COUNTERS.declared(),
    leases::LEASES.declared(),
    PURGE.declared(),
];

/// The backend cannot be reached (PostgreSQL is down, say): the request
/// may be retried, and the API answers 503.
#[derive(Debug, thiserror::Error)]
#[error("storage unavailable: {0}")]
pub struct Unavailable(pub String);

pub fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut raw);
    hex::encode(raw)
}

/// `bytes` random bytes, base64url without padding (states, nonces, verifiers).
pub fn random_b64(bytes: usize) -> String {
    use base64::Engine as _;
    let mut raw = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut raw);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod backends_tests;
#[cfg(test)]
mod tests;
