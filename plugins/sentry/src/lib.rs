//! Sentry: an organization's issues, through its issue search
//! (`GET https://{region}.sentry.io/api/0/organizations/{org}/issues/?query=`),
//! the organization and region being the connection's settings.
//!
//! Sentry reads a query's free text as one string that an issue's title or
//! message must contain ("the query uses that entire string"), so a
//! question goes out as a few queries of the most specific terms, each
//! alone (titles are short: two words seldom stand side by side), sent
//! together and merged. `query` is always given: without it Sentry applies
//! its default, `is:unresolved`, and resolved incidents are what people
//! ask about. A time range is `start` and `end`. One page each: `limit`
//! takes up to 100, more than a question needs (Sentry pages in a `Link`
//! header). An issue's text is its message, where it happened, how often,
//! and the tickets linked to it (its `annotations`); its citation the
//! issue's `permalink`.

use quarry_connector_sdk::plan::{narrower_for_titles, search_all, terms_by_specificity, written};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::join_non_empty;
use quarry_connector_sdk::time::{from_unix, to_unix};
use quarry_connector_sdk::url::tenant_name;

/// Queries one question may cost.
const MAX_QUERIES: usize = 3;

struct Sentry;

impl Connector for Sentry {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let organization =
            setting_label(request.required_setting("organization")?, "organization")?;
        let region = setting_label(request.setting("region").unwrap_or("us"), "region")?;
        if !matches!(region.as_str(), "us" | "de") {
            return Err(SearchError::InvalidRequest(format!(
                "the region setting {region:?} is not us or de"
            )));
        }
        let api = format!("https://{region}.sentry.io/api/0/organizations/{organization}/issues/");
        let want = request.max_results.clamp(1, 100) as usize;
        let searches = queries(&request)
            .into_iter()
            .map(|query| {
                let url = Url::new(&api)
                    .param("query", query)
                    .param("limit", want)
                    .param_opt("start", bound(request.since.as_deref()))
                    .param_opt("end", bound(request.until.as_deref()))
                    .build();
                Request::get(url)
            })
            .collect();
        let issues = search_all(
            searches,
            |response| match check(response)?.json::<Value>()? {
                Value::Array(issues) => Ok(issues),
                _ => Err(SearchError::InvalidResponse(
                    "the issue search did not answer a list".into(),
                )),
            },
            |issue| issue.string_at("/id"),
            want,
        )?;
        Ok(issues
            .iter()
            .filter(|issue| request.in_time_range(issue.str_at("/lastSeen")))
            .filter_map(to_document)
            .collect())
    }
}

/// A setting that goes into the URL: one DNS label (`acme`, `us`).
fn setting_label(value: &str, name: &str) -> Result<String, SearchError> {
    tenant_name(value, ".sentry.io").ok_or_else(|| {
        SearchError::InvalidRequest(format!(
            "the {name} setting {value:?} is not a Sentry {name}"
        ))
    })
}

/// An RFC 3339 bound as Sentry's ISO 8601 (UTC, whole seconds).
fn bound(at: Option<&str>) -> Option<String> {
    at.and_then(to_unix).map(from_unix)
}

/// The most specific terms, one query each (the question as typed when it
/// has no terms).
fn queries(request: &SearchRequest) -> Vec<String> {
    let terms = terms_by_specificity(request);
    let queries: Vec<String> = narrower_for_titles(&terms, MAX_QUERIES)
        .iter()
        .map(|query| written(query, " "))
        .collect();
    if queries.is_empty() && !request.query.trim().is_empty() {
        return vec![request.query.trim().to_string()];
    }
    queries
}

/// Sentry's errors are `{"detail": "..."}`.
fn check(response: Response) -> Result<Response, SearchError> {
    if response.status < 400 {
        return Ok(response);
    }
    let detail = response
        .json::<Value>()
        .ok()
        .and_then(|body| body.str_at("/detail").map(String::from));
    let message = detail.unwrap_or_else(|| response.error_message());
    Err(response.status_error(message))
}

