//! The embedded store: one redb database in the data folder.
//!
//! Typed access to users, API tokens, connector grants, idempotency records
//! and day-window counters. Anything secret or personal that the contract
//! asks us to protect (connector credentials) is encrypted with the user's
//! data key before it reaches redb (see [`keys`]).

pub mod keys;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use rand::RngCore;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use self::keys::{DataKey, MasterKey};
use crate::secret::Secret;

const USERS: TableDefinition<&str, &[u8]> = TableDefinition::new("users");
const USERS_BY_EMAIL: TableDefinition<&str, &str> = TableDefinition::new("users_by_email");
const DATA_KEYS: TableDefinition<&str, &[u8]> = TableDefinition::new("data_keys");
/// SHA-256 of the token (hex) → token record. The token itself is never stored.
const TOKENS: TableDefinition<&str, &[u8]> = TableDefinition::new("tokens");
/// `user \0 connector` → the grant, encrypted with the user's data key.
const GRANTS: TableDefinition<&str, &[u8]> = TableDefinition::new("grants");
/// `user \0 key` → idempotency record.
const IDEMPOTENCY: TableDefinition<&str, &[u8]> = TableDefinition::new("idempotency");
/// `subject \0 bucket \0 day` → requests counted that UTC day.
const DAY_COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("day_counters");
/// `user \0 token hash` → (): a user's API tokens, for the dashboard's list.
const TOKENS_BY_USER: TableDefinition<&str, ()> = TableDefinition::new("tokens_by_user");
/// `user` → the argon2id hash of their dashboard password (a PHC string).
const PASSWORDS: TableDefinition<&str, &str> = TableDefinition::new("passwords");

/// API tokens: `qt_` and 32 random bytes.
pub const TOKEN_PREFIX: &str = "qt_";
/// Idempotency records are kept this long.
pub const IDEMPOTENCY_TTL_SECONDS: i64 = 24 * 3600;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub email: String,
    pub created_at: i64,
}

/// An API token as the dashboard lists it: never the token itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// `tok_` and the first 16 hex digits of the token's hash.
    pub id: String,
    pub issued_at: i64,
    pub expires_at: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TokenRecord {
    user_id: String,
    issued_at: i64,
    expires_at: i64,
}

/// What a bearer token turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenCheck {
    Valid { user: User, expires_at: i64 },
    Expired,
    Unknown,
}

/// A user's connection to a connector.
#[derive(Clone, Serialize, Deserialize)]
pub struct Grant {
    #[serde(with = "secret_string")]
    pub access_token: Secret,
    #[serde(with = "optional_secret_string", default)]
    pub refresh_token: Option<Secret>,
    /// When the access token expires (Unix seconds), if it does.
    pub expires_at: Option<i64>,
    /// Non-secret settings the connector's manifest declares.
    pub settings: Vec<(String, String)>,
    pub status: GrantStatus,
    pub connected_at: i64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GrantStatus {
    Connected,
    /// The credential stopped working; the user must connect again.
    NeedsReconnect,
}

/// A stored answer to a request with an `Idempotency-Key`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdempotencyRecord {
    /// SHA-256 of the request body: the same key with another body conflicts.
    pub body_hash: String,
    pub status: u16,
    pub body: Vec<u8>,
    pub created_at: i64,
}

pub struct Store {
    db: Database,
    master: MasterKey,
    /// Unwrapped data keys, by user.
    data_keys: Mutex<HashMap<String, Arc<DataKey>>>,
}

