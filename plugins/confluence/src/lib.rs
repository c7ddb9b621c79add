//! Confluence Cloud: pages and blog posts, through CQL search
//! (`GET /wiki/rest/api/search`, v1: the v2 API has no search) on the
//! Atlassian API gateway.
//!
//! An OAuth token reaches sites by cloud id: the first call looks the site
//! up in `accessible-resources` (the `site` setting picks one when the user
//! can reach several). The page bodies come with the results
//! (`expand=content.body.storage`, XHTML made plain text here; the excerpt
//! when a body is missing), and citations are the pages' web URLs
//! (`_links.base` + the result's relative `url`).

use quarry_connector_sdk::atlassian::{find_site, search_text};
use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::html_to_text;
use quarry_connector_sdk::time::{from_unix, to_unix};

const EXPAND: &str = "content.body.storage,content.history,content.version,content.space";
const MAX_PAGES: usize = 3;
/// Confluence caps a page of results with bodies at 50.
const MAX_LIMIT: usize = 50;

struct Confluence;

impl Connector for Confluence {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let site = find_site(request.setting("site"), "Confluence", Some("confluence"))?;
        let cql = cql(&request);
        let want = request.max_results.clamp(1, 150) as usize;
        let api = format!(
            "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search",
            quarry_connector_sdk::url::segment(&site.cloud_id)
        );
        let mut base: Option<String> = None;
        let results = collect_pages(want, MAX_PAGES, |cursor: Option<String>| {
            let url = Url::new(&api)
                .param("cql", &cql)
                .param("limit", want.min(MAX_LIMIT))
                .param("expand", EXPAND)
                .param_opt("cursor", cursor)
                .build();
            let body: Value = Request::get(url).send()?.error_for_status()?.json()?;
            if base.is_none() {
                base = body.str_at("/_links/base").map(String::from);
            }
            Ok(Page {
                items: body.array_at("/results").to_vec(),
                next: body.str_at("/_links/next").and_then(cursor_of),
            })
        })?;
        let base = base.unwrap_or_else(|| format!("{}/wiki", site.url));
        Ok(results
            .iter()
            .filter(|r| request.in_time_range(last_modified(r)))
            .filter_map(|r| to_document(r, &base))
            .collect())
    }
}

/// `siteSearch ~ "terms" AND type in (page, blogpost) AND lastmodified >= ...`.
///
/// CQL compares dates in the user's time zone, so the bounds sent are a day
/// wider than asked and the exact range is applied to the results.
fn cql(request: &SearchRequest) -> String {
    let mut clauses = vec![
        format!("siteSearch ~ \"{}\"", search_text(request)),
        "type in (page, blogpost)".to_string(),
    ];
    if let Some(since) = request.since.as_deref().and_then(to_unix) {
        clauses.push(format!("lastmodified >= \"{}\"", cql_time(since - 86_400)));
    }
    if let Some(until) = request.until.as_deref().and_then(to_unix) {
        clauses.push(format!("lastmodified <= \"{}\"", cql_time(until + 86_400)));
    }
    clauses.join(" AND ")
}

/// `2025-05-02 09:14`, a form CQL accepts.
fn cql_time(unix: i64) -> String {
    let t = from_unix(unix);
    format!("{} {}", &t[..10], &t[11..16])
}

/// The `cursor` parameter of a `_links.next` URL.
fn cursor_of(next: &str) -> Option<String> {
    quarry_connector_sdk::url::query_param(next, "cursor").filter(|c| !c.is_empty())
}

fn last_modified(result: &Value) -> Option<&str> {
    result
        .str_at("/lastModified")
        .or_else(|| result.str_at("/content/version/when"))
}

/// Search titles and excerpts carry highlight markers.
fn strip_highlights(text: &str) -> String {
    text.replace("@@@hl@@@", "").replace("@@@endhl@@@", "")
}

