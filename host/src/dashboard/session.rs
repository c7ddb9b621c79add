//! Signing in and out: argon2id passwords, sign-in limits per address and
//! per email, and sessions (a random 32-byte id in a `__Host-` cookie,
//! stored hashed with an absolute and an idle expiry).

use std::sync::Arc;

use anyhow::Result;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use maud::{Markup, html};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::templates::{error_notice, page};
use super::{Dashboard, Peer};
use crate::store::records::{Bytes, Records, Space, Text, Writer};
use crate::store::{Counted, Store, UserData, now};

/// SHA-256 of the session id (hex) → [`Record`]. The id itself is never stored.
const SESSIONS: Space<Text, Bytes> = Space::new("dashboard_sessions");

pub(super) const USER_DATA: UserData =
    UserData::custom(SESSIONS.name(), remove_sessions, Counted::Nothing);

pub const COOKIE: &str = "__Host-quarry_session";

#[derive(Serialize, Deserialize)]
struct Record {
    user_id: String,
    csrf: String,
    created_at: i64,
    last_seen: i64,
}

/// A signed-in person, as the pages see them.
#[derive(Debug, Clone)]
pub struct Session {
    /// The hash of the session id (the key of its record).
    pub key: String,
    pub user_id: String,
    pub email: String,
    pub csrf: String,
}

/// A handler that takes a `Session` is for signed-in people only: the
/// guard found the session from its cookie; without one, the person is
/// sent to sign in.
impl<S: Send + Sync> FromRequestParts<S> for Session {
    type Rejection = Redirect;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Session, Redirect> {
        parts
            .extensions
            .get::<Session>()
            .cloned()
            .ok_or_else(|| Redirect::to("/dashboard/login"))
    }
}

// ---- passwords ------------------------------------------------------------

/// An argon2id hash of `password` (PHC string, random salt).
pub fn hash_password(password: &str) -> Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("hashing the password: {e}"))
}

fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|hash| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok()
    })
}

/// Sets a user's dashboard password (`quarry admin set-password`, the demo).
pub fn set_password(store: &Store, user_id: &str, password: &str) -> Result<()> {
    anyhow::ensure!(
        password.chars().count() >= 8,
        "a password needs at least 8 characters"
    );
    store.set_password_hash(user_id, &hash_password(password)?)
}

// ---- sessions -------------------------------------------------------------

fn session_key(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

fn random_token() -> String {
    crate::store::random_b64(32)
}

fn cookie_value(headers: &HeaderMap) -> Option<String> {
    cookie_named(headers, COOKIE)
}

pub(super) fn cookie_named(headers: &HeaderMap, cookie: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == cookie)
        .map(|(_, value)| value.to_string())
}

/// The session of a request, if its cookie names a live one (and touches it).
pub(super) fn from_headers(dashboard: &Dashboard, headers: &HeaderMap) -> Option<Session> {
    let id = cookie_value(headers)?;
    if id.len() > 128 {
        return None;
    }
    let key = session_key(&id);
    let store = &dashboard.store;
    let bytes = store.read().ok()?.get(&SESSIONS, &key).ok()??;
    let record: Record = serde_json::from_slice(&bytes).ok()?;
    let t = now();
    let config = &dashboard.config;
    let alive = t - record.created_at < config.session_absolute_seconds
        && t - record.last_seen < config.session_idle_seconds;
    let user = store.user(&record.user_id).ok().flatten();
    let (true, Some(user), false) = (alive, user, dashboard.deletions.is_blocked(&record.user_id))
    else {
        let _ = remove(store, &key);
        return None;
    };
    // Touch at most once a minute: one write per request would be a lot.
    if t - record.last_seen >= 60 {
        let touched = Record {
            last_seen: t,
            ..record
        };
        let _ = put(store, &key, &touched);
        return Some(Session {
            key,
            user_id: user.id,
            email: user.email,
            csrf: touched.csrf,
        });
    }
    Some(Session {
        key,
        user_id: user.id,
        email: user.email,
        csrf: record.csrf,
    })
}

fn put(store: &Store, key: &str, record: &Record) -> Result<()> {
    let mut txn = store.write()?;
    txn.put(&SESSIONS, key, &serde_json::to_vec(record)?)?;
    txn.commit()
}

/// Ends one session (signing out, or another person signing in on it).
pub(super) fn end(store: &Store, key: &str) {
    if let Err(error) = remove(store, key) {
        tracing::warn!(error = format!("{error:#}"), "ending a session failed");
    }
}

fn remove(store: &Store, key: &str) -> Result<()> {
    let mut txn = store.write()?;
    txn.remove(&SESSIONS, key)?;
    txn.commit()
}

/// Ends every session of a user (their data is being deleted).
fn remove_sessions(txn: &mut Writer, user_id: &str) -> Result<u64> {
    txn.retain(&SESSIONS, .., |_, bytes| {
        !serde_json::from_slice::<Record>(&bytes).is_ok_and(|r| r.user_id == user_id)
    })
}