impl Store {
    /// Opens (or creates) `<data_dir>/quarry.redb`.
    pub fn open(data_dir: &Path, master_key: Option<&str>) -> Result<Store> {
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("creating {}", data_dir.display()))?;
        let path = data_dir.join("quarry.redb");
        let db = Database::create(&path).with_context(|| {
            format!(
                "opening {} (is another quarry process using this data folder?)",
                path.display()
            )
        })?;
        let txn = db.begin_write()?;
        txn.open_table(USERS)?;
        txn.open_table(USERS_BY_EMAIL)?;
        txn.open_table(DATA_KEYS)?;
        txn.open_table(TOKENS)?;
        txn.open_table(GRANTS)?;
        txn.open_table(IDEMPOTENCY)?;
        txn.open_table(DAY_COUNTERS)?;
        txn.open_table(TOKENS_BY_USER)?;
        txn.open_table(PASSWORDS)?;
        txn.commit()?;
        let master = MasterKey::load(master_key, data_dir)?;
        Ok(Store {
            db,
            master,
            data_keys: Mutex::default(),
        })
    }

    /// The database, for modules that own their own tables (the archive,
    /// webhooks, deletions) and share its transactions.
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The key that wraps data keys, for records that outlive a user's key.
    pub fn master(&self) -> &MasterKey {
        &self.master
    }

    // ---- users ------------------------------------------------------------

    pub fn create_user(&self, email: &str) -> Result<User> {
        let email = email.trim().to_lowercase();
        if !email.contains('@') || email.len() > 254 {
            bail!("{email:?} is not an email address");
        }
        let user = User {
            id: format!("usr_{}", random_hex(8)),
            email: email.clone(),
            created_at: now(),
        };
        let (_, wrapped) = self.master.new_data_key(&user.id);
        let txn = self.db.begin_write()?;
        {
            let mut by_email = txn.open_table(USERS_BY_EMAIL)?;
            if by_email.get(email.as_str())?.is_some() {
                bail!("a user with the email {email} already exists");
            }
            by_email.insert(email.as_str(), user.id.as_str())?;
            txn.open_table(USERS)?
                .insert(user.id.as_str(), serde_json::to_vec(&user)?.as_slice())?;
            txn.open_table(DATA_KEYS)?
                .insert(user.id.as_str(), wrapped.as_slice())?;
        }
        txn.commit()?;
        Ok(user)
    }

    pub fn user(&self, id: &str) -> Result<Option<User>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(USERS)?;
        Ok(match table.get(id)? {
            Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
            None => None,
        })
    }

    pub fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let id = {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(USERS_BY_EMAIL)?;
            table
                .get(email.trim().to_lowercase().as_str())?
                .map(|id| id.value().to_string())
        };
        match id {
            Some(id) => self.user(&id),
            None => Ok(None),
        }
    }

    // ---- API tokens -------------------------------------------------------

    /// Issues a token for `user_id` valid for `ttl_seconds`. The token is
    /// returned once; only its hash is stored.
    pub fn issue_token(&self, user_id: &str, ttl_seconds: u64) -> Result<(Secret, i64)> {
        let mut raw = [0u8; 32];
        rand::rng().fill_bytes(&mut raw);
        let token = format!("{TOKEN_PREFIX}{}", B64URL.encode(raw));
        let issued_at = now();
        let record = TokenRecord {
            user_id: user_id.to_string(),
            issued_at,
            expires_at: issued_at + ttl_seconds as i64,
        };
        let hash = token_hash(&token);
        let txn = self.db.begin_write()?;
        txn.open_table(TOKENS)?
            .insert(hash.as_str(), serde_json::to_vec(&record)?.as_slice())?;
        txn.open_table(TOKENS_BY_USER)?
            .insert(format!("{user_id}\0{hash}").as_str(), ())?;
        txn.commit()?;
        Ok((Secret::new(token), record.expires_at))
    }

    /// The user's API tokens that have not expired, newest first: an id
    /// (the start of the token's hash), never the token.
    pub fn tokens_of(&self, user_id: &str) -> Result<Vec<TokenInfo>> {
        let prefix = format!("{user_id}\0");
        let txn = self.db.begin_read()?;
        let index = txn.open_table(TOKENS_BY_USER)?;
        let tokens = txn.open_table(TOKENS)?;
        let mut out = Vec::new();
        for entry in index.range(prefix.as_str()..)? {
            let (key, _) = entry?;
            let Some(hash) = key.value().strip_prefix(&prefix).map(str::to_string) else {
                break;
            };
            let Some(bytes) = tokens.get(hash.as_str())? else {
                continue;
            };
            let record: TokenRecord = serde_json::from_slice(bytes.value())?;
            if record.expires_at > now() {
                out.push(TokenInfo {
                    id: token_id(&hash),
                    issued_at: record.issued_at,
                    expires_at: record.expires_at,
                });
            }
        }
        out.sort_by_key(|t| std::cmp::Reverse(t.issued_at));
        Ok(out)
    }

    /// Revokes one of the user's tokens by its id; whether it was theirs.
    pub fn revoke_token(&self, user_id: &str, id: &str) -> Result<bool> {
        let prefix = format!("{user_id}\0");
        let txn = self.db.begin_write()?;
        let found = {
            let index = txn.open_table(TOKENS_BY_USER)?;
            let mut found = None;
            for entry in index.range(prefix.as_str()..)? {
                let (key, _) = entry?;
                let Some(hash) = key.value().strip_prefix(&prefix) else {
                    break;
                };
                if token_id(hash) == id {
                    found = Some(hash.to_string());
                    break;
                }
            }
            found
        };
        let Some(hash) = found else {
            return Ok(false);
        };
        txn.open_table(TOKENS)?.remove(hash.as_str())?;
        txn.open_table(TOKENS_BY_USER)?
            .remove(format!("{prefix}{hash}").as_str())?;
        txn.commit()?;
        Ok(true)
    }

    // ---- dashboard passwords ----------------------------------------------

    /// Stores the argon2id hash (PHC string) of the user's password.
    pub fn set_password_hash(&self, user_id: &str, phc: &str) -> Result<()> {
        let txn = self.db.begin_write()?;
        if !self.has_data_key_in(&txn, user_id)? {
            bail!("user {user_id} does not exist or is being deleted");
        }
        txn.open_table(PASSWORDS)?.insert(user_id, phc)?;
        txn.commit()?;
        Ok(())
    }

    pub fn password_hash(&self, user_id: &str) -> Result<Option<String>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(PASSWORDS)?;
        Ok(table.get(user_id)?.map(|v| v.value().to_string()))
    }

    /// Revokes an API token given the token itself; false if unknown.
    pub fn revoke_api_token(&self, token: &str) -> Result<bool> {
        let txn = self.db.begin_write()?;
        let known = self.revoke_token_hash_in(&txn, &token_hash(token))?;
        txn.commit()?;
        Ok(known)
    }

    /// Revokes the API token with this hash inside `txn`.
    pub fn revoke_token_hash_in(&self, txn: &redb::WriteTransaction, hash: &str) -> Result<bool> {
        Ok(txn.open_table(TOKENS)?.remove(hash)?.is_some())
    }

    pub fn check_token(&self, token: &str) -> Result<TokenCheck> {
        if !token.starts_with(TOKEN_PREFIX) || token.len() > 128 {
            return Ok(TokenCheck::Unknown);
        }
        let record: Option<TokenRecord> = {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(TOKENS)?;
            match table.get(token_hash(token).as_str())? {
                Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
                None => None,
            }
        };
        let Some(record) = record else {
            return Ok(TokenCheck::Unknown);
        };
        if now() >= record.expires_at {
            return Ok(TokenCheck::Expired);
        }
        Ok(match self.user(&record.user_id)? {
            Some(user) => TokenCheck::Valid {
                user,
                expires_at: record.expires_at,
            },
            None => TokenCheck::Unknown,
        })
    }

    // ---- connector grants -------------------------------------------------

    pub fn put_grant(&self, user_id: &str, connector: &str, grant: &Grant) -> Result<()> {
        let key = self.data_key(user_id)?;
        let id = grant_key(user_id, connector);
        let sealed = key.encrypt(user_id, &id, &serde_json::to_vec(grant)?);
        let txn = self.db.begin_write()?;
        txn.open_table(GRANTS)?
            .insert(id.as_str(), sealed.as_slice())?;
        txn.commit()?;
        Ok(())
    }

    pub fn grant(&self, user_id: &str, connector: &str) -> Result<Option<Grant>> {
        let id = grant_key(user_id, connector);
        let sealed = {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(GRANTS)?;
            table.get(id.as_str())?.map(|v| v.value().to_vec())
        };
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let plain = self.data_key(user_id)?.decrypt(user_id, &id, &sealed)?;
        Ok(Some(serde_json::from_slice(&plain)?))
    }

    /// Removes a user's grant; whether there was one.
    pub fn remove_grant(&self, user_id: &str, connector: &str) -> Result<bool> {
        let id = grant_key(user_id, connector);
        let txn = self.db.begin_write()?;
        let removed = txn.open_table(GRANTS)?.remove(id.as_str())?.is_some();
        txn.commit()?;
        Ok(removed)
    }

    /// Every grant of a user, by connector id.
    pub fn grants(&self, user_id: &str) -> Result<Vec<(String, Grant)>> {
        let prefix = format!("{user_id}\0");
        let sealed: Vec<(String, Vec<u8>)> = {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(GRANTS)?;
            let mut out = Vec::new();
            for entry in table.range(prefix.as_str()..)? {
                let (k, v) = entry?;
                let Some(connector) = k.value().strip_prefix(&prefix) else {
                    break;
                };
                out.push((connector.to_string(), v.value().to_vec()));
            }
            out
        };
        let key = self.data_key(user_id)?;
        sealed
            .into_iter()
            .map(|(connector, bytes)| {
                let plain = key.decrypt(user_id, &grant_key(user_id, &connector), &bytes)?;
                Ok((connector, serde_json::from_slice(&plain)?))
            })
            .collect()
    }

    // ---- idempotency ------------------------------------------------------

    /// The stored answer for `(user, key)`, unless older than 24 hours.
    pub fn idempotency_record(
        &self,
        user_id: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        let id = idempotency_key(user_id, key);
        let sealed = {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(IDEMPOTENCY)?;
            table.get(id.as_str())?.map(|v| v.value().to_vec())
        };
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        // The record holds a response: the question and what was found.
        let plain = self.data_key(user_id)?.decrypt(user_id, &id, &sealed)?;
        let record: IdempotencyRecord = serde_json::from_slice(&plain)?;
        Ok((now() - record.created_at < IDEMPOTENCY_TTL_SECONDS).then_some(record))
    }

    pub fn put_idempotency_record(
        &self,
        user_id: &str,
        key: &str,
        record: &IdempotencyRecord,
    ) -> Result<()> {
        let id = idempotency_key(user_id, key);
        let sealed = self
            .data_key(user_id)?
            .encrypt(user_id, &id, &serde_json::to_vec(record)?);
        let txn = self.db.begin_write()?;
        if !self.has_data_key_in(&txn, user_id)? {
            bail!("user {user_id} is being deleted");
        }
        txn.open_table(IDEMPOTENCY)?
            .insert(id.as_str(), sealed.as_slice())?;
        txn.commit()?;
        Ok(())
    }

    // ---- day-window counters ---------------------------------------------

    pub fn day_count(&self, subject: &str, bucket: &str, day: i64) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(DAY_COUNTERS)?;
        Ok(table
            .get(counter_key(subject, bucket, day).as_str())?
            .map_or(0, |v| v.value()))
    }

    /// Writes several counters in one transaction (one fsync).
    pub fn put_day_counts(&self, counts: &[(String, String, i64, u64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(DAY_COUNTERS)?;
            for (subject, bucket, day, count) in counts {
                table.insert(counter_key(subject, bucket, *day).as_str(), *count)?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    // ---- deletion ---------------------------------------------------------

    /// Destroys the user's wrapped data key inside `txn` and forgets the
    /// unwrapped copy: from the commit on, every record sealed with it is
    /// noise (crypto-shredding), wherever a copy of it survives.
    pub fn destroy_data_key_in(&self, txn: &redb::WriteTransaction, user_id: &str) -> Result<()> {
        txn.open_table(DATA_KEYS)?.remove(user_id)?;
        self.data_keys.lock().expect("key cache").remove(user_id);
        Ok(())
    }

    /// Removes everything this module keeps about a user inside `txn`: the
    /// profile, API tokens, grants, idempotency records and day counters.
    pub fn remove_user_in(&self, txn: &redb::WriteTransaction, user_id: &str) -> Result<Removed> {
        let profile: Option<User> = {
            let mut users = txn.open_table(USERS)?;
            let removed = users.remove(user_id)?;
            match removed {
                Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
                None => None,
            }
        };
        if let Some(user) = &profile {
            txn.open_table(USERS_BY_EMAIL)?
                .remove(user.email.as_str())?;
        }
        txn.open_table(DATA_KEYS)?.remove(user_id)?;
        let mut api_tokens = 0;
        txn.open_table(TOKENS)?.retain(|_, bytes| {
            let theirs = serde_json::from_slice::<TokenRecord>(bytes)
                .is_ok_and(|record| record.user_id == user_id);
            api_tokens += u64::from(theirs);
            !theirs
        })?;
        remove_users_rows(&mut txn.open_table(TOKENS_BY_USER)?, user_id)?;
        txn.open_table(PASSWORDS)?.remove(user_id)?;
        let grants = remove_users_rows(&mut txn.open_table(GRANTS)?, user_id)?;
        let idempotency_records = remove_users_rows(&mut txn.open_table(IDEMPOTENCY)?, user_id)?;
        remove_users_rows(&mut txn.open_table(DAY_COUNTERS)?, user_id)?;
        self.data_keys.lock().expect("key cache").remove(user_id);
        Ok(Removed {
            profile: profile.is_some(),
            api_tokens,
            grants,
            idempotency_records,
        })
    }

    // ---- keys -------------------------------------------------------------

    /// Whether the user still has a data key, read inside `txn`: writers of
    /// a user's records check it in their own transaction, so that nothing
    /// is written for a user whose deletion has destroyed the key.
    pub fn has_data_key_in(&self, txn: &redb::WriteTransaction, user_id: &str) -> Result<bool> {
        Ok(txn.open_table(DATA_KEYS)?.get(user_id)?.is_some())
    }

    /// The user's data key, unwrapped (and cached in memory).
    pub fn data_key(&self, user_id: &str) -> Result<Arc<DataKey>> {
        if let Some(key) = self.data_keys.lock().expect("key cache").get(user_id) {
            return Ok(key.clone());
        }
        let wrapped = {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(DATA_KEYS)?;
            table.get(user_id)?.map(|v| v.value().to_vec())
        };
        let Some(wrapped) = wrapped else {
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

/// What [`Store::remove_user_in`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    pub profile: bool,
    pub api_tokens: u64,
    pub grants: u64,
    pub idempotency_records: u64,
}

/// Removes a user's rows from a table keyed `user \0 ...`.
fn remove_users_rows<V: redb::Value + 'static>(
    table: &mut redb::Table<'_, &'static str, V>,
    user_id: &str,
) -> Result<u64> {
    // Every key `user \0 anything` sorts between these two.
    let (first, past) = (format!("{user_id}\0"), format!("{user_id}\u{1}"));
    let mut removed = 0;
    table.retain_in(first.as_str()..past.as_str(), |_, _| {
        removed += 1;
        false
    })?;
    Ok(removed)
}

fn grant_key(user_id: &str, connector: &str) -> String {
    format!("{user_id}\0{connector}")
}

fn idempotency_key(user_id: &str, key: &str) -> String {
    format!("{user_id}\0{key}")
}

fn counter_key(subject: &str, bucket: &str, day: i64) -> String {
    format!("{subject}\0{bucket}\0{day}")
}

/// How API tokens are stored: SHA-256, hex.
pub fn token_id(hash: &str) -> String {
    format!("tok_{}", &hash[..16.min(hash.len())])
}

/// How API tokens are stored: SHA-256, hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

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

mod secret_string {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::secret::Secret;

    pub fn serialize<S: Serializer>(secret: &Secret, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(secret.expose())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Secret, D::Error> {
        Ok(Secret::new(String::deserialize(d)?))
    }
}

mod optional_secret_string {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::secret::Secret;

    pub fn serialize<S: Serializer>(secret: &Option<Secret>, s: S) -> Result<S::Ok, S::Error> {
        match secret {
            Some(secret) => s.serialize_some(secret.expose()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Secret>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.map(Secret::new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        (dir, store)
    }

    #[test]
    fn tokens_are_stored_hashed_and_expire() {
        let (dir, store) = store();
        let user = store.create_user("Alice@Example.com").unwrap();
        assert_eq!(user.email, "alice@example.com");
        let (token, _) = store.issue_token(&user.id, 60).unwrap();
        assert!(matches!(
            store.check_token(token.expose()).unwrap(),
            TokenCheck::Valid { .. }
        ));
        assert_eq!(store.check_token("qt_nope").unwrap(), TokenCheck::Unknown);
        let (short, _) = store.issue_token(&user.id, 0).unwrap();
        assert_eq!(
            store.check_token(short.expose()).unwrap(),
            TokenCheck::Expired
        );
        drop(store);
        let file = std::fs::read(dir.path().join("quarry.redb")).unwrap();
        assert!(
            !contains(&file, token.expose().as_bytes()),
            "the token itself never reaches disk"
        );
    }

    #[test]
    fn grants_are_encrypted_at_rest() {
        let (dir, store) = store();
        let user = store.create_user("a@b.c").unwrap();
        let grant = Grant {
            access_token: Secret::new("very-secret-token"),
            refresh_token: None,
            expires_at: None,
            settings: vec![("scope".into(), "repo:acme/shop".into())],
            status: GrantStatus::Connected,
            connected_at: now(),
        };
        store.put_grant(&user.id, "github", &grant).unwrap();
        let back = store.grant(&user.id, "github").unwrap().unwrap();
        assert_eq!(back.access_token.expose(), "very-secret-token");
        assert_eq!(store.grants(&user.id).unwrap().len(), 1);
        drop(store);
        let file = std::fs::read(dir.path().join("quarry.redb")).unwrap();
        assert!(!contains(&file, b"very-secret-token"));
    }

    #[test]
    fn tokens_are_listed_by_user_and_revoked_by_id() {
        let (_dir, store) = store();
        let alice = store.create_user("alice@b.c").unwrap();
        let bob = store.create_user("bob@b.c").unwrap();
        let (token, _) = store.issue_token(&alice.id, 60).unwrap();
        store.issue_token(&bob.id, 60).unwrap();
        store.issue_token(&alice.id, 0).unwrap();
        let listed = store.tokens_of(&alice.id).unwrap();
        assert_eq!(listed.len(), 1, "expired tokens are not listed");
        assert!(listed[0].id.starts_with("tok_"));
        assert!(!store.revoke_token(&bob.id, &listed[0].id).unwrap());
        assert!(store.revoke_token(&alice.id, &listed[0].id).unwrap());
        assert_eq!(
            store.check_token(token.expose()).unwrap(),
            TokenCheck::Unknown
        );
        assert_eq!(store.tokens_of(&bob.id).unwrap().len(), 1);
        store.set_password_hash(&alice.id, "$argon2id$x").unwrap();
        assert!(store.password_hash(&alice.id).unwrap().is_some());
        let txn = store.db().begin_write().unwrap();
        store.remove_user_in(&txn, &alice.id).unwrap();
        txn.commit().unwrap();
        assert!(store.password_hash(&alice.id).unwrap().is_none());
        assert!(store.tokens_of(&alice.id).unwrap().is_empty());
    }

    #[test]
    fn duplicate_emails_are_refused() {
        let (_dir, store) = store();
        store.create_user("a@b.c").unwrap();
        assert!(store.create_user("A@b.c").is_err());
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }
}
