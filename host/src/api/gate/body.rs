//! The request body, read once and bounded ([`crate::access::read_body`]):
//! handlers behind the gate see at most 64 KiB, and its hash for
//! idempotency.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

use super::limit;
use crate::access::{Gate, read_body};

/// SHA-256 of the request's body (hex).
#[derive(Debug, Clone)]
pub struct BodyHash(pub String);

/// Layer: reads the body (a refused body is charged like any request).
pub async fn limit(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match read_body(&parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(error) => return limit::refuse(&gate, &parts.extensions, error).await,
    };
    let mut request = Request::from_parts(parts, Body::from(bytes.clone()));
    request
        .extensions_mut()
        .insert(BodyHash(hex::encode(Sha256::digest(&bytes))));
    next.run(request).await
}
