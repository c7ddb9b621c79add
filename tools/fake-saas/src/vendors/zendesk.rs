//! Zendesk Support on acme.zendesk.com: `GET /api/v2/search.json` (`query` with words,
//! `"phrases"`, `type:`, `status:`, `priority:`, `ticket_type:`, `tags:`, `subject:`,
//! `requester:`, `organization:` and `created`/`updated` with `:`, `>`, `<`, `>=`, `<=`
//! on dates or ISO 8601 times; `page`/`per_page` offset paging that ends at 1000 results
//! with a 422; `sort_by`/`sort_order`), `GET /api/v2/tickets/{id}.json`, and OAuth
//! (`/oauth/authorizations/new`, `POST /oauth/tokens`, `GET
//! /api/v2/oauth/tokens/current.json`, `DELETE /api/v2/oauth/tokens/{id}.json`).

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::{auth, note_page, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, ZENDESK_SUBDOMAIN, ZendeskTicket};
use crate::http::{self, Req};
use crate::search::{self, Query, qualifier, split_words};
use crate::time::{self, Range};
use crate::tokens::Vendor;

fn base() -> String {
    format!("https://{ZENDESK_SUBDOMAIN}.zendesk.com")
}

fn unauthorized() -> Response {
    http::json(
        401,
        &json!({"error": "invalid_token", "error_description": "The access token provided is expired, revoked, malformed or invalid for other reasons."}),
    )
}

/// Zendesk's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    let (error, description) = match status {
        401 => return unauthorized(),
        403 => (
            "Forbidden",
            "You do not have access to this page. Please contact the account owner of this help desk for further help.",
        ),
        404 => ("RecordNotFound", "Not found"),
        422 => ("InvalidValue", "Invalid search"),
        429 => (
            "APIRateLimitExceeded",
            "Number of allowed API requests per minute exceeded",
        ),
        503 => ("ServiceUnavailable", "Zendesk is temporarily unavailable"),
        s => (
            "InternalError",
            http::status(s).canonical_reason().unwrap_or("error"),
        ),
    };
    http::json(status, &json!({"error": error, "description": description}))
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let token = req.bearer().unwrap_or_default();
    if auth(shared, Vendor::Zendesk, req).user().is_none() {
        return unauthorized();
    }
    let segs = req.segments();
    match (&req.method, segs.as_slice()) {
        (&Method::GET, ["api", "v2", "search.json"]) => search(req),
        (&Method::GET, ["api", "v2", "tickets", id]) => {
            let id = id.trim_end_matches(".json");
            match dataset::zendesk_tickets()
                .iter()
                .find(|t| t.id.to_string() == id)
            {
                Some(t) => http::json(200, &json!({ "ticket": ticket_json(t) })),
                None => error(404),
            }
        }
        (&Method::GET, ["api", "v2", "oauth", "tokens", "current.json"]) => http::json(
            200,
            &json!({"token": {
                "id": token_id(&token),
                "url": format!("{}/api/v2/oauth/tokens/{}.json", base(), token_id(&token)),
                "token": format!("{}...", token.chars().take(10).collect::<String>()),
                "scopes": Vendor::Zendesk.default_scope().split(' ').collect::<Vec<_>>(),
            }}),
        ),
        (&Method::DELETE, ["api", "v2", "oauth", "tokens", id]) => {
            if id.trim_end_matches(".json") == token_id(&token).to_string() {
                shared.tokens().revoke(Vendor::Zendesk, &token);
                http::empty(204)
            } else {
                error(404)
            }
        }
        _ => error(404),
    }
}

/// The numeric id Zendesk gives an OAuth token.
fn token_id(token: &str) -> u64 {
    900_000_000 + dataset::fnv(token) % 100_000_000
}

/// A parsed `query`.
#[derive(Default)]
struct Search {
    terms: Query,
    /// `type:` given and not `ticket`: nothing matches (only tickets are played).
    other_type: bool,
    created: Range,
    updated: Range,
    exact: Vec<(bool, String, String)>,
}

