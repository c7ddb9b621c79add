//! Microsoft 365: SharePoint and OneDrive files and list items, and Outlook
//! mail, through Microsoft Graph's `POST /v1.0/search/query`.
//!
//! Graph searches `message` apart from the SharePoint types (they cannot be
//! combined in one request), so a search is two requests: `driveItem` with
//! `listItem`, and `message`, each paged with `from`/`size` while
//! `moreResultsAvailable`, the pages of both going out in one batch. The
//! question becomes KQL (`"phrase" OR term`), and the time range KQL
//! restrictions on days (`LastModifiedTime>=`, `received>=`), refined to
//! the second here. A hit's text is its `summary` (the highlights, `<c0>`
//! and `<ddd/>` removed), a mail's also its `bodyPreview`; citations are
//! the files' `webUrl` and the mails' `webLink`.

use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::{html_to_text, join_non_empty, terms_outside_phrases};
use quarry_connector_sdk::time::date_part;

const SEARCH: &str = "https://graph.microsoft.com/v1.0/search/query";
/// Pages per request kind (each one fetch).
const MAX_PAGES: usize = 3;

/// What one search request covers: its entity types and the KQL property
/// holding the time that `since`/`until` bound.
struct Kind {
    entity_types: &'static [&'static str],
    time_property: &'static str,
    max_size: usize,
}

const KINDS: &[Kind] = &[
    Kind {
        entity_types: &["driveItem", "listItem"],
        time_property: "LastModifiedTime",
        max_size: 100,
    },
    Kind {
        entity_types: &["message"],
        time_property: "received",
        max_size: 25,
    },
];

struct Microsoft365;

