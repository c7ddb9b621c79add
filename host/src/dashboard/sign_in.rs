//! Signing in and out with a password: argon2id hashes, sign-in limits
//! per address and per email, the sign-in page, and where a person goes
//! once signed in (single sign-on, `sso/`, ends there too).

use std::sync::Arc;

use anyhow::Result;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use maud::{Markup, html};
use serde::Deserialize;

use super::session::{self, Session};
use super::templates::{error_notice, internal_error, message, page};
use super::{Dashboard, Peer};
use crate::limits::{Attempt, Throttle, address};
use quarry_store::Store;

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

// ---- sign-in limits ---------------------------------------------------------

/// How long a sign-in waits for a turn to check its password.
const PASSWORD_CHECK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Password checks (argon2id) that run at once, at most: one per core.
pub(super) fn password_check_turns() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

impl Dashboard {
    /// Whether any of `keys` has used up its failures in `throttle`'s
    /// window. When the limiter cannot tell (Redis is away), the answer is
    /// a page asking to retry: the throttles fail closed.
    pub(super) async fn throttled(&self, throttle: Throttle, keys: &[String]) -> Option<Response> {
        match self.limiter.throttled(throttle, keys).await {
            Ok(false) => None,
            Ok(true) => Some(too_many(self, throttle)),
            Err(error) => Some(limits_unavailable(error)),
        }
    }

    /// Counts a failure of `throttle` under `keys`.
    pub(super) async fn record_failure(&self, throttle: Throttle, keys: &[String]) {
        if let Err(error) = self.limiter.record_failure(throttle, keys).await {
            tracing::warn!(
                error = format!("{error:#}"),
                "a failed attempt could not be counted"
            );
        }
    }

    /// Takes back an attempt that did not fail; forgets `forget`'s failures.
    async fn not_failed(&self, attempt: Attempt, forget: &[String]) {
        if let Err(error) = self.limiter.not_failed(attempt, forget).await {
            tracing::warn!(
                error = format!("{error:#}"),
                "an attempt could not be taken back"
            );
        }
    }
}

/// 429: `throttle` has had too many failures.
fn too_many(dashboard: &Dashboard, throttle: Throttle) -> Response {
    let minutes = (dashboard.config.login_window_seconds + 59) / 60;
    let text = match throttle {
        Throttle::SignIn | Throttle::SingleSignOn => {
            format!("Too many failed sign-ins. Try again in {minutes} minutes.")
        }
        Throttle::DeviceCode => {
            format!("Too many wrong codes. Wait {minutes} minutes, then enter the code again.")
        }
    };
    let mut response = message(StatusCode::TOO_MANY_REQUESTS, "Too many attempts", &text);
    if let Ok(value) = (minutes * 60).to_string().parse() {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// 503: the limits cannot be read (Redis is away).
fn limits_unavailable(error: anyhow::Error) -> Response {
    tracing::warn!(
        error = format!("{error:#}"),
        "the sign-in limits cannot be read"
    );
    let mut response = message(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again",
        "Signing in is not possible for a moment. Try again in a few seconds.",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
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
    let keys = [address::subject(ip), format!("email:{email}")];
    // Counted before the password is checked (as a failure until it
    // succeeds): requests already in flight cannot all pass the throttle.
    let attempt = match dashboard
        .limiter
        .begin_attempt(Throttle::SignIn, &keys)
        .await
    {
        Ok(Some(attempt)) => attempt,
        Ok(None) => {
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
        Err(error) => return limits_unavailable(error),
    };
    // A bounded number of argon2id checks at once (19 MiB and a core's
    // time each); the others wait a little, then are told to retry.
    let Ok(Ok(_checking)) =
        tokio::time::timeout(PASSWORD_CHECK_WAIT, dashboard.password_checks.acquire()).await
    else {
        dashboard.not_failed(attempt, &[]).await;
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
            // The attempt stays counted as a failure.
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
    dashboard.not_failed(attempt, &keys[1..]).await;
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
    let value = session::cookie_named(headers, RETURN_COOKIE)?;
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
    let id = match session::start(&dashboard.store, user_id) {
        Ok(id) => id,
        Err(error) => return internal_error("storing a session", error),
    };
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
        session::set_cookie(&id, dashboard.config.session_absolute_seconds),
    );
    response
}

pub async fn logout(
    State(dashboard): State<Arc<Dashboard>>,
    session: Option<Extension<Session>>,
) -> Response {
    if let Some(Extension(session)) = session {
        session::end(&dashboard.store, &session.key);
    }
    let mut response = Redirect::to("/dashboard/login").into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, session::clear_cookie());
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
}