fn set_cookie(id: &str, max_age: i64) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}={id}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={max_age}"
    ))
    .expect("cookie is ASCII")
}

pub fn clear_cookie() -> HeaderValue {
    HeaderValue::from_static(
        "__Host-quarry_session=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0",
    )
}

// ---- sign-in limits ---------------------------------------------------------

/// How long a sign-in waits for a turn to check its password.
const PASSWORD_CHECK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Password checks (argon2id) that run at once, at most: one per core.
pub(super) fn password_check_turns() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

impl Dashboard {
    /// Whether any of `keys` has used up its failures in the window.
    pub(super) fn throttled(&self, keys: &[String]) -> bool {
        let t = now();
        let window = self.config.login_window_seconds;
        let mut failures = self.login_failures.lock().expect("login failures");
        keys.iter().any(|key| {
            failures.get_mut(key).is_some_and(|times| {
                times.retain(|&at| t - at < window);
                times.len() >= self.config.login_failures as usize
            })
        })
    }

    /// Counts an attempt for each of `keys` unless one has used up its
    /// failures already: one check and count under one lock, so that
    /// attempts made at the same moment cannot all pass. The attempt
    /// counts as a failure until [`Dashboard::end_attempt`] takes it back.
    pub(super) fn begin_attempt(&self, keys: &[String]) -> bool {
        let t = now();
        let window = self.config.login_window_seconds;
        let most = self.config.login_failures as usize;
        let mut failures = self.login_failures.lock().expect("login failures");
        let full = keys.iter().any(|key| {
            failures.get_mut(key).is_some_and(|times| {
                times.retain(|&at| t - at < window);
                times.len() >= most
            })
        });
        if !full {
            if failures.len() > 100_000 {
                failures.clear();
            }
            for key in keys {
                failures.entry(key.clone()).or_default().push(t);
            }
        }
        !full
    }

    /// Takes back the count of an attempt that did not fail (it succeeded,
    /// or never checked a password).
    pub(super) fn end_attempt(&self, keys: &[String]) {
        let mut failures = self.login_failures.lock().expect("login failures");
        for key in keys {
            if let Some(times) = failures.get_mut(key) {
                times.pop();
            }
        }
    }

    pub(super) fn record_failure(&self, keys: &[String]) {
        let t = now();
        let mut failures = self.login_failures.lock().expect("login failures");
        // Bounded memory: forget the oldest keys beyond 100k.
        if failures.len() > 100_000 {
            failures.clear();
        }
        for key in keys {
            failures.entry(key.clone()).or_default().push(t);
        }
    }

    fn forget_failures(&self, email_key: &str) {
        self.login_failures
            .lock()
            .expect("login failures")
            .remove(email_key);
    }
}

// ---- pages ----------------------------------------------------------------

/// The sign-in page: the single sign-on button when the operator set one
/// up, and the password form (`email` typed again after a failure).
pub(super) fn login_form(dashboard: &Dashboard, email: &str, error: Option<&str>) -> Markup {
    let body = html! {
        @if let Some(error) = error {
            (error_notice(error))
        }
        @if let Some(provider) = &dashboard.sso {
            p { a class="button" href="/dashboard/sso/start" { "Sign in with " (provider.name()) } }
            p { "Or with your email and password:" }
        }
        form method="post" action="/dashboard/login" {
            label for="email" { "Email" }
            input id="email" name="email" type="email" autocomplete="username" required value=(email);
            label for="password" { "Password" }
            input id="password" name="password" type="password" autocomplete="current-password" required;
            p { button type="submit" { "Sign in" } }
        }
        p {
            "Accounts are created by the operator ("
            code { "quarry admin create-user" } ", " code { "quarry admin set-password" } ")."
        }
    };
    page("Sign in", None, body)
}

pub async fn login_page(
    State(dashboard): State<Arc<Dashboard>>,
    session: Option<Extension<Session>>,
) -> Response {
    if session.is_some() {
        return Redirect::to("/dashboard/tools").into_response();
    }
    login_form(&dashboard, "", None).into_response()
}

#[derive(Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

