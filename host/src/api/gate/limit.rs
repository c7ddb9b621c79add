//! The rate limits at the gate: every answer is charged to its subject
//! (the user, or the client's address) in the endpoint's bucket, except an
//! idempotent replay; the [`Decision`] goes with the response so that
//! [`super::observe`] shows the windows on it.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{Extensions, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::auth::Identity;
use super::{Gate, RequestStart, UserId, body};
use crate::api::error::{ApiError, ErrorType};
use crate::api::limits::{Bucket, Decision};
use crate::api::routes::Endpoint;

/// The bucket a request is charged to.
fn bucket(identity: Option<&Identity>, endpoint: Option<Endpoint>) -> Bucket {
    match (identity, endpoint) {
        (Some(Identity::Valid(_) | Identity::Unchecked { .. }), Some(endpoint)) => {
            endpoint.bucket()
        }
        (Some(Identity::Valid(_)), None) => Bucket::Other("unmatched"),
        _ => Bucket::Anonymous,
    }
}

fn subject_and_bucket(extensions: &Extensions) -> (String, Bucket) {
    let identity = extensions.get::<Identity>();
    let endpoint = extensions.get::<Endpoint>().copied();
    let subject = identity.map_or_else(|| "addr:unknown".to_string(), Identity::subject);
    (subject, bucket(identity, endpoint))
}

/// Layer: charges the request; refuses it (429) when a window is full.
pub async fn charge(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let endpoint = request.extensions().get::<Endpoint>().copied();
    let decision = match charged(&gate, request.extensions()).await {
        Ok(decision) => decision,
        Err(response) => return response,
    };
    if !decision.allowed {
        return with_decision(rate_limited(decision, endpoint).into_response(), decision);
    }
    if endpoint == Some(Endpoint::Query)
        && let Some(RequestStart(started)) = request.extensions().get::<RequestStart>()
    {
        gate.metrics.observe_stage("auth_limits", started.elapsed());
    }
    with_decision(next.run(request).await, decision)
}

/// Charges the request, durably (see `limits.rs`).
async fn charged(gate: &Gate, extensions: &Extensions) -> Result<Decision, Response> {
    let (_, bucket) = subject_and_bucket(extensions);
    charge_identity(gate, extensions.get::<Identity>(), bucket).await
}

/// Charges `identity` (the address when there is none) in `bucket`: the
/// one way `/v1` and `/mcp` charge a request. A token that could not be
/// checked is charged to nobody (whose request it is is unknown: not the
/// address, as an anonymous one would be), and answers 503 when storage is
/// away, 500 otherwise; windows that cannot be read answer their error.
/// Either answer carries a decision showing nothing remaining (the limits
/// fail closed).
pub async fn charge_identity(
    gate: &Gate,
    identity: Option<&Identity>,
    bucket: Bucket,
) -> Result<Decision, Response> {
    if let Some(Identity::Unchecked { unavailable, .. }) = identity {
        let error = match unavailable {
            true => ApiError::unavailable("the bearer token could not be checked"),
            false => ApiError::internal("the bearer token could not be checked"),
        };
        return Err(with_decision(
            error.into_response(),
            gate.limiter.unknown(bucket),
        ));
    }
    let subject = identity.map_or_else(|| "addr:unknown".to_string(), Identity::subject);
    let charged = gate.limiter.charge(&subject, bucket).await;
    charged.map_err(|error| unreadable_windows(gate, bucket, error))
}

/// The windows as they are, uncharged (an idempotent replay).
pub async fn peek(gate: &Gate, extensions: &Extensions) -> Result<Decision, Response> {
    let (subject, bucket) = subject_and_bucket(extensions);
    let peeked = gate.limiter.peek(&subject, bucket).await;
    peeked.map_err(|error| unreadable_windows(gate, bucket, error))
}

fn unreadable_windows(gate: &Gate, bucket: Bucket, error: anyhow::Error) -> Response {
    let response = ApiError::from(error).into_response();
    with_decision(response, gate.limiter.unknown(bucket))
}

/// Answers `error` (a refused body), charged: the limits' 429 first when a
/// window is full.
pub async fn refuse(gate: &Gate, extensions: &Extensions, error: ApiError) -> Response {
    let decision = match charged(gate, extensions).await {
        Ok(decision) => decision,
        Err(response) => return response,
    };
    let endpoint = extensions.get::<Endpoint>().copied();
    let error = if decision.allowed {
        error
    } else {
        rate_limited(decision, endpoint)
    };
    with_decision(error.into_response(), decision)
}

pub fn with_decision(mut response: Response, decision: Decision) -> Response {
    response.extensions_mut().insert(decision);
    response
}

fn rate_limited(decision: Decision, endpoint: Option<Endpoint>) -> ApiError {
    limited(decision, endpoint.map_or("this client", Endpoint::label))
}

/// The 429 of a full window (`what` names what was limited; `/mcp` and
/// its tools use it too).
pub fn limited(decision: Decision, what: &str) -> ApiError {
    let window = if decision.remaining_day == 0 {
        "day"
    } else {
        "minute"
    };
    ApiError::new(
        ErrorType::RateLimited,
        format!(
            "rate limit exceeded for {what} ({window} window): retry in {} seconds",
            decision.retry_after
        ),
    )
    .with_retry_after(decision.retry_after)
}

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
    let error = match body::read(&parts.headers, body).await {
        Ok(_) => error,
        Err(body_error) => body_error,
    };
    let mut response = refuse(gate, &parts.extensions, error).await;
    if let Some(user) = user {
        response.extensions_mut().insert(user);
    }
    response
}
