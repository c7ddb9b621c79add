//! JSON request bodies, with the contract's error shape for every way a
//! body can be wrong (instead of axum's own plain-text rejections).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A JSON body of type `T`. Unknown fields, duplicate fields, wrong types
/// and nulls where a value is required are all 400s naming the field.
pub struct ApiJson<T>(pub T);

/// A request body type: says, per field, what a valid value looks like, so
/// that a wrong value gets a message about the API rather than about Rust
/// types.
pub trait Body: DeserializeOwned {
    fn expectation(field: &str) -> Option<&'static str>;
}

impl<S: Send + Sync, T: Body> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !is_json(content_type) {
            return Err(ApiError::bad_request(format!(
                "Content-Type must be application/json, not {:?}",
                if content_type.is_empty() {
                    "(none)"
                } else {
                    content_type
                }
            )));
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
        parse(&bytes).map(ApiJson)
    }
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

pub fn parse<T: Body>(bytes: &[u8]) -> Result<T, ApiError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {
            return Err(ApiError::bad_request(
                "the request body is empty; a JSON object is expected",
            ));
        }
        // serde would also read an array as the fields in order.
        Some(b'{') => {}
        Some(_) => {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        }
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = path.split(['.', '[']).next().unwrap_or_default();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::bad_request(format!("the body is not valid JSON: {inner}"))
        } else if let Some(expected) = T::expectation(field).filter(|_| is_wrong_value(&inner)) {
            ApiError::bad_request(format!("invalid `{path}`: {expected}"))
        } else {
            // Unknown, duplicate and missing fields: serde names them.
            ApiError::bad_request(format!(
                "invalid request body: {}",
                strip_position(&inner.to_string())
            ))
        }
    })?;
    deserializer
        .end()
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    Ok(value)
}

fn is_wrong_value(error: &serde_json::Error) -> bool {
    let message = error.to_string();
    error.is_data()
        && (message.starts_with("invalid type")
            || message.starts_with("invalid value")
            || message.starts_with("invalid length"))
}

/// serde's messages end with " at line 1 column 20": useful for syntax
/// errors, noise for the others.
fn strip_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

/// For optional fields: absent is `None`, but an explicit `null` is an
/// error (a client sending `null` most likely has a bug worth reporting).
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
