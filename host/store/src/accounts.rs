//! Users, their API tokens (stored hashed) and their dashboard passwords.

use anyhow::{Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Counted;
use super::records::{Bytes, Records, Space, Text, Unit, Writer};
use super::{DATA_KEYS, Store, now, random_hex};
use crate::secret::Secret;

pub(super) const USERS: Space<Text, Bytes> = Space::keyed_by_user("users", Counted::Profile);
pub(super) const USERS_BY_EMAIL: Space<Text, Text> =
    Space::user_owned("users_by_email", remove_email, Counted::Nothing);
/// SHA-256 of the token (hex) → token record. The token itself is never stored.
pub(super) const TOKENS: Space<Text, Bytes> =
    Space::user_owned("tokens", remove_tokens, Counted::Nothing);
/// `user \0 token hash` → (): a user's API tokens, for the dashboard's list.
pub(super) const TOKENS_BY_USER: Space<Text, Unit> =
    Space::keyed_by_user("tokens_by_user", Counted::Nothing);
/// `user` → the argon2id hash of their dashboard password (a PHC string).
pub(super) const PASSWORDS: Space<Text, Text> = Space::keyed_by_user("passwords", Counted::Nothing);

// The email index goes first: its removal reads the profile.
/// API tokens: `qt_` and 32 random bytes.
pub const TOKEN_PREFIX: &str = "qt_";

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
    /// Where it can be used: `/v1` or `/mcp`.
    pub audience: Audience,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TokenRecord {
    user_id: String,
    issued_at: i64,
    expires_at: i64,
    /// The resource the token is for (RFC 8707): records written before
    /// audiences existed are `/v1` tokens.
    #[serde(default)]
    audience: Audience,
    /// What it may do there: every scope for records written before scopes
    /// existed, and for API tokens.
    #[serde(default)]
    scope: Scope,
}

/// The resource a token may be used at (RFC 8707's audience). A token is
/// refused anywhere else: an assistant's MCP token cannot call `/v1`, and
/// an API token cannot call `/mcp`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    /// The REST API, `/v1`.
    #[default]
    V1,
    /// This server's MCP endpoint, `<origin>/mcp`.
    Mcp,
}

impl Audience {
    pub fn as_str(self) -> &'static str {
        match self {
            Audience::V1 => "v1",
            Audience::Mcp => "mcp",
        }
    }
}

/// One thing a token may do at its resource (a scope, RFC 6749 §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Ask the connected tools and read what they found (`search`,
    /// `fetch`, `query`, `list_connectors`).
    Search,
    /// Search the archive of earlier answers (`deep_search`).
    Archive,
}

impl Permission {
    pub const ALL: [Permission; 2] = [Permission::Search, Permission::Archive];

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Search => "search",
            Permission::Archive => "archive",
        }
    }
}

/// What a token may do: a set of [`Permission`]s. The default is all of
/// them (API tokens, and tokens issued before scopes existed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope(std::collections::BTreeSet<Permission>);

impl Default for Scope {
    fn default() -> Scope {
        Scope::all()
    }
}

impl Scope {
    pub fn all() -> Scope {
        Scope(Permission::ALL.into_iter().collect())
    }

    /// A `scope` parameter (names separated by spaces); an unknown name is
    /// refused with the message that says so, and none at all is refused.
    pub fn parse(raw: &str) -> Result<Scope, String> {
        let mut scope = std::collections::BTreeSet::new();
        for name in raw.split(' ').filter(|n| !n.is_empty()) {
            let permission = Permission::ALL
                .into_iter()
                .find(|p| p.as_str() == name)
                .ok_or_else(|| {
                    format!("unknown scope {name:?}; this server knows \"search\" and \"archive\"")
                })?;
            scope.insert(permission);
        }
        if scope.is_empty() {
            return Err("the scope names no permission".into());
        }
        Ok(Scope(scope))
    }

    pub fn allows(&self, permission: Permission) -> bool {
        self.0.contains(&permission)
    }

    /// The names, separated by spaces (the `scope` of a token response).
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|p| p.as_str()).collect();
        names.join(" ")
    }
}

