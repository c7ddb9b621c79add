//! Connector grants: a user's credential for a connector, sealed with the
//! user's data key.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::Counted;
use super::Store;
use super::records::{Bytes, Records, Space, Text};
use crate::secret::Secret;

/// `user \0 connector` → the grant, encrypted with the user's data key.
pub(super) const GRANTS: Space<Text, Bytes> = Space::keyed_by_user("grants", Counted::Nothing);

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

impl Store {
    pub fn put_grant(&self, user_id: &str, connector: &str, grant: &Grant) -> Result<()> {
        let key = self.data_key(user_id)?;
        let id = grant_key(user_id, connector);
        let sealed = key.encrypt(user_id, &id, &serde_json::to_vec(grant)?);
        let mut txn = self.write()?;
        txn.put(&GRANTS, &id, &sealed)?;
        txn.commit()
    }

    pub fn grant(&self, user_id: &str, connector: &str) -> Result<Option<Grant>> {
        let id = grant_key(user_id, connector);
        let Some(sealed) = self.read()?.get(&GRANTS, &id)? else {
            return Ok(None);
        };
        let plain = self.data_key(user_id)?.decrypt(user_id, &id, &sealed)?;
        Ok(Some(serde_json::from_slice(&plain)?))
    }

    /// Removes a user's grant; whether there was one.
    pub fn remove_grant(&self, user_id: &str, connector: &str) -> Result<bool> {
        let mut txn = self.write()?;
        let removed = txn
            .remove(&GRANTS, &grant_key(user_id, connector))?
            .is_some();
        txn.commit()?;
        Ok(removed)
    }

    /// Every grant of a user, by connector id.
    pub fn grants(&self, user_id: &str) -> Result<Vec<(String, Grant)>> {
        let sealed = self.read()?.with_prefix(&GRANTS, &format!("{user_id}\0"))?;
        let key = self.data_key(user_id)?;
        sealed
            .into_iter()
            .map(|(connector, bytes)| {
                let plain = key.decrypt(user_id, &grant_key(user_id, &connector), &bytes)?;
                Ok((connector, serde_json::from_slice(&plain)?))
            })
            .collect()
    }
}

impl Store {
    /// The users who have a grant for `connector`.
    pub fn users_connected_to(&self, connector: &str) -> Result<Vec<String>> {
        let suffix = format!("\0{connector}");
        let keys = self.read()?.all_in(&GRANTS, ..)?;
        Ok(keys
            .into_iter()
            .filter_map(|(key, _)| key.strip_suffix(&suffix).map(String::from))
            .collect())
    }

    /// Moves a user's grant for `from` to each of `to` that has none yet,
    /// the credential as it is, and removes it from `from`; in one
    /// transaction, so that a grant is never in neither place. The
    /// connectors it was given to (none when `from` had no grant).
    pub fn carry_over_grant(&self, user_id: &str, from: &str, to: &[&str]) -> Result<Vec<String>> {
        let key = self.data_key(user_id)?;
        let old = grant_key(user_id, from);
        let mut txn = self.write()?;
        let Some(sealed) = txn.get(&GRANTS, &old)? else {
            return Ok(Vec::new());
        };
        let plain = key.decrypt(user_id, &old, &sealed)?;
        let mut given = Vec::new();
        for connector in to {
            let new = grant_key(user_id, connector);
            if !txn.contains(&GRANTS, &new)? {
                txn.put(&GRANTS, &new, &key.encrypt(user_id, &new, &plain))?;
                given.push(connector.to_string());
            }
        }
        txn.remove(&GRANTS, &old)?;
        txn.commit()?;
        Ok(given)
    }
}

fn grant_key(user_id: &str, connector: &str) -> String {
    format!("{user_id}\0{connector}")
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
