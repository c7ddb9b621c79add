//! `Idempotency-Key` on `POST /v1/query`, as HTTP: the same key and body
//! within 24 hours get the stored 200 response again (marked
//! `Idempotent-Replayed`, not charged against the limits). The keys
//! themselves are the query service's ([`crate::query::idempotency`]).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::body::BodyHash;
use super::limit;
use crate::access::{Gate, Identity, with_decision};
use crate::error::ApiError;
use crate::query::idempotency::{check_key, stored_body};
use quarry_store::Store;

pub const HEADER: &str = "idempotency-key";

/// Layer (`POST /v1/query`): a repeated request (same user, key and body
/// within 24 hours) gets the stored response, marked `Idempotent-Replayed`
/// and not charged: the limits' windows are shown, not counted.
pub async fn replay(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let stored = match (
        request.extensions().get::<Identity>(),
        request.extensions().get::<BodyHash>(),
    ) {
        (Some(Identity::Valid(caller)), Some(BodyHash(hash))) => {
            stored_answer(&gate.store, &caller.user.id, request.headers(), hash)
        }
        _ => None,
    };
    match stored {
        Some(response) => match limit::peek(&gate, request.extensions()).await {
            Ok(decision) => with_decision(response, decision),
            Err(unavailable) => unavailable,
        },
        None => next.run(request).await,
    }
}

/// The stored response for a repeated request, if this is one.
fn stored_answer(
    store: &Store,
    user_id: &str,
    headers: &HeaderMap,
    body_hash: &str,
) -> Option<Response> {
    let key = key_of(headers).ok()??;
    stored_body(store, user_id, &key, body_hash).map(replay_response)
}

/// A stored 200 answer, marked as a replay.
pub fn replay_response(body: Vec<u8>) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        HeaderName::from_static("idempotent-replayed"),
        HeaderValue::from_static("true"),
    );
    response
}

/// The key of a request: `None` without the header, an error when the
/// header is not 1..=255 visible ASCII characters.
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    check_key(value.as_bytes()).map(Some)
}
