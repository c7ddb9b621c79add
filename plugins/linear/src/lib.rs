//! Linear: issues, through the GraphQL `searchIssues` query.
//!
//! The host parses every GraphQL body and lets through exactly one `query`
//! operation, so this connector can only ever read.

use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;

const API: &str = "https://api.linear.app/graphql";
const MAX_PAGES: usize = 3;

const SEARCH: &str = "query Search($term: String!, $first: Int!, $after: String) {
  searchIssues(term: $term, first: $first, after: $after) {
    nodes { id identifier title description url createdAt updatedAt creator { name } state { name } }
    pageInfo { hasNextPage endCursor }
  }
}";

struct Linear;

impl Connector for Linear {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let term = request.keywords_or_query(" ");
        let want = request.max_results.clamp(1, 250) as usize;
        let nodes = collect_pages(want, MAX_PAGES, |after: Option<String>| {
            let body = json!({ "query": SEARCH, "variables": { "term": term, "first": want.min(50), "after": after } });
            let data = graphql(Request::post(API).json(&body).send()?)?;
            let connection = &data["searchIssues"];
            Ok(Page::next_if(
                connection.array_at("/nodes").to_vec(),
                connection.bool_at("/pageInfo/hasNextPage") == Some(true),
                connection.str_at("/pageInfo/endCursor").map(String::from),
            ))
        })?;
        Ok(nodes
            .iter()
            .filter(|n| request.in_time_range(n.str_at("/updatedAt")))
            .filter_map(to_document)
            .collect())
    }
}

/// GraphQL reports most failures as `errors[]` with an `extensions.code`,
/// whatever the HTTP status.
fn graphql(response: Response) -> Result<Value, SearchError> {
    let body: Value = match response.json() {
        Ok(body) => body,
        Err(e) => return Err(response.error_for_status().err().unwrap_or(e)),
    };
    if let Some(error) = body.array_at("/errors").first() {
        let message = error.string_at("/message");
        return Err(match error.str_at("/extensions/code") {
            Some("AUTHENTICATION_ERROR") | Some("FORBIDDEN") => SearchError::Unauthorized(message),
            Some("RATELIMITED") => SearchError::RateLimited(response.retry_after()),
            _ if response.status == 401 => SearchError::Unauthorized(message),
            _ => SearchError::Upstream(format!("Linear error: {message}")),
        });
    }
    response.error_for_status()?;
    body.get("data")
        .cloned()
        .ok_or_else(|| SearchError::InvalidResponse("GraphQL response has no data".into()))
}

fn to_document(node: &Value) -> Option<Document> {
    Some(
        Document::new(node.str_at("/identifier")?, node.string_at("/title"), node.string_at("/description"), node.str_at("/url")?)
            .author(node.str_at("/creator/name"))
            .times(node.str_at("/createdAt"), node.str_at("/updatedAt"))
            .metadata(json!({ "identifier": node.str_at("/identifier"), "state": node.str_at("/state/name") })),
    )
}

quarry_connector_sdk::export!(Linear);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_node() {
        let node: Value = serde_json::from_str(r#"{"id":"1","identifier":"ENG-12","title":"Flaky deploys","description":"Deploys fail","url":"https://linear.app/acme/issue/ENG-12/flaky-deploys","createdAt":"2025-04-01T10:00:00.000Z","updatedAt":"2025-04-02T10:00:00.000Z","creator":{"name":"Priya"},"state":{"name":"Done"}}"#).unwrap();
        let doc = to_document(&node).unwrap();
        assert_eq!(doc.id, "ENG-12");
        assert_eq!(doc.author.as_deref(), Some("Priya"));
    }

    #[test]
    fn the_query_is_a_single_read() {
        assert!(SEARCH.trim_start().starts_with("query "));
        assert!(!SEARCH.contains("mutation"));
    }
}
