//! What the router answers where no endpoint takes a request: 404 for a
//! path nobody serves, 405 (with `Allow`) for a method a path does not
//! take. Such requests are identified, their bodies read and bounded, and
//! charged like any other.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;

use super::UserId;
use super::limit::refuse;
use crate::access::{Gate, Identity, read_body};
use crate::api::routes::Endpoint;
use crate::error::ApiError;

/// The router's fallback: no endpoint at this path (404), charged.
pub async fn not_found(
    State(gate): State<Gate>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let error = ApiError::not_found(format!("no endpoint at {}", request.uri().path()));
    miss(&gate, peer, request, error).await
}

/// The router's fallback for a path served with other methods (405, with
/// `Allow`), charged.
pub async fn method_not_allowed(
    State(gate): State<Gate>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let path = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(request.uri().path(), MatchedPath::as_str);
    let allowed = Endpoint::methods_at(path).join(", ");
    let error = ApiError::bad_request(format!(
        "{} is not allowed on {}; use {allowed}",
        request.method(),
        request.uri().path(),
    ))
    .with_status(StatusCode::METHOD_NOT_ALLOWED)
    .with_header(header::ALLOW, &allowed);
    miss(&gate, peer, request, error).await
}

/// A request no endpoint takes: identified, its body read (and bounded),
/// charged, then answered with `error`.
async fn miss(gate: &Gate, peer: SocketAddr, request: Request, error: ApiError) -> Response {
    let identity = Identity::of(gate, request.headers(), peer);
    let user = identity.user_id().map(|id| UserId(id.to_string()));
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(identity);
    let error = match read_body(&parts.headers, body).await {
        Ok(_) => error,
        Err(body_error) => body_error,
    };
    let mut response = refuse(gate, &parts.extensions, error).await;
    if let Some(user) = user {
        response.extensions_mut().insert(user);
    }
    response
}