fn parse_query(q: &str) -> Result<Search, String> {
    let mut s = Search::default();
    let mut words = Vec::new();
    for w in split_words(q) {
        // `updated>2025-01-01`, `created<=...`
        let cmp = ["created", "updated"].iter().find_map(|f| {
            let rest = w.strip_prefix(f)?;
            let (op, value) = [">=", "<=", ">", "<", ":"]
                .iter()
                .find_map(|op| rest.strip_prefix(op).map(|v| (*op, v)))?;
            Some((*f, op, value))
        });
        if let Some((field, op, value)) = cmp {
            let at = time::parse(value).ok_or_else(|| format!("bad time {value}"))?;
            let op = if op == ":" { "=" } else { op };
            let r = Range::from_op(op, at).ok_or("bad operator")?;
            if field == "created" {
                s.created.intersect(r);
            } else {
                s.updated.intersect(r);
            }
            continue;
        }
        match qualifier(&w) {
            Some((neg, name, value)) => match name.as_str() {
                "type" => s.other_type |= !neg && !value.eq_ignore_ascii_case("ticket"),
                "status" | "priority" | "ticket_type" | "tags" | "tag" | "subject"
                | "requester" | "organization" | "description" | "assignee" => {
                    s.exact.push((neg, name, value.to_lowercase()));
                }
                other => return Err(format!("unknown field {other}")),
            },
            None if w.starts_with('-') && w.len() > 1 => {}
            None => words.push(w),
        }
    }
    s.terms = search::declared("zendesk")
        .parse(&words.join(" "))
        .map_err(|e| format!("{e:?}"))?;
    Ok(s)
}

fn keep(s: &Search, t: &ZendeskTicket) -> bool {
    if s.other_type || !s.created.contains(t.created_unix) || !s.updated.contains(t.updated_unix) {
        return false;
    }
    s.exact.iter().all(|(neg, name, value)| {
        let hit = match name.as_str() {
            "status" => t.status == *value,
            "priority" => t.priority == *value,
            "ticket_type" => t.ticket_type == *value,
            "tags" | "tag" => t.tags.iter().any(|x| x == value),
            "subject" | "description" => {
                let engine = search::declared("zendesk");
                let text = if name == "subject" {
                    &t.subject
                } else {
                    &t.description
                };
                engine.matches_text(&engine.parse(value).unwrap_or_default(), text)
            }
            "requester" => {
                t.requester_email.to_lowercase().contains(value.as_str())
                    || t.requester_name.to_lowercase().contains(value.as_str())
            }
            "organization" => t
                .organization_id
                .and_then(dataset::zendesk_organization_name)
                .is_some_and(|o| o.to_lowercase().contains(value.as_str())),
            "assignee" => value == "emma" || value.contains("dubois"),
            _ => false,
        };
        hit != *neg
    })
}

