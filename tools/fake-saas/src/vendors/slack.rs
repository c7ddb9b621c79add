//! Slack: `search.messages`, `auth.test`, `auth.revoke`, OAuth v2.

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::{auth, note_page, oauth, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, SlackMessage};
use crate::http::{self, Req};
use crate::search::{self, qualifier, split_words};
use crate::time::{self, Range};
use crate::tokens::{Auth, Vendor};

fn fail(status: u16, error: &str) -> Response {
    http::json(status, &json!({"ok": false, "error": error}))
}

/// Slack's error for a status (faults). Slack puts errors in `ok:false` bodies.
pub(crate) fn error(status: u16) -> Response {
    let e = match status {
        429 => "ratelimited",
        401 | 403 => "invalid_auth",
        500 => "internal_error",
        503 => "service_unavailable",
        s if s >= 500 => "fatal_error",
        _ => "invalid_arguments",
    };
    fail(status, e)
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.as_str();
    if path == "/oauth/v2/authorize" && req.method == Method::GET {
        return oauth::authorize(shared, Vendor::Slack, req);
    }
    let Some(method) = path.strip_prefix("/api/") else {
        return http::html(404, "<html><body>Not Found</body></html>");
    };
    if method == "oauth.v2.access" {
        return oauth::token(shared, Vendor::Slack, req);
    }
    let known = ["search.messages", "auth.test", "auth.revoke"];
    if !known.contains(&method) {
        return http::json(
            404,
            &json!({"ok": false, "error": "unknown_method", "req_method": method}),
        );
    }
    let user = match auth(shared, Vendor::Slack, req) {
        Auth::Ok(u) => u,
        Auth::Missing | Auth::Invalid => return fail(200, "invalid_auth"),
        Auth::Revoked => return fail(200, "token_revoked"),
        Auth::Expired => return fail(200, "token_expired"),
    };
    match method {
        "search.messages" => search(req),
        "auth.test" => http::json(
            200,
            &json!({
                "ok": true,
                "url": format!("https://{}.slack.com/", dataset::SLACK_DOMAIN),
                "team": "Acme",
                "user": user,
                "team_id": dataset::SLACK_TEAM_ID,
                "user_id": oauth::slack_user_id(&user),
                "is_enterprise_install": false,
            }),
        ),
        _ => {
            // auth.revoke: revokes the calling token.
            let test = req
                .body_or_query("test")
                .is_some_and(|t| t == "1" || t == "true");
            let token = req.bearer().unwrap_or_default();
            let revoked = !test && shared.tokens().revoke(Vendor::Slack, &token);
            http::json(200, &json!({"ok": true, "revoked": revoked}))
        }
    }
}

struct Filters {
    channels: Vec<String>,
    users: Vec<String>,
    range: Range,
}

/// Splits a query into Slack's modifiers and its free text.
fn parse_query(q: &str) -> (String, Filters) {
    let mut f = Filters {
        channels: Vec::new(),
        users: Vec::new(),
        range: Range::default(),
    };
    let mut text = Vec::new();
    for w in split_words(q) {
        let Some((_neg, name, value)) = qualifier(&w) else {
            text.push(w);
            continue;
        };
        let v = value.trim();
        match name.as_str() {
            "in" => {
                // #name, name, <#C123|name>
                let v = v.trim_start_matches('<').trim_end_matches('>');
                let v = v.rsplit('|').next().unwrap_or(v);
                f.channels
                    .push(v.trim_start_matches('#').to_ascii_lowercase());
            }
            "from" => {
                let v = v.trim_start_matches('<').trim_end_matches('>');
                f.users.push(v.trim_start_matches('@').to_ascii_lowercase());
            }
            "after" => {
                if let Some(d) = time::parse(v) {
                    f.range.intersect(Range {
                        lo: d.end,
                        hi: i64::MAX,
                    });
                }
            }
            "before" => {
                if let Some(d) = time::parse(v) {
                    f.range.intersect(Range {
                        lo: i64::MIN,
                        hi: d.start,
                    });
                }
            }
            "on" | "during" => {
                if let Some(d) = time::parse(v) {
                    f.range.intersect(Range {
                        lo: d.start,
                        hi: d.end,
                    });
                } else if let Some(m) = time::parse(&format!("{v}-01")) {
                    // during:2025-05 (a month)
                    let (y, mo, ..) = time::parts(m.start);
                    let (ny, nm) = if mo == 12 { (y + 1, 1) } else { (y, mo + 1) };
                    f.range.intersect(Range {
                        lo: m.start,
                        hi: time::unix_of_date(ny, nm, 1),
                    });
                }
            }
            _ => {} // has:, is:, … ignored
        }
    }
    (text.join(" "), f)
}