fn to_document(result: &Value, base: &str) -> Option<Document> {
    let content = result.get("content")?;
    let id = content.str_at("/id")?;
    let path = result
        .str_at("/url")
        .or_else(|| content.str_at("/_links/webui"))?;
    let url = if path.starts_with("https://") {
        path.to_string()
    } else {
        format!("{}{}", base.trim_end_matches('/'), path)
    };
    let title = strip_highlights(
        result
            .str_at("/title")
            .or_else(|| content.str_at("/title"))
            .unwrap_or_default(),
    );
    let text = match content.str_at("/body/storage/value") {
        Some(storage) => html_to_text(storage),
        None => html_to_text(&strip_highlights(&result.string_at("/excerpt"))),
    };
    let author = content
        .str_at("/history/createdBy/displayName")
        .or_else(|| content.str_at("/version/by/displayName"));
    Some(
        Document::new(id, title, text, url)
            .author(author)
            .times(
                content.str_at("/history/createdDate"),
                last_modified(result),
            )
            .metadata(json!({
                "type": content.str_at("/type"),
                "space": content
                    .str_at("/space/name")
                    .or_else(|| result.str_at("/resultGlobalContainer/title")),
                "status": content.str_at("/status"),
            })),
    )
}

quarry_connector_sdk::export!(Confluence);

#[cfg(test)]
mod tests {
    use quarry_connector_sdk::testing::assert_document;

    use super::*;

    fn request(terms: &[&str]) -> SearchRequest {
        SearchRequest::new(&terms.join(" "), terms, &[])
    }

    #[test]
    fn maps_a_search_result_with_its_body() {
        let result: Value = serde_json::from_str(r#"{"content":{"id":"393217","type":"page","status":"current","title":"Postmortem: checkout 502s","space":{"key":"OPS","name":"Operations"},"history":{"createdBy":{"displayName":"Aisha Bello"},"createdDate":"2025-02-04T10:00:00.000Z"},"version":{"when":"2025-02-06T09:30:00.000Z","by":{"displayName":"Tomás Herrera"},"number":3},"body":{"storage":{"value":"<h2>Summary</h2><p>Checkout returned 502s for 38 minutes &amp; more.</p><ul><li>Jira: ACME-104</li></ul>","representation":"storage"}},"_links":{"webui":"/spaces/OPS/pages/393217/Postmortem+checkout+502s"}},"title":"Postmortem: @@@hl@@@checkout@@@endhl@@@ 502s","excerpt":"@@@hl@@@Checkout@@@endhl@@@ returned 502s","url":"/spaces/OPS/pages/393217/Postmortem+checkout+502s","resultGlobalContainer":{"title":"Operations","displayUrl":"/spaces/OPS"},"lastModified":"2025-02-06T09:30:00.000Z"}"#).unwrap();
        let doc = to_document(&result, "https://acme.atlassian.net/wiki").unwrap();
        let expected = Document::new(
            "393217",
            "Postmortem: checkout 502s",
            "Summary\nCheckout returned 502s for 38 minutes & more.\nJira: ACME-104",
            "https://acme.atlassian.net/wiki/spaces/OPS/pages/393217/Postmortem+checkout+502s",
        )
        .author(Some("Aisha Bello"))
        .times(Some("2025-02-04T10:00:00Z"), Some("2025-02-06T09:30:00Z"));
        assert_document(&doc, &expected);
        assert!(doc.metadata.contains("\"space\":\"Operations\""));
    }

    #[test]
    fn falls_back_to_the_excerpt() {
        let result: Value = serde_json::from_str(r#"{"content":{"id":"7","type":"blogpost","_links":{"webui":"/spaces/ENG/blog/7"}},"title":"x","excerpt":"a @@@hl@@@b@@@endhl@@@ &amp; c","lastModified":"2025-01-01T00:00:00.000Z"}"#).unwrap();
        let doc = to_document(&result, "https://acme.atlassian.net/wiki").unwrap();
        assert_eq!(doc.content, "a b & c");
        assert_eq!(doc.url, "https://acme.atlassian.net/wiki/spaces/ENG/blog/7");
    }

    #[test]
    fn cql_escapes_and_widens_the_range() {
        let mut r = request(&["checkout", "502\"; DROP"]);
        r.phrases = vec!["load balancer".into()];
        r.since = Some("2026-06-01T00:00:00Z".into());
        r.until = Some("2026-06-30T12:00:00Z".into());
        assert_eq!(
            cql(&r),
            "siteSearch ~ \"\\\"load balancer\\\" OR checkout OR 502DROP\" AND type in (page, blogpost) \
             AND lastmodified >= \"2026-05-31 00:00\" AND lastmodified <= \"2026-07-01 12:00\""
        );
    }

    #[test]
    fn reads_the_cursor_of_the_next_link() {
        assert_eq!(
            cursor_of("/rest/api/search?cql=x&limit=3&cursor=b2Zm%3D%3D&next=true").as_deref(),
            Some("b2Zm==")
        );
        assert_eq!(cursor_of("/rest/api/search?cql=x"), None);
    }
}