impl Connector for Microsoft365 {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = request.max_results.clamp(1, 100) as usize;
        let Some(text) = kql_text(&request) else {
            return Ok(Vec::new());
        };
        let queries: Vec<String> = KINDS
            .iter()
            .map(|kind| kql(&text, kind.time_property, &request))
            .collect();
        // A kind's pages do not depend on the other kind's: each round asks
        // for the next page of every kind still going, in one batch.
        let found = collect_pages_each(
            KINDS.len(),
            want,
            MAX_PAGES,
            |k, from: Option<&usize>| {
                let size = want.min(KINDS[k].max_size);
                search_request(&KINDS[k], &queries[k], from.copied().unwrap_or(0), size)
            },
            |_, from, response| read_page(response, from.copied().unwrap_or(0)),
        )?;
        // Files and mails take turns.
        let mut documents: Vec<Document> = Vec::new();
        let longest = found.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for hits in &found {
                let Some(doc) = hits.get(i).and_then(to_document) else {
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
    let containers = response.array_at("/value/0/hitsContainers");
    if response.pointer("/value/0").is_none() {
        return Err(SearchError::InvalidResponse(
            "the search response has no value".into(),
        ));
    }
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
fn kql_text(request: &SearchRequest) -> Option<String> {
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
fn kql(text: &str, property: &str, request: &SearchRequest) -> String {
    let mut clauses = vec![format!("({text})")];
    if let Some(since) = &request.since {
        clauses.push(format!("{property}>={}", date_part(since)));
    }
    if let Some(until) = &request.until {
        clauses.push(format!("{property}<={}", date_part(until)));
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

/// A summary's text: fragments joined by an ellipsis, highlights dropped.
fn summary_text(summary: &str) -> String {
    let text = html_to_text(&summary.replace("<ddd/>", " … "));
    text.trim().trim_end_matches('…').trim().to_string()
}

fn to_document(hit: &Value) -> Option<Document> {
    let resource = hit.get("resource")?;
    let summary = summary_text(hit.str_at("/summary").unwrap_or_default());
    let kind = resource
        .str_at("/@odata.type")
        .unwrap_or_default()
        .trim_start_matches("#microsoft.graph.");
    let id = resource.str_at("/id").or_else(|| hit.str_at("/hitId"))?;
    match kind {
        "message" => {
            // The preview (the body's start), then the highlights beyond it.
            let preview = resource.str_at("/bodyPreview").unwrap_or_default().trim();
            let beyond: Vec<&str> = summary
                .split(" … ")
                .map(str::trim)
                .filter(|f| !f.is_empty() && !preview.contains(f))
                .collect();
            let content = join_non_empty(
                std::iter::once(preview).chain([beyond.join(" … ").as_str()]),
                "\n",
            );
            Some(
                Document::new(
                    id,
                    resource.string_at("/subject"),
                    content,
                    resource.str_at("/webLink")?,
                )
                .author(
                    resource
                        .str_at("/from/emailAddress/name")
                        .or_else(|| resource.str_at("/sender/emailAddress/name")),
                )
                .times(
                    resource
                        .str_at("/sentDateTime")
                        .or_else(|| resource.str_at("/createdDateTime")),
                    resource
                        .str_at("/receivedDateTime")
                        .or_else(|| resource.str_at("/lastModifiedDateTime")),
                )
                .metadata(json!({
                    "entity": "message",
                    "conversation_id": resource.str_at("/conversationId"),
                })),
            )
        }
        _ => {
            let title = resource
                .str_at("/name")
                .or_else(|| resource.str_at("/fields/title"))
                .or_else(|| resource.str_at("/fields/Title"))
                .unwrap_or_default();
            Some(
                Document::new(id, title, summary, resource.str_at("/webUrl")?)
                    .author(
                        resource
                            .str_at("/createdBy/user/displayName")
                            .or_else(|| resource.str_at("/lastModifiedBy/user/displayName")),
                    )
                    .times(
                        resource.str_at("/createdDateTime"),
                        resource.str_at("/lastModifiedDateTime"),
                    )
                    .metadata(json!({
                        "entity": kind,
                        "last_modified_by": resource.str_at("/lastModifiedBy/user/displayName"),
                        "size": resource.i64_at("/size"),
                    })),
            )
        }
    }
}

quarry_connector_sdk::export!(Microsoft365);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_files_and_mails() {
        let hit: Value = serde_json::from_str(r##"{"hitId":"01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K","rank":1,"summary":"Incident 2025-02-03: <c0>checkout</c0> 502s<ddd/>The &quot;listener&quot; kept the old certificate<ddd/>","resource":{"@odata.type":"#microsoft.graph.driveItem","createdDateTime":"2025-02-07T10:00:00Z","lastModifiedDateTime":"2025-02-09T10:00:00Z","name":"Postmortem - checkout 502s.docx","webUrl":"https://acme.sharepoint.com/sites/Engineering/Shared%20Documents/Postmortems/Postmortem%20-%20checkout%20502s.docx","size":21000,"id":"01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K","createdBy":{"user":{"displayName":"Aisha Bello"}}}}"##).unwrap();
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.title, "Postmortem - checkout 502s.docx");
        assert_eq!(
            doc.content,
            "Incident 2025-02-03: checkout 502s … The \"listener\" kept the old certificate"
        );
        assert_eq!(doc.author.as_deref(), Some("Aisha Bello"));
        assert!(
            doc.url
                .starts_with("https://acme.sharepoint.com/sites/Engineering/")
        );
        assert_eq!(doc.updated_at.as_deref(), Some("2025-02-09T10:00:00Z"));

        let hit: Value = serde_json::from_str(r##"{"hitId":"AAMkAD1","summary":"","resource":{"@odata.type":"#microsoft.graph.message","id":"AAMkAD1","subject":"Incident summary","bodyPreview":"ACME-12: checkout failed for 47 minutes.","sentDateTime":"2025-02-03T16:00:00Z","receivedDateTime":"2025-02-03T16:00:01Z","webLink":"https://outlook.office365.com/owa/?ItemID=AAMkAD1&exvsurl=1&viewmodel=ReadMessageItem","from":{"emailAddress":{"name":"Marcus Olsen","address":"marcus@acme.example"}}}}"##).unwrap();
        let doc = to_document(&hit).unwrap();
        assert_eq!(doc.title, "Incident summary");
        assert_eq!(doc.content, "ACME-12: checkout failed for 47 minutes.");
        let mut hit = hit;
        hit["summary"] =
            json!("<c0>ACME-12</c0>: checkout failed<ddd/>Post-mortem: on the site<ddd/>");
        let doc = to_document(&hit).unwrap();
        assert_eq!(
            doc.content,
            "ACME-12: checkout failed for 47 minutes.\nPost-mortem: on the site"
        );
        assert_eq!(doc.author.as_deref(), Some("Marcus Olsen"));
        assert!(
            doc.url
                .starts_with("https://outlook.office365.com/owa/?ItemID=")
        );
    }

    #[test]
    fn builds_kql() {
        let request = SearchRequest::new("x", &["checkout", "time(out)"], &["bad gateway"])
            .between(Some("2026-01-01T00:00:00Z"), Some("2026-06-30T23:59:59Z"));
        let text = kql_text(&request).unwrap();
        assert_eq!(text, "\"bad gateway\" OR checkout OR timeout");
        assert_eq!(
            kql(&text, "received", &request),
            "(\"bad gateway\" OR checkout OR timeout) AND received>=2026-01-01 AND received<=2026-06-30"
        );
    }
}