pub async fn login(
    State(dashboard): State<Arc<Dashboard>>,
    Extension(Peer(ip)): Extension<Peer>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let email = form.email.trim().to_lowercase();
    let keys = [format!("addr:{ip}"), format!("email:{email}")];
    // Counted before the password is checked (as a failure until it
    // succeeds): requests already in flight cannot all pass the throttle.
    if !dashboard.begin_attempt(&keys) {
        let minutes = (dashboard.config.login_window_seconds + 59) / 60;
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, (minutes * 60).to_string())],
            login_form(
                &dashboard,
                &email,
                Some(&format!(
                    "Too many failed sign-ins. Try again in {minutes} minutes."
                )),
            ),
        )
            .into_response();
    }
    // A bounded number of argon2id checks at once (19 MiB and a core's
    // time each); the others wait a little, then are told to retry.
    let Ok(Ok(_checking)) =
        tokio::time::timeout(PASSWORD_CHECK_WAIT, dashboard.password_checks.acquire()).await
    else {
        dashboard.end_attempt(&keys);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "5".to_string())],
            login_form(
                &dashboard,
                &email,
                Some("Many people are signing in right now. Try again in a few seconds."),
            ),
        )
            .into_response();
    };
    let store = &dashboard.store;
    let user = store.user_by_email(&email).ok().flatten();
    let phc = match &user {
        Some(user) => store.password_hash(&user.id).ok().flatten(),
        None => None,
    };
    // Unknown emails and users without a password cost a verification too.
    let (hash, known) = match phc {
        Some(phc) => (phc, true),
        None => (dashboard.dummy_hash.clone(), false),
    };
    let password = form.password;
    let verified = tokio::task::spawn_blocking(move || verify_password(&password, &hash))
        .await
        .unwrap_or(false);
    let user = match user {
        Some(user) if verified && known && !dashboard.deletions.is_blocked(&user.id) => user,
        _ => {
            // Already counted by begin_attempt.
            tracing::info!(%ip, "dashboard sign-in failed");
            return (
                StatusCode::UNAUTHORIZED,
                login_form(
                    &dashboard,
                    &email,
                    Some("The email or the password is wrong."),
                ),
            )
                .into_response();
        }
    };
    dashboard.end_attempt(&keys);
    dashboard.forget_failures(&keys[1]);
    begin(&dashboard, &user.id, "password", &headers)
}

/// The cookie that remembers, across a sign-in (password or single
/// sign-on), the authorization request that sent the person to sign in.
const RETURN_COOKIE: &str = "__Host-quarry_return";
/// Only authorization requests come back this way: never an address that
/// leads off this site.
const RETURN_PATH: &str = "/oauth/authorize?";

/// Remembers `path_and_query` (an authorization request) for after the
/// sign-in, for ten minutes. (A link from anywhere can set it; it leads
/// only to a consent page, which the same link shows a signed-in person
/// at once.) Longer requests are not remembered: encoded, they would pass
/// a browser's 4 KiB per cookie.
pub(super) fn return_after_sign_in(path_and_query: &str) -> Option<HeaderValue> {
    if !path_and_query.starts_with(RETURN_PATH) || path_and_query.len() > 2900 {
        return None;
    }
    // Encoded: a query may hold what a cookie may not (`;`, spaces).
    let value = B64URL.encode(path_and_query);
    HeaderValue::from_str(&format!(
        "{RETURN_COOKIE}={value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=600"
    ))
    .ok()
}

/// The authorization request remembered by [`return_after_sign_in`].
fn return_to(headers: &HeaderMap) -> Option<String> {
    let value = cookie_named(headers, RETURN_COOKIE)?;
    let decoded = String::from_utf8(B64URL.decode(value).ok()?).ok()?;
    decoded.starts_with(RETURN_PATH).then_some(decoded)
}

/// Starts a session for a user who proved who they are: the cookie, and
/// back to the authorization request that sent them to sign in, or off to
/// their tools.
pub(super) fn begin(
    dashboard: &Dashboard,
    user_id: &str,
    how: &'static str,
    headers: &HeaderMap,
) -> Response {
    let id = random_token();
    let t = now();
    let record = Record {
        user_id: user_id.to_string(),
        csrf: random_token(),
        created_at: t,
        last_seen: t,
    };
    if let Err(error) = put(&dashboard.store, &session_key(&id), &record) {
        return super::templates::internal_error("storing a session", error);
    }
    tracing::info!(user = %user_id, how, "dashboard sign-in");
    let back = return_to(headers);
    let mut response = Redirect::to(back.as_deref().unwrap_or("/dashboard/tools")).into_response();
    if back.is_some() {
        response.headers_mut().append(
            header::SET_COOKIE,
            HeaderValue::from_str(&format!(
                "{RETURN_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0"
            ))
            .expect("cookie is ASCII"),
        );
    }
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(&id, dashboard.config.session_absolute_seconds),
    );
    response
}

pub async fn logout(
    State(dashboard): State<Arc<Dashboard>>,
    session: Option<Extension<Session>>,
) -> Response {
    if let Some(Extension(session)) = session {
        end(&dashboard.store, &session.key);
    }
    let mut response = Redirect::to("/dashboard/login").into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, clear_cookie());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let phc = hash_password("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$"), "{phc}");
        assert!(verify_password("correct horse", &phc));
        assert!(!verify_password("wrong horse", &phc));
        assert!(!verify_password("x", "not a phc string"));
    }

    #[test]
    fn cookies_are_read_by_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; __Host-quarry_session=xyz; c=d"),
        );
        assert_eq!(cookie_value(&headers).as_deref(), Some("xyz"));
    }
}
