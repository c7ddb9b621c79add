//! Trello on api.trello.com (`GET /1/search` with `modelTypes=cards`,
//! `card_fields`, `cards_limit` up to 1000, `cards_page`, `card_board`,
//! `card_list`, `card_members`, `partial`; `GET /1/cards/{id}`, `GET
//! /1/members/me`, `GET` and `DELETE /1/tokens/{token}`) and trello.com
//! (`GET /1/authorize`, the legacy flow that hands the token to the
//! browser: `return_url#token=...`, or a page showing it).
//!
//! Trello authenticates with the application key and the user's token:
//! `Authorization: OAuth oauth_consumer_key="<key>", oauth_token="<token>"`
//! or `?key=...&token=...`. The fake also takes a bare token as the whole
//! `Authorization` value, so that the seeded `fake-trello-<user>`
//! credentials work as they are stored. Trello's errors are plain text
//! (`invalid token`), its 429 a JSON `API_TOKEN_LIMIT_EXCEEDED`.
//!
//! Search words match cards' names and descriptions with the fake's shared
//! semantics; the operators `board:`, `list:`, `label:` and `is:open`/
//! `is:archived` filter, other `name:value` operators are ignored.

// Parameter checks answer early with the vendor's error response.
#![allow(clippy::result_large_err)]

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{note_page, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, TrelloCard};
use crate::http::{self, Req};
use crate::search::{self, Matching, qualifier, split_words};
use crate::tokens::{Auth, Vendor};

fn text(status: u16, body: &str) -> Response {
    http::raw(status, "text/plain; charset=utf-8", body.to_string())
}

/// Trello's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => text(400, "invalid value for query"),
        401 => text(401, "invalid token"),
        403 => text(403, "unauthorized permission requested"),
        404 => text(404, "The requested resource was not found."),
        429 => http::json(
            429,
            &json!({"error": "API_TOKEN_LIMIT_EXCEEDED", "message": "Rate limit exceeded"}),
        ),
        s => text(s, "Internal Server Error"),
    }
}

/// The token of a request: the OAuth-style header, the query, or a bare
/// header value (fake only). `Err` is Trello's answer when none fits.
fn token_of(req: &Req) -> Result<String, Response> {
    if let Some(header) = req.header("authorization").map(str::trim) {
        if let Some(rest) = header
            .strip_prefix("OAuth ")
            .or_else(|| header.strip_prefix("oauth "))
        {
            let field = |name: &str| -> Option<String> {
                rest.split(',').find_map(|part| {
                    let (k, v) = part.trim().split_once('=')?;
                    (k.trim() == name).then(|| v.trim().trim_matches('"').to_string())
                })
            };
            if field("oauth_consumer_key").is_none_or(|k| k.is_empty()) {
                return Err(text(401, "invalid key"));
            }
            return field("oauth_token")
                .filter(|t| !t.is_empty())
                .ok_or_else(|| text(401, "unauthorized permission requested"));
        }
        if !header.is_empty() && !header.contains(' ') {
            return Ok(header.to_string());
        }
    }
    match (req.param("key"), req.param("token")) {
        (Some(k), Some(t)) if !k.is_empty() && !t.is_empty() => Ok(t),
        (None, _) => Err(text(401, "invalid key")),
        _ => Err(text(401, "unauthorized permission requested")),
    }
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    if req.host == "trello.com" {
        return match (&req.method, path) {
            (&Method::GET, "/1/authorize") => authorize(shared, req),
            _ => text(404, "The requested resource was not found."),
        };
    }
    let token = match token_of(req) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let user = match shared.tokens().check(Vendor::Trello, Some(&token)) {
        Auth::Ok(u) => u,
        Auth::Expired => return text(401, "expired token"),
        _ => return text(401, "invalid token"),
    };
    let segs = req.segments();
    match (&req.method, segs.as_slice()) {
        (&Method::GET, ["1", "search"]) => search(req),
        (&Method::GET, ["1", "members", "me"]) => {
            let person = dataset::people().iter().find(|p| p.slack_username == user);
            match person {
                Some(p) => http::json(200, &member(p)),
                None => http::json(
                    200,
                    &json!({"id": dataset::uuid(&user).replace('-', "")[..24].to_string(), "fullName": user, "username": user}),
                ),
            }
        }
        (&Method::GET, ["1", "tokens", t]) if *t == token => http::json(
            200,
            &json!({
                "id": dataset::uuid(t).replace('-', "")[..24].to_string(),
                "identifier": "Quarry",
                "idMember": user,
                "dateCreated": "2025-01-06T09:00:00.000Z",
                "dateExpires": null,
                "permissions": [{"idModel": "*", "modelType": "Board", "read": true, "write": false}],
            }),
        ),
        (&Method::DELETE, ["1", "tokens", t]) => {
            if shared.tokens().revoke(Vendor::Trello, t) {
                http::json(200, &json!({"_value": null}))
            } else {
                text(404, "token not found")
            }
        }
        (&Method::GET, ["1", "cards", id]) => {
            match dataset::trello_cards()
                .iter()
                .find(|c| c.id == *id || c.short_link == *id)
            {
                Some(c) => http::json(200, &card_json(c, &["all".to_string()], true, true, true)),
                None => text(404, "The requested resource was not found."),
            }
        }
        _ => text(404, "The requested resource was not found."),
    }
}

