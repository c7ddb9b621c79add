//! Intercom on api.intercom.io (`POST /conversations/search`, `GET
//! /conversations/{id}` with its parts, `GET /me`, `POST /auth/eagle/token`,
//! `POST /auth/uninstall`) and app.intercom.com (`GET /oauth`).
//!
//! Search takes Intercom's query language: a filter `{field, operator,
//! value}` or a group `{operator: AND|OR, value: [...]}`, groups nested at
//! most two deep with at most 15 entries each. Fields: `source.body`,
//! `source.subject`, `source.author.name`, `source.author.email`, `title`,
//! `id`, `state`, `open`, `created_at`, `updated_at` (Unix seconds);
//! operators `=`, `!=`, `IN`, `NIN`, `<`, `>` (strict), `~` and `!~`
//! (contains, on whole words with the fake's shared semantics), `^`, `$`.
//! Results matching more `~` values come first, then the `sort` order
//! (`updated_at` descending by default). Pages: `pagination: {per_page
//! (max 150), starting_after}`, the next cursor in `pages.next`.

use axum::http::Method;
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};

use super::{array_at_most, auth, note_page, sort_as};
use crate::Shared;
use crate::dataset::{self, INTERCOM_ADMIN_ID, INTERCOM_APP_ID, IntercomConversation};
use crate::http::{self, Req};
use crate::search::{self, Query, sort_hits};
use crate::tokens::{Auth, Vendor};

fn err(status: u16, code: &str, message: &str) -> Response {
    http::json(
        status,
        &json!({
            "type": "error.list",
            "request_id": http::request_id(),
            "errors": [{"code": code, "message": message}],
        }),
    )
}

fn unauthorized() -> Response {
    err(401, "unauthorized", "Access Token Invalid")
}

/// Intercom's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => err(400, "parameter_invalid", "Invalid query"),
        401 => unauthorized(),
        403 => err(403, "forbidden", "Access to this resource is forbidden"),
        404 => err(404, "not_found", "Resource Not Found"),
        429 => {
            let mut r = err(
                429,
                "rate_limit_exceeded",
                "Exceeded rate limit of 10000 in 10_seconds",
            );
            http::set(&mut r, "x-ratelimit-limit", "10000");
            http::set(&mut r, "x-ratelimit-remaining", "0");
            http::set(
                &mut r,
                "x-ratelimit-reset",
                (crate::time::now_unix() + 10).to_string(),
            );
            r
        }
        503 => err(
            503,
            "service_unavailable",
            "Sorry, the API service is temporarily unavailable",
        ),
        s => err(s, "server_error", "Server Error"),
    }
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    if !matches!(auth(shared, Vendor::Intercom, req), Auth::Ok(_)) {
        return unauthorized();
    }
    if let Some(v) = req.header("intercom-version") {
        let known = v == "Unstable"
            || v.split_once('.').is_some_and(|(a, b)| {
                a.parse::<u32>().is_ok_and(|a| a == 1 || a == 2)
                    && b.parse::<u32>().is_ok_and(|b| b <= 14)
            });
        if !known {
            return err(
                400,
                "intercom_version_invalid",
                "The requested version could not be found",
            );
        }
    }
    let segs = req.segments();
    match (&req.method, segs.as_slice()) {
        (&Method::POST, ["auth", "uninstall"]) => {
            if let Some(t) = req.bearer() {
                shared.tokens().revoke(Vendor::Intercom, &t);
            }
            http::json(200, &json!({}))
        }
        (&Method::GET, ["me"]) => http::json(
            200,
            &json!({
                "type": "admin",
                "id": INTERCOM_ADMIN_ID,
                "email": "emma@acme-shop.example",
                "name": "Emma Dubois",
                "email_verified": true,
                "app": {
                    "type": "app",
                    "id_code": INTERCOM_APP_ID,
                    "name": "Acme",
                    "created_at": 1_735_722_000,
                    "secure": true,
                    "identity_verification": false,
                    "timezone": "Europe/Berlin",
                    "region": "US",
                },
                "avatar": {"type": "avatar", "image_url": null},
                "has_inbox_seat": true,
            }),
        ),
        (&Method::POST, ["conversations", "search"]) => search(req),
        (&Method::GET, ["conversations", id]) => {
            match dataset::intercom_conversations()
                .iter()
                .find(|c| c.id == *id)
            {
                Some(c) => http::json(200, &conversation_json(c, true)),
                None => err(404, "conversation_not_found", "Conversation Not Found"),
            }
        }
        _ => err(404, "not_found", "Resource Not Found"),
    }
}

