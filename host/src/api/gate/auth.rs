//! Who is asking, for `/v1`: the bearer token, checked once
//! ([`identify`], with [`crate::access::Identity`]), and the refusal of
//! requests without a valid one ([`require`]), which comes after the limits
//! so that a 401 is counted like any answer.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::UserId;
use crate::access::{Gate, Identity};
use crate::api::routes::Endpoint;
use crate::error::ApiError;

/// Layer: finds the request's [`Identity`]; refuses nothing.
pub async fn identify(
    State(gate): State<Gate>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut request: Request,
    next: Next,
) -> Response {
    let identity = Identity::of(&gate, request.headers(), peer);
    let user = identity.user_id().map(|id| UserId(id.to_string()));
    let endpoint = request.extensions().get::<Endpoint>().copied();
    request.extensions_mut().insert(identity);
    let mut response = next.run(request).await;
    // For the log line and the metrics, outside the router.
    if let Some(user) = user {
        response.extensions_mut().insert(user);
    }
    if let Some(endpoint) = endpoint {
        response.extensions_mut().insert(endpoint);
    }
    response
}

/// Layer: a valid token, unless the endpoint is public; the handler then
/// finds the [`Caller`] in the request.
pub async fn require(mut request: Request, next: Next) -> Response {
    let public = request
        .extensions()
        .get::<Endpoint>()
        .is_some_and(|e| e.is_public());
    let identity = request.extensions().get::<Identity>().cloned();
    match identity {
        Some(Identity::Valid(caller)) => {
            request.extensions_mut().insert(caller);
        }
        _ if public => {}
        Some(Identity::Expired { .. }) => {
            return ApiError::unauthorized("the bearer token has expired; get a new one", true)
                .into_response();
        }
        Some(Identity::Invalid { .. }) => {
            return ApiError::unauthorized("the bearer token is not valid", false).into_response();
        }
        Some(Identity::Unchecked { .. }) => {
            // The limits' layer answered it (503) before this one.
            return ApiError::unavailable("the bearer token could not be checked").into_response();
        }
        Some(Identity::Missing { .. }) | None => {
            return ApiError::unauthorized(
                "a bearer token is required (Authorization: Bearer qt_...)",
                false,
            )
            .into_response();
        }
    }
    next.run(request).await
}
