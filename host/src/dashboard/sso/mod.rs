//! Signing in with the operator's OpenID Connect provider.
//!
//! `/dashboard/sso/start` sends the browser to the provider; what the flow
//! needs at its end (its `state`, the nonce, the PKCE verifier) travels in
//! a short-lived cookie sealed with the master key ([`flow`]), so nobody
//! can make someone else's browser finish a sign-in they started, and the
//! server keeps nothing per sign-in in flight: no table for strangers to
//! fill, nothing to sweep. `/dashboard/sso/callback` opens the cookie,
//! exchanges the code, validates the ID token ([`crate::oidc`]) and finds
//! the account.
//!
//! Accounts are the operator's: single sign-on never creates one. The first
//! sign-in of an identity matches the provider's *verified* email to an
//! account and links the account to the provider's subject id; later
//! sign-ins go by that link, so a changed email at the provider still
//! reaches the same account, and an email handed to someone else at the
//! provider does not reach an account already linked to another person.

use std::sync::Arc;

use anyhow::Result;
use axum::Extension;
use axum::extract::{OriginalUri, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use self::flow::SigningIn;
use super::session::{self, Session};
use super::sign_in::{self, login_form};
use super::{Dashboard, Peer, expected_origin, pending};
use crate::limits::{Throttle, address};
use crate::oidc::{Identity, SsoError};
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Counted, Store};

mod flow;

/// SHA-256 of `issuer \n subject` (hex) → [`Link`].
pub(super) const LINKS: Space<Text, Bytes> =
    Space::user_owned("dashboard_sso_links", remove_links, Counted::Nothing);

pub(crate) use self::flow::STATES_KEPT_BY_EARLIER_VERSIONS;
pub use self::flow::forget_states_kept_by_earlier_versions;

#[derive(Serialize, Deserialize)]
struct Link {
    user_id: String,
    issuer: String,
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn link_key(issuer: &str, subject: &str) -> String {
    sha256_hex(&format!("{issuer}\n{subject}"))
}

fn not_configured() -> Response {
    super::templates::message(
        StatusCode::NOT_FOUND,
        "Single sign-on is not set up",
        "The operator has not configured single sign-on; sign in with your password.",
    )
}

pub async fn start(
    State(dashboard): State<Arc<Dashboard>>,
    session: Option<Extension<Session>>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let Some(provider) = &dashboard.sso else {
        return not_configured();
    };
    if session.is_some() {
        return Redirect::to("/dashboard/tools").into_response();
    }
    let Some(origin) = expected_origin(&dashboard, &headers, &uri) else {
        return super::templates::message(StatusCode::BAD_REQUEST, "Bad request", "Unknown host.");
    };
    let redirect_uri = format!("{origin}/dashboard/sso/callback");
    let started = match provider.start(&redirect_uri).await {
        Ok(started) => started,
        Err(error) => {
            let (status, text) = explain(provider, &error);
            return refuse(&dashboard, status, &text);
        }
    };
    let signing_in = SigningIn::new(started.state, started.nonce, started.verifier, redirect_uri);
    let url = super::connect::browser_authorize_url(&dashboard, started.url.as_str());
    let url = match url {
        Ok(url) => url,
        Err(error) => {
            tracing::error!(
                error = format!("{error:#}"),
                "starting a single sign-on failed"
            );
            return refuse(
                &dashboard,
                StatusCode::SERVICE_UNAVAILABLE,
                "Signing in is not possible right now. Try again.",
            );
        }
    };
    let mut response = Redirect::to(url.as_str()).into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        signing_in.cookie(dashboard.store.master()),
    );
    response
}

