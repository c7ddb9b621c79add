//! Jira Cloud: issues, through `/rest/api/3/search/jql` on the Atlassian
//! API gateway (the old `/rest/api/3/search` has been removed).
//!
//! An OAuth token reaches sites by cloud id: the first call looks the site
//! up in `accessible-resources` (the `site` setting picks one when the user
//! can reach several), and citations point at the site's `/browse/KEY`.

use quarry_connector_sdk::atlassian::{find_site, search_text};
use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::date_part;

const FIELDS: &str = "summary,description,creator,created,updated,status";
const MAX_PAGES: usize = 3;

struct Jira;

impl Connector for Jira {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let site = find_site(request.setting("site"), "Jira", None)?;
        let jql = jql(&request);
        let want = request.max_results.clamp(1, 300) as usize;
        let api = format!(
            "https://api.atlassian.com/ex/jira/{}/rest/api/3/search/jql",
            quarry_connector_sdk::url::segment(&site.cloud_id)
        );
        let issues = collect_pages(want, MAX_PAGES, |token: Option<String>| {
            let url = Url::new(&api)
                .param("jql", &jql)
                .param("fields", FIELDS)
                .param("maxResults", want.min(100))
                .param_opt("nextPageToken", token)
                .build();
            let body: Value = Request::get(url).send()?.error_for_status()?.json()?;
            Ok(Page::next_if(
                body.array_at("/issues").to_vec(),
                body.bool_at("/isLast") == Some(false),
                body.str_at("/nextPageToken").map(String::from),
            ))
        })?;
        Ok(issues
            .iter()
            .filter_map(|issue| to_document(issue, &site.url))
            .collect())
    }
}

/// `text ~ "t1 OR t2 ..." AND updated >= "date"`. No `ORDER BY`: the best
/// matches first, not the most recently changed of thousands of matches.
fn jql(request: &SearchRequest) -> String {
    let mut clauses = vec![format!("text ~ \"{}\"", search_text(request))];
    if let Some(since) = &request.since {
        clauses.push(format!("updated >= \"{}\"", date_part(since)));
    }
    if let Some(until) = &request.until {
        clauses.push(format!("updated <= \"{}\"", date_part(until)));
    }
    clauses.join(" AND ")
}

/// Atlassian Document Format to plain text: the text nodes, a line per block.
fn adf_text(node: &Value) -> String {
    let mut out = String::new();
    collect_adf(node, &mut out);
    out.trim().to_string()
}

fn collect_adf(node: &Value, out: &mut String) {
    if let Some(text) = node.str_at("/text") {
        out.push_str(text);
    }
    for child in node.array_at("/content") {
        collect_adf(child, out);
    }
    if matches!(
        node.str_at("/type"),
        Some("paragraph" | "heading" | "listItem" | "codeBlock" | "blockquote")
    ) {
        out.push('\n');
    }
}

fn to_document(issue: &Value, site: &str) -> Option<Document> {
    let key = issue.str_at("/key")?;
    let fields = issue.get("fields")?;
    let description = fields.get("description").map(adf_text).unwrap_or_default();
    Some(
        Document::new(
            key,
            fields.string_at("/summary"),
            description,
            format!("{site}/browse/{key}"),
        )
        .author(fields.str_at("/creator/displayName"))
        .times(fields.str_at("/created"), fields.str_at("/updated"))
        .metadata(json!({ "key": key, "status": fields.str_at("/status/name") })),
    )
}

quarry_connector_sdk::export!(Jira);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_an_issue_with_adf() {
        let issue: Value = serde_json::from_str(r#"{"id":"10001","key":"ACME-12","fields":{"summary":"Invoice retry","description":{"type":"doc","version":1,"content":[{"type":"paragraph","content":[{"type":"text","text":"Retries "},{"type":"text","text":"double charge."}]},{"type":"paragraph","content":[{"type":"text","text":"EU only."}]}]},"creator":{"displayName":"Priya Patel"},"created":"2025-05-02T09:14:11.000+0000","updated":"2025-05-03T09:14:11.000+0200"}}"#).unwrap();
        let doc = to_document(&issue, "https://acme.atlassian.net").unwrap();
        assert_eq!(doc.url, "https://acme.atlassian.net/browse/ACME-12");
        assert_eq!(doc.content, "Retries double charge.\nEU only.");
        assert_eq!(doc.updated_at.as_deref(), Some("2025-05-03T07:14:11Z"));
    }

    #[test]
    fn jql_escapes_and_bounds() {
        let request = SearchRequest::new("x", &["invoice", "retry\"; DROP"], &[])
            .between(Some("2025-01-01T00:00:00Z"), None);
        assert_eq!(
            jql(&request),
            "text ~ \"invoice OR retryDROP\" AND updated >= \"2025-01-01\""
        );
    }
}
