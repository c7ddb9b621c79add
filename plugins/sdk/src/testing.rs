//! Running a connector's `search` natively, in its unit tests, against
//! canned answers.
//!
//! In a component, [`Request::send`](crate::http::Request::send) and
//! [`send_all`](crate::http::send_all) go through the host. A native build
//! (the connector's `cargo test`) has no host: there, every request goes to
//! the fake upstream that [`with_upstream`] installs for the length of one
//! closure, and is recorded. A request sent natively with no fake upstream
//! installed panics, naming this module.
//!
//! ```
//! use quarry_connector_sdk::prelude::*;
//! use quarry_connector_sdk::testing::with_upstream;
//!
//! # fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
//! #     let url = Url::new("https://api.example.com/v1/search").param("q", &request.query).build();
//! #     let _: Value = Request::get(url).send()?.error_for_status()?.json()?;
//! #     Ok(vec![])
//! # }
//! // In a connector's tests, `search` is `<MyConnector as Connector>::search`.
//! let (result, sent) = with_upstream(
//!     |_request| Ok(Response::for_test(401, &[], r#"{"message": "token revoked"}"#)),
//!     || search(SearchRequest::new("refund", &["refund"], &[])),
//! );
//! assert!(matches!(result, Err(SearchError::Unauthorized(m)) if m == "token revoked"));
//! assert_eq!(sent[0].param("q").as_deref(), Some("refund"));
//! ```
//!
//! What this does not run is the host's side: the manifest's routes, the
//! credential, the limits. `quarry connector check` and a search through a
//! server (docs/connectors.md) cover those.

use std::cell::RefCell;

use crate::bindings::quarry::connector::http as host;
use crate::response::Response;
use crate::url::decode;
use crate::{Document, SearchError};

/// A request the connector sent, as the fake upstream saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// `GET`, `HEAD` or `POST`.
    pub method: &'static str,
    pub url: String,
    /// Name (lower case) and value, in the order set.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

impl Sent {
    /// The URL without its query string.
    pub fn without_query(&self) -> &str {
        self.url.split(['?', '#']).next().unwrap_or_default()
    }

    /// A query parameter's first value, decoded (`+` is a space).
    pub fn param(&self, name: &str) -> Option<String> {
        let query = self.url.split_once('?')?.1.split('#').next()?;
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key) == name).then(|| decode(value))
        })
    }

    /// A header's value (the name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(self.body.as_deref()?).ok()
    }
}

/// What the fake upstream answers a request with: what `send` returns.
type Answer = Box<dyn FnMut(&Sent) -> Result<Response, SearchError>>;

struct Upstream {
    answer: Answer,
    sent: Vec<Sent>,
}

thread_local! {
    // Each test runs on a thread of its own: fakes of parallel tests do
    // not meet.
    static UPSTREAM: RefCell<Option<Upstream>> = const { RefCell::new(None) };
}

/// Runs `run` (usually the connector's `search`) with `answer` as the
/// upstream of every request it sends, and returns its result and the
/// requests, in the order sent. `answer` returns what
/// [`Request::send`](crate::http::Request::send) returns: a
/// [`Response::for_test`], or the error a refused or failed fetch gives
/// (`SearchError::Denied`, `SearchError::Upstream`).
///
/// # Panics
///
/// When called inside another `with_upstream` on the same thread.
pub fn with_upstream<T>(
    answer: impl FnMut(&Sent) -> Result<Response, SearchError> + 'static,
    run: impl FnOnce() -> T,
) -> (T, Vec<Sent>) {
    UPSTREAM.with(|upstream| {
        let mut upstream = upstream.borrow_mut();
        assert!(
            upstream.is_none(),
            "with_upstream is already running on this thread"
        );
        *upstream = Some(Upstream {
            answer: Box::new(answer),
            sent: Vec::new(),
        });
    });
    // Removed even when `run` panics, so that the thread's next test
    // starts clean.
    struct Uninstall;
    impl Drop for Uninstall {
        fn drop(&mut self) {
            UPSTREAM.with(|upstream| upstream.borrow_mut().take());
        }
    }
    let uninstall = Uninstall;
    let result = run();
    let sent = UPSTREAM.with(|upstream| {
        upstream
            .borrow_mut()
            .as_mut()
            .map(|u| std::mem::take(&mut u.sent))
            .unwrap_or_default()
    });
    drop(uninstall);
    (result, sent)
}

/// A native fetch: the installed fake's answer.
pub(crate) fn fetch(request: &host::Request) -> Result<Response, SearchError> {
    let sent = Sent {
        method: match request.method {
            host::Method::Get => "GET",
            host::Method::Head => "HEAD",
            host::Method::Post => "POST",
        },
        url: request.url.clone(),
        headers: request
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        body: request.body.clone(),
    };
    UPSTREAM.with(|upstream| {
        let mut upstream = upstream.borrow_mut();
        let Some(upstream) = upstream.as_mut() else {
            panic!(
                "{} {} was sent natively, where there is no host to fetch through: \
                 run the code in quarry_connector_sdk::testing::with_upstream, \
                 which answers with canned responses",
                sent.method, sent.url
            );
        };
        let answer = (upstream.answer)(&sent);
        upstream.sent.push(sent);
        answer
    })
}

/// Checks a document a connector made against the one a test expects,
/// field by field, naming the first field that differs. Metadata is left
/// out: it is JSON whose key order is not the test's business, so tests
/// look in it for the keys they care about.
///
/// ```
/// use quarry_connector_sdk::Document;
/// use quarry_connector_sdk::testing::assert_document;
///
/// let made = Document::new("7", "Refunds", "How refunds work", "https://example.com/7")
///     .times(Some("2025-01-02T03:04:05.000Z"), None);
/// let expected = Document::new("7", "Refunds", "How refunds work", "https://example.com/7")
///     .times(Some("2025-01-02T03:04:05Z"), None);
/// assert_document(&made, &expected);
/// ```
#[track_caller]
pub fn assert_document(made: &Document, expected: &Document) {
    let fields = |d: &Document| {
        [
            ("id", Some(d.id.clone())),
            ("title", Some(d.title.clone())),
            ("content", Some(d.content.clone())),
            ("url", Some(d.url.clone())),
            ("author", d.author.clone()),
            ("created_at", d.created_at.clone()),
            ("updated_at", d.updated_at.clone()),
        ]
    };
    for ((field, made), (_, expected)) in fields(made).into_iter().zip(fields(expected)) {
        assert_eq!(made, expected, "the document's {field}");
    }
}
