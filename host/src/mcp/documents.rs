//! The ids `search` hands out and `fetch` takes: an archived chunk's
//! sequence number sealed with the user's data key (AES-GCM, bound to the
//! user), so an id says nothing, cannot be forged, and means nothing to
//! another user. `fetch` reads the user's archive: no connector is asked
//! again, and a deleted user's ids die with their data key.

use anyhow::Result;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;

use super::shapes::{FetchMetadata, FetchOut};
use crate::error::ApiError;
use crate::services::Services;

const PREFIX: &str = "doc_";
/// What the sealed sequence number is bound to, beside the user.
const RECORD: &str = "mcp/document-id";

/// The opaque id of the user's archived chunk `seq`.
pub fn id_of(app: &Services, user_id: &str, seq: u64) -> Result<String> {
    let key = app.store.data_key(user_id)?;
    let sealed = key.encrypt(user_id, RECORD, &seq.to_le_bytes());
    Ok(format!("{PREFIX}{}", B64URL.encode(sealed)))
}

/// The sequence number an id names, if it is one of this user's.
fn seq_of(app: &Services, user_id: &str, id: &str) -> Result<Option<u64>> {
    let Some(sealed) = id
        .strip_prefix(PREFIX)
        .and_then(|b64| B64URL.decode(b64).ok())
    else {
        return Ok(None);
    };
    let key = app.store.data_key(user_id)?;
    Ok(key
        .decrypt(user_id, RECORD, &sealed)
        .ok()
        .and_then(|plain| <[u8; 8]>::try_from(plain.as_slice()).ok())
        .map(u64::from_le_bytes))
}

/// The archived chunk an id names (404 `not_found` for an id that is not
/// the user's, or whose entry is gone).
pub async fn fetch(app: &Services, user_id: &str, id: &str) -> Result<FetchOut, ApiError> {
    let unknown = || ApiError::not_found(format!("no document {id:?}: use an id search returned"));
    if id.len() > 256 {
        return Err(unknown());
    }
    let (app, user, id_owned) = (app.clone(), user_id.to_string(), id.to_string());
    let entry = tokio::task::spawn_blocking(move || -> Result<_> {
        let Some(seq) = seq_of(&app, &user, &id_owned)? else {
            return Ok(None);
        };
        app.archive.entry(&user, seq)
    })
    .await
    .map_err(anyhow::Error::from)??;
    let entry = entry.ok_or_else(unknown)?;
    let source = entry.source.unwrap_or_default();
    Ok(FetchOut {
        id: id.to_string(),
        title: source.title,
        text: entry.content,
        url: source.url,
        metadata: FetchMetadata {
            connector: entry.connector,
            query: entry.query,
            query_id: entry.query_id,
            queried_at: crate::calendar::rfc3339(entry.queried_at_ms.div_euclid(1000)),
        },
    })
}
