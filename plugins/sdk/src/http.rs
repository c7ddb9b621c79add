//! Read-only HTTP through the host, with the mapping of vendor failures to
//! [`SearchError`] that every connector needs.

use serde::Serialize;

use crate::SearchError;
use crate::bindings::quarry::connector::http as host;
pub use crate::response::Response;
use crate::response::header;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::with_upstream;
    use serde_json::Value;

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