/// One filter of a query.
#[derive(Debug)]
enum Filter {
    Leaf {
        field: String,
        op: String,
        value: Value,
    },
    Group {
        and: bool,
        items: Vec<Filter>,
    },
}

const FIELDS: &[&str] = &[
    "source.body",
    "source.subject",
    "source.author.name",
    "source.author.email",
    "title",
    "id",
    "state",
    "open",
    "created_at",
    "updated_at",
];

fn parse_filter(v: &Value, depth: usize) -> Result<Filter, String> {
    let op = v
        .get("operator")
        .and_then(Value::as_str)
        .ok_or("operator is required")?;
    if let Some(field) = v.get("field") {
        let field = field.as_str().ok_or("field must be a string")?;
        if !FIELDS.contains(&field) {
            return Err(format!("{field} is not a searchable field"));
        }
        if !["=", "!=", "IN", "NIN", "<", ">", "~", "!~", "^", "$"].contains(&op) {
            return Err(format!("operator {op} is not supported"));
        }
        let value = v.get("value").cloned().ok_or("value is required")?;
        return Ok(Filter::Leaf {
            field: field.to_string(),
            op: op.to_string(),
            value,
        });
    }
    let and = match op {
        "AND" => true,
        "OR" => false,
        other => return Err(format!("operator {other} is not a group operator")),
    };
    if depth >= 3 {
        return Err("queries can be nested at most two levels deep".into());
    }
    let items = array_at_most(
        v,
        "value",
        15,
        "a group needs a value array",
        "a group holds at most 15 filters",
    )?;
    Ok(Filter::Group {
        and,
        items: items
            .iter()
            .map(|i| parse_filter(i, depth + 1))
            .collect::<Result<_, _>>()?,
    })
}