/// What a bearer token turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenCheck {
    Valid {
        user: User,
        expires_at: i64,
        scope: Scope,
    },
    /// A valid token for another resource than the one asked.
    WrongAudience,
    Expired,
    Unknown,
}

impl Store {
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
        let mut txn = self.write()?;
        if txn.contains(&USERS_BY_EMAIL, &email)? {
            bail!("a user with the email {email} already exists");
        }
        txn.put(&USERS_BY_EMAIL, &email, &user.id)?;
        txn.put(&USERS, &user.id, &serde_json::to_vec(&user)?)?;
        txn.put(&DATA_KEYS, &user.id, &wrapped)?;
        txn.commit()?;
        Ok(user)
    }

    pub fn user(&self, id: &str) -> Result<Option<User>> {
        match self.read()?.get(&USERS, id)? {
            Some(bytes) => Ok(Some(serde_json::from_slice(&bytes)?)),
            None => Ok(None),
        }
    }

    pub fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let id = self
            .read()?
            .get(&USERS_BY_EMAIL, &email.trim().to_lowercase())?;
        match id {
            Some(id) => self.user(&id),
            None => Ok(None),
        }
    }

    // ---- API tokens -------------------------------------------------------

    /// Issues a token for `user_id` valid for `ttl_seconds` at `audience`.
    /// The token is returned once; only its hash is stored.
    pub fn issue_token(
        &self,
        user_id: &str,
        ttl_seconds: u64,
        audience: Audience,
    ) -> Result<(Secret, i64)> {
        self.issue_scoped_token(user_id, ttl_seconds, audience, Scope::all())
    }

    /// A token that may do only what `scope` allows (an assistant's, for
    /// what the person consented to).
    pub fn issue_scoped_token(
        &self,
        user_id: &str,
        ttl_seconds: u64,
        audience: Audience,
        scope: Scope,
    ) -> Result<(Secret, i64)> {
        let mut txn = self.write()?;
        let issued = issue_token_in(&mut txn, user_id, ttl_seconds, audience, scope)?;
        txn.commit()?;
        Ok(issued)
    }

    /// The user's API tokens that have not expired, newest first: an id
    /// (the start of the token's hash), never the token.
    pub fn tokens_of(&self, user_id: &str) -> Result<Vec<TokenInfo>> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for (hash, ()) in txn.with_prefix(&TOKENS_BY_USER, &format!("{user_id}\0"))? {
            let Some(bytes) = txn.get(&TOKENS, &hash)? else {
                continue;
            };
            let record: TokenRecord = serde_json::from_slice(&bytes)?;
            if record.expires_at > now() {
                out.push(TokenInfo {
                    id: token_id(&hash),
                    issued_at: record.issued_at,
                    expires_at: record.expires_at,
                    audience: record.audience,
                });
            }
        }
        out.sort_by_key(|t| std::cmp::Reverse(t.issued_at));
        Ok(out)
    }

    /// Revokes one of the user's tokens by its id; whether it was theirs.
    pub fn revoke_token(&self, user_id: &str, id: &str) -> Result<bool> {
        let prefix = format!("{user_id}\0");
        let mut txn = self.write()?;
        let found = txn
            .with_prefix(&TOKENS_BY_USER, &prefix)?
            .into_iter()
            .map(|(hash, ())| hash)
            .find(|hash| token_id(hash) == id);
        let Some(hash) = found else {
            return Ok(false);
        };
        txn.remove(&TOKENS, &hash)?;
        txn.remove(&TOKENS_BY_USER, &format!("{prefix}{hash}"))?;
        txn.commit()?;
        Ok(true)
    }

    /// Revokes an API token given the token itself; false if unknown.
    pub fn revoke_api_token(&self, token: &str) -> Result<bool> {
        let mut txn = self.write()?;
        let known = revoke_token_hash_in(&mut txn, &token_hash(token))?;
        txn.commit()?;
        Ok(known)
    }

    /// What `token` is, used at `audience`.
    pub fn check_token(&self, token: &str, audience: Audience) -> Result<TokenCheck> {
        if !token.starts_with(TOKEN_PREFIX) || token.len() > 128 {
            return Ok(TokenCheck::Unknown);
        }
        let Some(bytes) = self.read()?.get(&TOKENS, &token_hash(token))? else {
            return Ok(TokenCheck::Unknown);
        };
        let record: TokenRecord = serde_json::from_slice(&bytes)?;
        if now() >= record.expires_at {
            return Ok(TokenCheck::Expired);
        }
        if record.audience != audience {
            return Ok(TokenCheck::WrongAudience);
        }
        Ok(match self.user(&record.user_id)? {
            Some(user) => TokenCheck::Valid {
                user,
                expires_at: record.expires_at,
                scope: record.scope,
            },
            None => TokenCheck::Unknown,
        })
    }

    // ---- dashboard passwords ----------------------------------------------

    /// Stores the argon2id hash (PHC string) of the user's password.
    pub fn set_password_hash(&self, user_id: &str, phc: &str) -> Result<()> {
        let mut txn = self.write()?;
        if !self.has_data_key_in(&txn, user_id)? {
            bail!("user {user_id} does not exist or is being deleted");
        }
        txn.put(&PASSWORDS, user_id, phc)?;
        txn.commit()?;
        Ok(())
    }

    pub fn password_hash(&self, user_id: &str) -> Result<Option<String>> {
        self.read()?.get(&PASSWORDS, user_id)
    }
}

