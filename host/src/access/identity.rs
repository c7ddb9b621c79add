//! Who is asking: a request's bearer token, checked against the store
//! for one audience (`/v1` and `/mcp` each refuse the other's tokens).

use std::net::SocketAddr;

use axum::http::{HeaderMap, header};

use super::Gate;
use crate::limits::address;
use quarry_store::{Audience, Scope, TokenCheck, Unavailable, User};

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
            | Identity::Unchecked { peer, .. } => address::subject(peer.ip()),
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