fn field_text(c: &IntercomConversation, field: &str) -> Option<String> {
    Some(match field {
        "source.body" => c.body_text.clone(),
        "source.subject" => c.subject.clone(),
        "source.author.name" => c.author_name.clone(),
        "source.author.email" => c.author_email.clone(),
        "title" => c.title.clone()?,
        "id" => c.id.clone(),
        "state" => c.state.clone(),
        "open" => (c.state == "open").to_string(),
        "created_at" => c.created_unix.to_string(),
        _ => c.updated_unix.to_string(),
    })
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How Intercom reads the value of a `~` (contains) filter: its words,
/// consecutive.
fn contains_query(value: &str) -> Query {
    search::declared("intercom")
        .parse(&format!("\"{}\"", value.replace('"', "")))
        .unwrap_or_default()
}

/// Whether `text` holds `value` as Intercom's `~` matches.
fn contains(text: &str, value: &str) -> bool {
    let q = contains_query(value);
    !q.is_empty() && search::declared("intercom").matches_text(&q, text)
}

fn matches(f: &Filter, c: &IntercomConversation) -> bool {
    match f {
        Filter::Group { and: true, items } => items.iter().all(|i| matches(i, c)),
        Filter::Group { and: false, items } => items.iter().any(|i| matches(i, c)),
        Filter::Leaf { field, op, value } => {
            let Some(actual) = field_text(c, field) else {
                return op == "!=" || op == "NIN" || op == "!~";
            };
            let wanted = as_text(value);
            let number = |s: &str| s.parse::<f64>().ok();
            match op.as_str() {
                "=" => actual.eq_ignore_ascii_case(&wanted),
                "!=" => !actual.eq_ignore_ascii_case(&wanted),
                "IN" | "NIN" => {
                    let list: Vec<String> = value
                        .as_array()
                        .map(|a| a.iter().map(as_text).collect())
                        .unwrap_or_default();
                    list.iter().any(|v| v.eq_ignore_ascii_case(&actual)) == (op == "IN")
                }
                "<" | ">" => match (number(&actual), number(&wanted)) {
                    (Some(a), Some(w)) => {
                        if op == "<" {
                            a < w
                        } else {
                            a > w
                        }
                    }
                    _ => false,
                },
                "~" => contains(&actual, &wanted),
                "!~" => !contains(&actual, &wanted),
                "^" => actual.to_lowercase().starts_with(&wanted.to_lowercase()),
                _ => actual.to_lowercase().ends_with(&wanted.to_lowercase()),
            }
        }
    }
}

/// The values of the `~` filters (they rank the results).
fn contains_values(f: &Filter, out: &mut Vec<String>) {
    match f {
        Filter::Group { items, .. } => items.iter().for_each(|i| contains_values(i, out)),
        Filter::Leaf { op, value, .. } if op == "~" => out.push(as_text(value)),
        Filter::Leaf { .. } => {}
    }
}

fn cursor(offset: usize) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("[{offset}]"))
}

fn offset_of(cursor: &str) -> Option<usize> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(cursor)
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    text.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

fn search(req: &Req) -> Response {
    let body: Value = match req.json() {
        Ok(v) if v.is_object() => v,
        _ => return err(400, "parameter_invalid", "Body is not valid JSON"),
    };
    let Some(query) = body.get("query") else {
        return err(400, "parameter_not_found", "query is required");
    };
    let filter = match parse_filter(query, 1) {
        Ok(f) => f,
        Err(e) => return err(400, "parameter_invalid", &e),
    };
    let per_page = match body.pointer("/pagination/per_page") {
        None | Some(Value::Null) => 20,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=150).contains(&n) => n as usize,
            _ => {
                return err(
                    400,
                    "parameter_invalid",
                    "per_page must be between 1 and 150",
                );
            }
        },
    };
    let per_page = req.page_size(per_page);
    let start = match body.pointer("/pagination/starting_after") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => match offset_of(c) {
            Some(o) => o,
            None => {
                return err(
                    400,
                    "parameter_invalid",
                    "starting_after is not a valid cursor",
                );
            }
        },
        Some(_) => return err(400, "parameter_invalid", "starting_after must be a string"),
    };
    let sort_field = body
        .pointer("/sort/field")
        .and_then(Value::as_str)
        .unwrap_or("updated_at");
    let ascending = body.pointer("/sort/order").and_then(Value::as_str) == Some("ascending");
    let mut values = Vec::new();
    contains_values(&filter, &mut values);
    let rank_query = Query::any_of(values.iter().map(|v| contains_query(v)));
    let all = dataset::intercom_conversations();
    let engine = search::declared("intercom");
    let mut hits =
        dataset::intercom_docs().scored(engine, &rank_query, |i| matches(&filter, &all[i]));
    let asked = body.pointer("/sort/field").is_some();
    sort_hits(
        &mut hits,
        sort_as(engine, asked.then_some(ascending)),
        |i| {
            if sort_field == "created_at" {
                all[i].created_unix
            } else {
                all[i].updated_unix
            }
        },
    );
    let total = hits.len();
    let conversations: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(per_page)
        .map(|hit| conversation_json(&all[hit.index], false))
        .collect();
    let total_pages = total.div_ceil(per_page).max(1);
    let mut pages = json!({
        "type": "pages",
        "page": start / per_page + 1,
        "per_page": per_page,
        "total_pages": total_pages,
    });
    if start + per_page < total {
        pages["next"] = json!({"per_page": per_page, "starting_after": cursor(start + per_page)});
    }
    let mut answer = http::json(
        200,
        &json!({
            "type": "conversation.list",
            "pages": pages,
            "total_count": total,
            "conversations": conversations,
        }),
    );
    note_page(&mut answer, all, hits.iter().skip(start).take(per_page));
    answer
}

