//! What every `/oauth/*` endpoint reads and answers alike: the
//! form-encoded request of a client within its rate limit, its fields, and
//! the OAuth error response (RFC 6749 §5.2).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::dashboard::Dashboard;
use crate::error::ApiError;
use crate::limits::{Bucket, Refused, address};

/// An OAuth error response (RFC 6749 §5.2).
pub(super) struct OAuthError {
    status: StatusCode,
    error: &'static str,
    description: String,
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        (
            self.status,
            [(header::CACHE_CONTROL, "no-store")],
            Json(json!({ "error": self.error, "error_description": self.description })),
        )
            .into_response()
    }
}

pub(super) fn oauth_error(
    status: StatusCode,
    error: &'static str,
    description: impl Into<String>,
) -> OAuthError {
    OAuthError {
        status,
        error,
        description: description.into(),
    }
}

/// The form's fields, or the OAuth error that says what is wrong with it.
fn form(headers: &HeaderMap, body: &[u8]) -> Result<Vec<(String, String)>, OAuthError> {
    if !has_content_type(headers, "application/x-www-form-urlencoded") {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        ));
    }
    serde_urlencoded::from_bytes(body).map_err(|_| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the form does not parse",
        )
    })
}

/// Whether the request's media type (parameters aside) is `expected`.
pub(super) fn has_content_type(headers: &HeaderMap, expected: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// The single value of a field (RFC 6749 §3.2: parameters must not repeat).
pub(super) fn field<'a>(
    fields: &'a [(String, String)],
    name: &str,
) -> Result<Option<&'a str>, OAuthError> {
    let mut values = fields.iter().filter(|(k, _)| k == name);
    let first = values.next().map(|(_, v)| v.as_str());
    if values.next().is_some() {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("{name} is repeated"),
        ));
    }
    Ok(first.filter(|v| !v.is_empty()))
}

pub(super) fn required<'a>(
    fields: &'a [(String, String)],
    name: &str,
) -> Result<&'a str, OAuthError> {
    field(fields, name)?.ok_or_else(|| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("{name} is required"),
        )
    })
}

/// Public clients name themselves: any printable label (the device
/// flow), a registered id or a metadata document's URL.
pub(super) fn client_id(fields: &[(String, String)], max_chars: usize) -> Result<&str, OAuthError> {
    let id = required(fields, "client_id")?;
    if id.chars().count() > max_chars || id.chars().any(char::is_control) {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client",
            format!("client_id must be 1 to {max_chars} printable characters"),
        ));
    }
    Ok(id)
}

/// Per client address, in `bucket` (like other requests without a token,
/// or registrations).
pub(super) async fn limited(
    dashboard: &Dashboard,
    subject: &str,
    bucket: Bucket,
) -> Option<Response> {
    let decision = match dashboard.limiter.admit(subject, bucket).await {
        Ok(_) => return None,
        Err(Refused::Full(decision)) => decision,
        Err(Refused::Unreadable(error, _)) => return Some(ApiError::from(error).into_response()),
    };
    let mut response = oauth_error(
        StatusCode::TOO_MANY_REQUESTS,
        "slow_down",
        format!("too many requests; retry in {} s", decision.retry_after),
    )
    .into_response();
    if let Ok(value) = decision.retry_after.to_string().parse() {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    Some(response)
}

/// A form posted to one of these endpoints, from a client within its
/// rate limit: every handler starts with both checks.
pub(super) struct OAuthForm(pub(super) Vec<(String, String)>);

impl FromRequest<Arc<Dashboard>> for OAuthForm {
    type Rejection = Response;

    async fn from_request(
        request: Request,
        dashboard: &Arc<Dashboard>,
    ) -> Result<Self, Self::Rejection> {
        let addr = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| *addr);
        if let Some(addr) = addr
            && let Some(refused) =
                limited(dashboard, &address::subject(addr.ip()), Bucket::OAuth).await
        {
            return Err(refused);
        }
        let headers = request.headers().clone();
        let body = Bytes::from_request(request, dashboard)
            .await
            .map_err(IntoResponse::into_response)?;
        form(&headers, &body)
            .map(OAuthForm)
            .map_err(IntoResponse::into_response)
    }
}
