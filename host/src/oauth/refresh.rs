//! Refreshing a connector's OAuth access token on the server's side before
//! it is used: one refresh per grant at a time (parallel queries of a user
//! wait for the one in flight and use its result), and a grant that cannot
//! be refreshed is marked as needing the user to connect again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::config::OAuthClient;
use crate::connectors::Registry;
use crate::secret::Secret;
use crate::store::{Grant, GrantStatus, Store, now};

type FlightLock = Arc<tokio::sync::Mutex<()>>;

/// An access token this close to expiry is refreshed before use.
const MARGIN_SECONDS: i64 = 120;

pub struct Refresher {
    store: Arc<Store>,
    registry: Arc<Registry>,
    client: reqwest::Client,
    clients: std::collections::BTreeMap<String, OAuthClient>,
    /// One lock per `(user, connector)`: the single flight.
    in_flight: Mutex<HashMap<(String, String), FlightLock>>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<i64>,
}

/// Why a refresh did not give a new token.
enum Failure {
    /// The vendor refused the refresh token: only the user can fix it.
    Refused(String),
    /// Worth trying again at the next query (network, 5xx, 429).
    Transient(String),
}

impl Refresher {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<Registry>,
        client: reqwest::Client,
        clients: std::collections::BTreeMap<String, OAuthClient>,
    ) -> Refresher {
        Refresher {
            store,
            registry,
            client,
            clients,
            in_flight: Mutex::default(),
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
        // Another query may have refreshed it while this one waited.
        let current = match self.store.grant(user_id, connector) {
            Ok(Some(current)) => current,
            _ => return grant,
        };
        if !needs_refresh(&current) {
            return current;
        }
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
        let token_url = self
            .registry
            .get(connector)
            .and_then(|c| c.manifest.oauth.as_ref().map(|o| o.token_url.clone()))
            .ok_or_else(|| Failure::Transient("the connector names no token endpoint".into()))?;
        // Zendesk's endpoint is on the account's subdomain (a setting).
        let token_url = crate::connectors::manifest::fill_endpoint(&token_url, &grant.settings)
            .map_err(Failure::Refused)?;
        let mut form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh_token.expose().to_string()),
        ];
        if let Some(client) = self.clients.get(connector) {
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_secret", client.client_secret.expose().to_string()));
        }
        let response = self
            .client
            .post(&token_url)
            .header("Accept", "application/json")
            .form(&form)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| Failure::Transient(format!("{e}")))?;
        let status = response.status();
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(Failure::Transient(format!("the vendor answered {status}")));
        }
        if !status.is_success() {
            return Err(Failure::Refused(format!("the vendor answered {status}")));
        }
        let body: serde_json::Value = response
            .json()
            .await
            .context("the token response")
            .map_err(|e| Failure::Transient(format!("{e:#}")))?;
        // Slack answers 200 with `ok: false` and an `error`.
        if body.get("access_token").is_none()
            && let Some(error) = body.get("error")
        {
            return Err(Failure::Refused(format!("the vendor answered {error}")));
        }
        let body: TokenResponse = serde_json::from_value(body)
            .map_err(|e| Failure::Transient(format!("the token response: {e}")))?;
        Ok(Grant {
            access_token: Secret::new(body.access_token),
            // Vendors that rotate refresh tokens send a new one.
            refresh_token: body
                .refresh_token
                .map(Secret::new)
                .or_else(|| grant.refresh_token.clone()),
            expires_at: body.expires_in.map(|s| now() + s),
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