pub async fn callback(
    State(dashboard): State<Arc<Dashboard>>,
    Extension(Peer(ip)): Extension<Peer>,
    session: Option<Extension<Session>>,
    headers: HeaderMap,
    Query(callback): Query<pending::Callback>,
) -> Response {
    let Some(provider) = &dashboard.sso else {
        return not_configured();
    };
    let throttle = [address::subject(ip)];
    if let Some(refused) = dashboard.throttled(Throttle::SingleSignOn, &throttle).await {
        return refused;
    }
    let mut response = match finish(&dashboard, provider, &headers, callback).await {
        Ok(user_id) => {
            // Whoever was signed in on this browser is not any more.
            if let Some(Extension(old)) = session {
                session::end(&dashboard.store, &old.key);
            }
            sign_in::begin(&dashboard, &user_id, "single sign-on", &headers)
        }
        Err((status, text)) => {
            // What an attacker could repeat counts against the address;
            // a provider's outage or a missing account does not.
            if matches!(status, StatusCode::BAD_REQUEST | StatusCode::UNAUTHORIZED) {
                dashboard
                    .record_failure(Throttle::SingleSignOn, &throttle)
                    .await;
            }
            tracing::info!(%ip, %status, reason = %text, "dashboard single sign-on refused");
            refuse(&dashboard, status, &text)
        }
    };
    // The flow is over either way.
    response
        .headers_mut()
        .append(header::SET_COOKIE, flow::cleared_cookie());
    response
}

fn refuse(dashboard: &Dashboard, status: StatusCode, text: &str) -> Response {
    (status, login_form(dashboard, "", Some(text))).into_response()
}

type Refusal = (StatusCode, String);

/// What a person is told when the provider's part fails. A provider's
/// outage is told plainly, its details go to the log only.
fn explain(provider: &crate::oidc::Provider, error: &SsoError) -> Refusal {
    let name = provider.name();
    match error {
        SsoError::Provider(detail) => {
            tracing::warn!(error = %detail, "single sign-on: the identity provider failed");
            (
                StatusCode::BAD_GATEWAY,
                format!(
                    "{name} could not be reached or answered unexpectedly. Try again, or use your password."
                ),
            )
        }
        SsoError::Refused(_) | SsoError::InvalidToken(_) => (
            StatusCode::UNAUTHORIZED,
            format!("Signing in with {name} did not work: {error}."),
        ),
    }
}

/// The account the provider's answer signs in, or why not.
async fn finish(
    dashboard: &Dashboard,
    provider: &crate::oidc::Provider,
    headers: &HeaderMap,
    callback: pending::Callback,
) -> Result<String, Refusal> {
    let bad = |text: &str| (StatusCode::BAD_REQUEST, text.to_string());
    let state = callback
        .state
        .filter(|s| !s.is_empty() && s.len() < 200)
        .ok_or_else(|| bad("The identity provider's answer has no state. Start again."))?;
    let store = &dashboard.store;
    let signing_in = SigningIn::from_cookie(store.master(), headers, &state)
        .map_err(|refused| bad(refused.says()))?;
    if let Some(error) = callback.error {
        // The code only (RFC 6749 §4.1.2.1): the description is the provider's prose.
        let code: String = error
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .take(64)
            .collect();
        return Err((
            StatusCode::UNAUTHORIZED,
            format!("The identity provider did not sign you in ({code})."),
        ));
    }
    let code = callback
        .code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| bad("The identity provider's answer has no code. Start again."))?;
    let identity = provider
        .finish(
            &code,
            &signing_in.verifier,
            &signing_in.redirect_uri,
            &signing_in.nonce,
        )
        .await
        .map_err(|error| explain(provider, &error))?;
    let user_id = match account_for(store, &identity, provider.allowed_domains()) {
        Linked::Account(user_id) => user_id,
        Linked::Refused(text) => return Err((StatusCode::FORBIDDEN, text)),
        Linked::Failed => {
            return Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong. Try again.".into(),
            ));
        }
    };
    if dashboard.deletions.is_blocked(&user_id) {
        return Err((
            StatusCode::FORBIDDEN,
            "This account is being deleted.".into(),
        ));
    }
    Ok(user_id)
}

/// Where an identity's sign-in leads.
#[derive(Debug, PartialEq, Eq)]
enum Linked {
    Account(String),
    /// Why not, for the person.
    Refused(String),
    /// The store failed (logged).
    Failed,
}

