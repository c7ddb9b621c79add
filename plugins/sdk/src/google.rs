//! Google's APIs (Drive, Gmail, Calendar): one error shape,
//! `{"error": {"code", "message", "errors": [{"domain", "reason"}]}}`, and
//! a spent quota answered with 429 or with 403 `userRateLimitExceeded` /
//! `rateLimitExceeded` (a 403 that is not about quota is a refusal).

use serde_json::Value;

use crate::SearchError;
use crate::http::Response;
use crate::json::JsonExt;

/// A successful answer as it is; a spent quota as
/// [`SearchError::RateLimited`]; any other failure with Google's message.
pub fn check(response: Response) -> Result<Response, SearchError> {
    if response.status == 403 && rate_limit_reason(&response).is_some() {
        return Err(SearchError::RateLimited(response.retry_after()));
    }
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let message = message(&response);
    Err(response.status_error(message))
}

/// The quota reason of a 403 or 429, if Google gave one.
pub fn rate_limit_reason(response: &Response) -> Option<String> {
    let body: Value = serde_json::from_slice(&response.body).ok()?;
    body.array_at("/error/errors")
        .iter()
        .filter_map(|e| e.str_at("/reason"))
        .find(|r| matches!(*r, "userRateLimitExceeded" | "rateLimitExceeded"))
        .map(String::from)
}

/// `error.message` of Google's error, else the generic message.
fn message(response: &Response) -> String {
    serde_json::from_slice::<Value>(&response.body)
        .ok()
        .and_then(|v| v.str_at("/error/message").map(String::from))
        .unwrap_or_else(|| response.error_message())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, reason: &str) -> Response {
        let body = serde_json::json!({"error": {"code": status, "message": "Nope.",
            "errors": [{"domain": "usageLimits", "reason": reason}]}});
        Response::for_test(status, &[], body.to_string().as_bytes())
    }

    #[test]
    fn a_spent_quota_is_a_rate_limit_and_other_refusals_keep_googles_message() {
        assert!(matches!(
            check(answer(403, "userRateLimitExceeded")),
            Err(SearchError::RateLimited(_))
        ));
        assert!(matches!(
            check(answer(429, "rateLimitExceeded")),
            Err(SearchError::RateLimited(_))
        ));
        match check(answer(403, "insufficientPermissions")) {
            Err(error) => assert!(format!("{error:?}").contains("Nope."), "{error:?}"),
            Ok(_) => panic!("a 403 passed"),
        }
        assert!(check(Response::for_test(200, &[], b"{}")).is_ok());
    }
}
