//! `Idempotency-Key` on `POST /v1/query`: the same key and body within 24
//! hours get the stored 200 response again (marked `Idempotent-Replayed`,
//! not charged against the limits); the same key with another body, or
//! while the first request still runs, is a 409. The key's state is a
//! record in the store (see `store/idempotency.rs`), so every replica
//! answers the same.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::gate::{BodyHash, Gate, Identity, limit};
use crate::store::{ClaimOutcome, IdempotencyRecord, RequestState, Store};

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
            Ok(decision) => limit::with_decision(response, decision),
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

/// The stored answer of an earlier request with this key and body hash.
pub fn stored_body(store: &Store, user_id: &str, key: &str, body_hash: &str) -> Option<Vec<u8>> {
    let record = store.idempotency_record(user_id, key).ok()??;
    if record.body_hash != body_hash {
        return None;
    }
    answered_body(record)
}

/// The stored body of an answered record (only 200s are stored).
fn answered_body(record: IdempotencyRecord) -> Option<Vec<u8>> {
    match record.state {
        RequestState::Answered { status: 200, body } => Some(body),
        _ => None,
    }
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

/// A key as given: 1..=255 visible ASCII characters.
pub fn check_key(bytes: &[u8]) -> Result<String, ApiError> {
    if bytes.is_empty() || bytes.len() > 255 || !bytes.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err(ApiError::bad_request(
            "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is recommended)",
        ));
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// A running request that holds its key until it finishes.
pub struct Claim<'a> {
    store: &'a Store,
    user_id: String,
    key: String,
    body_hash: String,
    answered: bool,
}

/// What a request with a key does: run (holding the key), or answer at once.
pub enum Claimed<'a> {
    Run(Claim<'a>),
    /// Another request with this key finished meanwhile: its answer's body.
    Replay(Vec<u8>),
}

/// Claims `key` for this request, or says why it cannot run.
pub fn claim<'a>(
    store: &'a Store,
    user_id: &str,
    key: String,
    body_hash: &str,
) -> Result<Claimed<'a>, ApiError> {
    match store.claim_idempotency_key(user_id, &key, body_hash)? {
        ClaimOutcome::Claimed => Ok(Claimed::Run(Claim {
            store,
            user_id: user_id.to_string(),
            key,
            body_hash: body_hash.to_string(),
            answered: false,
        })),
        ClaimOutcome::Running => Err(ApiError::conflict(
            "a request with this Idempotency-Key is still running; retry when it has finished",
        )
        .with_retry_after(1)),
        ClaimOutcome::OtherBody => Err(different_body()),
        ClaimOutcome::Answered(record) => answered_body(record)
            .map(Claimed::Replay)
            .ok_or_else(|| ApiError::internal("an answered idempotency record without its answer")),
    }
}

fn different_body() -> ApiError {
    ApiError::conflict(
        "this Idempotency-Key was used with a different request body; use a new key for a new request",
    )
}

impl Claim<'_> {
    /// Stores a 200 response for replays (other outcomes are not stored:
    /// retrying them with the same key runs the request again).
    pub fn store(&mut self, status: StatusCode, body: &[u8]) -> anyhow::Result<()> {
        if status != StatusCode::OK {
            return Ok(());
        }
        self.store.answer_idempotency_key(
            &self.user_id,
            &self.key,
            &self.body_hash,
            (status.as_u16(), body),
        )?;
        self.answered = true;
        Ok(())
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let released =
            self.store
                .release_idempotency_key(&self.user_id, &self.key, &self.body_hash);
        if let Err(error) = released {
            // The lease frees the key later.
            tracing::warn!(%error, "could not release an idempotency key");
        }
    }
}