fn conversation_json(c: &IntercomConversation, with_parts: bool) -> Value {
    let admin = json!({"type": "admin", "id": INTERCOM_ADMIN_ID});
    let mut v = json!({
        "type": "conversation",
        "id": c.id,
        "title": c.title,
        "created_at": c.created_unix,
        "updated_at": c.updated_unix,
        "waiting_since": null,
        "snoozed_until": null,
        "open": c.state == "open",
        "state": c.state,
        "read": true,
        "priority": "not_priority",
        "admin_assignee_id": INTERCOM_ADMIN_ID.parse::<u64>().ok(),
        "team_assignee_id": null,
        "tags": {
            "type": "tag.list",
            "tags": c.tags.iter().map(|t| json!({"type": "tag", "id": dataset::uuid(&format!("intercom:tag:{t}"))[..7].to_string(), "name": t})).collect::<Vec<_>>(),
        },
        "conversation_rating": null,
        "source": {
            "type": c.delivered_via,
            "id": (c.id.parse::<u64>().unwrap_or(0) + 1_000_000_000).to_string(),
            "delivered_as": "customer_initiated",
            "subject": c.subject,
            "body": c.body,
            "author": {"type": "user", "id": c.author_id, "name": c.author_name, "email": c.author_email},
            "attachments": [],
            "url": null,
            "redacted": false,
        },
        "contacts": {"type": "contact.list", "contacts": [{"type": "contact", "id": c.author_id, "external_id": null}]},
        "teammates": {"type": "admin.list", "admins": [admin]},
        "custom_attributes": {},
        "sla_applied": null,
        "statistics": null,
        "linked_objects": {"type": "list", "data": [], "total_count": 0, "has_more": false},
    });
    if with_parts {
        let parts: Vec<Value> = c
            .parts
            .iter()
            .map(|p| {
                json!({
                    "type": "conversation_part",
                    "id": p.id,
                    "part_type": p.part_type,
                    "body": if p.body.is_empty() { Value::Null } else { json!(p.body) },
                    "created_at": p.created_unix,
                    "updated_at": p.created_unix,
                    "notified_at": p.created_unix,
                    "assigned_to": null,
                    "author": {"id": p.author_id, "type": p.author_type, "name": p.author_name, "email": p.author_email},
                    "attachments": [],
                    "external_id": null,
                    "redacted": false,
                })
            })
            .collect();
        v["conversation_parts"] = json!({
            "type": "conversation_part.list",
            "conversation_parts": parts,
            "total_count": c.parts.len(),
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_nest_and_match() {
        let q = json!({"operator": "AND", "value": [
            {"operator": "OR", "value": [
                {"field": "source.body", "operator": "~", "value": "charged twice"},
                {"field": "source.body", "operator": "~", "value": "nothing-like-this"},
            ]},
            {"field": "updated_at", "operator": ">", "value": 0},
        ]});
        let f = parse_filter(&q, 1).unwrap();
        let hits = dataset::intercom_conversations()
            .iter()
            .filter(|c| matches(&f, c))
            .count();
        assert!(hits >= 1);
        let too_deep = json!({"operator": "AND", "value": [{"operator": "OR", "value": [{"operator": "AND", "value": []}]}]});
        assert!(parse_filter(&too_deep, 1).is_err());
        assert!(parse_filter(&json!({"field": "nope", "operator": "=", "value": 1}), 1).is_err());
        assert_eq!(offset_of(&cursor(40)), Some(40));
    }
}
