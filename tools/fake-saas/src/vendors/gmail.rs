//! Gmail API v1 on gmail.googleapis.com: `GET /gmail/v1/users/me/messages` (`q` in
//! Gmail's search syntax: words and `"phrases"`, `OR`, parentheses and braces,
//! `from:`, `to:`, `subject:`, `in:`/`label:`, `after:`/`before:`/`newer:`/`older:`
//! with `YYYY/MM/DD` dates or Unix seconds; `maxResults`, `pageToken`), `GET
//! /gmail/v1/users/me/messages/{id}` (`format=full|metadata|minimal|raw`,
//! `metadataHeaders`) and `GET /gmail/v1/users/me/profile`.
//!
//! As everywhere in the fake, a message matches when it contains ANY word, and the
//! most matching come first (real Gmail ANDs words and lists newest first).

use axum::http::Method;
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};

use super::google::{bad_request, not_found, unauthorized};
use super::{auth, note_page, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, GMAIL_ADDRESS, GmailMessage};
use crate::http::{self, Req};
use crate::search::{self, Query, qualifier, split_words};
use crate::time::Range;
use crate::tokens::Vendor;

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    if auth(shared, Vendor::Gmail, req).user().is_none() {
        return unauthorized();
    }
    let segs = req.segments();
    let me = |u: &str| u == "me" || u.eq_ignore_ascii_case(GMAIL_ADDRESS);
    match (&req.method, segs.as_slice()) {
        (&Method::GET, ["gmail", "v1", "users", user, "messages"]) if me(user) => list(req),
        (&Method::GET, ["gmail", "v1", "users", user, "messages", id]) if me(user) => {
            match dataset::gmail_messages().iter().find(|m| m.id == *id) {
                Some(m) => message(req, m),
                None => not_found("Requested entity was not found."),
            }
        }
        (&Method::GET, ["gmail", "v1", "users", user, "profile"]) if me(user) => {
            let messages = dataset::gmail_messages();
            let mut threads: Vec<&str> = messages.iter().map(|m| m.thread_id.as_str()).collect();
            threads.sort();
            threads.dedup();
            http::json(
                200,
                &json!({
                    "emailAddress": GMAIL_ADDRESS,
                    "messagesTotal": messages.len(),
                    "threadsTotal": threads.len(),
                    "historyId": "1284503",
                }),
            )
        }
        (_, ["gmail", "v1", "users", user, ..]) if !me(user) => google_forbidden(),
        _ => not_found("Not Found"),
    }
}

fn google_forbidden() -> Response {
    super::google::google_error(
        403,
        "Delegation denied for the requested user",
        "forbidden",
        "PERMISSION_DENIED",
    )
}

/// A parsed `q`.
#[derive(Default)]
struct Search {
    terms: Query,
    range: Range,
    from: Vec<String>,
    to: Vec<String>,
    subject: Vec<String>,
    /// `in:sent`, `in:inbox`...; `None`: anywhere but spam and trash.
    label: Option<String>,
}

/// `2025/02/03`, `2025-02-03` or Unix seconds.
fn gmail_time(value: &str) -> Option<crate::time::Instant> {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let t: i64 = value.parse().ok()?;
        return Some(crate::time::Instant {
            start: t,
            end: t + 1,
        });
    }
    crate::time::parse(value)
}

/// Gmail's `{a b}` (any of the words) as `(a OR b)`.
fn braces_as_or(q: &str) -> String {
    let mut out = String::new();
    let mut in_braces = false;
    for c in q.chars() {
        match c {
            '{' => {
                in_braces = true;
                out.push('(');
            }
            '}' => {
                in_braces = false;
                out.push(')');
            }
            c if c.is_whitespace() && in_braces => out.push_str(" OR "),
            c => out.push(c),
        }
    }
    out
}

fn parse_q(q: &str) -> Result<Search, String> {
    let mut s = Search::default();
    let mut words = Vec::new();
    for w in split_words(&braces_as_or(q)) {
        let stripped = w.trim_matches(|c| matches!(c, '(' | ')'));
        match qualifier(stripped) {
            Some((false, name, value)) => match name.as_str() {
                "after" | "newer" | "before" | "older" => {
                    let at = gmail_time(&value).ok_or_else(|| format!("bad date {value}"))?;
                    // Dates mean midnight; `after:` is strictly after, `before:` strictly before.
                    let r = if name == "after" || name == "newer" {
                        Range {
                            lo: at.start + (at.end - at.start == 1) as i64,
                            hi: i64::MAX,
                        }
                    } else {
                        Range {
                            lo: i64::MIN,
                            hi: at.start,
                        }
                    };
                    s.range.intersect(r);
                }
                "from" => s.from.push(value.to_lowercase()),
                "to" => s.to.push(value.to_lowercase()),
                "subject" => s.subject.push(value.to_lowercase()),
                "in" | "label" => s.label = Some(value.to_lowercase()),
                // is:, has:, category:... are accepted and ignored.
                _ => {}
            },
            Some((true, ..)) => {}
            // The words keep their parentheses and operators: the engine reads them.
            None => words.push(w),
        }
    }
    s.terms = search::declared("gmail")
        .parse(&words.join(" "))
        .map_err(|e| format!("{e:?}"))?;
    Ok(s)
}

