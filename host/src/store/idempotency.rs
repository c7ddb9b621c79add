//! Stored answers to requests with an `Idempotency-Key`, sealed with the
//! user's data key (they hold a question and what was found).

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::records::{Bytes, Records, Space, Text};
use super::user_data::{Counted, UserData};
use super::{Store, now};

/// `user \0 key` → idempotency record.
const IDEMPOTENCY: Space<Text, Bytes> = Space::new("idempotency");

pub(super) const USER_DATA: UserData =
    UserData::keyed_by_user(IDEMPOTENCY.name(), Counted::Nothing);

/// Idempotency records are kept this long.
pub const IDEMPOTENCY_TTL_SECONDS: i64 = 24 * 3600;

/// A stored answer to a request with an `Idempotency-Key`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdempotencyRecord {
    /// SHA-256 of the request body: the same key with another body conflicts.
    pub body_hash: String,
    pub status: u16,
    pub body: Vec<u8>,
    pub created_at: i64,
}

impl Store {
    /// The stored answer for `(user, key)`, unless older than 24 hours.
    pub fn idempotency_record(
        &self,
        user_id: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        let id = idempotency_key(user_id, key);
        let Some(sealed) = self.read()?.get(&IDEMPOTENCY, &id)? else {
            return Ok(None);
        };
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
        let mut txn = self.write()?;
        if !self.has_data_key_in(&txn, user_id)? {
            bail!("user {user_id} is being deleted");
        }
        txn.put(&IDEMPOTENCY, &id, &sealed)?;
        txn.commit()
    }
}

fn idempotency_key(user_id: &str, key: &str) -> String {
    format!("{user_id}\0{key}")
}
