//! Slack: messages, through `search.messages` (a user token with
//! `search:read`; bot tokens cannot search).
//!
//! Slack answers most failures with HTTP 200 and `{"ok": false, "error": ..}`,
//! so the body is checked before the status conventions apply.

use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::{date_part, from_unix, from_unix_text, to_unix};

const API: &str = "https://slack.com/api/search.messages";
const MAX_PAGES: usize = 3;

struct Slack;

impl Connector for Slack {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let query = search_query(&request);
        let want = request.max_results.clamp(1, 300) as usize;
        let count = want.min(100);
        let matches = collect_pages(want, MAX_PAGES, |page: Option<i64>| {
            let page = page.unwrap_or(1);
            let url = Url::new(API)
                .param("query", &query)
                .param("count", count)
                .param("page", page)
                .param("sort", "score")
                .param("highlight", "false")
                .build();
            let body = check(Request::get(url).send()?)?;
            let pages = body.i64_at("/messages/paging/pages").unwrap_or(1);
            let items = body.array_at("/messages/matches").to_vec();
            Ok(Page {
                items,
                next: (page < pages).then_some(page + 1),
            })
        })?;
        Ok(matches.iter().filter_map(to_document).collect())
    }
}

/// Slack's query language: terms (AND), quoted phrases, `after:`/`before:`
/// dates (exclusive, so widened by the date itself being included).
fn search_query(request: &SearchRequest) -> String {
    let mut q = request.keywords_or_query(" ");
    if let Some(since) = &request.since {
        q.push_str(&format!(" after:{}", previous_day(date_part(since))));
    }
    if let Some(until) = &request.until {
        q.push_str(&format!(" before:{}", next_day(date_part(until))));
    }
    q
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
    fn date_modifiers_are_widened_by_a_day() {
        assert_eq!(previous_day("2025-03-01"), "2025-02-28");
        assert_eq!(next_day("2025-12-31"), "2026-01-01");
    }
}
