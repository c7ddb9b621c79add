//! The registry of user data, assembled: every owner's list of the spaces
//! that hold a user's records, in the order the deletion removes them, and
//! the spaces that hold none, each with the reason. `server.rs` hands it
//! to `deletion` (which so depends on no owner).
//!
//! A space that holds a user's record and is on neither list fails the
//! lifecycle test (`after_a_deletion_no_space_holds_a_record_that_names_the_user`
//! in `tests/dashboard.rs`).

use crate::store::UserData;

/// Every space holding records bound to a user. The store's own come
/// first: its email index reads the profile before the profile goes.
pub fn user_data() -> impl Iterator<Item = &'static UserData> {
    [
        crate::store::USER_DATA,
        crate::archive::USER_DATA,
        crate::webhooks::USER_DATA,
        crate::issuer::USER_DATA,
        crate::dashboard::USER_DATA,
    ]
    .into_iter()
    .flatten()
}

/// Spaces that hold no record bound to a user once a deletion has ended.
pub const NOT_USER_DATA: &[(&str, &str)] = &[
    (
        "deletions",
        "the deletion job, sealed with the master key; its last commit removes it",
    ),
    (
        "pending_revocations",
        "tokens still to revoke at a vendor after the user is gone, sealed with the master key, without the user's id",
    ),
    (
        "webhook_outbox_due",
        "the outbox's queue: (due time, delivery id), removed with its delivery",
    ),
    (
        "device_user_codes",
        "what a person types for a device code: the code's hash, no user; goes with its device code",
    ),
    (
        "dashboard_sso_states",
        "sign-ins in flight as earlier versions kept them (now in the browser's sealed cookie): \
         nobody's; emptied when the dashboard starts",
    ),
    (
        "oauth_clients",
        "MCP clients that registered themselves (RFC 7591): a name and redirect addresses, nobody's; \
         what a person allowed them is in refresh_families",
    ),
    (
        "purge",
        "one marker, no user: a deletion's removed records are still to be purged from the files",
    ),
    (
        "webhook_given_up",
        "what is kept of an undeliverable event: no user id and nothing secret; dropped after 30 days",
    ),
];

/// Whether a space is declared, as user data or as not user data.
pub fn is_declared(space: &str) -> bool {
    user_data().any(|d| d.space == space) || NOT_USER_DATA.iter().any(|(s, _)| *s == space)
}
