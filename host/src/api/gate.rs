//! The gate every request passes: request id, authentication, the body size
//! limit, idempotent replays, rate limits, routing misses, and the headers
//! every response carries. Handlers behind it see an authenticated
//! [`Caller`] and a body of at most 64 KiB.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::App;
use super::error::ApiError;
use super::idempotency;
use super::limits::{Bucket, Decision};
use super::routes::{Endpoint, Lookup, lookup};
use crate::store::{TokenCheck, User, now, random_hex};

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The authenticated user of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: User,
    pub token_expires_at: i64,
}

/// The request's body, already read (and hashed for idempotency).
#[derive(Debug, Clone)]
pub struct BodyHash(pub String);

enum Auth {
    Valid(Caller),
    Missing,
    Invalid,
    Expired,
}

pub async fn gate(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let request_id = format!("req_{}", random_hex(8));
    let method = request.method().clone();
    let route = lookup(&method, request.uri().path());
    let (mut response, decision, user) = pass(&app, peer, request, &route, next, started).await;
    decorate(response.headers_mut(), &request_id, decision.as_ref());
    let label = match route {
        Lookup::Found(endpoint) => endpoint.label(),
        _ => "unmatched",
    };
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    app.metrics.observe_request(label, status, elapsed);
    // Never the token, the query or the body: ids, route, status, time.
    tracing::info!(
        request_id = %request_id,
        method = %method,
        route = label,
        status,
        user = user.as_deref().unwrap_or("-"),
        duration_ms = elapsed.as_millis() as u64,
        "request"
    );
    response
}

async fn pass(
    app: &App,
    peer: SocketAddr,
    request: Request,
    route: &Lookup,
    next: Next,
    started: Instant,
) -> (Response, Option<Decision>, Option<String>) {
    let auth = authenticate(app, request.headers());
    let (subject, bucket) = match (&auth, route) {
        (Auth::Valid(caller), Lookup::Found(endpoint)) => {
            (caller.user.id.clone(), endpoint.bucket())
        }
        (Auth::Valid(caller), _) => (caller.user.id.clone(), Bucket::Other("unmatched")),
        _ => (format!("addr:{}", peer.ip()), Bucket::Anonymous),
    };
    let user = match &auth {
        Auth::Valid(caller) => Some(caller.user.id.clone()),
        _ => None,
    };
    let (parts, body) = request.into_parts();
    let bytes = match read_body(&parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(error) => {
            let decision = app.limiter.charge(&subject, bucket, now());
            return (
                refuse_or(decision, error, route).into_response(),
                Some(decision),
                user,
            );
        }
    };
    let body_hash = hex::encode(Sha256::digest(&bytes));
    if let (Auth::Valid(caller), Lookup::Found(Endpoint::Query)) = (&auth, route)
        && let Some(replay) = idempotency::replay(app, &caller.user.id, &parts.headers, &body_hash)
    {
        // Replays are free: the windows are shown, not charged.
        return (
            replay,
            Some(app.limiter.peek(&subject, bucket, now())),
            user,
        );
    }
    let decision = app.limiter.charge(&subject, bucket, now());
    // Acknowledged requests are counted durably (see limits.rs).
    if let Err(error) = app.limiter.persist(decision.change).await {
        return (
            ApiError::internal(format!("{error:#}")).into_response(),
            Some(decision),
            user,
        );
    }
    if !decision.allowed {
        return (
            rate_limited(decision, route).into_response(),
            Some(decision),
            user,
        );
    }
    let endpoint = match route {
        Lookup::Found(endpoint) => *endpoint,
        Lookup::NotFound => {
            return (
                ApiError::not_found(format!("no endpoint at {}", parts.uri.path())).into_response(),
                Some(decision),
                user,
            );
        }
        Lookup::WrongMethod(allowed) => {
            let error = ApiError::bad_request(format!(
                "{} is not allowed on {}; use {}",
                parts.method,
                parts.uri.path(),
                allowed.join(", ")
            ))
            .with_status(StatusCode::METHOD_NOT_ALLOWED)
            .with_header(header::ALLOW, &allowed.join(", "));
            return (error.into_response(), Some(decision), user);
        }
    };
    let mut request = Request::from_parts(parts, Body::from(bytes));
    match auth {
        Auth::Valid(caller) => {
            request.extensions_mut().insert(caller);
        }
        _ if endpoint.is_public() => {}
        Auth::Missing => {
            return (
                unauthorized(
                    "a bearer token is required (Authorization: Bearer qt_...)",
                    false,
                ),
                Some(decision),
                user,
            );
        }
        Auth::Invalid => {
            return (
                unauthorized("the bearer token is not valid", false),
                Some(decision),
                user,
            );
        }
        Auth::Expired => {
            return (
                unauthorized("the bearer token has expired; get a new one", true),
                Some(decision),
                user,
            );
        }
    }
    request.extensions_mut().insert(BodyHash(body_hash));
    if endpoint == Endpoint::Query {
        app.metrics.observe_stage("auth_limits", started.elapsed());
    }
    (normalize(next.run(request).await), Some(decision), user)
}

