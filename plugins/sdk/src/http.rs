//! Read-only HTTP through the host, with the mapping of vendor failures to
//! [`SearchError`] that every connector needs.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::SearchError;
use crate::bindings::quarry::connector::http as host;

/// A request being built. Only GET, HEAD and POST exist: the contract has
/// no way to express a write.
#[derive(Debug, Clone)]
pub struct Request {
    method: host::Method,
    url: String,
    headers: Vec<host::Header>,
    body: Option<Vec<u8>>,
}

impl Request {
    pub fn get(url: impl Into<String>) -> Request {
        Request::new(host::Method::Get, url)
    }

    pub fn head(url: impl Into<String>) -> Request {
        Request::new(host::Method::Head, url)
    }

    /// A POST, for the search endpoints that take their query in a body
    /// (the manifest must mark the route `kind = "query"` or `"graphql"`).
    pub fn post(url: impl Into<String>) -> Request {
        Request::new(host::Method::Post, url)
    }

    fn new(method: host::Method, url: impl Into<String>) -> Request {
        Request {
            method,
            url: url.into(),
            headers: vec![header("accept", "application/json")],
            body: None,
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Request {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|h| h.name != name);
        self.headers.push(header(&name, value));
        self
    }

    /// A JSON body (and its content type).
    pub fn json(self, body: &impl Serialize) -> Request {
        let bytes = serde_json::to_vec(body).expect("a serde_json::Value always serializes");
        self.body(bytes, "application/json")
    }

    /// A form body (`application/x-www-form-urlencoded`).
    pub fn form(self, fields: &[(&str, &str)]) -> Request {
        let text = fields
            .iter()
            .map(|(k, v)| format!("{}={}", crate::url::encode(k), crate::url::encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.body(text.into_bytes(), "application/x-www-form-urlencoded")
    }

    pub fn body(mut self, body: Vec<u8>, content_type: &str) -> Request {
        self.body = Some(body);
        self.header("content-type", content_type)
    }

    /// Sends the request through the host. (In a native build, a unit
    /// test's, there is no host: the request goes to the fake upstream of
    /// [`crate::testing::with_upstream`].)
    pub fn send(self) -> Result<Response, SearchError> {
        let request = self.into_host();
        if cfg!(target_arch = "wasm32") {
            host::fetch(&request)
                .map(Response::from_host)
                .map_err(fetch_error)
        } else {
            crate::testing::fetch(&request)
        }
    }

    fn into_host(self) -> host::Request {
        host::Request {
            method: self.method,
            url: self.url,
            headers: self.headers,
            body: self.body,
        }
    }
}

/// Sends independent requests through the host at once (contract 1.1's
/// `http.fetch-many`) and returns one result per request, in order. The
/// host answers them concurrently, each under the same rules as
/// [`Request::send`]; if the admitted ones do not all fit in the search's
/// remaining fetch cap, none is sent and each is answered `Denied`.
///
/// A connector that uses this must declare `wit = "1.1.0"` in its
/// `connector.toml`.
pub fn send_all(requests: Vec<Request>) -> Vec<Result<Response, SearchError>> {
    if requests.is_empty() {
        return Vec::new();
    }
    let requests: Vec<host::Request> = requests.into_iter().map(Request::into_host).collect();
    if !cfg!(target_arch = "wasm32") {
        return requests.iter().map(crate::testing::fetch).collect();
    }
    host::fetch_many(&requests)
        .into_iter()
        .map(|result| result.map(Response::from_host).map_err(fetch_error))
        .collect()
}

fn header(name: &str, value: impl Into<String>) -> host::Header {
    host::Header {
        name: name.to_string(),
        value: value.into(),
    }
}

fn fetch_error(error: host::FetchError) -> SearchError {
    match error {
        host::FetchError::Denied(why) => SearchError::Denied(why),
        host::FetchError::LimitExceeded(why) => SearchError::Denied(why),
        host::FetchError::Timeout => {
            SearchError::Upstream("the upstream did not answer in time".into())
        }
        host::FetchError::Network(why) => SearchError::Upstream(why),
    }
}

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

    fn from_host(response: host::Response) -> Response {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::with_upstream;
    use serde_json::Value;

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

    #[test]
    fn natively_requests_go_to_the_fake_upstream() {
        let (result, sent) = with_upstream(
            |request| match request.without_query() {
                "https://api.example.com/a" => Ok(Response::for_test(200, &[], r#"{"n": 1}"#)),
                _ => Err(SearchError::Denied(format!(
                    "{} is not a route",
                    request.url
                ))),
            },
            || {
                let first: Value = Request::get("https://api.example.com/a?q=caf%C3%A9+au+lait")
                    .send()?
                    .json()?;
                let batch = send_all(vec![
                    Request::post("https://api.example.com/b").json(&serde_json::json!({"q": 1})),
                    Request::get("https://api.example.com/a"),
                ]);
                Ok::<_, SearchError>((first, batch))
            },
        );
        let (first, batch) = result.unwrap();
        assert_eq!(first["n"], 1);
        assert!(matches!(&batch[0], Err(SearchError::Denied(m)) if m.contains("/b")));
        assert_eq!(batch[1].as_ref().unwrap().status, 200);
        assert_eq!(sent.len(), 3);
        assert_eq!(sent[0].method, "GET");
        assert_eq!(sent[0].param("q").as_deref(), Some("café au lait"));
        assert_eq!(sent[0].header("Accept"), Some("application/json"));
        assert_eq!(sent[1].method, "POST");
        assert_eq!(sent[1].json(), Some(serde_json::json!({"q": 1})));
        assert_eq!(sent[1].header("content-type"), Some("application/json"));
    }

    #[test]
    #[should_panic(expected = "no host to fetch through")]
    fn natively_a_request_without_a_fake_upstream_panics() {
        let _ = Request::get("https://api.example.com/a").send();
    }
}