/// The legacy authorization: the token goes to `return_url` in the
/// fragment, or is shown on a page.
fn authorize(shared: &Shared, req: &Req) -> Response {
    let p = |n: &str| req.param(n).filter(|v| !v.is_empty());
    if p("key").is_none() {
        return text(400, "App not found");
    }
    let scope = p("scope")
        .unwrap_or_else(|| "read".into())
        .replace(',', " ");
    let expires = match p("expiration").as_deref() {
        Some("1hour") => Some(std::time::Duration::from_secs(3600)),
        Some("1day") => Some(std::time::Duration::from_secs(86_400)),
        Some("never") => None,
        _ => Some(Vendor::Trello.default_expiry()),
    };
    let user = p("fake_user").unwrap_or_else(|| "alice".into());
    let pair = shared
        .tokens()
        .issue(Vendor::Trello, &user, expires, &scope, p("key"));
    match p("return_url") {
        Some(url) => http::redirect(&format!("{url}#token={}", pair.access_token)),
        None => http::html(
            200,
            format!(
                "<html><body><p>You have granted access to your Trello information.</p><p>To complete the process, please give this token:</p><pre>{}</pre></body></html>",
                pair.access_token
            ),
        ),
    }
}

fn member(p: &dataset::Person) -> Value {
    let initials: String = p.name.split(' ').filter_map(|w| w.chars().next()).collect();
    json!({
        "id": dataset::trello_member_id(p),
        "fullName": p.name,
        "username": p.slack_username,
        "initials": initials,
        "avatarUrl": null,
    })
}

fn bool_param(req: &Req, name: &str) -> Result<bool, Response> {
    match req.param(name).as_deref() {
        None => Ok(false),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(text(400, &format!("invalid value for {name}"))),
    }
}

