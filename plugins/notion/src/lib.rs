//! Notion: pages, through `POST /v1/search` and the pages' block children.
//!
//! Notion's search matches page titles only, and a title holds few words:
//! the connector asks for the question's most specific terms each alone
//! (one or two terms: together, then alone), in one batch, and merges the
//! pages found. Each page is
//! then read (`GET /v1/blocks/{id}/children`, first page of blocks) to give
//! the host real text to rank and cite; those reads go out together too.

use quarry_connector_sdk::plan::{narrower_for_titles, search_all, terms_by_specificity, written};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::join_non_empty;

const SEARCH: &str = "https://api.notion.com/v1/search";
const NOTION_VERSION: &str = "2025-09-03";
/// Pages whose bodies are read: each costs one fetch.
const MAX_BODIES: usize = 12;
/// Title searches one question may cost (with the bodies, within the
/// manifest's 16 fetches).
const MAX_QUERIES: usize = 3;

struct Notion;

impl Connector for Notion {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = (request.max_results as usize).clamp(1, MAX_BODIES);
        let searches = queries(&request)
            .iter()
            .map(|query| {
                let body = json!({
                    "query": query,
                    "filter": { "property": "object", "value": "page" },
                    "sort": { "timestamp": "last_edited_time", "direction": "descending" },
                    "page_size": want,
                });
                versioned(Request::post(SEARCH).json(&body))
            })
            .collect();
        let pages = search_all(
            searches,
            |response| {
                let body: Value = response.error_for_status()?.json()?;
                Ok(body.array_at("/results").to_vec())
            },
            |page| page.id_at("/id"),
            want,
        )?;
        let pages: Vec<(&Value, &str)> = pages
            .iter()
            .filter(|p| request.in_time_range(p.str_at("/last_edited_time")))
            .filter_map(|p| Some((p, p.str_at("/id")?)))
            .collect();
        // The pages' blocks do not depend on each other: one batch.
        let blocks = send_all(pages.iter().map(|(_, id)| blocks_request(id)).collect());
        let mut documents = Vec::new();
        for ((page, _), response) in pages.into_iter().zip(blocks) {
            let text = page_text(response?)?;
            if let Some(doc) = to_document(page, text) {
                documents.push(doc);
            }
        }
        Ok(documents)
    }
}

/// The title queries: narrower sets of the most specific terms, or the
/// question as typed when it has none.
fn queries(request: &SearchRequest) -> Vec<String> {
    let terms = terms_by_specificity(request);
    let queries: Vec<String> = narrower_for_titles(&terms, MAX_QUERIES)
        .iter()
        .map(|query| written(query, " ").replace('"', ""))
        .collect();
    if queries.is_empty() {
        vec![request.query.clone()]
    } else {
        queries
    }
}

/// Notion answers only requests that name the API version they expect.
fn versioned(request: Request) -> Request {
    request.header("notion-version", NOTION_VERSION)
}

/// The request for a page's first 100 blocks.
fn blocks_request(id: &str) -> Request {
    let url = Url::new(format!(
        "https://api.notion.com/v1/blocks/{}/children",
        quarry_connector_sdk::url::segment(id)
    ))
    .param("page_size", 100)
    .build();
    versioned(Request::get(url))
}

/// The text of a page's blocks, one block a line.
fn page_text(response: Response) -> Result<String, SearchError> {
    let body: Value = response.error_for_status()?.json()?;
    Ok(join_non_empty(
        body.array_at("/results")
            .iter()
            .map(block_text)
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
        "\n",
    ))
}

/// Plain text of one block of any text-bearing type.
fn block_text(block: &Value) -> String {
    let Some(kind) = block.str_at("/type") else {
        return String::new();
    };
    rich_text(block.array_at(&format!("/{kind}/rich_text")))
}

fn rich_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter_map(|p| p.str_at("/plain_text"))
        .collect()
}

/// The title property, whatever its name (`title`, `Name`, ...).
fn title(page: &Value) -> String {
    page.get("properties")
        .and_then(Value::as_object)
        .and_then(|props| props.values().find(|p| p.str_at("/type") == Some("title")))
        .map(|p| rich_text(p.array_at("/title")))
        .unwrap_or_default()
}

fn to_document(page: &Value, text: String) -> Option<Document> {
    Some(
        Document::new(page.str_at("/id")?, title(page), text, page.str_at("/url")?)
            .author(page.str_at("/created_by/id"))
            .times(
                page.str_at("/created_time"),
                page.str_at("/last_edited_time"),
            )
            .metadata(
                json!({ "parent": page.str_at("/parent/type"), "object": page.str_at("/object") }),
            ),
    )
}

quarry_connector_sdk::export!(Notion);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_the_documented_page_shape() {
        let page: Value = serde_json::from_str(r#"{"object":"page","id":"59833787-2cf9-4fdf-8782-e53db20768a5","created_time":"2025-03-01T10:00:00.000Z","last_edited_time":"2025-05-04T08:31:00.000Z","created_by":{"object":"user","id":"ee5f0f84"},"parent":{"type":"workspace","workspace":true},"properties":{"title":{"id":"title","type":"title","title":[{"type":"text","plain_text":"Q3 launch plan"}]}},"url":"https://www.notion.so/Q3-launch-plan-598337872cf94fdf8782e53db20768a5"}"#).unwrap();
        let doc = to_document(&page, "body".into()).unwrap();
        assert_eq!(doc.title, "Q3 launch plan");
        assert_eq!(
            doc.url,
            "https://www.notion.so/Q3-launch-plan-598337872cf94fdf8782e53db20768a5"
        );
        assert_eq!(doc.updated_at.as_deref(), Some("2025-05-04T08:31:00Z"));
        let block: Value = serde_json::from_str(r#"{"type":"paragraph","paragraph":{"rich_text":[{"plain_text":"Hello "},{"plain_text":"world"}]}}"#).unwrap();
        assert_eq!(block_text(&block), "Hello world");
    }
}