fn search(req: &Req) -> Response {
    let Some(query) = req.param("query").filter(|q| !q.trim().is_empty()) else {
        return http::json(
            400,
            &json!({"error": "InvalidValue", "description": "query parameter is required"}),
        );
    };
    let parsed = match parse_query(&query) {
        Ok(p) => p,
        Err(e) => {
            return http::json(
                400,
                &json!({"error": "InvalidValue", "description": format!("Invalid search: {e}")}),
            );
        }
    };
    let num = |name: &str, default: usize| -> Result<usize, String> {
        match req.param(name).filter(|v| !v.is_empty()) {
            None => Ok(default),
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("{name} must be a positive integer")),
        }
    };
    let (page, per_page) = match (num("page", 1), num("per_page", 100)) {
        (Ok(p), Ok(n)) => (p, req.page_size(n.min(100))),
        (Err(e), _) | (_, Err(e)) => {
            return http::json(400, &json!({"error": "InvalidValue", "description": e}));
        }
    };
    if (page - 1) * per_page >= 1000 {
        return http::json(
            422,
            &json!({"error": "InvalidValue", "description": "Invalid search: Requested response size was greater than Search Response Limits"}),
        );
    }
    let ascending = req.param("sort_order").as_deref() == Some("asc");
    let sort_by = req.param("sort_by").filter(|s| !s.is_empty());
    let by_created = sort_by.as_deref() == Some("created_at");
    let tickets = dataset::zendesk_tickets();
    let engine = search::declared("zendesk");
    let hits = ranked(
        dataset::zendesk_docs(),
        engine,
        &parsed.terms,
        sort_as(engine, sort_by.is_some().then_some(ascending)),
        |i| keep(&parsed, &tickets[i]),
        |i| {
            if by_created {
                tickets[i].created_unix
            } else {
                tickets[i].updated_unix
            }
        },
    );
    let start = (page - 1) * per_page;
    let results: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(per_page)
        .map(|hit| {
            let mut t = ticket_json(&tickets[hit.index]);
            t["result_type"] = json!("ticket");
            t
        })
        .collect();
    let page_url = |p: usize| {
        http::with_query(
            &format!("{}/api/v2/search.json", base()),
            &[
                ("page", &p.to_string()),
                ("per_page", &per_page.to_string()),
                ("query", &query),
            ],
        )
    };
    let next = (start + per_page < hits.len()).then(|| page_url(page + 1));
    let previous = (page > 1).then(|| page_url(page - 1));
    let mut answer = http::json(
        200,
        &json!({
            "results": results,
            "facets": null,
            "next_page": next,
            "previous_page": previous,
            "count": hits.len(),
        }),
    );
    note_page(&mut answer, tickets, hits.iter().skip(start).take(per_page));
    answer
}

fn ticket_json(t: &ZendeskTicket) -> Value {
    json!({
        "url": format!("{}/api/v2/tickets/{}.json", base(), t.id),
        "id": t.id,
        "external_id": null,
        "via": {
            "channel": "email",
            "source": {
                "from": {"address": t.requester_email, "name": t.requester_name},
                "to": {"name": "Acme Support", "address": format!("support@{ZENDESK_SUBDOMAIN}.zendesk.com")},
                "rel": null,
            },
        },
        "created_at": t.created_at,
        "updated_at": t.updated_at,
        "generated_timestamp": t.updated_unix,
        "type": t.ticket_type,
        "subject": t.subject,
        "raw_subject": t.subject,
        "description": t.description,
        "priority": t.priority,
        "status": t.status,
        "recipient": format!("support@{ZENDESK_SUBDOMAIN}.zendesk.com"),
        "requester_id": t.requester_id,
        "submitter_id": t.requester_id,
        "assignee_id": t.assignee_id,
        "organization_id": t.organization_id,
        "group_id": 360_012_345_678u64,
        "collaborator_ids": [],
        "follower_ids": [],
        "email_cc_ids": [],
        "forum_topic_id": null,
        "problem_id": null,
        "has_incidents": false,
        "is_public": true,
        "due_at": null,
        "tags": t.tags,
        "custom_fields": [],
        "satisfaction_rating": null,
        "sharing_agreement_ids": [],
        "custom_status_id": if t.status == "solved" { 360_000_004u64 } else { 360_000_002 },
        "fields": [],
        "followup_ids": [],
        "ticket_form_id": 360_000_100_200u64,
        "brand_id": 360_000_300_400u64,
        "allow_channelback": false,
        "allow_attachments": true,
        "from_messaging_channel": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_search_queries() {
        let s =
            parse_query("type:ticket refund currency updated>2025-07-31T23:59:59Z -status:open")
                .unwrap();
        assert!(!s.other_type);
        assert_eq!(
            s.terms,
            search::declared("zendesk")
                .parse("refund currency")
                .unwrap()
        );
        assert_eq!(
            s.updated.lo,
            time::parse("2025-07-31T23:59:59Z").unwrap().end
        );
        assert_eq!(s.exact, vec![(true, "status".into(), "open".into())]);
        assert!(parse_query("type:user x").unwrap().other_type);
        assert!(parse_query("updated>someday").is_err());
    }
}