fn to_document(issue: &Value) -> Option<Document> {
    let id = issue.str_at("/id")?;
    let title = match issue.str_at("/shortId") {
        Some(short) => format!("{short}: {}", issue.string_at("/title")),
        None => issue.string_at("/title"),
    };
    let linked: Vec<&str> = issue
        .array_at("/annotations")
        .iter()
        .filter_map(|a| a.str_at("/displayName"))
        .collect();
    let seen = format!(
        "Seen {} times by {} users; level {}, {}.",
        issue.str_at("/count").unwrap_or("0"),
        issue.i64_at("/userCount").unwrap_or(0),
        issue.str_at("/level").unwrap_or("error"),
        issue.str_at("/status").unwrap_or("unresolved"),
    );
    let content = join_non_empty(
        [
            issue.str_at("/metadata/value").unwrap_or_default(),
            &issue
                .str_at("/culprit")
                .map(|c| format!("In {c}."))
                .unwrap_or_default(),
            &seen,
            &(if linked.is_empty() {
                String::new()
            } else {
                format!("Linked: {}.", linked.join(", "))
            }),
        ],
        "\n",
    );
    Some(
        Document::new(id, title, content, issue.str_at("/permalink")?)
            .author(issue.str_at("/assignedTo/name"))
            .times(issue.str_at("/firstSeen"), issue.str_at("/lastSeen"))
            .metadata(json!({
                "short_id": issue.str_at("/shortId"),
                "project": issue.str_at("/project/slug"),
                "level": issue.str_at("/level"),
                "status": issue.str_at("/status"),
                "count": issue.str_at("/count"),
                "user_count": issue.i64_at("/userCount"),
                "linked": linked,
            })),
    )
}

quarry_connector_sdk::export!(Sentry);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_an_issue() {
        let issue = json!({
            "id": "4509231887", "shortId": "SHOP-3F", "title": "TimeoutError: payment gateway timed out",
            "culprit": "checkout/payment.py in charge", "permalink": "https://acme.sentry.io/issues/4509231887/",
            "level": "error", "status": "resolved", "count": "482", "userCount": 131,
            "firstSeen": "2026-02-03T14:02:11.120000Z", "lastSeen": "2026-02-03T15:40:52Z",
            "metadata": {"type": "TimeoutError", "value": "payment gateway timed out after 30s"},
            "project": {"id": "2", "name": "shop-api", "slug": "shop-api", "platform": "python"},
            "assignedTo": {"type": "user", "id": "7", "name": "Aisha Bello", "email": "aisha@acme.example"},
            "annotations": [{"displayName": "ACME-12", "url": "https://acme.atlassian.net/browse/ACME-12"}],
        });
        let doc = to_document(&issue).unwrap();
        assert_eq!(
            doc.title,
            "SHOP-3F: TimeoutError: payment gateway timed out"
        );
        assert_eq!(
            doc.content,
            "payment gateway timed out after 30s\nIn checkout/payment.py in charge.\nSeen 482 times by 131 users; level error, resolved.\nLinked: ACME-12."
        );
        assert_eq!(doc.url, "https://acme.sentry.io/issues/4509231887/");
        assert_eq!(doc.author.as_deref(), Some("Aisha Bello"));
        assert_eq!(doc.created_at.as_deref(), Some("2026-02-03T14:02:11Z"));
        assert_eq!(doc.updated_at.as_deref(), Some("2026-02-03T15:40:52Z"));
    }

    #[test]
    fn each_specific_term_is_a_query_of_its_own() {
        let request = SearchRequest::new("x", &["checkout", "the", "timeouts", "gateway"], &[]);
        let sent = queries(&request);
        assert_eq!(sent.len(), 3);
        assert!(sent.iter().all(|q| !q.contains(' ')), "{sent:?}");
        assert!(sent.contains(&"timeouts".to_string()), "{sent:?}");
        assert!(queries(&SearchRequest::new("  ", &[], &[])).is_empty());
    }

    #[test]
    fn settings_must_be_labels() {
        assert_eq!(
            setting_label("https://acme.sentry.io/", "organization").unwrap(),
            "acme"
        );
        assert!(setting_label("acme/../x", "organization").is_err());
    }
}
