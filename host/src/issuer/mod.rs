//! Quarry's own OAuth 2.0 authorization server, for AI assistants. Two
//! ways in, one kind of result (an access token for 60 minutes and a
//! refresh token that rotates on use, RFC 9700):
//! - the device authorization grant (RFC 8628, `device.rs`), for `/v1`:
//!   an assistant asks for a code, the person enters it in the dashboard
//!   at `/device`; its `client_id` is any label, shown to the person;
//! - the authorization code grant with PKCE (`authorization.rs`), for
//!   `/mcp`, as MCP clients do it: they register (RFC 7591, or a Client ID
//!   Metadata Document: `clients.rs`, `documents.rs`), send the person to
//!   `/oauth/authorize` (the dashboard's consent page) and exchange the
//!   code for tokens bound to the MCP resource (RFC 8707) and the scope
//!   consented to.
//!
//! Refresh tokens (`refresh.rs`) come in families, one per approval, which
//! the dashboard lists as the person's connected assistants; revocation
//! (RFC 7009) ends a family. Every secret (codes, refresh tokens) is
//! stored as its SHA-256 only.

pub mod authorization;
pub mod clients;
mod device;
pub mod documents;
mod refresh;
mod secrets;

use std::sync::Arc;

use anyhow::Result;

pub use self::device::{DeviceStart, PendingDevice, Poll};
pub use self::refresh::{Connection, Renewal};
use crate::origin::PublicOrigin;
use quarry_store::{Declared, Store};

/// The authorization server's spaces: a user's device codes, codes,
/// refresh tokens (found through their families, so they go first) and
/// token families (with the API tokens they issued).
pub const SPACES: &[Declared] = &[
    device::DEVICE_CODES.declared(),
    authorization::CODES.declared(),
    refresh::REFRESH_TOKENS.declared(),
    refresh::FAMILIES.declared(),
    device::USER_CODES.declared(),
    clients::CLIENTS.declared(),
];

/// How long a device code can be approved.
pub const DEVICE_CODE_SECONDS: i64 = 600;
/// The least polling interval a client is told to keep.
pub const POLL_INTERVAL_SECONDS: i64 = 5;
/// How long a refresh token can be used (each use gives a new one).
pub const REFRESH_TOKEN_SECONDS: i64 = 30 * 24 * 3600;

pub struct Issuer {
    store: Arc<Store>,
    /// Lifetime of the API tokens it issues.
    token_ttl_seconds: u64,
    /// Where the server is reached: the issuer's identifier (RFC 8414) is
    /// this origin, and the MCP resource is `<origin>/mcp`.
    pub origin: PublicOrigin,
    /// Client ID Metadata Documents, fetched and kept.
    pub documents: documents::Documents,
    /// When expired device codes and authorization codes were last
    /// swept (Unix seconds).
    device_codes_swept: std::sync::atomic::AtomicI64,
    authorization_codes_swept: std::sync::atomic::AtomicI64,
}

/// What the token endpoint hands an assistant.
#[derive(Debug)]
pub struct Issued {
    pub access_token: quarry_store::secret::Secret,
    pub expires_in: u64,
    pub refresh_token: quarry_store::secret::Secret,
}

impl Issuer {
    pub fn new(
        store: Arc<Store>,
        token_ttl_seconds: u64,
        origin: PublicOrigin,
        documents: documents::Documents,
    ) -> Issuer {
        Issuer {
            store,
            token_ttl_seconds,
            origin,
            documents,
            device_codes_swept: std::sync::atomic::AtomicI64::new(0),
            authorization_codes_swept: std::sync::atomic::AtomicI64::new(0),
        }
    }
}

