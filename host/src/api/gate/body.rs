//! The request body, read once and bounded: handlers behind the gate see
//! at most [`MAX_BODY_BYTES`], and its hash for idempotency.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

use super::{Gate, limit};
use crate::api::error::{ApiError, ErrorType};

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How much of an oversized body is read and dropped before answering.
const DRAIN_BYTES: usize = 4 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// SHA-256 of the request's body (hex).
#[derive(Debug, Clone)]
pub struct BodyHash(pub String);

/// Layer: reads the body (a refused body is charged like any request).
pub async fn limit(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match read(&parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(error) => return limit::refuse(&gate, &parts.extensions, error).await,
    };
    let mut request = Request::from_parts(parts, Body::from(bytes.clone()));
    request
        .extensions_mut()
        .insert(BodyHash(hex::encode(Sha256::digest(&bytes))));
    next.run(request).await
}

/// Reads at most [`MAX_BODY_BYTES`]. A larger body is refused, but what
/// the client is still sending is read and dropped first (up to a bound):
/// an HTTP/1.1 client that is still writing when the server closes sees a
/// broken pipe instead of the 413.
pub async fn read(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
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
