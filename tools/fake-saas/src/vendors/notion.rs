//! Notion: `POST /v1/search` (titles only), `GET /v1/blocks/{id}/children`,
//! `GET /v1/pages/{id}`, `GET /v1/users/me`, OAuth and `POST /v1/oauth/revoke`.

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::{auth, oauth, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, NotionBlock, NotionPage};
use crate::http::{self, Req};
use crate::search;
use crate::tokens::Vendor;

fn err(status: u16, code: &str, message: &str) -> Response {
    http::json(
        status,
        &json!({"object": "error", "status": status, "code": code, "message": message, "request_id": http::request_id()}),
    )
}

/// Notion's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => err(400, "validation_error", "body failed validation."),
        401 => err(401, "unauthorized", "API token is invalid."),
        403 => err(
            403,
            "restricted_resource",
            "API token does not have access to this resource.",
        ),
        404 => err(404, "object_not_found", "Could not find object."),
        409 => err(
            409,
            "conflict_error",
            "Conflict occurred while saving. Please try again.",
        ),
        429 => err(
            429,
            "rate_limited",
            "You have been rate limited. Please try again in a few minutes.",
        ),
        500 => err(500, "internal_server_error", "Unexpected error occurred."),
        502 => err(
            502,
            "bad_gateway",
            "Notion encountered an issue while attempting to complete this request. Please try again.",
        ),
        503 => err(
            503,
            "service_unavailable",
            "Notion is unavailable, try again later.",
        ),
        504 => err(
            504,
            "gateway_timeout",
            "Notion timed out while attempting to complete this request. Please try again later.",
        ),
        529 => err(
            529,
            "service_overload",
            "Notion is overloaded, try again later.",
        ),
        s => err(s, "internal_server_error", "Unexpected error occurred."),
    }
}

/// Notion's 400 for a parameter that fails validation, in its words:
/// "`place` failed validation: `place`.`field` should be `expected`, instead was `got`."
fn invalid(place: &str, field: &str, expected: &str, got: impl std::fmt::Display) -> Response {
    err(
        400,
        "validation_error",
        &format!(
            "{place} failed validation: {place}.{field} should be {expected}, instead was `{got}`."
        ),
    )
}

/// What Notion says a `page_size` should be.
const PAGE_SIZES: &str = "a number between 1 and 100";

fn invalid_url() -> Response {
    err(400, "invalid_request_url", "Invalid request URL.")
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    if (&req.method, path) == (&Method::POST, "/v1/oauth/revoke") {
        return revoke(shared, req);
    }
    if !path.starts_with("/v1/") {
        return invalid_url();
    }
    if auth(shared, Vendor::Notion, req).user().is_none() {
        return err(401, "unauthorized", "API token is invalid.");
    }
    let Some(version) = req.header("notion-version").map(str::to_string) else {
        return err(
            400,
            "missing_version",
            "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.",
        );
    };
    if crate::time::parse(&version).is_none() || version.len() != 10 {
        return err(
            400,
            "validation_error",
            &format!(
                "Notion-Version header failed validation: {version} is not a valid API version."
            ),
        );
    }
    let new_api = version.as_str() >= "2025-09-03";
    let segs: Vec<&str> = path.trim_start_matches("/v1/").split('/').collect();
    match (&req.method, segs.as_slice()) {
        (&Method::POST, ["search"]) => search(req, new_api),
        (&Method::GET, ["blocks", id, "children"]) => children(req, id),
        (&Method::GET, ["pages", id]) => match find_page(id) {
            Some(p) => http::json(200, &page_json(p)),
            None => not_found(id, "page"),
        },
        (&Method::GET, ["users", "me"]) => http::json(
            200,
            &json!({
                "object": "user",
                "id": dataset::uuid("notion-bot:quarry"),
                "name": "Quarry",
                "avatar_url": null,
                "type": "bot",
                "bot": {
                    "owner": {"type": "workspace", "workspace": true},
                    "workspace_name": "Acme",
                },
                "request_id": http::request_id(),
            }),
        ),
        _ => invalid_url(),
    }
}

