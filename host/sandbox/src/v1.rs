//! Bindings for `wit/v1.1` (`quarry:connector@1.1`, which 1.0 components
//! also link against: it only adds `http.fetch-many`) and the conversions
//! between its types and the host's own.
//!
//! Each supported major version of the contract gets a module like this one;
//! the host's types stay the same whatever version a connector targets.

use super::state::CallState;
use crate::fetch::{FetchError, GuestResponse};
use crate::types::{ConnectorError, Document, ErrorKind, SearchRequest};
use quarry_guard::manifest::Method;
use quarry_guard::policy::GuestRequest;

wasmtime::component::bindgen!({
    world: "connector",
    path: "../../wit/v1.1",
    imports: {
        "quarry:connector/http.fetch": async,
        "quarry:connector/http.fetch-many": async,
        default: trappable,
    },
    exports: { default: async },
});

pub use self::quarry::connector::{http, log};
use exports::quarry::connector::search as guest;

/// The import names this version provides.
pub const HTTP_IMPORT: &str = "quarry:connector/http";
pub const LOG_IMPORT: &str = "quarry:connector/log";
pub const SEARCH_EXPORT: &str = "quarry:connector/search";

pub fn add_to_linker(linker: &mut wasmtime::component::Linker<CallState>) -> wasmtime::Result<()> {
    Connector::add_to_linker::<CallState, wasmtime::component::HasSelf<CallState>>(
        linker,
        |state| state,
    )
}

impl http::Host for CallState {
    async fn fetch(&mut self, request: http::Request) -> Result<http::Response, http::FetchError> {
        to_guest_result(self.fetch(from_guest_request(request)).await)
    }

    async fn fetch_many(
        &mut self,
        requests: Vec<http::Request>,
    ) -> Vec<Result<http::Response, http::FetchError>> {
        let requests = requests.into_iter().map(from_guest_request).collect();
        self.fetch_many(requests)
            .await
            .into_iter()
            .map(to_guest_result)
            .collect()
    }
}

fn from_guest_request(request: http::Request) -> GuestRequest {
    GuestRequest {
        method: match request.method {
            http::Method::Get => Method::Get,
            http::Method::Head => Method::Head,
            http::Method::Post => Method::Post,
        },
        url: request.url,
        headers: request
            .headers
            .into_iter()
            .map(|h| (h.name, h.value))
            .collect(),
        body: request.body,
    }
}

fn to_guest_result(
    result: Result<GuestResponse, FetchError>,
) -> Result<http::Response, http::FetchError> {
    match result {
        Ok(GuestResponse {
            status,
            headers,
            body,
        }) => Ok(http::Response {
            status,
            headers: headers
                .into_iter()
                .map(|(name, value)| http::Header { name, value })
                .collect(),
            body,
        }),
        Err(FetchError::Denied(why)) => Err(http::FetchError::Denied(why)),
        Err(FetchError::LimitExceeded(why)) => Err(http::FetchError::LimitExceeded(why)),
        Err(FetchError::Timeout) => Err(http::FetchError::Timeout),
        Err(FetchError::Network(why)) => Err(http::FetchError::Network(why)),
    }
}

impl log::Host for CallState {
    fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        let level = match level {
            log::Level::Trace => tracing::Level::TRACE,
            log::Level::Debug => tracing::Level::DEBUG,
            log::Level::Info => tracing::Level::INFO,
            log::Level::Warn => tracing::Level::WARN,
            log::Level::Error => tracing::Level::ERROR,
        };
        self.log(level, message);
        Ok(())
    }
}

pub fn to_guest_request(request: &SearchRequest) -> guest::SearchRequest {
    guest::SearchRequest {
        query: request.query.clone(),
        terms: request.terms.clone(),
        phrases: request.phrases.clone(),
        since: request.since.clone(),
        until: request.until.clone(),
        max_results: request.max_results,
        settings: request.settings.clone(),
    }
}

pub fn from_guest_result(
    result: Result<Vec<guest::Document>, guest::SearchError>,
) -> Result<Vec<Document>, ConnectorError> {
    match result {
        Ok(documents) => Ok(documents
            .into_iter()
            .filter_map(from_guest_document)
            .collect()),
        Err(error) => Err(from_guest_error(error)),
    }
}

fn from_guest_error(error: guest::SearchError) -> ConnectorError {
    use guest::SearchError as E;
    match error {
        E::Unauthorized(m) => ConnectorError::new(ErrorKind::Unauthorized, m),
        E::RateLimited(after) => ConnectorError {
            kind: ErrorKind::RateLimited,
            message: match after {
                Some(s) => format!("the upstream is rate limiting; retry in {s} s"),
                None => "the upstream is rate limiting".into(),
            },
            retry_after_seconds: after,
        },
        E::Upstream(m) => ConnectorError::new(ErrorKind::Upstream, m),
        E::InvalidResponse(m) => ConnectorError::new(ErrorKind::InvalidResponse, m),
        E::InvalidRequest(m) => ConnectorError::new(ErrorKind::InvalidRequest, m),
        E::Denied(m) => ConnectorError::new(ErrorKind::Denied, m),
    }
}

fn from_guest_document(doc: guest::Document) -> Option<Document> {
    super::documents::validate_document(
        Document {
            id: doc.id,
            title: doc.title,
            content: doc.content,
            url: doc.url,
            author: doc.author,
            created_at: doc.created_at,
            updated_at: doc.updated_at,
            metadata: serde_json::Map::new(),
        },
        &doc.metadata,
    )
}

/// The bindings a loaded component is called through.
pub type Pre = ConnectorPre<CallState>;

pub async fn call(
    pre: &Pre,
    store: &mut wasmtime::Store<CallState>,
    request: &SearchRequest,
) -> wasmtime::Result<Result<Vec<Document>, ConnectorError>> {
    let instance = pre.instantiate_async(&mut *store).await?;
    let result = instance
        .quarry_connector_search()
        .call_search(&mut *store, &to_guest_request(request))
        .await?;
    Ok(from_guest_result(result))
}
