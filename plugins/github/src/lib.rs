//! GitHub: issues and pull requests, through the search API.
//!
//! `GET https://api.github.com/search/issues?q=...` with the user's terms
//! (any of them, `OR`), the connection's scope qualifier (`repo:acme/shop`
//! or `org:acme`: without one, GitHub would search all of public GitHub)
//! and the time range as `updated:` qualifiers.

use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::date_part;

const API: &str = "https://api.github.com/search/issues";
const MAX_PAGES: usize = 3;

struct GitHub;

impl Connector for GitHub {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let q = search_query(&request)?;
        let want = request.max_results.clamp(1, 300) as usize;
        let per_page = want.min(100);
        let items = collect_pages(want, MAX_PAGES, |page: Option<u32>| {
            let page = page.unwrap_or(1);
            let url = Url::new(API)
                .param("q", &q)
                .param("sort", "updated")
                .param("order", "desc")
                .param("per_page", per_page)
                .param("page", page)
                .param("advanced_search", "true")
                .build();
            let response = Request::get(url)
                .header("accept", "application/vnd.github+json")
                .header("x-github-api-version", "2022-11-28")
                .send()?;
            let response = check(response)?;
            let more = response.header("link").is_some_and(has_next_link);
            let body: Value = response.json()?;
            Ok(Page {
                items: body.array_at("/items").to_vec(),
                next: more.then_some(page + 1),
            })
        })?;
        Ok(items.iter().filter_map(to_document).collect())
    }
}

/// `q` for GitHub: `(terms joined by OR) scope is:issue|pr updated:>=...`.
fn search_query(request: &SearchRequest) -> Result<String, SearchError> {
    let scope = request.required_setting("scope")?;
    let q = request.keywords_or_query(" OR ");
    let mut parts = vec![q, scope.to_string()];
    if let Some(since) = &request.since {
        parts.push(format!("updated:>={}", date_part(since)));
    }
    if let Some(until) = &request.until {
        parts.push(format!("updated:<={}", date_part(until)));
    }
    Ok(parts.join(" "))
}

/// Whether a `Link` header has a `rel="next"` entry: GitHub's way of saying
/// there is another page.
fn has_next_link(link: &str) -> bool {
    link.split(',')
        .any(|part| part.split(';').skip(1).any(|p| p.trim() == "rel=\"next\""))
}

/// GitHub answers a spent rate limit with 403 (primary) or 429 (secondary).
fn check(response: Response) -> Result<Response, SearchError> {
    if response.status == 403 && response.header("x-ratelimit-remaining") == Some("0") {
        return Err(SearchError::RateLimited(response.retry_after()));
    }
    response.error_for_status()
}

fn to_document(item: &Value) -> Option<Document> {
    let url = item.str_at("/html_url")?;
    let number = item.i64_at("/number")?;
    let repository = item
        .str_at("/repository_url")
        .and_then(|u| u.strip_prefix("https://api.github.com/repos/"))
        .unwrap_or("");
    let kind = if item.get("pull_request").is_some() {
        "pull_request"
    } else {
        "issue"
    };
    let labels = item.strs_at("/labels", "/name");
    Some(
        Document::new(
            format!("{repository}#{number}"),
            item.string_at("/title"),
            item.string_at("/body"),
            url,
        )
        .author(item.str_at("/user/login"))
        .times(item.str_at("/created_at"), item.str_at("/updated_at"))
        .metadata(json!({
            "kind": kind,
            "number": number,
            "repository": repository,
            "state": item.str_at("/state"),
            "labels": labels,
            "comments": item.i64_at("/comments"),
        })),
    )
}