fn revoke(shared: &Shared, req: &Req) -> Response {
    let Some(token) = req
        .json()
        .ok()
        .and_then(|v| v.get("token").and_then(Value::as_str).map(str::to_string))
        .or_else(|| oauth::token_to_revoke(req, "token"))
    else {
        return invalid("body", "token", "defined", "undefined");
    };
    if shared.tokens().revoke(Vendor::Notion, &token) {
        http::json(200, &json!({"request_id": http::request_id()}))
    } else {
        err(400, "validation_error", "Invalid token.")
    }
}

fn not_found(id: &str, what: &str) -> Response {
    err(
        404,
        "object_not_found",
        &format!(
            "Could not find {what} with ID: {id}. Make sure the relevant pages and databases are shared with your integration."
        ),
    )
}

/// Normalizes a Notion id (with or without dashes) to the dashed form.
fn normalize_id(id: &str) -> Option<String> {
    let hex: String = id
        .chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

fn find_page(id: &str) -> Option<&'static NotionPage> {
    let id = normalize_id(id)?;
    dataset::notion_pages().iter().find(|p| p.id == id)
}

fn search(req: &Req, new_api: bool) -> Response {
    let body: Value = if req.body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match req.json() {
            Ok(v) if v.is_object() => v,
            Ok(_) => {
                return err(
                    400,
                    "validation_error",
                    "body failed validation: body should be an object.",
                );
            }
            Err(_) => return err(400, "invalid_json", "Error parsing JSON body."),
        }
    };
    let query = match body.get("query") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return invalid("body", "query", "a string", other),
    };
    let page_size = match body.get("page_size") {
        None | Some(Value::Null) => 100,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=100).contains(&n) => n as usize,
            _ => return invalid("body", "page_size", PAGE_SIZES, v),
        },
    };
    let page_size = req.page_size(page_size);
    let mut no_results = false;
    if let Some(f) = body.get("filter").filter(|f| !f.is_null()) {
        let value = f.get("value").and_then(Value::as_str).unwrap_or("");
        let prop = f.get("property").and_then(Value::as_str).unwrap_or("");
        let allowed: &[&str] = if new_api {
            &["page", "data_source"]
        } else {
            &["page", "database"]
        };
        if prop != "object" || !allowed.contains(&value) {
            let expected = format!("`{}`", allowed.join("` or `"));
            return invalid("body", "filter.value", &expected, value);
        }
        no_results = value != "page";
    }
    let mut asked_sort = None;
    if let Some(s) = body.get("sort").filter(|s| !s.is_null()) {
        let ts = s.get("timestamp").and_then(Value::as_str).unwrap_or("");
        let dir = s.get("direction").and_then(Value::as_str).unwrap_or("");
        if ts != "last_edited_time" || !(dir == "ascending" || dir == "descending") {
            return err(
                400,
                "validation_error",
                "body failed validation: body.sort.timestamp should be `\"last_edited_time\"` and body.sort.direction should be `\"ascending\"` or `\"descending\"`.",
            );
        }
        asked_sort = Some(dir == "ascending");
    }
    let engine = search::declared("notion");
    let q = engine.parse(&query).unwrap_or_default();
    let pages = dataset::notion_pages();
    let hits: Vec<usize> = if no_results {
        Vec::new()
    } else {
        ranked(
            &dataset::docs().notion,
            engine,
            &q,
            sort_as(engine, asked_sort),
            |_| true,
            |i| pages[i].updated_unix,
        )
        .into_iter()
        .map(|hit| hit.index)
        .collect()
    };
    let start = match body.get("start_cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => {
            match normalize_id(c).and_then(|id| hits.iter().position(|i| pages[*i].id == id)) {
                Some(p) => p,
                None => {
                    return invalid("body", "start_cursor", "a valid cursor", format!("\"{c}\""));
                }
            }
        }
        Some(other) => return invalid("body", "start_cursor", "a string", other),
    };
    let slice: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(page_size)
        .map(|i| page_json(&pages[*i]))
        .collect();
    let next = hits.get(start + page_size).map(|i| pages[*i].id.clone());
    let kind = if new_api {
        "page_or_data_source"
    } else {
        "page_or_database"
    };
    let mut out = json!({
        "object": "list",
        "results": slice,
        "next_cursor": next,
        "has_more": next.is_some(),
        "type": kind,
        "request_id": http::request_id(),
    });
    out[kind] = json!({});
    let mut answer = http::json(200, &out);
    let page = hits.iter().skip(start).take(page_size);
    http::note_returned(&mut answer, page.map(|i| pages[*i].url.as_str()));
    answer
}

