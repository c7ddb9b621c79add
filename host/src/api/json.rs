//! JSON request bodies, with the contract's error shape for every way a
//! body can be wrong (instead of axum's own plain-text rejections). The
//! parsing and its messages are `quarry_guard::json` (fuzzed); this is the
//! axum side: the content type, the bytes, the 400.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;

use crate::error::ApiError;

pub use quarry_guard::json::{Body, present};

/// A JSON body of type `T` (one of `quarry_guard::bodies`). Unknown fields, duplicate fields, wrong types
/// and nulls where a value is required are all 400s naming the field.
pub struct ApiJson<T>(pub T);

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

/// [`quarry_guard::json::parse`], its refusal as the API's 400.
pub fn parse<T: Body>(bytes: &[u8]) -> Result<T, ApiError> {
    quarry_guard::json::parse(bytes).map_err(ApiError::bad_request)
}
