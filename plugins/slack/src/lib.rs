//! Slack: messages, through `search.messages` (a user token with
//! `search:read`; bot tokens cannot search).
//!
//! Slack's search needs every word of a query and has no `OR`, so a
//! question of many words would find nothing: the connector sends a few
//! narrower queries in one batch (the most specific terms, two by two) and
//! merges their answers. `search.messages` is a Tier 2 method (20+ calls a
//! minute), which bounds how many queries one question may cost.
//!
//! Slack answers most failures with HTTP 200 and `{"ok": false, "error": ..}`,
//! so the body is checked before the status conventions apply.

use quarry_connector_sdk::plan::{narrower_queries, search_all};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::{date_part, from_unix, from_unix_text, to_unix};

const API: &str = "https://slack.com/api/search.messages";
/// Queries one question may cost: Tier 2 allows about 20 a minute.
const MAX_QUERIES: usize = 2;

struct Slack;

impl Connector for Slack {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = request.max_results.clamp(1, 100) as usize;
        let searches = queries(&request)
            .iter()
            .map(|query| {
                let url = Url::new(API)
                    .param("query", query)
                    .param("count", want)
                    .param("sort", "score")
                    .param("highlight", "false")
                    .build();
                Request::get(url)
            })
            .collect();
        let matches = search_all(
            searches,
            |response| Ok(check(response)?.array_at("/messages/matches").to_vec()),
            |m| m.string_at("/permalink"),
            want,
        )?;
        Ok(matches.iter().filter_map(to_document).collect())
    }
}

/// Slack's query language: terms (AND), quoted phrases, `after:`/`before:`
/// dates (exclusive, so widened by the date itself being included). One
/// query per narrower set of terms, or the question as typed when it has
/// none.
fn queries(request: &SearchRequest) -> Vec<String> {
    let mut dates = String::new();
    if let Some(since) = &request.since {
        dates.push_str(&format!(" after:{}", previous_day(date_part(since))));
    }
    if let Some(until) = &request.until {
        dates.push_str(&format!(" before:{}", next_day(date_part(until))));
    }
    narrower_queries(request, MAX_QUERIES)
        .into_iter()
        .map(|q| format!("{q}{dates}"))
        .collect()
}

fn previous_day(date: &str) -> String {
    shift_day(date, -1)
}

fn next_day(date: &str) -> String {
    shift_day(date, 1)
}

fn shift_day(date: &str, days: i64) -> String {
    let unix = to_unix(date).unwrap_or_default() + days * 86_400;
    date_part(&from_unix(unix)).to_string()
}

fn check(response: Response) -> Result<Value, SearchError> {
    if response.status == 429 {
        return Err(SearchError::RateLimited(response.retry_after()));
    }
    let response = response.error_for_status()?;
    let body: Value = response.json()?;
    if body.bool_at("/ok") == Some(true) {
        return Ok(body);
    }
    let error = body.string_at("/error");
    Err(match error.as_str() {
        "invalid_auth" | "not_authed" | "token_revoked" | "token_expired" | "account_inactive"
        | "missing_scope" => SearchError::Unauthorized(error),
        "ratelimited" => SearchError::RateLimited(response.retry_after()),
        _ => SearchError::Upstream(format!("Slack error: {error}")),
    })
}

fn to_document(m: &Value) -> Option<Document> {
    let permalink = m.str_at("/permalink")?;
    let ts = m.str_at("/ts")?;
    let channel = m.string_at("/channel/name");
    let time = from_unix_text(ts);
    Some(
        Document::new(
            format!("{}:{ts}", m.string_at("/channel/id")),
            if channel.is_empty() {
                String::new()
            } else {
                format!("#{channel}")
            },
            clean_mrkdwn(&m.string_at("/text")),
            permalink,
        )
        .author(m.str_at("/username").or(m.str_at("/user")))
        .times(time.as_deref(), time.as_deref())
        .metadata(json!({ "channel": channel, "channel_id": m.str_at("/channel/id"), "ts": ts })),
    )
}

/// Slack mrkdwn to plain text: `<url|label>` → `label`, `<url>` → `url`,
/// `<@U123>` → `@U123`, `<#C1|chan>` → `#chan`, and HTML entities.
fn clean_mrkdwn(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('>') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &rest[start + 1..start + end];
        let (target, label) = inner.split_once('|').unwrap_or((inner, ""));
        let shown = match (target.chars().next(), label) {
            (Some('#'), l) if !l.is_empty() => format!("#{l}"),
            (_, l) if !l.is_empty() => l.to_string(),
            (Some('!'), _) => target[1..].to_string(),
            _ => target.to_string(),
        };
        out.push_str(&shown);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

quarry_connector_sdk::export!(Slack);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_the_documented_match_shape() {
        let m: Value = serde_json::from_str(r#"{"iid":"x","team":"T0ACME123","type":"message","channel":{"id":"C024BE91L","name":"billing-eng","is_private":false},"user":"U061F7AUR","username":"priya","ts":"1714650000.001200","text":"The invoice retry job is paused until <https://acme.atlassian.net/browse/ACME-12|ACME-12> &amp; Monday.","permalink":"https://acme.slack.com/archives/C024BE91L/p1714650000001200"}"#).unwrap();
        let doc = to_document(&m).unwrap();
        assert_eq!(
            doc.url,
            "https://acme.slack.com/archives/C024BE91L/p1714650000001200"
        );
        assert_eq!(
            doc.content,
            "The invoice retry job is paused until ACME-12 & Monday."
        );
        assert_eq!(doc.title, "#billing-eng");
        assert_eq!(doc.created_at.as_deref(), Some("2024-05-02T11:40:00Z"));
    }

    #[test]
    fn a_long_question_becomes_narrower_queries_in_one_batch() {
        use quarry_connector_sdk::testing::with_upstream;
        let request = SearchRequest::new("x", &["checkout", "timeout", "gateway", "payments"], &[])
            .between(Some("2025-03-01T00:00:00Z"), None);
        let (result, sent) = with_upstream(
            |_| {
                Ok(Response::for_test(
                    200,
                    &[],
                    r#"{"ok": true, "messages": {"matches": []}}"#,
                ))
            },
            || Slack::search(request.clone()),
        );
        assert!(result.unwrap().is_empty());
        assert_eq!(sent.len(), MAX_QUERIES);
        let queries: Vec<String> = sent.iter().filter_map(|s| s.param("query")).collect();
        // The two most specific terms together, then the most specific alone.
        assert_eq!(
            queries[0].split(' ').count(),
            3,
            "two terms, the date: {queries:?}"
        );
        assert_eq!(
            queries[1].split(' ').count(),
            2,
            "one term, the date: {queries:?}"
        );
        assert!(
            queries.iter().all(|q| q.ends_with(" after:2025-02-28")),
            "{queries:?}"
        );
    }

    #[test]
    fn date_modifiers_are_widened_by_a_day() {
        assert_eq!(previous_day("2025-03-01"), "2025-02-28");
        assert_eq!(next_day("2025-12-31"), "2026-01-01");
    }
}
