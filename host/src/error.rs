//! The one error shape of the contract:
//! `{"error": {"type", "message", "retry_after_seconds"?, "details"?}}`.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use quarry_store::Unavailable;

/// The contract's error types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    Conflict,
    PayloadTooLarge,
    RateLimited,
    ServerError,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::BadRequest => "bad_request",
            ErrorType::Unauthorized => "unauthorized",
            ErrorType::Forbidden => "forbidden",
            ErrorType::NotFound => "not_found",
            ErrorType::Conflict => "conflict",
            ErrorType::PayloadTooLarge => "payload_too_large",
            ErrorType::RateLimited => "rate_limited",
            ErrorType::ServerError => "server_error",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            ErrorType::BadRequest => StatusCode::BAD_REQUEST,
            ErrorType::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorType::Forbidden => StatusCode::FORBIDDEN,
            ErrorType::NotFound => StatusCode::NOT_FOUND,
            ErrorType::Conflict => StatusCode::CONFLICT,
            ErrorType::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorType::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorType::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ApiError {
    pub kind: ErrorType,
    pub status: StatusCode,
    pub message: String,
    pub retry_after_seconds: Option<i64>,
    pub details: Option<Value>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiError {
    pub fn new(kind: ErrorType, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            status: kind.status(),
            message: message.into(),
            retry_after_seconds: None,
            details: None,
            headers: Vec::new(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorType::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorType::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorType::Conflict, message)
    }

    /// A 500 whose cause is logged, not shown: internals stay internal.
    pub fn internal(error: impl std::fmt::Display) -> ApiError {
        tracing::error!(%error, "internal error");
        ApiError::new(
            ErrorType::ServerError,
            "internal server error; the request id identifies it in the server's log",
        )
    }

    /// A 503 (type `server_error`, the contract's one type for the server's
    /// failures) when storage or coordination cannot be reached: nothing
    /// was done, and the same request may be retried.
    pub fn unavailable(error: impl std::fmt::Display) -> ApiError {
        tracing::warn!(%error, "storage unavailable");
        ApiError::new(
            ErrorType::ServerError,
            "the service's storage is unavailable for a moment; retry shortly",
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .with_retry_after(2)
    }

    pub fn unauthorized(message: impl Into<String>, expired: bool) -> ApiError {
        ApiError::new(ErrorType::Unauthorized, message)
            .with_header(
                HeaderName::from_static("x-token-expired"),
                if expired { "true" } else { "false" },
            )
            .with_header(header::WWW_AUTHENTICATE, "Bearer")
    }

    pub fn with_status(mut self, status: StatusCode) -> ApiError {
        self.status = status;
        self
    }

    pub fn with_details(mut self, details: Value) -> ApiError {
        self.details = Some(details);
        self
    }

    pub fn with_retry_after(mut self, seconds: i64) -> ApiError {
        self.retry_after_seconds = Some(seconds);
        self.with_header(header::RETRY_AFTER, &seconds.to_string())
    }

    pub fn with_header(mut self, name: HeaderName, value: &str) -> ApiError {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.headers.push((name, value));
        }
        self
    }

    pub fn body(&self) -> Value {
        let mut error = json!({ "type": self.kind.as_str(), "message": self.message });
        if let Some(seconds) = self.retry_after_seconds {
            error["retry_after_seconds"] = json!(seconds);
        }
        if let Some(details) = &self.details {
            error["details"] = details.clone();
        }
        json!({ "error": error })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        for (name, value) in self.headers {
            response.headers_mut().append(name, value);
        }
        response
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(error: anyhow::Error) -> ApiError {
        if error.chain().any(|cause| cause.is::<Unavailable>()) {
            return ApiError::unavailable(error);
        }
        ApiError::internal(format!("{error:#}"))
    }
}

impl From<serde_json::Error> for ApiError {
    fn from(error: serde_json::Error) -> ApiError {
        ApiError::internal(error)
    }
}