fn search(req: &Req) -> Response {
    let query = req.param("query").unwrap_or_default();
    if query.trim().is_empty() || query.len() > 16_384 {
        return text(400, "invalid value for query");
    }
    let model_types = req.param("modelTypes").unwrap_or_else(|| "all".into());
    let wants_cards = model_types
        .split(',')
        .any(|m| m.trim() == "cards" || m.trim() == "all");
    let limit = match req.param("cards_limit") {
        None => 10,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=1000).contains(&n) => n,
            _ => return text(400, "invalid value for cards_limit"),
        },
    };
    let page = match req.param("cards_page") {
        None => 0,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n <= 100 => n,
            _ => return text(400, "invalid value for cards_page"),
        },
    };
    let fields: Vec<String> = req
        .param("card_fields")
        .unwrap_or_else(|| "all".into())
        .split(',')
        .map(|f| f.trim().to_string())
        .collect();
    let (with_board, with_list, with_members, partial) = match (
        bool_param(req, "card_board"),
        bool_param(req, "card_list"),
        bool_param(req, "card_members"),
        bool_param(req, "partial"),
    ) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => return e,
    };
    // Operators filter; the other words are searched.
    let mut words = Vec::new();
    let mut filters: Vec<(bool, String, String)> = Vec::new();
    for w in split_words(&query) {
        match qualifier(&w) {
            Some(q) => filters.push(q),
            None => words.push(w),
        }
    }
    // "partial: When true, Trello searches for words that start with any of
    // the words in your query" (the search reference).
    let declared = search::declared("trello");
    let partial_engine;
    let engine = if partial {
        partial_engine = declared.with_matching(Matching::Prefix, "partial=true");
        &partial_engine
    } else {
        declared
    };
    let q = engine.parse(&words.join(" ")).unwrap_or_default();
    let cards = dataset::trello_cards();
    let keep = |c: &TrelloCard| {
        filters.iter().all(|(neg, name, value)| {
            let v = value.to_lowercase();
            let hit = match name.as_str() {
                "board" => c.board.to_lowercase().contains(&v),
                "list" => c.list.to_lowercase().contains(&v),
                "label" => c
                    .labels
                    .iter()
                    .any(|(n, col)| n.to_lowercase() == v || *col == v),
                "is" => match v.as_str() {
                    "open" => !c.closed,
                    "archived" => c.closed,
                    _ => true,
                },
                _ => true,
            };
            hit != *neg
        })
    };
    let hits = ranked(
        dataset::trello_docs(),
        engine,
        &q,
        sort_as(engine, None),
        |i| keep(&cards[i]),
        |i| cards[i].updated_unix,
    );
    let size = req.page_size(limit);
    let page_cards: Vec<Value> = if wants_cards && !q.is_empty() {
        hits.iter()
            .skip(page * size)
            .take(size)
            .map(|hit| {
                card_json(
                    &cards[hit.index],
                    &fields,
                    with_board,
                    with_list,
                    with_members,
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let terms: Vec<Value> = words.iter().map(|w| json!({"text": w})).collect();
    let mut out = json!({
        "options": {
            "terms": terms,
            "modifiers": filters.iter().map(|(_, n, v)| json!({"text": format!("{n}:{v}")})).collect::<Vec<_>>(),
            "modelTypes": model_types.split(',').map(str::trim).collect::<Vec<_>>(),
            "partial": partial,
        },
    });
    if wants_cards {
        out["cards"] = json!(page_cards);
    }
    let mut answer = http::json(200, &out);
    if wants_cards && !q.is_empty() {
        note_page(&mut answer, cards, hits.iter().skip(page * size).take(size));
    }
    answer
}

fn card_json(
    c: &TrelloCard,
    fields: &[String],
    with_board: bool,
    with_list: bool,
    with_members: bool,
) -> Value {
    let labels: Vec<Value> = c
        .labels
        .iter()
        .map(|(name, color)| {
            json!({
                "id": dataset::uuid(&format!("trello:label:{}:{name}", c.board)).replace('-', "")[..24].to_string(),
                "idBoard": c.board_id,
                "name": name,
                "color": color,
            })
        })
        .collect();
    let all = json!({
        "id": c.id,
        "badges": {"votes": 0, "viewingMemberVoted": false, "subscribed": false, "comments": 0, "attachments": 0, "description": !c.desc.is_empty(), "due": c.due, "dueComplete": false},
        "closed": c.closed,
        "dateLastActivity": c.date_last_activity,
        "desc": c.desc,
        "due": c.due,
        "dueComplete": false,
        "idBoard": c.board_id,
        "idList": c.list_id,
        "idMembers": c.members.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        "idLabels": labels.iter().map(|l| l["id"].clone()).collect::<Vec<_>>(),
        "idShort": c.id_short,
        "labels": labels,
        "name": c.name,
        "pos": c.id_short * 16384,
        "shortLink": c.short_link,
        "shortUrl": format!("https://trello.com/c/{}", c.short_link),
        "start": null,
        "subscribed": false,
        "url": c.url,
    });
    let mut out = Map::new();
    out.insert("id".into(), json!(c.id));
    if fields.iter().any(|f| f == "all") {
        if let Value::Object(m) = all {
            out.extend(m);
        }
    } else {
        for f in fields {
            if let Some(v) = all.get(f) {
                out.insert(f.clone(), v.clone());
            }
        }
    }
    if with_board {
        out.insert(
            "board".into(),
            json!({"id": c.board_id, "name": c.board, "idOrganization": dataset::uuid("trello:org").replace('-', "")[..24].to_string()}),
        );
    }
    if with_list {
        out.insert(
            "list".into(),
            json!({"id": c.list_id, "name": c.list, "closed": false, "idBoard": c.board_id}),
        );
    }
    if with_members {
        let members: Vec<Value> = c
            .members
            .iter()
            .map(|(id, name, username)| json!({"id": id, "fullName": name, "username": username}))
            .collect();
        out.insert("members".into(), json!(members));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_fields_are_chosen() {
        let c = &dataset::trello_cards()[0];
        let v = card_json(c, &["name".into(), "url".into()], true, false, false);
        assert_eq!(v["id"], c.id.as_str());
        assert_eq!(v["name"], c.name.as_str());
        assert!(v.get("desc").is_none());
        assert_eq!(v["board"]["name"], c.board.as_str());
        let v = card_json(c, &["all".into()], false, false, false);
        assert_eq!(v["desc"], c.desc.as_str());
    }
}