quarry_connector_sdk::export!(GitHub);

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_connector_sdk::testing::with_upstream;

    #[test]
    fn finds_the_next_page_in_link_headers() {
        let link = r#"<https://api.github.com/search/issues?q=a&page=2>; rel="next", <https://api.github.com/search/issues?q=a&page=5>; rel="last""#;
        assert!(has_next_link(link));
        assert!(!has_next_link(
            r#"<https://api.github.com/search/issues?q=a&page=1>; rel="prev""#
        ));
    }

    #[test]
    fn maps_the_documented_item_shape() {
        let item: Value = serde_json::from_str(r#"{"url":"https://api.github.com/repos/acme/shop/issues/482","repository_url":"https://api.github.com/repos/acme/shop","html_url":"https://github.com/acme/shop/issues/482","number":482,"title":"Checkout times out with more than 50 items","user":{"login":"dlopez"},"labels":[{"name":"bug"}],"state":"open","comments":3,"created_at":"2025-05-02T09:14:11Z","updated_at":"2025-05-06T16:40:02Z","body":"Add 51 items, press Pay: spinner never stops.","score":1.0}"#).unwrap();
        let doc = to_document(&item).unwrap();
        assert_eq!(doc.id, "acme/shop#482");
        assert_eq!(doc.url, "https://github.com/acme/shop/issues/482");
        assert_eq!(doc.author.as_deref(), Some("dlopez"));
        assert!(doc.metadata.contains("\"kind\":\"issue\""));
    }

    #[test]
    fn a_spent_rate_limit_is_told_from_a_refused_permission() {
        // GitHub's primary rate limit: 403 with no request left.
        let spent = Response::for_test(
            403,
            &[("X-RateLimit-Remaining", "0"), ("Retry-After", "60")],
            r#"{"message": "API rate limit exceeded for user ID 1."}"#,
        );
        assert!(matches!(
            check(spent),
            Err(SearchError::RateLimited(Some(60)))
        ));
        // A 403 with requests left is a permission the token lacks.
        let forbidden = Response::for_test(
            403,
            &[("X-RateLimit-Remaining", "4999")],
            r#"{"message": "Resource not accessible by integration"}"#,
        );
        assert!(matches!(
            check(forbidden),
            Err(SearchError::InvalidRequest(m)) if m == "HTTP 403: Resource not accessible by integration"
        ));
        // The secondary rate limit, and a revoked token.
        let secondary = Response::for_test(429, &[("retry-after", "5")], "");
        assert!(matches!(
            check(secondary),
            Err(SearchError::RateLimited(Some(5)))
        ));
        let revoked = Response::for_test(401, &[], r#"{"message": "Bad credentials"}"#);
        assert!(matches!(
            check(revoked),
            Err(SearchError::Unauthorized(m)) if m == "Bad credentials"
        ));
    }

    fn request() -> SearchRequest {
        SearchRequest::new("checkout timeout", &["checkout", "timeout"], &[])
            .with_setting("scope", "repo:acme/shop")
    }

    fn item(number: i64) -> Value {
        json!({
            "html_url": format!("https://github.com/acme/shop/issues/{number}"),
            "repository_url": "https://api.github.com/repos/acme/shop",
            "number": number,
            "title": format!("Checkout timeout #{number}"),
            "body": "",
            "updated_at": "2025-05-06T16:40:02Z"
        })
    }

    #[test]
    fn search_asks_within_the_scope_and_follows_the_next_link() {
        let (documents, sent) = with_upstream(
            |request| {
                let next = r#"<https://api.github.com/search/issues?page=2>; rel="next""#;
                Ok(match request.param("page").as_deref() {
                    Some("1") => Response::for_test(
                        200,
                        &[("Link", next)],
                        json!({ "items": [item(1)] }).to_string(),
                    ),
                    _ => Response::for_test(200, &[], json!({ "items": [item(2)] }).to_string()),
                })
            },
            || GitHub::search(request()),
        );
        let ids: Vec<String> = documents.unwrap().into_iter().map(|d| d.id).collect();
        assert_eq!(ids, ["acme/shop#1", "acme/shop#2"]);
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0].without_query(), API);
        assert_eq!(
            sent[0].param("q").as_deref(),
            Some("checkout OR timeout repo:acme/shop")
        );
        assert_eq!(sent[0].header("x-github-api-version"), Some("2022-11-28"));
        assert_eq!(sent[1].param("page").as_deref(), Some("2"));
    }

    #[test]
    fn a_revoked_token_makes_the_search_unauthorized() {
        let (result, sent) = with_upstream(
            |_| {
                Ok(Response::for_test(
                    401,
                    &[],
                    r#"{"message": "Bad credentials"}"#,
                ))
            },
            || GitHub::search(request()),
        );
        assert!(matches!(result, Err(SearchError::Unauthorized(m)) if m == "Bad credentials"));
        assert_eq!(sent.len(), 1, "no second page after a refusal");
        // Without its scope setting, nothing is sent.
        let (result, sent) = with_upstream(
            |_| panic!("nothing should be sent"),
            || GitHub::search(SearchRequest::new("x", &["x"], &[])),
        );
        assert!(matches!(result, Err(SearchError::InvalidRequest(m)) if m.contains("scope")));
        assert!(sent.is_empty());
    }
}
