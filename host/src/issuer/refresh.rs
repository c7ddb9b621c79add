//! Refresh tokens for assistants: `qr_` + 32 random bytes, stored hashed,
//! rotated on every use. Each device approval starts a *family*; using a
//! refresh token that was already used (a stolen copy, or a replay) revokes
//! the whole family and every API token it issued (OAuth 2.0 Security BCP,
//! refresh token rotation).

use anyhow::Result;
use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::device::{digest, random_token};
use super::{Issued, Issuer, REFRESH_TOKEN_SECONDS};
use crate::secret::Secret;
use crate::store::{Store, now, random_hex, token_hash};

/// SHA-256 of a refresh token → [`RefreshRecord`].
const REFRESH_TOKENS: TableDefinition<&str, &[u8]> = TableDefinition::new("refresh_tokens");
/// Family id → [`Family`].
const FAMILIES: TableDefinition<&str, &[u8]> = TableDefinition::new("refresh_families");

pub const REFRESH_PREFIX: &str = "qr_";

pub(super) fn create_tables(txn: &WriteTransaction) -> Result<()> {
    txn.open_table(REFRESH_TOKENS)?;
    txn.open_table(FAMILIES)?;
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct RefreshRecord {
    family: String,
    expires_at: i64,
    used: bool,
}

#[derive(Serialize, Deserialize)]
struct Family {
    user_id: String,
    client_id: String,
    created_at: i64,
    /// Hashes of the refresh tokens and API tokens issued in this family.
    refresh_hashes: Vec<String>,
    access_hashes: Vec<String>,
}

/// What a refresh came to.
#[derive(Debug)]
pub enum Renewal {
    Issued(Issued),
    /// Unknown, expired, revoked, reused, or another client's token.
    InvalidGrant,
}

/// Starts a family for a new approval; returns its first refresh token.
pub(super) fn start_family(
    store: &Store,
    user_id: &str,
    client_id: &str,
    access_token: &str,
) -> Result<Secret> {
    let family_id = format!("fam_{}", random_hex(12));
    let family = Family {
        user_id: user_id.to_string(),
        client_id: client_id.to_string(),
        created_at: now(),
        refresh_hashes: Vec::new(),
        access_hashes: vec![token_hash(access_token)],
    };
    let txn = store.db().begin_write()?;
    let token = add_refresh_token(&txn, &family_id, family)?;
    txn.commit()?;
    Ok(token)
}

fn add_refresh_token(
    txn: &WriteTransaction,
    family_id: &str,
    mut family: Family,
) -> Result<Secret> {
    let token = format!("{REFRESH_PREFIX}{}", random_token(32));
    let hash = digest(&token);
    let record = RefreshRecord {
        family: family_id.to_string(),
        expires_at: now() + REFRESH_TOKEN_SECONDS,
        used: false,
    };
    txn.open_table(REFRESH_TOKENS)?
        .insert(hash.as_str(), serde_json::to_vec(&record)?.as_slice())?;
    family.refresh_hashes.push(hash);
    txn.open_table(FAMILIES)?
        .insert(family_id, serde_json::to_vec(&family)?.as_slice())?;
    Ok(Secret::new(token))
}

impl Issuer {
    /// Exchanges a refresh token for a new API token and a new refresh
    /// token; the old one stops working.
    pub fn refresh(&self, refresh_token: &str, client_id: &str) -> Result<Renewal> {
        let hash = digest(refresh_token);
        let txn = self.store.db().begin_write()?;
        let record: Option<RefreshRecord> =
            match txn.open_table(REFRESH_TOKENS)?.get(hash.as_str())? {
                Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
                None => None,
            };
        let Some(mut record) = record else {
            return Ok(Renewal::InvalidGrant);
        };
        let family: Option<Family> = match txn.open_table(FAMILIES)?.get(record.family.as_str())? {
            Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
            None => None,
        };
        let Some(family) = family else {
            return Ok(Renewal::InvalidGrant);
        };
        if record.used {
            tracing::warn!(family = %record.family, "a used refresh token came back: revoking its family");
            self.revoke_family_in(&txn, &record.family)?;
            txn.commit()?;
            return Ok(Renewal::InvalidGrant);
        }
        if family.client_id != client_id
            || now() >= record.expires_at
            || self.store.user(&family.user_id)?.is_none()
        {
            return Ok(Renewal::InvalidGrant);
        }
        record.used = true;
        txn.open_table(REFRESH_TOKENS)?
            .insert(hash.as_str(), serde_json::to_vec(&record)?.as_slice())?;
        let user_id = family.user_id.clone();
        let new_refresh = add_refresh_token(&txn, &record.family, family)?;
        txn.commit()?;
        let (access_token, _) = self.store.issue_token(&user_id, self.token_ttl_seconds)?;
        self.remember_access_token(&record.family, access_token.expose())?;
        Ok(Renewal::Issued(Issued {
            access_token,
            expires_in: self.token_ttl_seconds,
            refresh_token: new_refresh,
        }))
    }

    fn remember_access_token(&self, family_id: &str, token: &str) -> Result<()> {
        let txn = self.store.db().begin_write()?;
        {
            let mut families = txn.open_table(FAMILIES)?;
            let family: Option<Family> = match families.get(family_id)? {
                Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
                None => None,
            };
            if let Some(mut family) = family {
                family.access_hashes.push(token_hash(token));
                families.insert(family_id, serde_json::to_vec(&family)?.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// RFC 7009: revokes a refresh token (with its family and the API tokens
    /// it issued) or an API token. Unknown tokens are not an error.
    pub fn revoke(&self, token: &str) -> Result<()> {
        if token.starts_with(REFRESH_PREFIX) {
            let txn = self.store.db().begin_write()?;
            let family = txn
                .open_table(REFRESH_TOKENS)?
                .get(digest(token).as_str())?
                .and_then(|bytes| serde_json::from_slice::<RefreshRecord>(bytes.value()).ok())
                .map(|r| r.family);
            if let Some(family) = family {
                self.revoke_family_in(&txn, &family)?;
            }
            txn.commit()?;
        } else {
            self.store.revoke_api_token(token)?;
        }
        Ok(())
    }

    fn revoke_family_in(&self, txn: &WriteTransaction, family_id: &str) -> Result<()> {
        let family: Option<Family> = match txn.open_table(FAMILIES)?.remove(family_id)? {
            Some(bytes) => Some(serde_json::from_slice(bytes.value())?),
            None => None,
        };
        if let Some(family) = family {
            let mut tokens = txn.open_table(REFRESH_TOKENS)?;
            for hash in &family.refresh_hashes {
                tokens.remove(hash.as_str())?;
            }
            for hash in &family.access_hashes {
                self.store.revoke_token_hash_in(txn, hash)?;
            }
        }
        Ok(())
    }

    /// Removes a deleted user's families inside the deletion's transaction.
    pub fn remove_user_in(&self, txn: &WriteTransaction, user_id: &str) -> Result<u64> {
        let theirs: Vec<String> = {
            let families = txn.open_table(FAMILIES)?;
            let mut out = Vec::new();
            for row in families.iter()? {
                let (id, bytes) = row?;
                if serde_json::from_slice::<Family>(bytes.value())
                    .is_ok_and(|f| f.user_id == user_id)
                {
                    out.push(id.value().to_string());
                }
            }
            out
        };
        for family in &theirs {
            self.revoke_family_in(txn, family)?;
        }
        Ok(theirs.len() as u64)
    }
}