/// Revokes the API token with this hash inside `txn`; whether it existed.
pub fn revoke_token_hash_in(txn: &mut Writer, hash: &str) -> Result<bool> {
    Ok(txn.remove(&TOKENS, hash)?.is_some())
}

fn remove_email(txn: &mut Writer, user_id: &str) -> Result<u64> {
    let Some(bytes) = txn.get(&USERS, user_id)? else {
        return Ok(0);
    };
    let user: User = serde_json::from_slice(&bytes)?;
    Ok(u64::from(
        txn.remove(&USERS_BY_EMAIL, &user.email)?.is_some(),
    ))
}

/// Tokens are keyed by their hash: the user is in the record.
fn remove_tokens(txn: &mut Writer, user_id: &str) -> Result<u64> {
    txn.retain(&TOKENS, .., |_, bytes| {
        !serde_json::from_slice::<TokenRecord>(&bytes).is_ok_and(|r| r.user_id == user_id)
    })
}

/// How API tokens are named in lists: `tok_` and the start of the hash.
pub fn token_id(hash: &str) -> String {
    format!("tok_{}", &hash[..16.min(hash.len())])
}

/// How API tokens are stored: SHA-256, hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether the user exists as `txn` sees it: a check inside the write
/// that acts on it, so that a deletion cannot come in between.
pub fn user_exists_in(txn: &impl Records, user_id: &str) -> Result<bool> {
    Ok(txn.get(&USERS, user_id)?.is_some())
}

/// Issues a token inside `txn` (so that whatever else the transaction
/// records about it, a refresh family say, commits with it).
pub fn issue_token_in(
    txn: &mut Writer,
    user_id: &str,
    ttl_seconds: u64,
    audience: Audience,
    scope: Scope,
) -> Result<(Secret, i64)> {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let token = format!("{TOKEN_PREFIX}{}", B64URL.encode(raw));
    let issued_at = now();
    let record = TokenRecord {
        user_id: user_id.to_string(),
        issued_at,
        expires_at: issued_at + ttl_seconds as i64,
        audience,
        scope,
    };
    let hash = token_hash(&token);
    txn.put(&TOKENS, &hash, &serde_json::to_vec(&record)?)?;
    txn.put(&TOKENS_BY_USER, &format!("{user_id}\0{hash}"), ())?;
    Ok((Secret::new(token), record.expires_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_written_before_audiences_are_v1_tokens() {
        let old = br#"{"user_id":"usr_1","issued_at":1,"expires_at":2}"#;
        let record: TokenRecord = serde_json::from_slice(old).unwrap();
        assert_eq!(record.audience, Audience::V1);
        let mcp = TokenRecord {
            audience: Audience::Mcp,
            ..record
        };
        let bytes = serde_json::to_vec(&mcp).unwrap();
        let read: TokenRecord = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(read.audience, Audience::Mcp);
    }
}
