//! Signing in with the operator's OpenID Connect provider.
//!
//! `/dashboard/sso/start` sends the browser to the provider, with the
//! flow's `state` stored server-side and bound to this browser by a
//! short-lived cookie (so nobody can make someone else's browser finish a
//! sign-in they started). `/dashboard/sso/callback` exchanges the code,
//! validates the ID token ([`crate::oidc`]) and finds the account.
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
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::session::{self, Session, constant_time_eq, login_form};
use super::{Dashboard, Peer, expected_origin, pending};
use crate::oidc::{Identity, SsoError};
use crate::store::{Store, random_b64};

/// Sign-ins in flight: [`SigningIn`] by `state`.
const STATES: pending::Table = TableDefinition::new("dashboard_sso_states");
/// SHA-256 of `issuer \n subject` (hex) → [`Link`].
const LINKS: TableDefinition<&str, &[u8]> = TableDefinition::new("dashboard_sso_links");

const COOKIE: &str = "__Host-quarry_sso";
/// How long a person has to sign in at the provider.
const STATE_TTL_SECONDS: i64 = 600;

pub(super) fn create_tables(store: &Store) -> Result<()> {
    pending::create_table(store, STATES)?;
    let txn = store.db().begin_write()?;
    txn.open_table(LINKS)?;
    txn.commit()?;
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct SigningIn {
    /// SHA-256 of this browser's cookie.
    browser: String,
    nonce: String,
    verifier: String,
    redirect_uri: String,
}

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

fn cookie(value: &str, max_age: i64) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={max_age}"
    ))
    .expect("cookie is ASCII")
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
        Err(error) => return failed(&dashboard, &error),
    };
    let browser = random_b64(32);
    let signing_in = SigningIn {
        browser: sha256_hex(&browser),
        nonce: started.nonce,
        verifier: started.verifier,
        redirect_uri,
    };
    let store = &dashboard.app.store;
    if let Err(error) = pending::save(
        store,
        STATES,
        &started.state,
        &signing_in,
        STATE_TTL_SECONDS,
    ) {
        tracing::error!(
            error = format!("{error:#}"),
            "storing a sign-in state failed"
        );
        return super::templates::message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "Try again.",
        );
    }
    let url = match super::tools::browser_authorize_url(&dashboard, started.url.as_str()) {
        Ok(url) => url,
        Err(error) => return failed(&dashboard, &SsoError::Provider(format!("{error:#}"))),
    };
    let mut response = Redirect::to(url.as_str()).into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cookie(&browser, STATE_TTL_SECONDS));
    response
}

#[derive(Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

pub async fn callback(
    State(dashboard): State<Arc<Dashboard>>,
    Extension(Peer(ip)): Extension<Peer>,
    headers: HeaderMap,
    Query(callback): Query<Callback>,
) -> Response {
    let Some(provider) = &dashboard.sso else {
        return not_configured();
    };
    let throttle = [format!("addr:{ip}")];
    if dashboard.throttled(&throttle) {
        return refuse(
            &dashboard,
            StatusCode::TOO_MANY_REQUESTS,
            "Too many failed sign-ins from this address. Try again later.",
        );
    }
    let mut response = match finish(&dashboard, provider, &headers, callback).await {
        Ok(user_id) => session::begin(&dashboard, &user_id, "single sign-on"),
        Err((status, text)) => {
            dashboard.record_failure(&throttle);
            tracing::info!(%ip, reason = %text, "dashboard single sign-on refused");
            refuse(&dashboard, status, &text)
        }
    };
    // The flow is over either way.
    response
        .headers_mut()
        .append(header::SET_COOKIE, cookie("", 0));
    response
}

fn refuse(dashboard: &Dashboard, status: StatusCode, text: &str) -> Response {
    (status, Html(login_form(dashboard, "", Some(text)))).into_response()
}

fn failed(dashboard: &Dashboard, error: &SsoError) -> Response {
    tracing::warn!(error = %error, "dashboard single sign-on failed");
    let name = dashboard.sso.as_ref().map_or("", |p| p.name());
    refuse(
        dashboard,
        StatusCode::BAD_GATEWAY,
        &format!("Signing in with {name} did not work ({error}). Try again, or use your password."),
    )
}

