//! Sessions of signed-in people: a random 32-byte id in a `__Host-`
//! cookie, stored hashed with an absolute and an idle expiry. (How people
//! sign in is `sign_in.rs`.)

use anyhow::Result;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Redirect;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Dashboard;
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Counted, Store, now};

/// SHA-256 of the session id (hex) → [`Record`]. The id itself is never stored.
pub(super) const SESSIONS: Space<Text, Bytes> =
    Space::user_owned("dashboard_sessions", remove_sessions, Counted::Nothing);

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

// ---- sessions -------------------------------------------------------------

fn session_key(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

fn random_token() -> String {
    quarry_store::random_b64(32)
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

/// Starts a session for `user_id`: its id, for the cookie.
pub(super) fn start(store: &Store, user_id: &str) -> Result<String> {
    let id = random_token();
    let t = now();
    let record = Record {
        user_id: user_id.to_string(),
        csrf: random_token(),
        created_at: t,
        last_seen: t,
    };
    put(store, &session_key(&id), &record)?;
    Ok(id)
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

pub(super) fn set_cookie(id: &str, max_age: i64) -> HeaderValue {
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

#[cfg(test)]
mod tests {
    use super::*;

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
