//! Request bodies, read once and bounded.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};

use crate::error::{ApiError, ErrorType};

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How much of an oversized body is read and dropped before answering.
const DRAIN_BYTES: usize = 4 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Reads at most [`MAX_BODY_BYTES`]. A larger body is refused, but what
/// the client is still sending is read and dropped first (up to a bound):
/// an HTTP/1.1 client that is still writing when the server closes sees a
/// broken pipe instead of the 413.
pub async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut body = body;
    let mut bytes = Vec::new();
    let mut over = declared.is_some_and(|len| len > MAX_BODY_BYTES as u64);
    let mut seen = 0usize;
    let drain_until = tokio::time::Instant::now() + DRAIN_TIME;
    loop {
        let frame = if over {
            match tokio::time::timeout_at(drain_until, body.frame()).await {
                Ok(frame) => frame,
                Err(_) => break,
            }
        } else {
            body.frame().await
        };
        let Some(frame) = frame else { break };
        let Ok(frame) = frame else {
            return Err(ApiError::bad_request("the request body could not be read"));
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if over {
            if seen > DRAIN_BYTES {
                break;
            }
        } else if seen > MAX_BODY_BYTES {
            over = true;
        } else {
            bytes.extend_from_slice(&data);
        }
    }
    if over {
        Err(ApiError::new(
            ErrorType::PayloadTooLarge,
            format!("the request body is larger than {MAX_BODY_BYTES} bytes"),
        )
        .with_header(header::CONNECTION, "close"))
    } else {
        Ok(Bytes::from(bytes))
    }
}