/// Whether a minute passed since the sweep `swept` times (and if so, the
/// sweep is this caller's): a sweep reads every code, so not per request.
fn sweep_due(swept: &std::sync::atomic::AtomicI64) -> bool {
    use std::sync::atomic::Ordering;
    let t = quarry_store::now();
    let last = swept.load(Ordering::Relaxed);
    t - last >= 60
        && swept
            .compare_exchange(last, t, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// How often registered clients nobody allowed are looked for.
const FORGET_UNUSED_CLIENTS_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

impl Issuer {
    /// Forgets registered clients nobody allowed, at start and every ten
    /// minutes, for as long as the issuer lives (every replica does it;
    /// it is idempotent).
    pub fn start_forgetting_unused_clients(self: &Arc<Self>) {
        let issuer = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(FORGET_UNUSED_CLIENTS_EVERY);
            loop {
                every.tick().await;
                let Some(issuer) = issuer.upgrade() else {
                    return;
                };
                let forgotten =
                    tokio::task::spawn_blocking(move || issuer.forget_unused_clients()).await;
                match forgotten {
                    Ok(Ok(0)) => {}
                    Ok(Ok(count)) => {
                        tracing::info!(count, "forgot registered clients nobody allowed")
                    }
                    Ok(Err(error)) => tracing::warn!(
                        error = format!("{error:#}"),
                        "forgetting unused registered clients failed"
                    ),
                    Err(error) => tracing::warn!(%error, "forgetting unused clients panicked"),
                }
            }
        });
    }

    /// Whether the server speaks https (for the verification address).
    pub fn https(&self) -> bool {
        self.origin.origin().starts_with("https://")
    }

    /// Issues, inside `txn`, an access token for `audience` and the first
    /// refresh token of the new family `family_id` (whose renewals keep
    /// that audience and scope): the device flow issues `/v1` tokens, the
    /// authorization code grant [`quarry_store::Audience::Mcp`] ones.
    /// `None` when the user is gone: the check commits with the tokens, so
    /// a deletion cannot come in between and leave tokens of nobody.
    fn issue_in(
        &self,
        txn: &mut quarry_store::records::Writer,
        approval: refresh::Approval<'_>,
        family_id: &str,
    ) -> Result<Option<Issued>> {
        if !quarry_store::user_exists_in(txn, approval.user_id)? {
            return Ok(None);
        }
        let (access_token, _) = quarry_store::issue_token_in(
            txn,
            approval.user_id,
            self.token_ttl_seconds,
            approval.audience,
            approval.scope.clone(),
        )?;
        let refresh_token =
            refresh::start_family_in(txn, family_id, approval, access_token.expose())?;
        Ok(Some(Issued {
            access_token,
            expires_in: self.token_ttl_seconds,
            refresh_token,
        }))
    }

    /// How long the access tokens it issues live, in minutes (the consent
    /// page says it).
    pub fn token_minutes(&self) -> u64 {
        self.token_ttl_seconds.div_ceil(60)
    }

    /// An issuer on `https://quarry.test`, fetching from any address.
    #[cfg(test)]
    pub fn for_tests(store: Arc<Store>) -> Issuer {
        let origin = PublicOrigin::new(
            Some("https://quarry.test"),
            "127.0.0.1:443".parse().expect("an address"),
            true,
        );
        let documents = documents::Documents::new(true, &[]).expect("an HTTP client");
        Issuer::new(store, 3600, origin, documents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_store::{Audience, TokenCheck};

    fn issuer() -> (tempfile::TempDir, Arc<Store>, Issuer, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), None).unwrap());
        let user = store.create_user("alice@acme.test").unwrap().id;
        let issuer = Issuer::for_tests(store.clone());
        (dir, store, issuer, user)
    }

    fn valid(store: &Store, token: &str) -> bool {
        matches!(
            store.check_token(token, Audience::V1).unwrap(),
            TokenCheck::Valid { .. }
        )
    }

    #[test]
    fn a_device_code_approved_by_the_user_yields_tokens_once() {
        let (_dir, store, issuer, user) = issuer();
        let start = issuer.start_device("Claude Desktop").unwrap();
        assert_eq!(start.user_code.len(), 9);
        assert!(matches!(
            issuer
                .poll_device(&start.device_code, "Claude Desktop")
                .unwrap(),
            Poll::Pending
        ));
        assert!(
            matches!(
                issuer
                    .poll_device(&start.device_code, "Claude Desktop")
                    .unwrap(),
                Poll::SlowDown
            ),
            "polling faster than the interval"
        );
        let typed = start.user_code.to_lowercase().replace('-', " ");
        let pending = issuer
            .pending_device(&typed)
            .unwrap()
            .expect("the code is found as typed");
        assert_eq!(pending.client_id, "Claude Desktop");
        assert!(
            matches!(
                issuer
                    .poll_device(&start.device_code, "another app")
                    .unwrap(),
                Poll::InvalidGrant
            ),
            "another client cannot use the code"
        );
        assert!(issuer.decide_device(&typed, &user, true).unwrap());
        assert!(
            !issuer.decide_device(&typed, &user, false).unwrap(),
            "decided once"
        );
        let Poll::Issued(issued) = issuer
            .poll_device(&start.device_code, "Claude Desktop")
            .unwrap()
        else {
            panic!("approved")
        };
        assert!(valid(&store, issued.access_token.expose()));
        assert_eq!(issued.expires_in, 3600);
        assert!(issued.refresh_token.expose().starts_with("qr_"));
        assert!(
            matches!(
                issuer
                    .poll_device(&start.device_code, "Claude Desktop")
                    .unwrap(),
                Poll::InvalidGrant
            ),
            "the device code is single use"
        );
        assert!(issuer.pending_device(&start.user_code).unwrap().is_none());
    }

    #[test]
    fn a_denied_code_is_access_denied() {
        let (_dir, _store, issuer, user) = issuer();
        let start = issuer.start_device("cli").unwrap();
        assert!(
            issuer
                .decide_device(&start.user_code, &user, false)
                .unwrap()
        );
        assert!(matches!(
            issuer.poll_device(&start.device_code, "cli").unwrap(),
            Poll::Denied
        ));
        assert!(
            !issuer.decide_device("BCDF-GHJK", &user, true).unwrap(),
            "unknown code"
        );
    }

    fn approved(issuer: &Issuer, user: &str) -> Issued {
        let start = issuer.start_device("cli").unwrap();
        issuer.decide_device(&start.user_code, user, true).unwrap();
        match issuer.poll_device(&start.device_code, "cli").unwrap() {
            Poll::Issued(issued) => issued,
            other => panic!("{other:?}"),
        }
    }

    /// Removes the user's records as a deletion's last step does.
    fn delete_user(store: &Store, user_id: &str) {
        let mut txn = store.write().unwrap();
        quarry_store::remove_user(quarry_store::SPACES, &mut txn, user_id).unwrap();
        txn.commit().unwrap();
    }

    /// A person approves an assistant, then is deleted before it polls:
    /// it gets nothing, and no token or family of nobody is left. (The
    /// device flow used to issue without looking, in a transaction of
    /// its own after the code's.)
    #[test]
    fn nothing_is_issued_to_a_person_deleted_after_approving() {
        let (_dir, store, issuer, user) = issuer();
        let start = issuer.start_device("cli").unwrap();
        assert!(issuer.decide_device(&start.user_code, &user, true).unwrap());
        delete_user(&store, &user);
        assert!(matches!(
            issuer.poll_device(&start.device_code, "cli").unwrap(),
            Poll::InvalidGrant
        ));
        assert_eq!(issuer.connections_of(&user).unwrap(), vec![]);
        assert_eq!(store.tokens_of(&user).unwrap(), vec![]);
    }

    #[test]
    fn refresh_tokens_rotate_and_a_reused_one_revokes_its_family() {
        let (_dir, store, issuer, user) = issuer();
        let first = approved(&issuer, &user);
        let Renewal::Issued(second) = issuer.refresh(first.refresh_token.expose(), "cli").unwrap()
        else {
            panic!("refreshed")
        };
        assert_ne!(second.refresh_token.expose(), first.refresh_token.expose());
        assert!(valid(&store, second.access_token.expose()));
        assert!(
            matches!(
                issuer
                    .refresh(second.refresh_token.expose(), "other")
                    .unwrap(),
                Renewal::InvalidGrant
            ),
            "another client's refresh token"
        );
        // The first comes back at once, while the pair it gave is unused
        // (two calls in flight refreshed together): that same pair.
        let Renewal::Issued(again) = issuer.refresh(first.refresh_token.expose(), "cli").unwrap()
        else {
            panic!("the same pair within the grace period")
        };
        assert_eq!(again.refresh_token.expose(), second.refresh_token.expose());
        assert_eq!(again.access_token.expose(), second.access_token.expose());
        // Once the second is used, the first coming back is stolen or
        // replayed.
        let Renewal::Issued(third) = issuer
            .refresh(second.refresh_token.expose(), "cli")
            .unwrap()
        else {
            panic!("refreshed")
        };
        assert!(matches!(
            issuer.refresh(first.refresh_token.expose(), "cli").unwrap(),
            Renewal::InvalidGrant
        ));
        assert!(
            matches!(
                issuer.refresh(third.refresh_token.expose(), "cli").unwrap(),
                Renewal::InvalidGrant
            ),
            "the whole family is revoked"
        );
        assert!(!valid(&store, first.access_token.expose()));
        assert!(!valid(&store, second.access_token.expose()));
        assert!(!valid(&store, third.access_token.expose()));
    }

    #[test]
    fn a_family_keeps_its_last_tokens_only() {
        let (_dir, store, issuer, user) = issuer();
        let first = approved(&issuer, &user);
        let mut issued = vec![first];
        for _ in 0..20 {
            let last = issued.last().unwrap().refresh_token.expose().to_string();
            let Renewal::Issued(next) = issuer.refresh(&last, "cli").unwrap() else {
                panic!("refreshed")
            };
            issued.push(next);
        }
        // 21 access tokens issued: the oldest five are revoked, the last
        // sixteen still work.
        let live = issued
            .iter()
            .filter(|i| valid(&store, i.access_token.expose()))
            .count();
        assert_eq!(live, 16);
        assert!(valid(&store, issued[20].access_token.expose()));
        // The oldest refresh token is forgotten: unknown, not a reuse
        // that revokes the family.
        assert!(matches!(
            issuer
                .refresh(issued[0].refresh_token.expose(), "cli")
                .unwrap(),
            Renewal::InvalidGrant
        ));
        assert!(valid(&store, issued[20].access_token.expose()));
    }

    #[test]
    fn revocation_covers_refresh_and_api_tokens() {
        let (_dir, store, issuer, user) = issuer();
        let issued = approved(&issuer, &user);
        issuer.revoke(issued.refresh_token.expose()).unwrap();
        assert!(
            !valid(&store, issued.access_token.expose()),
            "its API tokens go with it"
        );
        assert!(matches!(
            issuer
                .refresh(issued.refresh_token.expose(), "cli")
                .unwrap(),
            Renewal::InvalidGrant
        ));
        let other = approved(&issuer, &user);
        issuer.revoke(other.access_token.expose()).unwrap();
        assert!(!valid(&store, other.access_token.expose()));
        issuer.revoke("qr_unknown").unwrap();
        issuer.revoke("whatever").unwrap();
    }
}
