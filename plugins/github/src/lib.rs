//! GitHub: issues and pull requests, through the search API.
//!
//! `GET https://api.github.com/search/issues?q=...`, twice in one batch:
//! once with `is:issue` and once with `is:pull-request`, since GitHub
//! answers 422 to a GitHub App user token's search that asks for neither
//! (and it cannot ask for both). Each `q` holds the question's most
//! specific terms joined by `OR` (GitHub allows at most five operators,
//! so at most six terms), the connection's scope qualifier (`repo:acme/shop`
//! or `org:acme`: without one, GitHub would search all of public GitHub)
//! and the time range as `updated:` qualifiers. No `sort`: GitHub then
//! answers its best matches first.

use quarry_connector_sdk::plan::{Term, any_of, merge, terms_by_specificity};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::date_part;

const API: &str = "https://api.github.com/search/issues";
/// The REST API version the requests are written for.
const API_VERSION: &str = "2022-11-28";
/// "The query can't have more than five AND, OR, or NOT operators."
const MAX_OPERATORS: usize = 5;
/// What a search asks GitHub for: its issues, then its pull requests.
const KINDS: [&str; 2] = ["is:issue", "is:pull-request"];

struct GitHub;

impl Connector for GitHub {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = request.max_results.clamp(1, 300) as usize;
        let per_page = want.min(100);
        let searches = KINDS
            .iter()
            .map(|kind| search_query(&request, kind).map(|q| page_request(&q, per_page)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut answers = Vec::new();
        for response in send_all(searches) {
            let body: Value = check(response?)?.json()?;
            answers.push(body.array_at("/items").to_vec());
        }
        let items = merge(answers, |item| item.string_at("/html_url"), want);
        Ok(items.iter().filter_map(to_document).collect())
    }
}

fn page_request(q: &str, per_page: usize) -> Request {
    let url = Url::new(API)
        .param("q", q)
        .param("per_page", per_page)
        .param("advanced_search", "true")
        .build();
    Request::get(url)
        .header("accept", "application/vnd.github+json")
        .header("x-github-api-version", API_VERSION)
}

/// `q` for GitHub: `(t1 OR t2 ...) scope kind updated:>=...`, at most six
/// terms, the most specific first.
fn search_query(request: &SearchRequest, kind: &str) -> Result<String, SearchError> {
    let scope = request.required_setting("scope")?;
    let terms = terms_by_specificity(request);
    let words = any_of(&terms, " OR ", MAX_OPERATORS + 1, Term::quoted);
    let mut parts = Vec::new();
    match terms.len() {
        0 => parts.push(request.query.clone()),
        1 => parts.push(words),
        _ => parts.push(format!("({words})")),
    }
    parts.push(scope.to_string());
    parts.push(kind.to_string());
    if let Some(since) = &request.since {
        parts.push(format!("updated:>={}", date_part(since)));
    }
    if let Some(until) = &request.until {
        parts.push(format!("updated:<={}", date_part(until)));
    }
    Ok(parts.join(" "))
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
    fn issues_and_pull_requests_are_asked_for_apart_in_one_batch() {
        let (documents, sent) = with_upstream(
            |request| {
                let q = request.param("q").unwrap_or_default();
                let number = if q.contains("is:issue") { 1 } else { 2 };
                Ok(Response::for_test(
                    200,
                    &[],
                    json!({ "total_count": 1, "incomplete_results": false, "items": [item(number)] })
                        .to_string(),
                ))
            },
            || GitHub::search(request()),
        );
        let ids: Vec<String> = documents.unwrap().into_iter().map(|d| d.id).collect();
        assert_eq!(ids, ["acme/shop#1", "acme/shop#2"]);
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0].without_query(), API);
        assert_eq!(
            sent[0].param("q").as_deref(),
            Some("(checkout OR timeout) repo:acme/shop is:issue")
        );
        assert_eq!(
            sent[1].param("q").as_deref(),
            Some("(checkout OR timeout) repo:acme/shop is:pull-request")
        );
        assert_eq!(sent[0].param("sort"), None, "best match first");
        assert_eq!(sent[0].header("x-github-api-version"), Some("2022-11-28"));
    }

    #[test]
    fn at_most_six_terms_the_most_specific_first() {
        let request = SearchRequest::new(
            "x",
            &[
                "which",
                "famous",
                "airlines",
                "use",
                "boeing",
                "747",
                "planes",
                "currently",
                "today",
            ],
            &[],
        )
        .with_setting("scope", "org:acme");
        let q = search_query(&request, "is:issue").unwrap();
        assert_eq!(q.matches(" OR ").count(), MAX_OPERATORS, "{q}");
        assert!(q.contains("boeing") && q.contains("airlines"), "{q}");
        assert!(!q.contains("which") && !q.contains(" use "), "{q}");
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
        assert_eq!(sent.len(), 2, "both searches went out together");
        // Without its scope setting, nothing is sent.
        let (result, sent) = with_upstream(
            |_| panic!("nothing should be sent"),
            || GitHub::search(SearchRequest::new("x", &["x"], &[])),
        );
        assert!(matches!(result, Err(SearchError::InvalidRequest(m)) if m.contains("scope")));
        assert!(sent.is_empty());
    }
}
