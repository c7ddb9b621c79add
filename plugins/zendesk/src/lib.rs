//! Zendesk Support: tickets, through the Search API
//! (`GET https://{subdomain}.zendesk.com/api/v2/search.json?query=type:ticket ...`),
//! the subdomain being the connection's `subdomain` setting.
//!
//! Zendesk's search needs every word of a query and has no `OR`, so a long
//! question would find nothing: the connector sends a few narrower queries
//! in one batch (the most specific terms, two by two) and merges their
//! answers, each ranked by Zendesk's relevance. The time range goes in as
//! `updated>` / `updated<` with ISO 8601 times (Zendesk has no `>=`).
//! Citations are the agent's ticket page,
//! `https://{subdomain}.zendesk.com/agent/tickets/{id}`: the result's `url`
//! is the API's.

use quarry_connector_sdk::plan::{narrower_queries, search_all};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::{from_unix, to_unix};

/// Queries one question may cost.
const MAX_QUERIES: usize = 3;

struct Zendesk;

impl Connector for Zendesk {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let subdomain = subdomain(request.required_setting("subdomain")?)?;
        let api = format!("https://{subdomain}.zendesk.com/api/v2/search.json");
        let want = request.max_results.clamp(1, 100) as usize;
        let searches = queries(&request)
            .iter()
            .map(|query| {
                let url = Url::new(&api)
                    .param("query", query)
                    .param("per_page", want)
                    .build();
                Request::get(url)
            })
            .collect();
        let tickets = search_all(
            searches,
            |response| {
                let body: Value = response.error_for_status()?.json()?;
                Ok(body.array_at("/results").to_vec())
            },
            |ticket| ticket.id_at("/id"),
            want,
        )?;
        Ok(tickets
            .iter()
            .filter(|t| t.str_at("/result_type").is_none_or(|r| r == "ticket"))
            .filter(|t| request.in_time_range(t.str_at("/updated_at")))
            .filter_map(|t| to_document(t, &subdomain))
            .collect())
    }
}

/// `acme`, from `acme`, `acme.zendesk.com` or `https://acme.zendesk.com/`.
fn subdomain(setting: &str) -> Result<String, SearchError> {
    quarry_connector_sdk::url::tenant_name(setting, ".zendesk.com").ok_or_else(|| {
        SearchError::InvalidRequest(format!(
            "the subdomain setting {setting:?} is not a Zendesk subdomain"
        ))
    })
}

/// `type:ticket terms "phrases" updated>... updated<...`, one per narrower
/// set of terms (the question as typed when it has none).
fn queries(request: &SearchRequest) -> Vec<String> {
    let mut bounds = String::new();
    if let Some(since) = request.since.as_deref().and_then(to_unix) {
        bounds.push_str(&format!(" updated>{}", from_unix(since - 1)));
    }
    if let Some(until) = request.until.as_deref().and_then(to_unix) {
        bounds.push_str(&format!(" updated<{}", from_unix(until + 1)));
    }
    narrower_queries(request, MAX_QUERIES)
        .into_iter()
        .map(|words| format!("type:ticket {words}{bounds}"))
        .collect()
}

fn to_document(ticket: &Value, subdomain: &str) -> Option<Document> {
    let id = ticket.i64_at("/id")?;
    let author = ticket
        .str_at("/via/source/from/name")
        .or_else(|| ticket.str_at("/via/source/from/address"));
    Some(
        Document::new(
            id.to_string(),
            ticket.string_at("/subject"),
            ticket.string_at("/description"),
            format!("https://{subdomain}.zendesk.com/agent/tickets/{id}"),
        )
        .author(author)
        .times(ticket.str_at("/created_at"), ticket.str_at("/updated_at"))
        .metadata(json!({
            "status": ticket.str_at("/status"),
            "priority": ticket.str_at("/priority"),
            "type": ticket.str_at("/type"),
            "tags": ticket.array_at("/tags"),
            "requester_id": ticket.i64_at("/requester_id"),
            "channel": ticket.str_at("/via/channel"),
        })),
    )
}

quarry_connector_sdk::export!(Zendesk);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_ticket() {
        let ticket: Value = serde_json::from_str(r#"{"url":"https://acme.zendesk.com/api/v2/tickets/4021.json","id":4021,"via":{"channel":"email","source":{"from":{"address":"dana@bluebird-cafe.example","name":"Dana Whitfield"},"to":{"address":"support@acme.zendesk.com"}}},"created_at":"2025-05-02T10:11:12Z","updated_at":"2025-05-06T08:00:00Z","type":"problem","subject":"Checkout spins forever","description":"We ordered 60 bags and the pay button never finished.","priority":"high","status":"solved","requester_id":381274,"tags":["checkout","jira_acme_113"],"result_type":"ticket"}"#).unwrap();
        let doc = to_document(&ticket, "acme").unwrap();
        assert_eq!(doc.id, "4021");
        assert_eq!(doc.url, "https://acme.zendesk.com/agent/tickets/4021");
        assert_eq!(doc.title, "Checkout spins forever");
        assert_eq!(
            doc.content,
            "We ordered 60 bags and the pay button never finished."
        );
        assert_eq!(doc.author.as_deref(), Some("Dana Whitfield"));
        assert_eq!(doc.updated_at.as_deref(), Some("2025-05-06T08:00:00Z"));
        assert!(doc.metadata.contains("\"status\":\"solved\""));
    }

    #[test]
    fn reads_the_subdomain_setting() {
        assert_eq!(subdomain("acme").unwrap(), "acme");
        assert_eq!(subdomain("https://Acme.zendesk.com/").unwrap(), "acme");
        assert!(subdomain("evil.example/x").is_err());
        assert!(subdomain("").is_err());
    }

    #[test]
    fn builds_the_query() {
        let request = SearchRequest::new("x", &["refund", "currency"], &[])
            .between(Some("2025-08-01T00:00:00Z"), None);
        assert_eq!(
            queries(&request),
            [
                "type:ticket refund currency updated>2025-07-31T23:59:59Z",
                "type:ticket refund updated>2025-07-31T23:59:59Z",
                "type:ticket currency updated>2025-07-31T23:59:59Z",
            ]
        );
    }
}