fn keep(m: &SlackMessage, f: &Filters) -> bool {
    (f.channels.is_empty()
        || f.channels
            .iter()
            .any(|c| c == &m.channel_name || c.eq_ignore_ascii_case(&m.channel_id)))
        && (f.users.is_empty()
            || f.users
                .iter()
                .any(|u| u == &m.username || u.eq_ignore_ascii_case(&m.user_id)))
        && f.range.contains(m.unix)
}

fn search(req: &Req) -> Response {
    let Some(query) = req.body_or_query("query").filter(|q| !q.trim().is_empty()) else {
        return fail(200, "no_query");
    };
    let count = req
        .body_or_query("count")
        .and_then(|c| c.trim().parse::<u64>().ok())
        .unwrap_or(20)
        .clamp(1, 100);
    let count = req.page_size(count as usize) as u64;
    let page = req
        .body_or_query("page")
        .and_then(|c| c.trim().parse::<u64>().ok())
        .unwrap_or(1)
        .clamp(1, 100);
    let ascending = req.body_or_query("sort_dir").as_deref() == Some("asc");
    let by_time = req.body_or_query("sort").as_deref() == Some("timestamp");
    let (text, filters) = parse_query(&query);
    let engine = search::declared("slack");
    let Ok(q) = engine.parse(&text) else {
        return fail(200, "invalid_arguments");
    };
    let msgs = dataset::slack_messages();
    let hits = ranked(
        &dataset::docs().slack,
        engine,
        &q,
        sort_as(engine, by_time.then_some(ascending)),
        |i| keep(&msgs[i], &filters),
        |i| msgs[i].unix,
    );
    let total = hits.len() as u64;
    let pages = total.div_ceil(count);
    let start = (page - 1) * count;
    let matches: Vec<Value> = hits
        .iter()
        .skip(start as usize)
        .take(count as usize)
        .map(|hit| match_json(&msgs[hit.index]))
        .collect();
    let first = if total == 0 { 1 } else { start + 1 };
    let last = (start + count).min(total);
    let mut answer = http::json(
        200,
        &json!({
            "ok": true,
            "query": query,
            "messages": {
                "total": total,
                "pagination": {
                    "total_count": total,
                    "page": page,
                    "per_page": count,
                    "page_count": pages,
                    "first": first,
                    "last": last,
                },
                "paging": {"count": count, "total": total, "page": page, "pages": pages},
                "matches": matches,
            },
        }),
    );
    let page_hits = hits.iter().skip(start as usize).take(count as usize);
    note_page(&mut answer, msgs, page_hits);
    answer
}

fn match_json(m: &SlackMessage) -> Value {
    json!({
        "iid": m.iid,
        "team": dataset::SLACK_TEAM_ID,
        "type": "message",
        "channel": {
            "id": m.channel_id,
            "is_channel": !m.is_private,
            "is_group": m.is_private,
            "is_im": false,
            "is_mpim": false,
            "is_shared": false,
            "is_org_shared": false,
            "is_ext_shared": false,
            "is_private": m.is_private,
            "is_pending_ext_shared": false,
            "pending_shared": [],
            "name": m.channel_name,
        },
        "user": m.user_id,
        "username": m.username,
        "ts": m.ts,
        "blocks": [{
            "type": "rich_text",
            "block_id": &m.iid[..5],
            "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": m.text}]}],
        }],
        "text": m.text,
        "permalink": m.permalink,
        "no_reactions": true,
    })
}
