//! Refresh tokens for assistants: `qr_` + 32 random bytes, stored hashed,
//! rotated on every use. Each approval starts a *family*; using a refresh
//! token that was already used (a stolen copy, or a replay) revokes the
//! whole family and every API token it issued (OAuth 2.0 Security BCP,
//! refresh token rotation).
//!
//! Except within [`GRACE_SECONDS`] of its use, while the pair it was
//! exchanged for is still unused: then it answers with that same pair
//! (the OAuth 2.1 draft's §4.3.1 allows it). Assistants call tools in
//! parallel; when the access token expires, two calls in flight both
//! refresh with the same token, and the second must not sign the person
//! out. The pair is kept for that, sealed with the master key, until the
//! new refresh token is used.
//!
//! A family keeps the hashes of its last [`KEPT_PER_FAMILY`] refresh and
//! access tokens: a refresh reads and writes a bounded record, however
//! long the assistant stays connected. Older refresh tokens are forgotten
//! (coming back, they are merely unknown) and older access tokens revoked
//! (their successors are in the client's hands).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::secrets::{digest, random_token};
use super::{Issued, Issuer, REFRESH_TOKEN_SECONDS};
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::secret::Secret;
use quarry_store::{
    Audience, Counted, Scope, issue_token_in, now, random_hex, revoke_token_hash_in, token_hash,
    user_exists_in,
};

/// SHA-256 of a refresh token → [`RefreshRecord`].
pub(super) const REFRESH_TOKENS: Space<Text, Bytes> =
    Space::user_owned("refresh_tokens", remove_refresh_tokens, Counted::Nothing);
/// Family id → [`Family`].
pub(super) const FAMILIES: Space<Text, Bytes> =
    Space::user_owned("refresh_families", remove_families, Counted::Nothing);

pub const REFRESH_PREFIX: &str = "qr_";

/// How long a used refresh token still answers with the pair it gave.
pub const GRACE_SECONDS: i64 = 30;
/// Refresh and access token hashes a family keeps (each list).
const KEPT_PER_FAMILY: usize = 16;

#[derive(Serialize, Deserialize)]
struct RefreshRecord {
    family: String,
    expires_at: i64,
    used: bool,
    /// When it was used.
    #[serde(default)]
    used_at: i64,
    /// The token it was exchanged for, while that one is unused.
    #[serde(default)]
    successor: Option<Successor>,
    /// The hash of the token exchanged for this one.
    #[serde(default)]
    predecessor: Option<String>,
}

/// The pair a refresh token was exchanged for, sealed with the master key
/// (the associated data binds it to the used token's hash).
#[derive(Serialize, Deserialize)]
struct Successor {
    refresh_hash: String,
    /// Hex of the sealed [`Pair`].
    sealed: String,
}

#[derive(Serialize, Deserialize)]
struct Pair {
    access_token: String,
    access_expires_at: i64,
    refresh_token: String,
}

#[derive(Serialize, Deserialize)]
struct Family {
    user_id: String,
    client_id: String,
    /// The resource its access tokens are for (families started before
    /// audiences existed are `/v1` ones).
    #[serde(default)]
    audience: Audience,
    /// What its tokens may do (every scope for families started before
    /// scopes existed, and for the device flow's).
    #[serde(default)]
    scope: Scope,
    /// The client's name when the person approved it, for the dashboard.
    #[serde(default)]
    client_name: String,
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

/// What a family is started for: who approved which client, for what.
pub(super) struct Approval<'a> {
    pub user_id: &'a str,
    pub client_id: &'a str,
    pub client_name: &'a str,
    pub audience: Audience,
    pub scope: Scope,
}

/// A new family's id.
pub(super) fn new_family_id() -> String {
    format!("fam_{}", random_hex(12))
}

/// Starts the family `family_id` for a new approval inside `txn`; returns
/// its first refresh token.
pub(super) fn start_family_in(
    txn: &mut Writer,
    family_id: &str,
    approval: Approval<'_>,
    access_token: &str,
) -> Result<Secret> {
    let family = Family {
        user_id: approval.user_id.to_string(),
        client_id: approval.client_id.to_string(),
        client_name: approval.client_name.to_string(),
        audience: approval.audience,
        scope: approval.scope,
        created_at: now(),
        refresh_hashes: Vec::new(),
        access_hashes: vec![token_hash(access_token)],
    };
    add_refresh_token(txn, family_id, family, None)
}