fn keep(s: &Search, m: &GmailMessage) -> bool {
    let has = |list: &[String], text: &str| {
        let text = text.to_lowercase();
        list.iter().all(|v| text.contains(v.as_str()))
    };
    s.range.contains(m.unix)
        && has(&s.from, &m.from_header())
        && has(&s.to, &m.to)
        && has(&s.subject, &m.subject)
        && match s.label.as_deref() {
            None | Some("anywhere") => true,
            Some(l) => m.labels.iter().any(|x| x.eq_ignore_ascii_case(l)),
        }
}

fn page_token(offset: usize) -> String {
    format!("{:020}", 7_000_000_000_000_000_000u64 + offset as u64)
}

fn parse_token(token: &str) -> Option<usize> {
    let n: u64 = token.parse().ok()?;
    n.checked_sub(7_000_000_000_000_000_000).map(|o| o as usize)
}

fn list(req: &Req) -> Response {
    let q = req.param("q").unwrap_or_default();
    let parsed = match parse_q(&q) {
        Ok(s) => s,
        Err(e) => return bad_request(&format!("Invalid query: {e}")),
    };
    let max = match req.param("maxResults").filter(|s| !s.is_empty()) {
        None => 100,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n >= 1 => n.min(500),
            _ => return bad_request(&format!("Invalid value at 'max_results' ({s})")),
        },
    };
    let max = req.page_size(max);
    let messages = dataset::gmail_messages();
    let engine = search::declared("gmail");
    let hits = ranked(
        dataset::gmail_docs(),
        engine,
        &parsed.terms,
        sort_as(engine, None),
        |i| keep(&parsed, &messages[i]),
        |i| messages[i].unix,
    );
    let start = match req.param("pageToken").filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => match parse_token(&t) {
            Some(o) => o,
            None => return bad_request("Invalid pageToken"),
        },
    };
    let page: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(max)
        .map(|hit| json!({"id": messages[hit.index].id, "threadId": messages[hit.index].thread_id}))
        .collect();
    let mut body = json!({ "resultSizeEstimate": hits.len() });
    if !page.is_empty() {
        body["messages"] = json!(page);
    }
    if start + max < hits.len() {
        body["nextPageToken"] = json!(page_token(start + max));
    }
    let mut answer = http::json(200, &body);
    note_page(&mut answer, messages, hits.iter().skip(start).take(max));
    answer
}

fn message(req: &Req, m: &GmailMessage) -> Response {
    let format = req.param("format").unwrap_or_else(|| "full".into());
    let wanted: Vec<String> = req
        .query_pairs()
        .into_iter()
        .filter(|(k, _)| k == "metadataHeaders")
        .map(|(_, v)| v.to_lowercase())
        .collect();
    let b64 = base64::engine::general_purpose::URL_SAFE;
    let all_headers = vec![
        ("Delivered-To", GMAIL_ADDRESS.to_string()),
        ("Date", m.date_header()),
        ("From", m.from_header()),
        ("To", m.to.clone()),
        ("Subject", m.subject.clone()),
        (
            "Message-ID",
            format!("<{}.{}@mail.example>", m.id, &m.thread_id[..8]),
        ),
        ("MIME-Version", "1.0".into()),
        ("Content-Type", "text/plain; charset=\"UTF-8\"".into()),
    ];
    let headers = |only: Option<&[String]>| -> Value {
        Value::Array(
            all_headers
                .iter()
                .filter(|(n, _)| only.is_none_or(|o| o.is_empty() || o.contains(&n.to_lowercase())))
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect(),
        )
    };
    let mut v = json!({
        "id": m.id,
        "threadId": m.thread_id,
        "labelIds": m.labels,
        "snippet": m.snippet(),
        "sizeEstimate": 1200 + m.body.len(),
        "historyId": (1_200_000 + dataset::fnv(&m.id) % 80_000).to_string(),
        "internalDate": (m.unix * 1000).to_string(),
    });
    match format.as_str() {
        "minimal" => {}
        "metadata" => {
            v["payload"] = json!({
                "partId": "",
                "mimeType": "text/plain",
                "filename": "",
                "headers": headers(Some(&wanted)),
                "body": {"size": 0},
            });
        }
        "full" => {
            v["payload"] = json!({
                "partId": "",
                "mimeType": "text/plain",
                "filename": "",
                "headers": headers(None),
                "body": {"size": m.body.len(), "data": b64.encode(m.body.as_bytes())},
            });
        }
        "raw" => {
            let mut raw = String::new();
            for (n, value) in &all_headers {
                raw.push_str(&format!("{n}: {value}\r\n"));
            }
            raw.push_str("\r\n");
            raw.push_str(&m.body.replace('\n', "\r\n"));
            v["raw"] = json!(b64.encode(raw.as_bytes()));
        }
        other => {
            return bad_request(&format!(
                "Invalid value at 'format' (type.googleapis.com/google.apps.gmail.v1.Format), \"{other}\""
            ));
        }
    }
    http::json(200, &v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gmail_queries() {
        let s =
            parse_q("(checkout OR 502) after:1738367999 before:2025/03/01 in:inbox from:stripe")
                .unwrap();
        assert_eq!(
            s.terms,
            search::declared("gmail")
                .parse("(checkout OR 502)")
                .unwrap()
        );
        assert_eq!(s.range.lo, 1738368000);
        assert_eq!(s.range.hi, crate::time::parse("2025-03-01").unwrap().start);
        assert_eq!(s.label.as_deref(), Some("inbox"));
        assert_eq!(s.from, vec!["stripe".to_string()]);
        assert!(parse_q("after:yesterday").is_err());
        assert_eq!(parse_token(&page_token(17)), Some(17));
    }
}
