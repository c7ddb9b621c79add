//! An upstream's answer as a connector reads it, and the mapping of the
//! statuses every vendor shares to [`SearchError`]. Its own module so that
//! both ways an answer arrives, the host's fetch ([`crate::http`]) and a
//! unit test's fake upstream ([`crate::testing`]), build it without
//! depending on each other.

use serde::de::DeserializeOwned;

use crate::SearchError;
use crate::bindings::quarry::connector::http as host;

/// An upstream's answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<host::Header>,
    pub body: Vec<u8>,
}

impl Response {
    /// A response as the host hands one to the connector, for unit tests:
    /// what the connector makes of a status, its headers and its body
    /// (its error mapping above all). Header names are kept as given;
    /// [`Response::header`] finds them in any case.
    ///
    /// ```
    /// use quarry_connector_sdk::prelude::*;
    ///
    /// let response = Response::for_test(429, &[("Retry-After", "30")], "");
    /// assert!(matches!(
    ///     response.error_for_status(),
    ///     Err(SearchError::RateLimited(Some(30)))
    /// ));
    /// ```
    ///
    /// To run a whole `search` natively against such responses, see
    /// [`crate::testing`].
    pub fn for_test(status: u16, headers: &[(&str, &str)], body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(name, value)| header(name, *value))
                .collect(),
            body: body.into(),
        }
    }

    pub(crate) fn from_host(response: host::Response) -> Response {
        Response {
            status: response.status,
            headers: response.headers,
            body: response.body,
        }
    }

    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str())
    }

    /// Seconds from a `Retry-After` header given in seconds.
    pub fn retry_after(&self) -> Option<u32> {
        self.header("retry-after")?.trim().parse().ok()
    }

    /// Maps the statuses every vendor shares: 401 → `unauthorized`,
    /// 429 → `rate-limited`, 5xx → `upstream`, other 4xx → `invalid-request`.
    /// Vendors with their own conventions (Slack's `ok: false`, GitHub's
    /// 403 rate limit) check those first.
    pub fn error_for_status(self) -> Result<Response, SearchError> {
        match self.status {
            200..=299 => Ok(self),
            _ => Err(self.status_error(self.error_message())),
        }
    }

    /// The error [`Response::error_for_status`] gives for this (failed)
    /// status, with `message` in place of [`Response::error_message`]: for
    /// vendors whose error bodies say more in their own shape.
    pub fn status_error(&self, message: String) -> SearchError {
        match self.status {
            401 => SearchError::Unauthorized(message),
            429 => SearchError::RateLimited(self.retry_after()),
            500..=599 => SearchError::Upstream(format!("HTTP {}: {message}", self.status)),
            status => SearchError::InvalidRequest(format!("HTTP {status}: {message}")),
        }
    }

    /// The body as JSON of type `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, SearchError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            SearchError::InvalidResponse(format!("the body is not the expected JSON: {e}"))
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A short description of an error body, for messages: the vendor's
    /// `message`/`error` field when the body is JSON, else its start.
    pub fn error_message(&self) -> String {
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&self.body) {
            for key in ["message", "error_description", "error", "errorMessages"] {
                match value.get(key) {
                    Some(serde_json::Value::String(s)) => return s.clone(),
                    Some(serde_json::Value::Array(a)) if !a.is_empty() => return a[0].to_string(),
                    _ => {}
                }
            }
        }
        let text = self.text();
        crate::text::truncate(text.trim(), 200).to_string()
    }
}

pub(crate) fn header(name: &str, value: impl Into<String>) -> host::Header {
    host::Header {
        name: name.to_string(),
        value: value.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_search_errors() {
        let error = |status, headers: &[(&str, &str)], body: &str| {
            Response::for_test(status, headers, body)
                .error_for_status()
                .unwrap_err()
        };
        assert!(matches!(
            error(401, &[], r#"{"message": "Bad credentials"}"#),
            SearchError::Unauthorized(m) if m == "Bad credentials"
        ));
        assert!(matches!(
            error(429, &[("Retry-After", "30")], ""),
            SearchError::RateLimited(Some(30))
        ));
        assert!(matches!(
            error(429, &[("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT")], ""),
            SearchError::RateLimited(None)
        ));
        assert!(matches!(
            error(503, &[], "overloaded"),
            SearchError::Upstream(m) if m == "HTTP 503: overloaded"
        ));
        assert!(matches!(
            error(404, &[], r#"{"error": "no such space"}"#),
            SearchError::InvalidRequest(m) if m == "HTTP 404: no such space"
        ));
        let ok = Response::for_test(200, &[("X-Total", "3")], "{}")
            .error_for_status()
            .unwrap();
        assert_eq!(ok.header("x-total"), Some("3"));
    }
}
