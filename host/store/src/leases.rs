//! Short leases on a user's work that must happen once across replicas at
//! a time (refreshing a connector's token: a vendor that rotates refresh
//! tokens refuses the second of two concurrent refreshes). Taken and freed
//! in write transactions, which every backend serialises; a holder that
//! dies loses its lease when it runs out.

use anyhow::Result;

use super::Counted;
use super::records::{Bytes, Records, Space, Text};
use super::{Store, now};

/// `user \0 what` → `holder \0 until` (Unix seconds).
pub(super) const LEASES: Space<Text, Bytes> = Space::keyed_by_user("user_leases", Counted::Nothing);

impl Store {
    /// Takes the lease on `what` of the user for `seconds`, unless another
    /// holder has it; whether `holder` has it now.
    pub fn try_lease(&self, user_id: &str, what: &str, holder: &str, seconds: i64) -> Result<bool> {
        let key = lease_key(user_id, what);
        let mut txn = self.write()?;
        if let Some(current) = txn.get(&LEASES, &key)?
            && let Some((other, until)) = parse(&current)
            && other != holder
            && until > now()
        {
            return Ok(false);
        }
        let value = format!("{holder}\0{}", now() + seconds);
        txn.put(&LEASES, &key, value.as_bytes())?;
        txn.commit()?;
        Ok(true)
    }

    /// Frees the lease if `holder` still has it.
    pub fn release_lease(&self, user_id: &str, what: &str, holder: &str) -> Result<()> {
        let key = lease_key(user_id, what);
        let mut txn = self.write()?;
        let ours = txn
            .get(&LEASES, &key)?
            .is_some_and(|current| parse(&current).is_some_and(|(h, _)| h == holder));
        if ours {
            txn.remove(&LEASES, &key)?;
            txn.commit()?;
        }
        Ok(())
    }
}

fn lease_key(user_id: &str, what: &str) -> String {
    format!("{user_id}\0{what}")
}

fn parse(value: &[u8]) -> Option<(&str, i64)> {
    let text = std::str::from_utf8(value).ok()?;
    let (holder, until) = text.split_once('\0')?;
    Some((holder, until.parse().ok()?))
}
