//! Write a Quarry connector in a few dozen lines.
//!
//! A connector implements [`Connector`] (one function: `search`) and
//! exports it with [`export_connector!`]:
//!
//! ```ignore
//! use quarry_connector_sdk::prelude::*;
//!
//! struct Example;
//!
//! impl Connector for Example {
//!     fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
//!         let url = Url::new("https://api.example.com/search").param("q", &request.query).build();
//!         let body: serde_json::Value = Request::get(url).send()?.error_for_status()?.json()?;
//!         Ok(vec![])
//!     }
//! }
//!
//! quarry_connector_sdk::export!(Example);
//! ```
//!
//! The host does the rest: it adds the user's credential, enforces the
//! manifest's routes, and ranks and cites what `search` returns.
//!
//! The crate builds natively too, for its unit tests: build responses with
//! [`http::Response::for_test`] to test the error mapping, and run
//! `search` against canned answers with [`testing::with_upstream`].

pub mod atlassian;
pub mod google;
pub mod http;
pub mod json;
pub mod log;
pub mod microsoft;
pub mod page;
pub mod plan;
mod response;
pub mod testing;
pub mod text;
pub mod time;
pub mod url;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "connector",
        path: "../../wit/v1.1",
        pub_export_macro: true,
        export_macro_name: "export_connector",
        default_bindings_module: "quarry_connector_sdk::bindings",
    });
}

#[doc(hidden)]
pub use bindings::export_connector;

/// Exports a type implementing [`Connector`] as the component's `search`.
///
/// The export exists only in the wasm32 build, so that the connector's own
/// unit tests also build and run natively.
#[macro_export]
macro_rules! export {
    ($connector:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::export_connector!($connector);

        /// The connector's `search`, callable natively (from tests).
        #[cfg(not(target_arch = "wasm32"))]
        #[doc(hidden)]
        pub fn __connector_search(
            request: $crate::SearchRequest,
        ) -> Result<Vec<$crate::Document>, $crate::SearchError> {
            <$connector as $crate::Connector>::search(request)
        }
    };
}
pub use bindings::exports::quarry::connector::search::{
    Document, Guest as Connector, SearchError, SearchRequest,
};

/// Everything a connector usually needs.
pub mod prelude {
    pub use crate::http::{Request, Response, send_all};
    pub use crate::json::JsonExt;
    pub use crate::page::{collect_pages, collect_pages_each};
    pub use crate::url::Url;
    pub use crate::{Connector, Document, SearchError, SearchRequest, SearchRequestExt};
    pub use serde_json::{Value, json};
}

/// Requests as the host sends them, for the connectors' unit tests.
impl SearchRequest {
    /// A request for `query` with these terms and phrases: no time range,
    /// ten results, no settings.
    pub fn new(query: &str, terms: &[&str], phrases: &[&str]) -> SearchRequest {
        let owned = |words: &[&str]| words.iter().map(|w| w.to_string()).collect();
        SearchRequest {
            query: query.to_string(),
            terms: owned(terms),
            phrases: owned(phrases),
            since: None,
            until: None,
            max_results: 10,
            settings: Vec::new(),
        }
    }

    /// The same request limited to `since` and `until` (RFC 3339).
    pub fn between(self, since: Option<&str>, until: Option<&str>) -> SearchRequest {
        SearchRequest {
            since: since.map(String::from),
            until: until.map(String::from),
            ..self
        }
    }

    /// The same request with a setting of the user's connection (one of
    /// the manifest's `[[settings]]`), replacing one of the same name.
    pub fn with_setting(mut self, name: &str, value: &str) -> SearchRequest {
        self.settings.retain(|(n, _)| n != name);
        self.settings.push((name.to_string(), value.to_string()));
        self
    }
}

/// Conveniences on the request the host sends.
pub trait SearchRequestExt {
    /// A non-secret setting of this user's connection.
    fn setting(&self, name: &str) -> Option<&str>;
    /// Like [`SearchRequestExt::setting`], but a missing setting is an error.
    fn required_setting(&self, name: &str) -> Result<&str, SearchError>;
    /// Whether a record changed at `updated_at` (RFC 3339) falls in the
    /// request's time range. Records without a time are kept.
    fn in_time_range(&self, updated_at: Option<&str>) -> bool;
    /// The request's terms and phrases as [`text::keywords`] joins them
    /// with `sep`, or the query as the user typed it when the request has
    /// neither.
    fn keywords_or_query(&self, sep: &str) -> String;
}

impl SearchRequestExt for SearchRequest {
    fn setting(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn required_setting(&self, name: &str) -> Result<&str, SearchError> {
        self.setting(name).filter(|v| !v.is_empty()).ok_or_else(|| {
            SearchError::InvalidRequest(format!("the connection has no {name:?} setting"))
        })
    }

    fn in_time_range(&self, updated_at: Option<&str>) -> bool {
        let Some(at) = updated_at.and_then(time::normalize) else {
            return true;
        };
        let after_since = self
            .since
            .as_deref()
            .and_then(time::normalize)
            .is_none_or(|s| at >= s);
        let before_until = self
            .until
            .as_deref()
            .and_then(time::normalize)
            .is_none_or(|u| at <= u);
        after_since && before_until
    }

    fn keywords_or_query(&self, sep: &str) -> String {
        let keywords = text::keywords(&self.terms, &self.phrases, sep);
        if keywords.is_empty() {
            self.query.clone()
        } else {
            keywords
        }
    }
}

impl Document {
    /// A document with the required fields; set the optional ones after.
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        content: impl Into<String>,
        url: impl Into<String>,
    ) -> Document {
        Document {
            id: id.into(),
            title: title.into(),
            content: content.into(),
            url: url.into(),
            author: None,
            created_at: None,
            updated_at: None,
            metadata: "{}".into(),
        }
    }

    pub fn author(mut self, author: Option<impl Into<String>>) -> Document {
        self.author = author.map(Into::into);
        self
    }

    /// Creation and last-change times, in any RFC 3339-like form the
    /// vendor uses (normalized to RFC 3339 UTC).
    pub fn times(mut self, created: Option<&str>, updated: Option<&str>) -> Document {
        self.created_at = created.and_then(time::normalize);
        self.updated_at = updated.and_then(time::normalize);
        self
    }

    pub fn metadata(mut self, metadata: serde_json::Value) -> Document {
        self.metadata = metadata.to_string();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_fall_back_to_the_query() {
        let request = SearchRequest::new("refund in euros", &["refund"], &["in euros"]);
        assert_eq!(request.keywords_or_query(" OR "), "\"in euros\" OR refund");
        let request = SearchRequest::new("the of", &[], &[]);
        assert_eq!(request.keywords_or_query(" "), "the of");
    }

    #[test]
    fn settings_are_set_once() {
        let request = SearchRequest::new("q", &[], &[])
            .with_setting("site", "acme")
            .with_setting("site", "globex");
        assert_eq!(request.setting("site"), Some("globex"));
        assert_eq!(request.settings.len(), 1);
        assert!(request.required_setting("space").is_err());
    }
}
