//! The outermost layer of `/v1`: a request id, the six rate-limit headers
//! and the error shape on every response (framework rejections rewritten),
//! metrics by route, and one log line (ids, route, status, time: never a
//! token, a query or a body).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{RequestStart, UserId};
use crate::access::decorate;
use crate::api::routes::Endpoint;
use crate::error::{ApiError, ErrorType};
use crate::limits::Decision;
use crate::metrics::Metrics;
use quarry_store::random_hex;

pub async fn observe(
    State(metrics): State<Arc<Metrics>>,
    mut request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let request_id = format!("req_{}", random_hex(8));
    let method = request.method().clone();
    request.extensions_mut().insert(RequestStart(started));
    let mut response = normalize(next.run(request).await);
    let label = response
        .extensions()
        .get::<Endpoint>()
        .map_or("unmatched", |e| e.label());
    let user = response.extensions().get::<UserId>().cloned();
    let decision = response.extensions().get::<Decision>().copied();
    decorate(response.headers_mut(), &request_id, decision.as_ref());
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    metrics.observe_request(label, status, elapsed);
    tracing::info!(
        request_id = %request_id,
        method = %method,
        route = label,
        status,
        user = user.as_ref().map_or("-", |u| u.0.as_str()),
        duration_ms = elapsed.as_millis() as u64,
        "request"
    );
    response
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
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::new(ErrorType::PayloadTooLarge, "the request body is too large")
        }
        StatusCode::NOT_FOUND => ApiError::not_found("not found"),
        s if s.is_client_error() => {
            ApiError::bad_request(format!("the request was refused ({s})")).with_status(s)
        }
        _ => ApiError::internal(format!("unexpected {status} from a handler")),
    };
    let (parts, _) = response.into_parts();
    let mut rewritten = error.into_response();
    // What the inner layers said about the request stays with it.
    *rewritten.extensions_mut() = parts.extensions;
    rewritten
}
