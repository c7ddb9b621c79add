//! Microsoft Graph's search, `POST /v1.0/search/query`, which every
//! Microsoft 365 connector asks (files, mail, calendar, Teams): one body
//! shape, one error shape, KQL for the question.
//!
//! A connector names the entity types it searches ([`Kind`]: types Graph
//! lets one request combine) and turns a hit into a document; [`search`]
//! does the rest. The question becomes KQL (`"phrase" OR term`) and the
//! time range day-wide restrictions on the kind's date property, refined to
//! the second by [`SearchRequestExt::in_time_range`] on the documents. Each
//! kind is paged with `from`/`size` while `moreResultsAvailable`, the pages
//! of several kinds going out in one batch.

use serde_json::{Value, json};

use crate::http::{Request, Response};
use crate::json::JsonExt;
use crate::page::{Page, collect_pages_each};
use crate::text::{html_to_text, terms_outside_phrases};
use crate::time::date_part;
use crate::{Document, SearchError, SearchRequest, SearchRequestExt};

/// Graph's search endpoint (the connectors' manifests' one query route).
pub const SEARCH: &str = "https://graph.microsoft.com/v1.0/search/query";

/// Pages per kind (each one fetch).
const MAX_PAGES: usize = 3;

/// What one search request covers.
pub struct Kind {
    /// Entity types Graph searches together (`driveItem` with `listItem`;
    /// `message`, `event` and `chatMessage` each alone).
    pub entity_types: &'static [&'static str],
    /// The KQL property a time range restricts (`LastModifiedTime`,
    /// `received`, `sent`), if the kind has one.
    pub time_property: Option<&'static str>,
    /// The largest `size` Graph takes for these types (25 for mail, events
    /// and Teams messages).
    pub max_size: usize,
}

/// Searches each kind and returns their documents taking turns, those
/// outside the time range and repeats dropped, at most `max_results`.
pub fn search(
    request: &SearchRequest,
    kinds: &[Kind],
    to_document: impl Fn(&Value) -> Option<Document>,
) -> Result<Vec<Document>, SearchError> {
    let want = request.max_results.clamp(1, 100) as usize;
    let Some(text) = kql_text(request) else {
        return Ok(Vec::new());
    };
    let queries: Vec<String> = kinds
        .iter()
        .map(|kind| kql(&text, kind.time_property, request))
        .collect();
    let found = collect_pages_each(
        kinds.len(),
        want,
        MAX_PAGES,
        |k, from: Option<&usize>| {
            let size = want.min(kinds[k].max_size);
            search_request(&kinds[k], &queries[k], from.copied().unwrap_or(0), size)
        },
        |_, from, response| read_page(response, from.copied().unwrap_or(0)),
    )?;
    let mut documents: Vec<Document> = Vec::new();
    let longest = found.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for hits in &found {
            let Some(doc) = hits.get(i).and_then(&to_document) else {
                continue;
            };
            if request.in_time_range(doc.updated_at.as_deref())
                && !documents.iter().any(|d| d.id == doc.id)
            {
                documents.push(doc);
            }
        }
    }
    documents.truncate(want);
    Ok(documents)
}

/// One page of one kind: `size` hits from `from` on.
fn search_request(kind: &Kind, query: &str, from: usize, size: usize) -> Request {
    let body = json!({
        "requests": [{
            "entityTypes": kind.entity_types,
            "query": { "queryString": query },
            "from": from,
            "size": size,
        }]
    });
    Request::post(SEARCH).json(&body)
}

/// A page's hits, and where the next page starts while Graph has more.
fn read_page(response: Response, from: usize) -> Result<Page<Value, usize>, SearchError> {
    let response: Value = check(response)?.json()?;
    if response.pointer("/value/0").is_none() {
        return Err(SearchError::InvalidResponse(
            "the search response has no value".into(),
        ));
    }
    let containers = response.array_at("/value/0/hitsContainers");
    let hits: Vec<Value> = containers
        .iter()
        .flat_map(|c| c.array_at("/hits").iter().cloned())
        .collect();
    let more = containers
        .iter()
        .any(|c| c.bool_at("/moreResultsAvailable") == Some(true));
    Ok(Page {
        next: (more && !hits.is_empty()).then_some(from + hits.len()),
        items: hits,
    })
}

