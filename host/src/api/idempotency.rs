//! `Idempotency-Key` on `POST /v1/query`: the same key and body within 24
//! hours get the stored 200 response again (marked `Idempotent-Replayed`,
//! not charged against the limits); the same key with another body, or
//! while the first request still runs, is a 409.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::App;
use super::error::ApiError;
use super::gate::{BodyHash, Identity, limit};
use crate::store::{IdempotencyRecord, now};

pub const HEADER: &str = "idempotency-key";

/// Requests with a key that are still running, per `(user, key)`.
#[derive(Default)]
pub struct InFlight(Mutex<HashMap<(String, String), String>>);

/// Layer (`POST /v1/query`): a repeated request (same user, key and body
/// within 24 hours) gets the stored response, marked `Idempotent-Replayed`
/// and not charged: the limits' windows are shown, not counted.
pub async fn replay(State(app): State<App>, request: Request, next: Next) -> Response {
    let stored = match (
        request.extensions().get::<Identity>(),
        request.extensions().get::<BodyHash>(),
    ) {
        (Some(Identity::Valid(caller)), Some(BodyHash(hash))) => {
            stored_answer(&app, &caller.user.id, request.headers(), hash)
        }
        _ => None,
    };
    match stored {
        Some(response) => limit::with_decision(response, limit::peek(&app, request.extensions())),
        None => next.run(request).await,
    }
}

/// The stored response for a repeated request, if this is one.
fn stored_answer(
    app: &App,
    user_id: &str,
    headers: &HeaderMap,
    body_hash: &str,
) -> Option<Response> {
    let key = key_of(headers).ok()??;
    let record = app.store.idempotency_record(user_id, &key).ok()??;
    if record.body_hash != body_hash {
        return None;
    }
    let mut response = (StatusCode::from_u16(record.status).ok()?, record.body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        HeaderName::from_static("idempotent-replayed"),
        HeaderValue::from_static("true"),
    );
    Some(response)
}

/// The key of a request: `None` without the header, an error when the
/// header is not 1..=255 visible ASCII characters.
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    if bytes.is_empty() || bytes.len() > 255 || !bytes.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err(ApiError::bad_request(
            "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is recommended)",
        ));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// A running request that holds its key until it finishes.
pub struct Claim<'a> {
    app: &'a App,
    user_id: String,
    key: String,
    body_hash: String,
}

/// Claims `key` for this request, or says why it cannot run.
pub fn claim<'a>(
    app: &'a App,
    user_id: &str,
    key: String,
    body_hash: &str,
) -> Result<Claim<'a>, ApiError> {
    if let Some(record) = app.store.idempotency_record(user_id, &key)?
        && record.body_hash != body_hash
    {
        return Err(different_body());
    }
    let mut running = app.in_flight.0.lock().expect("in-flight lock");
    let slot = (user_id.to_string(), key.clone());
    if let Some(hash) = running.get(&slot) {
        return Err(if hash == body_hash {
            ApiError::conflict(
                "a request with this Idempotency-Key is still running; retry when it has finished",
            )
            .with_retry_after(1)
        } else {
            different_body()
        });
    }
    running.insert(slot, body_hash.to_string());
    Ok(Claim {
        app,
        user_id: user_id.to_string(),
        key,
        body_hash: body_hash.to_string(),
    })
}

fn different_body() -> ApiError {
    ApiError::conflict(
        "this Idempotency-Key was used with a different request body; use a new key for a new request",
    )
}

impl Claim<'_> {
    /// Stores a 200 response for replays (other outcomes are not stored:
    /// retrying them with the same key runs the request again).
    pub fn store(&self, status: StatusCode, body: &[u8]) -> anyhow::Result<()> {
        if status != StatusCode::OK {
            return Ok(());
        }
        let record = IdempotencyRecord {
            body_hash: self.body_hash.clone(),
            status: status.as_u16(),
            body: body.to_vec(),
            created_at: now(),
        };
        self.app
            .store
            .put_idempotency_record(&self.user_id, &self.key, &record)
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.app
            .in_flight
            .0
            .lock()
            .expect("in-flight lock")
            .remove(&(self.user_id.clone(), self.key.clone()));
    }
}
