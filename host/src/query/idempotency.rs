//! Questions asked with an idempotency key (`/v1/query`'s
//! `Idempotency-Key`, MCP's `idempotency_key`): the same key and question
//! within 24 hours get the stored answer again; the same key with another
//! question, or while the first still runs, is a conflict. The key's state
//! is a record in the store (see `store/idempotency.rs`), so every replica
//! answers the same.

use axum::http::StatusCode;

use crate::error::ApiError;
use quarry_store::{ClaimOutcome, IdempotencyRecord, RequestState, Store};

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