/// Drops what KQL reads as syntax.
fn clean(term: &str) -> String {
    term.chars()
        .filter(|c| !"\"()<>=:*\\".contains(*c))
        .collect::<String>()
        .trim()
        .to_string()
}

/// `"quoted phrase" OR term OR term`; `None` when nothing is left.
pub fn kql_text(request: &SearchRequest) -> Option<String> {
    let mut parts: Vec<String> = request
        .phrases
        .iter()
        .map(|p| clean(p))
        .filter(|p| !p.is_empty())
        .map(|p| format!("\"{p}\""))
        .collect();
    parts.extend(
        terms_outside_phrases(&request.terms, &request.phrases)
            .map(|t| clean(t))
            .filter(|t| !t.is_empty() && !matches!(t.as_str(), "AND" | "OR" | "NOT")),
    );
    if parts.is_empty() {
        parts.extend(
            request
                .query
                .split_whitespace()
                .map(clean)
                .filter(|t| !t.is_empty()),
        );
    }
    (!parts.is_empty()).then(|| parts.join(" OR "))
}

/// The text and the day-wide time restrictions on `property`.
pub fn kql(text: &str, property: Option<&str>, request: &SearchRequest) -> String {
    let mut clauses = vec![format!("({text})")];
    if let Some(property) = property {
        if let Some(since) = &request.since {
            clauses.push(format!("{property}>={}", date_part(since)));
        }
        if let Some(until) = &request.until {
            clauses.push(format!("{property}<={}", date_part(until)));
        }
    }
    if clauses.len() == 1 {
        return text.to_string();
    }
    clauses.join(" AND ")
}

/// Graph's errors are `{"error": {"code", "message"}}`.
fn check(response: Response) -> Result<Response, SearchError> {
    if response.status < 400 {
        return Ok(response);
    }
    let body: Value = response.json().unwrap_or(Value::Null);
    let message = match (body.str_at("/error/code"), body.str_at("/error/message")) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        _ => response.error_message(),
    };
    Err(response.status_error(message))
}

/// A hit's `summary` as text: its fragments joined by an ellipsis, the
/// `<c0>` highlights dropped.
pub fn summary_text(hit: &Value) -> String {
    let summary = hit.str_at("/summary").unwrap_or_default();
    let text = html_to_text(&summary.replace("<ddd/>", " … "));
    text.trim()
        .trim_start_matches("...")
        .trim_end_matches('…')
        .trim()
        .to_string()
}

/// The resource's type without its namespace (`driveItem`, `message`...),
/// whether Graph wrote it with the `#` or without (its Teams examples).
pub fn resource_type(resource: &Value) -> &str {
    let kind = resource.str_at("/@odata.type").unwrap_or_default();
    kind.trim_start_matches('#')
        .trim_start_matches("microsoft.graph.")
}

/// The person a mail or message is from: `from`, else `sender`.
pub fn sender_name(resource: &Value) -> Option<&str> {
    resource
        .str_at("/from/emailAddress/name")
        .or_else(|| resource.str_at("/sender/emailAddress/name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_kql() {
        let request = SearchRequest::new("x", &["checkout", "time(out)"], &["bad gateway"])
            .between(Some("2026-01-01T00:00:00Z"), Some("2026-06-30T23:59:59Z"));
        let text = kql_text(&request).unwrap();
        assert_eq!(text, "\"bad gateway\" OR checkout OR timeout");
        assert_eq!(
            kql(&text, Some("received"), &request),
            "(\"bad gateway\" OR checkout OR timeout) AND received>=2026-01-01 AND received<=2026-06-30"
        );
        assert_eq!(kql(&text, None, &request), text);
    }

    #[test]
    fn summaries_and_types() {
        let hit = json!({"summary": "<c0>ACME-12</c0>: checkout failed<ddd/>Post-mortem<ddd/>"});
        assert_eq!(summary_text(&hit), "ACME-12: checkout failed … Post-mortem");
        let hit = json!({"summary": "...Test with the TDF account"});
        assert_eq!(summary_text(&hit), "Test with the TDF account");
        for written in [
            "#microsoft.graph.chatMessage",
            "microsoft.graph.chatMessage",
        ] {
            assert_eq!(
                resource_type(&json!({"@odata.type": written})),
                "chatMessage"
            );
        }
    }
}