fn rich_text(text: &str, href: Option<&str>) -> Value {
    json!([{
        "type": "text",
        "text": {"content": text, "link": href.map(|u| json!({"url": u}))},
        "annotations": {"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
        "plain_text": text,
        "href": href,
    }])
}

fn user(id: &str) -> Value {
    json!({"object": "user", "id": id})
}

/// Who wrote a page and when: a page and each of its blocks say the same.
fn add_authorship(v: &mut Value, p: &NotionPage) {
    v["created_time"] = json!(p.created_time);
    v["last_edited_time"] = json!(p.last_edited_time);
    v["created_by"] = user(&p.created_by);
    v["last_edited_by"] = user(&p.last_edited_by);
}

pub(crate) fn page_json(p: &NotionPage) -> Value {
    let mut v = json!({
        "object": "page",
        "id": p.id,
        "cover": null,
        "icon": null,
        "parent": {"type": "workspace", "workspace": true},
        "archived": false,
        "in_trash": false,
        "properties": {
            "title": {"id": "title", "type": "title", "title": rich_text(&p.title, None)}
        },
        "url": p.url,
        "public_url": null,
    });
    add_authorship(&mut v, p);
    v
}

fn block_json(p: &NotionPage, b: &NotionBlock) -> Value {
    let mut content =
        json!({"rich_text": rich_text(&b.text, b.href.as_deref()), "color": "default"});
    if b.block_type == "heading_2" {
        content["is_toggleable"] = json!(false);
    }
    let mut v = json!({
        "object": "block",
        "id": b.id,
        "parent": {"type": "page_id", "page_id": p.id},
        "has_children": false,
        "archived": false,
        "in_trash": false,
        "type": b.block_type,
    });
    v[b.block_type.as_str()] = content;
    add_authorship(&mut v, p);
    v
}

fn children(req: &Req, id: &str) -> Response {
    let Some(norm) = normalize_id(id) else {
        return invalid("path", "block_id", "a valid uuid", format!("\"{id}\""));
    };
    let pages = dataset::notion_pages();
    let Some(page) = pages.iter().find(|p| p.id == norm) else {
        // A block of a page: blocks have no children.
        if pages.iter().any(|p| p.blocks.iter().any(|b| b.id == norm)) {
            return http::json(
                200,
                &json!({"object": "list", "results": [], "next_cursor": null, "has_more": false, "type": "block", "block": {}, "request_id": http::request_id()}),
            );
        }
        return not_found(&norm, "block");
    };
    let page_size = match req.param("page_size") {
        None => 100,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => return invalid("query", "page_size", PAGE_SIZES, s),
        },
    };
    let start = match req.param("start_cursor").filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => {
            match normalize_id(&c).and_then(|cid| page.blocks.iter().position(|b| b.id == cid)) {
                Some(p) => p,
                None => {
                    return invalid(
                        "query",
                        "start_cursor",
                        "a valid cursor",
                        format!("\"{c}\""),
                    );
                }
            }
        }
    };
    let results: Vec<Value> = page
        .blocks
        .iter()
        .skip(start)
        .take(page_size)
        .map(|b| block_json(page, b))
        .collect();
    let next = page.blocks.get(start + page_size).map(|b| b.id.clone());
    http::json(
        200,
        &json!({
            "object": "list",
            "results": results,
            "next_cursor": next,
            "has_more": next.is_some(),
            "type": "block",
            "block": {},
            "request_id": http::request_id(),
        }),
    )
}