/// The account an identity signs in to: by its link, else by its verified
/// email (then linked). One write transaction, so two first sign-ins
/// cannot link one account twice.
fn account_for(store: &Store, identity: &Identity, allowed_domains: &[String]) -> Linked {
    let linked = (|| {
        let mut txn = store.write()?;
        let linked = link_or_match(store, &mut txn, identity, allowed_domains)?;
        txn.commit()?;
        anyhow::Ok(linked)
    })();
    linked.unwrap_or_else(|error| {
        tracing::error!(
            error = format!("{error:#}"),
            "single sign-on: the store failed"
        );
        Linked::Failed
    })
}

fn link_or_match(
    store: &Store,
    txn: &mut Writer,
    identity: &Identity,
    allowed_domains: &[String],
) -> Result<Linked> {
    let key = link_key(&identity.issuer, &identity.subject);
    let linked = txn
        .get(&LINKS, &key)?
        .and_then(|v| serde_json::from_slice::<Link>(&v).ok());
    if let Some(link) = linked {
        if store.user(&link.user_id)?.is_some() {
            return Ok(Linked::Account(link.user_id));
        }
        txn.remove(&LINKS, &key)?;
    }
    let refused = |text: String| Ok(Linked::Refused(text));
    let Some(email) = identity.email.as_deref().filter(|e| !e.is_empty()) else {
        return refused(
            "The identity provider did not share your email, so no account could be found.".into(),
        );
    };
    // ASCII only: Unicode case folding would let look-alikes (the Kelvin
    // sign) match another person's address.
    if !email.is_ascii() {
        return refused(format!("{email} cannot be matched to an account here."));
    }
    if !identity.email_verified {
        return refused(format!(
            "The identity provider has not verified {email}; verify it there, then sign in again."
        ));
    }
    let domain = email.rsplit_once('@').map_or("", |(_, d)| d);
    if !allowed_domains.is_empty()
        && !allowed_domains
            .iter()
            .any(|d| d.eq_ignore_ascii_case(domain))
    {
        return refused(format!("Accounts of {domain} cannot sign in here."));
    }
    let Some(user) = store.user_by_email(email)? else {
        return refused(format!(
            "There is no Quarry account for {email}. Ask the operator to create one."
        ));
    };
    let taken = all_links(txn)?
        .iter()
        .any(|l| l.user_id == user.id && l.issuer == identity.issuer);
    if taken {
        return refused(format!(
            "The account {email} is linked to another identity at this provider. Ask the operator."
        ));
    }
    let link = Link {
        user_id: user.id.clone(),
        issuer: identity.issuer.clone(),
    };
    txn.put(&LINKS, &key, &serde_json::to_vec(&link)?)?;
    tracing::info!(user = %user.id, issuer = %identity.issuer, "single sign-on: an account was linked to its identity by email");
    Ok(Linked::Account(user.id))
}

/// The users with a single sign-on link (for checks after a deletion).
pub fn linked_users(store: &Store) -> Result<Vec<String>> {
    let links = all_links(&store.read()?)?;
    Ok(links.into_iter().map(|l| l.user_id).collect())
}

fn all_links(txn: &impl Records) -> Result<Vec<Link>> {
    let rows = txn.all_in(&LINKS, ..)?;
    rows.iter()
        .map(|(_, v)| Ok(serde_json::from_slice(v)?))
        .collect()
}

/// Unlinks a user from every identity (`quarry admin unlink-sso`); how
/// many links there were.
pub fn unlink(store: &Store, user_id: &str) -> Result<u64> {
    let mut txn = store.write()?;
    let removed = remove_links(&mut txn, user_id)?;
    txn.commit()?;
    Ok(removed)
}

/// Removes a user's links inside `txn`.
fn remove_links(txn: &mut Writer, user_id: &str) -> Result<u64> {
    txn.retain(&LINKS, .., |_, v| {
        !serde_json::from_slice::<Link>(&v).is_ok_and(|l| l.user_id == user_id)
    })
}

#[cfg(test)]
mod tests;
