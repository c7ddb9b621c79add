//! Refreshing a connector's OAuth access token on the server's side before
//! it is used: one refresh per grant at a time, across replicas (parallel
//! queries of a user wait for the one in flight and use its result), and a
//! grant that cannot be refreshed is marked as needing the user to connect
//! again.
//!
//! In one process a lock per grant makes the single flight; across
//! replicas, a lease in the store (`store/leases.rs`): a replica that finds
//! another's lease waits for the grant to change instead of refreshing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{RefreshFailure as Failure, Vendors};
use crate::connectors::Registry;
use quarry_store::{Grant, GrantStatus, Store, now};

type FlightLock = Arc<tokio::sync::Mutex<()>>;

/// An access token this close to expiry is refreshed before use.
const MARGIN_SECONDS: i64 = 120;
/// The cross-replica lease on a grant's refresh: longer than a refresh call.
const LEASE_SECONDS: i64 = 30;
/// How long a query waits for another replica's refresh before it goes on
/// with the token it has.
const WAIT_FOR_OTHER: std::time::Duration = std::time::Duration::from_secs(10);

pub struct Refresher {
    store: Arc<Store>,
    registry: Arc<Registry>,
    vendors: Arc<Vendors>,
    /// One lock per `(user, connector)`: the single flight.
    in_flight: Mutex<HashMap<(String, String), FlightLock>>,
    /// Names this process's leases.
    holder: String,
}

impl Refresher {
    pub fn new(store: Arc<Store>, registry: Arc<Registry>, vendors: Arc<Vendors>) -> Refresher {
        Refresher {
            store,
            registry,
            vendors,
            in_flight: Mutex::default(),
            holder: format!("rfr_{}", quarry_store::random_hex(8)),
        }
    }

    /// The grant to use now: as it is, or with a fresh access token, or
    /// marked `NeedsReconnect` when its token expired and cannot be renewed.
    pub async fn fresh(&self, user_id: &str, connector: &str, grant: Grant) -> Grant {
        if !needs_refresh(&grant) {
            return grant;
        }
        let lock = self.lock_for(user_id, connector);
        let _single_flight = lock.lock().await;
        let what = format!("refresh\0{connector}");
        let deadline = tokio::time::Instant::now() + WAIT_FOR_OTHER;
        loop {
            // Another query (here or on another replica) may have refreshed
            // it while this one waited.
            let current = match self.store.grant(user_id, connector) {
                Ok(Some(current)) => current,
                _ => return grant,
            };
            if !needs_refresh(&current) {
                return current;
            }
            match self
                .store
                .try_lease(user_id, &what, &self.holder, LEASE_SECONDS)
            {
                Ok(true) => {
                    let renewed = self.refresh_and_store(user_id, connector, current).await;
                    if let Err(error) = self.store.release_lease(user_id, &what, &self.holder) {
                        tracing::warn!(%connector, error = format!("{error:#}"), "freeing a refresh lease failed");
                    }
                    return renewed;
                }
                Ok(false) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                _ => return current,
            }
        }
    }

    /// Refreshes the grant and stores the outcome.
    async fn refresh_and_store(&self, user_id: &str, connector: &str, current: Grant) -> Grant {
        match self.refresh(connector, &current).await {
            Ok(renewed) => {
                if let Err(error) = self.store.put_grant(user_id, connector, &renewed) {
                    tracing::warn!(%connector, error = format!("{error:#}"), "storing a refreshed token failed");
                }
                tracing::info!(%connector, "access token refreshed");
                renewed
            }
            Err(Failure::Transient(reason)) => {
                tracing::warn!(%connector, %reason, "token refresh failed; will retry at the next query");
                current
            }
            Err(Failure::Refused(reason)) => {
                tracing::warn!(%connector, %reason, "token refresh refused: the user must connect again");
                let marked = Grant {
                    status: GrantStatus::NeedsReconnect,
                    ..current
                };
                if let Err(error) = self.store.put_grant(user_id, connector, &marked) {
                    tracing::warn!(%connector, error = format!("{error:#}"), "marking a grant failed");
                }
                marked
            }
        }
    }

    fn lock_for(&self, user_id: &str, connector: &str) -> FlightLock {
        self.in_flight
            .lock()
            .expect("refresh locks")
            .entry((user_id.to_string(), connector.to_string()))
            .or_default()
            .clone()
    }

    async fn refresh(&self, connector: &str, grant: &Grant) -> Result<Grant, Failure> {
        let Some(refresh_token) = &grant.refresh_token else {
            return if grant.expires_at.is_some_and(|t| t <= now()) {
                Err(Failure::Refused(
                    "expired, and there is no refresh token".into(),
                ))
            } else {
                Err(Failure::Transient(
                    "no refresh token; used until it expires".into(),
                ))
            };
        };
        let connector_now = self
            .registry
            .get(connector)
            .ok_or_else(|| Failure::Transient("the connector is not loaded".into()))?;
        let oauth =
            connector_now.manifest.oauth.as_ref().ok_or_else(|| {
                Failure::Transient("the connector names no token endpoint".into())
            })?;
        let renewed = self
            .vendors
            .refresh(connector, oauth, &grant.settings, refresh_token)
            .await?;
        Ok(Grant {
            access_token: renewed.access_token,
            // Vendors that rotate refresh tokens send a new one.
            refresh_token: renewed
                .refresh_token
                .or_else(|| grant.refresh_token.clone()),
            expires_at: renewed.expires_in.map(|s| now() + s),
            status: GrantStatus::Connected,
            ..grant.clone()
        })
    }
}

fn needs_refresh(grant: &Grant) -> bool {
    grant.status == GrantStatus::Connected
        && grant
            .expires_at
            .is_some_and(|t| t - now() <= MARGIN_SECONDS)
}