/// A new refresh token in `family` (after `predecessor`, the one it was
/// exchanged for, if any); the family keeps its last tokens only.
fn add_refresh_token(
    txn: &mut Writer,
    family_id: &str,
    mut family: Family,
    predecessor: Option<&str>,
) -> Result<Secret> {
    let token = format!("{REFRESH_PREFIX}{}", random_token(32));
    let hash = digest(&token);
    let record = RefreshRecord {
        family: family_id.to_string(),
        expires_at: now() + REFRESH_TOKEN_SECONDS,
        used: false,
        used_at: 0,
        successor: None,
        predecessor: predecessor.map(String::from),
    };
    txn.put(&REFRESH_TOKENS, &hash, &serde_json::to_vec(&record)?)?;
    family.refresh_hashes.push(hash);
    for forgotten in drain_oldest(&mut family.refresh_hashes) {
        txn.remove(&REFRESH_TOKENS, &forgotten)?;
    }
    for revoked in drain_oldest(&mut family.access_hashes) {
        revoke_token_hash_in(txn, &revoked)?;
    }
    put_family(txn, family_id, &family)?;
    Ok(Secret::new(token))
}

/// Takes out all but the last [`KEPT_PER_FAMILY`] of `hashes`.
fn drain_oldest(hashes: &mut Vec<String>) -> Vec<String> {
    let over = hashes.len().saturating_sub(KEPT_PER_FAMILY);
    hashes.drain(..over).collect()
}

fn put_family(txn: &mut Writer, family_id: &str, family: &Family) -> Result<()> {
    txn.put(&FAMILIES, family_id, &serde_json::to_vec(family)?)
}

fn family(txn: &impl Records, family_id: &str) -> Result<Option<Family>> {
    let bytes = txn.get(&FAMILIES, family_id)?;
    Ok(bytes.map(|b| serde_json::from_slice(&b)).transpose()?)
}

fn refresh_record(txn: &impl Records, hash: &str) -> Result<Option<RefreshRecord>> {
    let bytes = txn.get(&REFRESH_TOKENS, hash)?;
    Ok(bytes.map(|b| serde_json::from_slice(&b)).transpose()?)
}

impl Issuer {
    /// Exchanges a refresh token for a new API token and a new refresh
    /// token; the old one stops working (but for the grace period: see
    /// the module's comment).
    pub fn refresh(&self, refresh_token: &str, client_id: &str) -> Result<Renewal> {
        let hash = digest(refresh_token);
        let mut txn = self.store.write()?;
        let Some(mut record) = refresh_record(&txn, &hash)? else {
            return Ok(Renewal::InvalidGrant);
        };
        let Some(family) = family(&txn, &record.family)? else {
            return Ok(Renewal::InvalidGrant);
        };
        if record.used {
            if family.client_id == client_id
                && let Some(same) = self.pair_within_grace(&txn, &hash, &record)?
            {
                return Ok(Renewal::Issued(same));
            }
            tracing::warn!(family = %record.family, "a used refresh token came back: revoking its family");
            revoke_family_in(&mut txn, &record.family)?;
            txn.commit()?;
            return Ok(Renewal::InvalidGrant);
        }
        if family.client_id != client_id
            || now() >= record.expires_at
            || !user_exists_in(&txn, &family.user_id)?
        {
            return Ok(Renewal::InvalidGrant);
        }
        // This token's predecessor has nothing more to hand out.
        if let Some(predecessor) = &record.predecessor {
            forget_successor(&mut txn, predecessor)?;
        }
        // The new access token joins its family in the same commit: a
        // revocation of the family can never miss it.
        let (access_token, access_expires_at) = issue_token_in(
            &mut txn,
            &family.user_id,
            self.token_ttl_seconds,
            family.audience,
            family.scope.clone(),
        )?;
        let mut family = family;
        family.access_hashes.push(token_hash(access_token.expose()));
        let new_refresh = add_refresh_token(&mut txn, &record.family, family, Some(&hash))?;
        let pair = Pair {
            access_token: access_token.expose().to_string(),
            access_expires_at,
            refresh_token: new_refresh.expose().to_string(),
        };
        record.used = true;
        record.used_at = now();
        record.successor = Some(Successor {
            refresh_hash: digest(new_refresh.expose()),
            sealed: hex::encode(
                self.store
                    .master()
                    .encrypt(&successor_id(&hash), &serde_json::to_vec(&pair)?),
            ),
        });
        txn.put(&REFRESH_TOKENS, &hash, &serde_json::to_vec(&record)?)?;
        txn.commit()?;
        Ok(Renewal::Issued(Issued {
            access_token,
            expires_in: self.token_ttl_seconds,
            refresh_token: new_refresh,
        }))
    }

