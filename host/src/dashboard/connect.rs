//! Connecting a tool (OAuth 2.0 authorization code with PKCE S256, `state`
//! bound to the session, stored server-side, single use, 10 minutes) and
//! disconnecting one (its tokens revoked at the vendor when the manifest
//! says how, then the grant removed). The page that lists the tools is
//! `tools.rs`.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Form;
use axum::extract::{OriginalUri, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::{Deserialize, Serialize};

use super::session::Session;
use maud::html;

use super::settings::{Step, merged_settings, settings_step};
use super::templates::{FormAbout, internal_error, message, signed_in_page, status_notice};
use super::usage;
use super::{Dashboard, expected_origin, pending};
use crate::connectors::manifest::{Flow, Manifest, fill_endpoint};
use crate::oauth::{Outcome, TokenToRevoke};
use quarry_store::records::Writer;
use quarry_store::{Counted, Grant, GrantStatus, now, random_b64};

/// Connections in flight: [`Connecting`] by `state`.
pub(super) const STATES: pending::Table = pending::Table::user_owned(
    "dashboard_oauth_states",
    remove_connecting,
    Counted::Nothing,
);

fn remove_connecting(txn: &mut Writer, user_id: &str) -> Result<u64> {
    pending::remove_owned_by(txn, &STATES, user_id)
}

/// How long a person has to approve at the vendor.
const STATE_TTL_SECONDS: i64 = 600;

#[derive(Serialize, Deserialize)]
struct Connecting {
    session: String,
    user_id: String,
    connector: String,
    verifier: String,
    redirect_uri: String,
    /// What the person typed on the settings step.
    settings: Vec<(String, String)>,
}

/// Write words in a scope name: the manifest loader already refuses scopes
/// not marked `read_only`; this refuses names that contradict the claim.
const WRITE_WORDS: &[&str] = &["write", "admin", "manage", "delete", "create", "edit"];

/// Why a connector cannot be connected from the dashboard, if it cannot.
pub(super) fn refusal(dashboard: &Dashboard, manifest: &Manifest) -> Option<String> {
    let (connector, label) = (&manifest.id, &manifest.label);
    let oauth = manifest.oauth.as_ref();
    let Some(oauth) = oauth.filter(|o| o.flow == Flow::AuthorizationCode) else {
        return Some(format!(
            "{label} does not issue tokens through OAuth 2: the operator connects it \
             (quarry admin connect)."
        ));
    };
    for scope in &oauth.scopes {
        let lower = scope.to_lowercase();
        if let Some(word) = WRITE_WORDS.iter().find(|w| lower.contains(*w)) {
            return Some(format!(
                "{label} asks for the scope {scope:?}, whose name says {word:?}: Quarry \
                 only requests read-only scopes, so it will not start this connection."
            ));
        }
    }
    if !dashboard.vendors.has_client(connector) {
        return Some(format!(
            "The operator has not registered an OAuth client for {label} \
             (oauth_clients.{connector} in the configuration)."
        ));
    }
    None
}

/// The URL the browser goes to: the manifest's (or the identity
/// provider's), or the operator's override of its host (the demo's fakes).
pub(super) fn browser_authorize_url(
    dashboard: &Dashboard,
    authorize_url: &str,
) -> Result<url::Url> {
    let url = url::Url::parse(authorize_url).context("the manifest's authorize_url")?;
    let host = url.host_str().unwrap_or_default();
    match dashboard.config.authorize_host_overrides.get(host) {
        Some(base) => {
            let mut moved =
                url::Url::parse(&format!("{}{}", base.trim_end_matches('/'), url.path()))
                    .context("dashboard.authorize_host_overrides")?;
            moved.set_query(url.query());
            Ok(moved)
        }
        None => Ok(url),
    }
}

pub async fn connect(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Path(id): Path<String>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let Some(connector) = dashboard.registry.get(&id) else {
        return message(
            StatusCode::NOT_FOUND,
            "No such tool",
            "There is no such tool.",
        );
    };
    if let Some(reason) = refusal(&dashboard, &connector.manifest) {
        return message(StatusCode::CONFLICT, "Cannot connect this tool", &reason);
    }
    let oauth = connector
        .manifest
        .oauth
        .as_ref()
        .expect("checked by refusal");
    let Some(origin) = expected_origin(&dashboard, &headers, &uri) else {
        return message(StatusCode::BAD_REQUEST, "Bad request", "Unknown host.");
    };
    // Settings the person types come first (a subdomain, a workspace).
    let settings = match settings_step(&dashboard, &session, &connector.manifest, &form) {
        Step::Ready(settings) => settings,
        Step::Ask(page) => return page,
    };
    let authorize_url = match fill_endpoint(&oauth.authorize_url, &settings) {
        Ok(url) => url,
        Err(why) => return message(StatusCode::BAD_REQUEST, "Cannot connect this tool", &why),
    };
    let redirect_uri = format!("{origin}/dashboard/oauth/callback");
    let state = random_b64(24);
    let authorization = browser_authorize_url(&dashboard, &authorize_url)
        .and_then(|url| (dashboard.vendors).authorization(&id, oauth, url, &redirect_uri, &state));
    let authorization = match authorization {
        Ok(authorization) => authorization,
        Err(error) => {
            return message(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Cannot connect this tool",
                &format!("{error:#}"),
            );
        }
    };
    let connecting = Connecting {
        session: session.key.clone(),
        user_id: session.user_id.clone(),
        connector: id.clone(),
        verifier: authorization.verifier,
        redirect_uri,
        settings,
    };
    let store = &dashboard.store;
    if let Err(error) = pending::save(
        store,
        &STATES,
        &state,
        Some(&session.user_id),
        &connecting,
        STATE_TTL_SECONDS,
    ) {
        if error.is::<pending::Full>() {
            return message(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many connections started",
                "You started many connections that are not finished. Finish one, or wait \
                 ten minutes for them to expire, then try again.",
            );
        }
        return internal_error("storing an OAuth state", error);
    }
    tracing::info!(user = %session.user_id, connector = %id, "dashboard: connecting a tool");
    Redirect::to(authorization.url.as_str()).into_response()
}

pub async fn callback(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Query(callback): Query<pending::Callback>,
) -> Response {
    let refused = |text: &str| message(StatusCode::BAD_REQUEST, "Connection failed", text);
    let Some(state) = callback.state.filter(|s| !s.is_empty() && s.len() < 200) else {
        return refused("The vendor's answer has no state.");
    };
    let pending = match pending::take::<Connecting>(&dashboard.store, &STATES, &state) {
        Ok(Some(p)) if p.value.session == session.key && p.value.user_id == session.user_id => p,
        Ok(Some(_)) => return refused("This connection was started in another session."),
        Ok(None) => {
            return refused("This connection is unknown or was already completed. Start again.");
        }
        Err(_) => return refused("This connection could not be read. Start again."),
    };
    if pending.expires_at <= now() {
        return refused("This connection took longer than 10 minutes. Start again.");
    }
    let pending = pending.value;
    if let Some(error) = callback.error {
        return refused(&format!(
            "The vendor did not grant access ({error}). Nothing was connected."
        ));
    }
    let Some(code) = callback.code.filter(|c| !c.is_empty()) else {
        return refused("The vendor's answer has no code.");
    };
    match exchange(&dashboard, &pending, &code).await {
        Ok(()) => {
            tracing::info!(user = %session.user_id, connector = %pending.connector, "dashboard: tool connected");
            Redirect::to(&format!(
                "/dashboard/tools?connected={}",
                url::form_urlencoded::byte_serialize(pending.connector.as_bytes())
                    .collect::<String>()
            ))
            .into_response()
        }
        Err(error) => {
            tracing::warn!(connector = %pending.connector, error = format!("{error:#}"), "dashboard: code exchange failed");
            message(
                StatusCode::BAD_GATEWAY,
                "Connection failed",
                &format!(
                    "{} did not give a token for this connection. Try again.",
                    usage::label_of(&dashboard.registry, &pending.connector, None)
                ),
            )
        }
    }
}

/// Exchanges the code for tokens and stores them as the user's grant.
async fn exchange(dashboard: &Dashboard, pending: &Connecting, code: &str) -> Result<()> {
    let connector = dashboard
        .registry
        .get(&pending.connector)
        .context("the connector is gone")?;
    let oauth = connector
        .manifest
        .oauth
        .as_ref()
        .context("no OAuth section")?;
    let tokens = dashboard
        .vendors
        .exchange_code(
            &pending.connector,
            oauth,
            &pending.settings,
            code,
            &pending.redirect_uri,
            &pending.verifier,
        )
        .await?;
    let store = &dashboard.store;
    let previous = store
        .grant(&pending.user_id, &pending.connector)?
        .map(|g| g.settings)
        .unwrap_or_default();
    let settings = merged_settings(
        &connector.manifest,
        previous,
        &pending.settings,
        &tokens.fields,
    );
    let grant = Grant {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        expires_at: tokens.expires_in.map(|s| now() + s),
        settings,
        status: GrantStatus::Connected,
        connected_at: now(),
    };
    store.put_grant(&pending.user_id, &pending.connector, &grant)
}

pub async fn disconnect(
    State(dashboard): State<Arc<Dashboard>>,
    FormAbout { session, id }: FormAbout,
) -> Response {
    let store = &dashboard.store;
    let Ok(Some(grant)) = store.grant(&session.user_id, &id) else {
        return message(
            StatusCode::NOT_FOUND,
            "Not connected",
            "This tool is not connected.",
        );
    };
    let revoke = dashboard
        .registry
        .get(&id)
        .and_then(|c| c.manifest.oauth.as_ref().and_then(|o| o.revoke.clone()));
    let mut outcomes = Vec::new();
    let tokens = std::iter::once(grant.access_token.expose().to_string())
        .chain(grant.refresh_token.map(|t| t.expose().to_string()));
    for token in tokens {
        let outcome = dashboard
            .deletions
            .revoker()
            .revoke(&TokenToRevoke {
                connector: id.clone(),
                token,
                revoke: revoke.clone(),
                done: false,
            })
            .await;
        outcomes.push(outcome);
    }
    if let Err(error) = store.remove_grant(&session.user_id, &id) {
        return internal_error("removing a grant", error);
    }
    let said = if outcomes
        .iter()
        .all(|o| matches!(o, Outcome::Revoked | Outcome::AlreadyInvalid))
    {
        "Its access was revoked at the vendor and Quarry no longer holds it."
    } else if outcomes.iter().any(|o| matches!(o, Outcome::Unsupported)) {
        "Quarry removed its access; the vendor has no revocation endpoint, so also remove \
         Quarry's access in the tool's own settings."
    } else {
        "Quarry removed its access, but the vendor did not confirm the revocation: remove \
         Quarry's access in the tool's own settings to be sure."
    };
    tracing::info!(user = %session.user_id, connector = %id, "dashboard: tool disconnected");
    let label = usage::label_of(&dashboard.registry, &id, None);
    signed_in_page(
        "Disconnected",
        &session,
        html! {
            (status_notice(&format!("{label} is disconnected. {said}")))
            p { a href="/dashboard/tools" { "Back to your tools" } }
        },
    )
}
