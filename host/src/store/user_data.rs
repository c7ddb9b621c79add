//! The registry of user data: every space that holds records bound to a
//! user is declared once, next to the code that owns it, with how those
//! records leave it and how they count in the deletion's report.
//!
//! `deletion` walks the owners' lists (`USER_DATA` in `store`, `archive`,
//! `webhooks`, `issuer` and `dashboard`) inside its one commit, so a space
//! added to a list is deleted with the user, and a test that walks a whole
//! user lifecycle fails on a space that holds a user's record and is in no
//! list.

use anyhow::Result;

use super::records::Writer;

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

impl UserData {
    pub const fn keyed_by_user(space: &'static str, counted: Counted) -> UserData {
        UserData {
            space,
            removal: Removal::KeyedByUser,
            counted,
        }
    }

    pub const fn custom(
        space: &'static str,
        remove: fn(&mut Writer, &str) -> Result<u64>,
        counted: Counted,
    ) -> UserData {
        UserData {
            space,
            removal: Removal::Custom(remove),
            counted,
        }
    }

    /// Removes the user's records from this space inside `txn`; how many.
    pub fn remove(&self, txn: &mut Writer, user_id: &str) -> Result<u64> {
        match self.removal {
            Removal::KeyedByUser => txn.remove_keyed_by_user(self.space, user_id),
            Removal::Custom(remove) => remove(txn, user_id),
        }
    }
}
