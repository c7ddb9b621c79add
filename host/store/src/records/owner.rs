//! Whose records a space holds, declared where the space is made
//! ([`super::Space::keyed_by_user`], [`super::Space::user_owned`],
//! [`super::Space::shared`]). A user's records leave their spaces in one
//! deletion commit (`deletion` walks [`UserData`] in the order of
//! `quarry`'s `user_data::SPACES`); a shared space says why it holds nobody's
//! records once a deletion has ended.

use anyhow::Result;

use super::Writer;

/// Whose records a space holds.
#[derive(Clone, Copy)]
pub enum Owner {
    /// Each record belongs to a user: how a deletion removes theirs, and
    /// what they count as in its report.
    User(Removal, Counted),
    /// Nobody's once a deletion has ended: why.
    Shared(&'static str),
}

/// A space's name and owner, whatever its kinds (for the registry).
#[derive(Clone, Copy)]
pub struct Declared {
    pub space: &'static str,
    pub owner: Owner,
}

impl Declared {
    /// What a deletion does in this space, when it holds users' records.
    pub const fn user_data(&self) -> Option<UserData> {
        match self.owner {
            Owner::User(removal, counted) => Some(UserData {
                space: self.space,
                removal,
                counted,
            }),
            Owner::Shared(_) => None,
        }
    }
}

/// One space holding records bound to a user.
#[derive(Clone, Copy)]
pub struct UserData {
    pub space: &'static str,
    pub removal: Removal,
    pub counted: Counted,
}

/// How a user's records leave a space.
#[derive(Clone, Copy)]
pub enum Removal {
    /// The key is the user id, or starts with it and a separator (`user \0
    /// ...`, `(user, n)`): the user's records are one key range.
    KeyedByUser,
    /// The owner's function finds them (keyed otherwise, such as by a
    /// token's hash with the user in the value); returns how many it removed.
    Custom(fn(&mut Writer, &str) -> Result<u64>),
}

/// What a space's removed records count as in `DeleteResponse.details`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    Nothing,
    /// `profile_deleted`.
    Profile,
    /// `archive_entries_removed`.
    ArchiveEntries,
    /// `webhooks_unregistered`.
    Webhooks,
}

/// Removes `user_id`'s records from every users' space of `spaces`, in
/// their order, inside `txn` (as a deletion's commit does); how many from
/// each.
pub fn remove_user(spaces: &[Declared], txn: &mut Writer, user_id: &str) -> Result<Vec<u64>> {
    spaces
        .iter()
        .filter_map(Declared::user_data)
        .map(|data| data.remove(txn, user_id))
        .collect()
}

impl UserData {
    /// Removes the user's records from this space inside `txn`; how many.
    pub fn remove(&self, txn: &mut Writer, user_id: &str) -> Result<u64> {
        match self.removal {
            Removal::KeyedByUser => txn.remove_keyed_by_user(self.space, user_id),
            Removal::Custom(remove) => remove(txn, user_id),
        }
    }
}