fn authenticate(app: &App, headers: &HeaderMap) -> Auth {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Auth::Missing;
    };
    let Some(token) = value.to_str().ok().and_then(bearer_token) else {
        return Auth::Invalid;
    };
    match app.store.check_token(token) {
        Ok(TokenCheck::Valid { user, expires_at }) if !app.is_blocked(&user.id) => {
            Auth::Valid(Caller {
                user,
                token_expires_at: expires_at,
            })
        }
        Ok(TokenCheck::Valid { .. }) | Ok(TokenCheck::Unknown) => Auth::Invalid,
        Ok(TokenCheck::Expired) => Auth::Expired,
        Err(error) => {
            tracing::error!(%error, "token check failed");
            Auth::Invalid
        }
    }
}

fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Reads at most [`MAX_BODY_BYTES`]. A larger body is refused, but what
/// the client is still sending is read and dropped first (up to a bound):
/// an HTTP/1.1 client that is still writing when the server closes sees a
/// broken pipe instead of the 413.
async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    let too_large = || {
        ApiError::new(
            super::error::ErrorType::PayloadTooLarge,
            format!("the request body is larger than {MAX_BODY_BYTES} bytes"),
        )
        .with_header(header::CONNECTION, "close")
    };
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
        Err(too_large())
    } else {
        Ok(Bytes::from(bytes))
    }
}

/// How much of an oversized body is read and dropped before answering.
const DRAIN_BYTES: usize = 4 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// A body error, unless the limit refuses the request first.
fn refuse_or(decision: Decision, error: ApiError, route: &Lookup) -> ApiError {
    if decision.allowed {
        error
    } else {
        rate_limited(decision, route)
    }
}

fn rate_limited(decision: Decision, route: &Lookup) -> ApiError {
    let what = match route {
        Lookup::Found(endpoint) => endpoint.label().to_string(),
        _ => "this client".to_string(),
    };
    let window = if decision.remaining_day == 0 {
        "day"
    } else {
        "minute"
    };
    ApiError::new(
        super::error::ErrorType::RateLimited,
        format!(
            "rate limit exceeded for {what} ({window} window): retry in {} seconds",
            decision.retry_after
        ),
    )
    .with_retry_after(decision.retry_after)
}

fn unauthorized(message: &str, expired: bool) -> Response {
    ApiError::unauthorized(message, expired).into_response()
}

/// Rewrites the framework's own plain-text rejections into the error shape.
fn normalize(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.is_success() || is_json || status.is_redirection() || status.is_informational() {
        return response;
    }
    let error = match status {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            super::error::ErrorType::PayloadTooLarge,
            "the request body is too large",
        ),
        StatusCode::NOT_FOUND => ApiError::not_found("not found"),
        s if s.is_client_error() => {
            ApiError::bad_request(format!("the request was refused ({s})")).with_status(s)
        }
        _ => ApiError::internal(format!("unexpected {status} from a handler")),
    };
    error.into_response()
}

fn decorate(headers: &mut HeaderMap, request_id: &str, decision: Option<&Decision>) {
    headers.insert(
        HeaderName::from_static("x-request-id"),
        HeaderValue::from_str(request_id).expect("ascii id"),
    );
    let Some(d) = decision else { return };
    let pairs: [(&'static str, i64); 6] = [
        ("x-ratelimit-limit-minute", d.limit_minute.into()),
        ("x-ratelimit-remaining-minute", d.remaining_minute.into()),
        ("x-ratelimit-reset-minute", d.reset_minute),
        ("x-ratelimit-limit-day", d.limit_day.into()),
        ("x-ratelimit-remaining-day", d.remaining_day.into()),
        ("x-ratelimit-reset-day", d.reset_day),
    ];
    for (name, value) in pairs {
        headers.insert(HeaderName::from_static(name), HeaderValue::from(value));
    }
}