type Refusal = (StatusCode, String);

/// The account the provider's answer signs in, or why not.
async fn finish(
    dashboard: &Dashboard,
    provider: &crate::oidc::Provider,
    headers: &HeaderMap,
    callback: Callback,
) -> Result<String, Refusal> {
    let bad = |text: &str| (StatusCode::BAD_REQUEST, text.to_string());
    let state = callback
        .state
        .filter(|s| !s.is_empty() && s.len() < 200)
        .ok_or_else(|| bad("The identity provider's answer has no state. Start again."))?;
    let store = &dashboard.app.store;
    let signing_in = match pending::take::<SigningIn>(store, STATES, &state) {
        Ok(Some(p)) if p.expires_at > crate::store::now() => p.value,
        Ok(Some(_)) => return Err(bad("The sign-in took longer than 10 minutes. Start again.")),
        Ok(None) | Err(_) => {
            return Err(bad(
                "This sign-in is unknown or was already used. Start again.",
            ));
        }
    };
    let browser = cookie_value(headers).map(|v| sha256_hex(&v));
    if !browser.is_some_and(|b| constant_time_eq(&b, &signing_in.browser)) {
        return Err(bad(
            "This sign-in was started in another browser. Start again from this one.",
        ));
    }
    if let Some(error) = callback.error {
        let description = callback.error_description.unwrap_or_default();
        return Err((
            StatusCode::UNAUTHORIZED,
            format!(
                "The identity provider did not sign you in ({error}{}{description}).",
                if description.is_empty() { "" } else { ": " }
            ),
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
        .map_err(|error| {
            tracing::warn!(error = %error, "dashboard single sign-on failed");
            let status = match error {
                SsoError::Provider(_) => StatusCode::BAD_GATEWAY,
                SsoError::Refused(_) | SsoError::InvalidToken(_) => StatusCode::UNAUTHORIZED,
            };
            (
                status,
                format!("Signing in with {} did not work: {error}.", provider.name()),
            )
        })?;
    let user_id = account_for(store, &identity, provider.allowed_domains())
        .map_err(|text| (StatusCode::FORBIDDEN, text))?;
    if dashboard.app.is_blocked(&user_id) {
        return Err((
            StatusCode::FORBIDDEN,
            "This account is being deleted.".into(),
        ));
    }
    Ok(user_id)
}

fn cookie_value(headers: &HeaderMap) -> Option<String> {
    session::cookie_named(headers, COOKIE)
}

/// The account an identity signs in to: by its link, else by its verified
/// email (then linked). One write transaction, so two first sign-ins
/// cannot link one account twice.
fn account_for(
    store: &Store,
    identity: &Identity,
    allowed_domains: &[String],
) -> Result<String, String> {
    let internal = |error: anyhow::Error| {
        tracing::error!(
            error = format!("{error:#}"),
            "single sign-on: the store failed"
        );
        "Something went wrong. Try again.".to_string()
    };
    let key = link_key(&identity.issuer, &identity.subject);
    let txn = store.db().begin_write().map_err(|e| internal(e.into()))?;
    let user_id =
        link_or_match(store, &txn, &key, identity, allowed_domains).map_err(internal)??;
    txn.commit().map_err(|e| internal(e.into()))?;
    Ok(user_id)
}

fn link_or_match(
    store: &Store,
    txn: &WriteTransaction,
    key: &str,
    identity: &Identity,
    allowed_domains: &[String],
) -> Result<Result<String, String>> {
    let mut links = txn.open_table(LINKS)?;
    let linked = links
        .get(key)?
        .and_then(|v| serde_json::from_slice::<Link>(v.value()).ok());
    if let Some(link) = linked {
        if store.user(&link.user_id)?.is_some() {
            return Ok(Ok(link.user_id));
        }
        links.remove(key)?;
    }
    let Some(email) = identity.email.as_deref().filter(|e| !e.is_empty()) else {
        return Ok(Err(
            "The identity provider did not share your email, so no account could be found.".into(),
        ));
    };
    if !identity.email_verified {
        return Ok(Err(format!(
            "The identity provider has not verified {email}; verify it there, then sign in again."
        )));
    }
    let domain = email.rsplit_once('@').map_or("", |(_, d)| d);
    if !allowed_domains.is_empty()
        && !allowed_domains
            .iter()
            .any(|d| d.eq_ignore_ascii_case(domain))
    {
        return Ok(Err(format!("Accounts of {domain} cannot sign in here.")));
    }
    let Some(user) = store.user_by_email(email)? else {
        return Ok(Err(format!(
            "There is no Quarry account for {email}. Ask the operator to create one."
        )));
    };
    let taken = links.iter()?.filter_map(|entry| entry.ok()).any(|(_, v)| {
        serde_json::from_slice::<Link>(v.value())
            .is_ok_and(|l| l.user_id == user.id && l.issuer == identity.issuer)
    });
    if taken {
        return Ok(Err(format!(
            "The account {email} is linked to another identity at this provider. Ask the operator."
        )));
    }
    let link = Link {
        user_id: user.id.clone(),
        issuer: identity.issuer.clone(),
    };
    links.insert(key, serde_json::to_vec(&link)?.as_slice())?;
    tracing::info!(user = %user.id, "single sign-on: account linked to its identity");
    Ok(Ok(user.id))
}

/// Removes a user's links (their data is being deleted).
pub fn remove_user_in(txn: &WriteTransaction, user_id: &str) -> Result<u64> {
    let mut links = txn.open_table(LINKS)?;
    let mut removed = 0;
    links.retain(|_, v| {
        let theirs = serde_json::from_slice::<Link>(v).is_ok_and(|l| l.user_id == user_id);
        removed += u64::from(theirs);
        !theirs
    })?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(subject: &str, email: &str, verified: bool) -> Identity {
        Identity {
            issuer: "https://idp.example".into(),
            subject: subject.into(),
            email: Some(email.into()),
            email_verified: verified,
        }
    }

    #[test]
    fn accounts_are_linked_by_email_once_then_found_by_subject() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        create_tables(&store).unwrap();
        let alice = store.create_user("alice@acme.test").unwrap();
        let any = &[] as &[String];

        let first = account_for(&store, &identity("s1", "alice@acme.test", true), any);
        assert_eq!(first.as_deref(), Ok(alice.id.as_str()));
        // A new email at the provider: the subject's link holds.
        let renamed = account_for(&store, &identity("s1", "a.ng@acme.test", false), any);
        assert_eq!(renamed.as_deref(), Ok(alice.id.as_str()));
        // Her email given to another subject: refused.
        let other = account_for(&store, &identity("s2", "alice@acme.test", true), any);
        assert!(other.unwrap_err().contains("linked to another identity"));
        // Unverified emails and other domains are refused before any link.
        let bob = store.create_user("bob@acme.test").unwrap();
        let unverified = account_for(&store, &identity("s3", "bob@acme.test", false), any);
        assert!(unverified.unwrap_err().contains("has not verified"));
        let domains = ["example.com".to_string()];
        let elsewhere = account_for(&store, &identity("s3", "bob@acme.test", true), &domains);
        assert!(elsewhere.unwrap_err().contains("cannot sign in here"));

        // The operator unlinks alice (quarry admin unlink-sso): her new
        // identity links by email.
        let txn = store.db().begin_write().unwrap();
        assert_eq!(remove_user_in(&txn, &alice.id).unwrap(), 1);
        txn.commit().unwrap();
        let relinked = account_for(&store, &identity("s2", "alice@acme.test", true), any);
        assert_eq!(relinked.as_deref(), Ok(alice.id.as_str()));
        let old = account_for(&store, &identity("s1", "a.ng@acme.test", true), any);
        assert!(old.unwrap_err().contains("no Quarry account"));
        assert_ne!(bob.id, alice.id);
    }
}