    /// The pair a used refresh token gave, if it was used within the
    /// grace period and that pair's refresh token is still unused.
    fn pair_within_grace(
        &self,
        txn: &impl Records,
        hash: &str,
        record: &RefreshRecord,
    ) -> Result<Option<Issued>> {
        let t = now();
        let Some(successor) = &record.successor else {
            return Ok(None);
        };
        if t - record.used_at > GRACE_SECONDS
            || refresh_record(txn, &successor.refresh_hash)?.is_none_or(|next| next.used)
        {
            return Ok(None);
        }
        let sealed = hex::decode(&successor.sealed)?;
        let pair: Pair =
            serde_json::from_slice(&self.store.master().decrypt(&successor_id(hash), &sealed)?)?;
        Ok(Some(Issued {
            expires_in: u64::try_from(pair.access_expires_at - t)
                .unwrap_or(0)
                .max(1),
            access_token: Secret::new(pair.access_token),
            refresh_token: Secret::new(pair.refresh_token),
        }))
    }

    /// RFC 7009: revokes a refresh token (with its family and the API tokens
    /// it issued) or an API token. Unknown tokens are not an error.
    pub fn revoke(&self, token: &str) -> Result<()> {
        if token.starts_with(REFRESH_PREFIX) {
            let mut txn = self.store.write()?;
            if let Some(record) = refresh_record(&txn, &digest(token))? {
                revoke_family_in(&mut txn, &record.family)?;
            }
            txn.commit()?;
        } else {
            self.store.revoke_api_token(token)?;
        }
        Ok(())
    }
}

/// The associated data of the pair a used refresh token keeps.
fn successor_id(hash: &str) -> String {
    format!("refresh-successor/{hash}")
}

/// Drops the pair kept by the refresh token with this hash, if any.
fn forget_successor(txn: &mut Writer, hash: &str) -> Result<()> {
    if let Some(mut record) = refresh_record(txn, hash)?
        && record.successor.take().is_some()
    {
        txn.put(&REFRESH_TOKENS, hash, &serde_json::to_vec(&record)?)?;
    }
    Ok(())
}

/// An assistant a person approved, as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub id: String,
    pub client_id: String,
    pub client_name: String,
    pub audience: Audience,
    pub scope: Scope,
    pub connected_at: i64,
}

impl Issuer {
    /// The assistants `user_id` approved and has not revoked, newest first.
    pub fn connections_of(&self, user_id: &str) -> Result<Vec<Connection>> {
        let mut connections: Vec<Connection> = families_of(&self.store.read()?, user_id)?
            .into_iter()
            .map(|(id, family)| Connection {
                id,
                client_name: if family.client_name.is_empty() {
                    family.client_id.clone()
                } else {
                    family.client_name
                },
                client_id: family.client_id,
                audience: family.audience,
                scope: family.scope,
                connected_at: family.created_at,
            })
            .collect();
        connections.sort_by_key(|c| std::cmp::Reverse(c.connected_at));
        Ok(connections)
    }

    /// Revokes one of `user_id`'s assistants (its refresh tokens and the
    /// access tokens it holds); whether it was theirs.
    pub fn disconnect(&self, user_id: &str, family_id: &str) -> Result<bool> {
        let mut txn = self.store.write()?;
        let theirs = family(&txn, family_id)?.is_some_and(|f| f.user_id == user_id);
        if theirs {
            revoke_family_in(&mut txn, family_id)?;
            txn.commit()?;
        }
        Ok(theirs)
    }
}

/// Removes a family, its refresh tokens and the API tokens it issued.
pub(super) fn revoke_family_in(txn: &mut Writer, family_id: &str) -> Result<()> {
    let Some(family) = txn.remove(&FAMILIES, family_id)? else {
        return Ok(());
    };
    let family: Family = serde_json::from_slice(&family)?;
    for hash in &family.refresh_hashes {
        txn.remove(&REFRESH_TOKENS, hash)?;
    }
    for hash in &family.access_hashes {
        revoke_token_hash_in(txn, hash)?;
    }
    Ok(())
}

/// The ids and records of a user's families.
fn families_of(txn: &impl Records, user_id: &str) -> Result<Vec<(String, Family)>> {
    let mut theirs = Vec::new();
    for (id, bytes) in txn.all_in(&FAMILIES, ..)? {
        if let Ok(family) = serde_json::from_slice::<Family>(&bytes)
            && family.user_id == user_id
        {
            theirs.push((id, family));
        }
    }
    Ok(theirs)
}

fn remove_refresh_tokens(txn: &mut Writer, user_id: &str) -> Result<u64> {
    let mut removed = 0;
    for (_, family) in families_of(txn, user_id)? {
        for hash in &family.refresh_hashes {
            removed += u64::from(txn.remove(&REFRESH_TOKENS, hash)?.is_some());
        }
    }
    Ok(removed)
}

/// Removes a deleted user's families (and the API tokens they issued).
fn remove_families(txn: &mut Writer, user_id: &str) -> Result<u64> {
    let theirs = families_of(txn, user_id)?;
    for (id, _) in &theirs {
        revoke_family_in(txn, id)?;
    }
    Ok(theirs.len() as u64)
}
