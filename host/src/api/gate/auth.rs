//! Who is asking: the bearer token, checked once ([`identify`]), and the
//! refusal of requests without a valid one ([`require`]), which comes after
//! the limits so that a 401 is counted like any answer.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Gate;
use super::UserId;
use crate::api::error::ApiError;
use crate::api::routes::Endpoint;
use crate::store::{Audience, Scope, TokenCheck, Unavailable, User};

/// The authenticated user of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: User,
    pub token_expires_at: i64,
    /// What the token may do (every scope for API tokens).
    pub scope: Scope,
}

/// What the request's credentials came to.
#[derive(Debug, Clone)]
pub enum Identity {
    Valid(Caller),
    /// No `Authorization` header: limited by address.
    Missing {
        peer: SocketAddr,
    },
    Invalid {
        peer: SocketAddr,
    },
    Expired {
        peer: SocketAddr,
    },
    /// The token could not be checked: storage is unreachable (a 503, not
    /// a 401, so that a client keeps its token and retries).
    Unchecked {
        peer: SocketAddr,
        unavailable: bool,
    },
}

impl Identity {
    /// Whom the limits charge: the user, or the client's address.
    pub fn subject(&self) -> String {
        match self {
            Identity::Valid(caller) => caller.user.id.clone(),
            Identity::Missing { peer }
            | Identity::Invalid { peer }
            | Identity::Expired { peer }
            | Identity::Unchecked { peer, .. } => {
                format!("addr:{}", peer.ip())
            }
        }
    }

    pub fn user_id(&self) -> Option<&str> {
        match self {
            Identity::Valid(caller) => Some(&caller.user.id),
            _ => None,
        }
    }

    /// Checks the request's bearer token for `/v1` (a user being deleted
    /// is refused).
    pub fn of(gate: &Gate, headers: &HeaderMap, peer: SocketAddr) -> Identity {
        Identity::at(gate, headers, peer, Audience::V1)
    }

    /// Checks the request's bearer token for `audience`: a token for
    /// another resource is invalid here.
    pub fn at(gate: &Gate, headers: &HeaderMap, peer: SocketAddr, audience: Audience) -> Identity {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Identity::Missing { peer };
        };
        let Some(token) = value.to_str().ok().and_then(bearer_token) else {
            return Identity::Invalid { peer };
        };
        match gate.store.check_token(token, audience) {
            Ok(TokenCheck::Valid {
                user,
                expires_at,
                scope,
            }) if !gate.deletions.is_blocked(&user.id) => Identity::Valid(Caller {
                user,
                token_expires_at: expires_at,
                scope,
            }),
            Ok(TokenCheck::Valid { .. } | TokenCheck::Unknown | TokenCheck::WrongAudience) => {
                Identity::Invalid { peer }
            }
            Ok(TokenCheck::Expired) => Identity::Expired { peer },
            Err(error) => {
                tracing::error!(error = format!("{error:#}"), "token check failed");
                let unavailable = error.chain().any(|c| c.is::<Unavailable>());
                Identity::Unchecked { peer, unavailable }
            }
        }
    }
}

fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

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
