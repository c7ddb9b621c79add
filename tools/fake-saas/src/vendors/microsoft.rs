//! Microsoft 365 through Microsoft Graph on graph.microsoft.com (`POST
//! /v1.0/search/query` over `driveItem`, `listItem` and `message`, `GET
//! /v1.0/me`, `POST /v1.0/me/revokeSignInSessions`) and the identity
//! platform on login.microsoftonline.com (`/{tenant}/oauth2/v2.0/authorize`
//! and `/token`).
//!
//! Search follows the documented rules: entity types of one request must be
//! combinable (`message` with `chatMessage`; `driveItem`, `listItem`,
//! `list`, `site`, `drive` together), several requests in one body only for
//! the SharePoint and OneDrive types, paging with `from` and `size`
//! (`moreResultsAvailable`). The query string is KQL: free text (any word;
//! more words matched first) and property restrictions on dates
//! (`LastModifiedTime>=2026-01-01`, `Created<...`, `received>=...`, `:` for
//! a day), on `filetype:` and on `from:`/`author:`. Each hit has a
//! `summary` with `<c0>` highlights and `<ddd/>` between fragments.

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::{auth, oauth, ranked, sort_as, strings_at};
use crate::Shared;
use crate::dataset::{self, M365Item, SHAREPOINT_HOST};
use crate::http::{self, Req};
use crate::search::{self, Order, Query, Sort, split_words, tokenize};
use crate::time::{self, Range};
use crate::tokens::{Auth, Vendor};

fn err(status: u16, code: &str, message: &str) -> Response {
    let id = http::request_id();
    http::json(
        status,
        &json!({"error": {
            "code": code,
            "message": message,
            "innerError": {
                "date": time::rfc3339(time::now_unix()),
                "request-id": id,
                "client-request-id": id,
            }
        }}),
    )
}

fn unauthorized(auth: &Auth) -> Response {
    let message = match auth {
        Auth::Missing => "Access token is empty.",
        Auth::Expired => "Lifetime validation failed, the token is expired.",
        _ => "IDX14100: JWT is not well formed, there are no dots (.).",
    };
    err(401, "InvalidAuthenticationToken", message)
}

/// Graph's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => err(400, "BadRequest", "Invalid request."),
        401 => unauthorized(&Auth::Invalid),
        403 => err(
            403,
            "Forbidden",
            "Access is denied. Check credentials and try again.",
        ),
        404 => err(404, "itemNotFound", "The resource could not be found."),
        429 => err(
            429,
            "TooManyRequests",
            "Too many requests. Please try again later.",
        ),
        503 => err(
            503,
            "ServiceNotAvailable",
            "Service is unavailable, try again later.",
        ),
        504 => err(504, "GatewayTimeout", "The request timed out."),
        s => err(
            s,
            "InternalServerError",
            "An internal server error occurred.",
        ),
    }
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    if req.host == "login.microsoftonline.com" {
        let segs = req.segments();
        return match (&req.method, segs.as_slice()) {
            (&Method::GET, [_tenant, "oauth2", "v2.0", "authorize"]) => {
                oauth::authorize(shared, Vendor::Microsoft365, req)
            }
            (&Method::POST, [_tenant, "oauth2", "v2.0", "token"]) => {
                oauth::token(shared, Vendor::Microsoft365, req)
            }
            _ => http::json(
                404,
                &json!({"error": "not_found", "error_description": "AADSTS90002: the endpoint was not found."}),
            ),
        };
    }
    let user = match auth(shared, Vendor::Microsoft365, req) {
        Auth::Ok(u) => u,
        other => return unauthorized(&other),
    };
    let segs = req.segments();
    match (&req.method, segs.as_slice()) {
        (&Method::POST, ["v1.0" | "beta", "search", "query"]) => search(req),
        (&Method::GET, ["v1.0" | "beta", "me"]) => {
            let person = dataset::people().iter().find(|p| p.slack_username == user);
            let name = person.map_or(user.as_str(), |p| p.name.as_str());
            let mail =
                person.map_or_else(|| format!("{user}@acme-shop.example"), |p| p.email.clone());
            http::json(
                200,
                &json!({
                    "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
                    "id": dataset::uuid(&format!("m365-user:{user}")),
                    "displayName": name,
                    "mail": mail,
                    "userPrincipalName": mail,
                    "jobTitle": person.map(|p| p.title.clone()),
                }),
            )
        }
        (&Method::POST, ["v1.0" | "beta", "me", "revokeSignInSessions"]) => {
            if let Some(t) = req.bearer() {
                shared.tokens().revoke(Vendor::Microsoft365, &t);
            }
            http::json(
                200,
                &json!({"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#Edm.Boolean", "value": true}),
            )
        }
        _ => err(
            400,
            "BadRequest",
            &format!(
                "Resource not found for the segment '{}'.",
                segs.last().unwrap_or(&"")
            ),
        ),
    }
}

/// The groups of entity types that can be searched together.
fn group_of(entity: &str) -> Option<&'static str> {
    match entity {
        "message" | "chatMessage" => Some("messages"),
        "driveItem" | "listItem" | "list" | "site" | "drive" | "externalItem" => Some("sharepoint"),
        "event" => Some("event"),
        "person" => Some("person"),
        _ => None,
    }
}

/// What a query string asks: free text, and restrictions on properties.
struct Kql {
    text: Query,
    created: Range,
    modified: Range,
    filetypes: Vec<String>,
    from: Vec<String>,
}

fn parse_kql(q: &str) -> Kql {
    let mut kql = Kql {
        text: Query::default(),
        created: Range::default(),
        modified: Range::default(),
        filetypes: Vec::new(),
        from: Vec::new(),
    };
    let mut free = Vec::new();
    for word in split_words(q) {
        let w = word.trim_start_matches('(').trim_end_matches(')');
        let name_len = w
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(w.len());
        let (name, rest) = w.split_at(name_len);
        let op = [">=", "<=", ">", "<", "=", ":"]
            .into_iter()
            .find(|op| rest.starts_with(op));
        let (Some(op), false) = (op, name.is_empty()) else {
            free.push(word.clone());
            continue;
        };
        let value = rest[op.len()..].trim_matches('"');
        let op = if op == ":" { "=" } else { op };
        match name.to_ascii_lowercase().as_str() {
            "lastmodifiedtime" | "lastmodifieddatetime" | "lastmodified" | "modified" | "write" => {
                match time::parse(value).and_then(|at| Range::from_op(op, at)) {
                    Some(r) => kql.modified.intersect(r),
                    None => kql.modified.intersect(Range { lo: 0, hi: 0 }),
                }
            }
            "created" | "createddatetime" | "received" | "sent" => {
                match time::parse(value).and_then(|at| Range::from_op(op, at)) {
                    Some(r) => kql.created.intersect(r),
                    None => kql.created.intersect(Range { lo: 0, hi: 0 }),
                }
            }
            "filetype" | "fileextension" => kql.filetypes.push(value.to_ascii_lowercase()),
            "from" | "author" => kql.from.push(value.to_lowercase()),
            _ => free.push(word.clone()),
        }
    }
    kql.text = search::declared("microsoft-365")
        .parse(&free.join(" "))
        .unwrap_or_default();
    kql
}

impl Kql {
    fn keeps(&self, item: &M365Item) -> bool {
        self.created.contains(item.created_unix)
            && self.modified.contains(item.modified_unix)
            && (self.filetypes.is_empty()
                || self
                    .filetypes
                    .iter()
                    .any(|t| item.name.to_ascii_lowercase().ends_with(&format!(".{t}"))))
            && (self.from.is_empty()
                || self.from.iter().any(|f| {
                    item.author_name.to_lowercase().contains(f)
                        || item.author_email.to_lowercase().contains(f)
                }))
    }
}

fn bad(message: &str) -> Response {
    err(400, "BadRequest", message)
}

fn search(req: &Req) -> Response {
    let body: Value = match req.json() {
        Ok(v) if v.is_object() => v,
        _ => {
            return bad(
                "Unable to read JSON request payload. Please ensure Content-Type header is set and payload is of valid JSON format.",
            );
        }
    };
    let Some(requests) = body.get("requests").and_then(Value::as_array) else {
        return bad("Missing required property 'requests'.");
    };
    if requests.is_empty() {
        return bad("Requests cannot be empty.");
    }
    let mut parsed = Vec::new();
    for r in requests {
        let Some(types) = r.get("entityTypes").and_then(Value::as_array) else {
            return bad("EntityTypes cannot be empty.");
        };
        let types: Vec<String> = types
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect();
        let mut groups = Vec::new();
        for t in &types {
            match group_of(t) {
                Some(g) => groups.push(g),
                None => return bad(&format!("Requested entity type '{t}' is invalid.")),
            }
        }
        groups.dedup();
        if groups.is_empty() {
            return bad("EntityTypes cannot be empty.");
        }
        if groups.len() > 1 {
            return bad(&format!(
                "The entity type combination is not supported: {}.",
                types.join(", ")
            ));
        }
        let Some(q) = r.pointer("/query/queryString").and_then(Value::as_str) else {
            return bad("Missing required property 'query.queryString'.");
        };
        let from = r.get("from").and_then(Value::as_u64).unwrap_or(0) as usize;
        let size = match r.get("size") {
            None | Some(Value::Null) => 25,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=500).contains(&n) => n as usize,
                _ => return bad("The size must be between 1 and 500."),
            },
        };
        let fields = strings_at(r, "fields");
        parsed.push((types, groups[0], q.to_string(), from, size, fields));
    }
    if parsed.len() > 1 && parsed.iter().any(|p| p.1 != "sharepoint") {
        return bad(
            "Multiple search requests are supported only for SharePoint and OneDrive entity types.",
        );
    }
    let items = dataset::m365_items();
    let mut value = Vec::new();
    let mut returned: Vec<&str> = Vec::new();
    for (types, _, q, from, size, fields) in parsed {
        let kql = parse_kql(&q);
        let size = req.page_size(size);
        let engine = search::declared("microsoft-365");
        // "message and event are sorted by date" (the search API overview),
        // Teams messages "by descending dateTime" (its Teams page).
        let by_date = types.iter().all(|t| is_dated(t));
        let sort = if by_date {
            Sort::Default(Order::Newest)
        } else {
            sort_as(engine, None)
        };
        let hits = ranked(
            dataset::m365_docs(),
            engine,
            &kql.text,
            sort,
            |i| {
                types
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(&items[i].entity_type))
                    && kql.keeps(&items[i])
            },
            |i| items[i].modified_unix,
        );
        // "For Teams messages [and events], the total property ... contains
        // the number of results on the page".
        let total = if by_date {
            hits.len().saturating_sub(from).min(size)
        } else {
            hits.len()
        };
        returned.extend(
            hits.iter()
                .skip(from)
                .take(size)
                .map(|h| items[h.index].web_url.as_str()),
        );
        let page: Vec<Value> = hits
            .iter()
            .skip(from)
            .take(size)
            .enumerate()
            .map(|(n, hit)| {
                let item = &items[hit.index];
                json!({
                    "hitId": hit_id(item),
                    "rank": from + n + 1,
                    "summary": summary(&item.text, &kql.text),
                    "resource": resource(item, &fields),
                })
            })
            .collect();
        let mut container = json!({
            "total": total,
            "moreResultsAvailable": from + size < hits.len(),
        });
        if !page.is_empty() {
            container["hits"] = json!(page);
        }
        value.push(json!({
            "searchTerms": words_of(&kql.text),
            "hitsContainers": [container],
        }));
    }
    let mut answer = http::json(
        200,
        &json!({
            "value": value,
            "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#Collection(microsoft.graph.searchResponse)",
        }),
    );
    http::note_returned(&mut answer, returned);
    answer
}

/// Types Graph answers newest first, and counts by the page.
fn is_dated(entity_type: &str) -> bool {
    ["message", "event", "chatMessage"]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(entity_type))
}

fn words_of(q: &Query) -> Vec<String> {
    q.positive_words()
}

fn hit_id(item: &M365Item) -> String {
    match item.entity_type.as_str() {
        "listItem" => dataset::uuid(&format!("m365:list-item:{}", item.id)),
        _ => item.hit_id.clone().unwrap_or_else(|| item.id.clone()),
    }
}

/// Up to three fragments of the text: its first sentence and the sentences
/// that hold a word of the query, the words highlighted.
pub(crate) fn summary(text: &str, q: &Query) -> String {
    let words = words_of(q);
    let sentences: Vec<&str> = text
        .split(['\n'])
        .flat_map(|line| line.split(". "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut chosen: Vec<&str> = sentences.iter().take(1).copied().collect();
    for s in sentences.iter().skip(1) {
        if chosen.len() >= 3 {
            break;
        }
        if tokenize(s).iter().any(|t| words.contains(t)) {
            chosen.push(s);
        }
    }
    let fragments: Vec<String> = chosen
        .iter()
        .map(|s| {
            let cut = truncate_chars(s, 220);
            cut.split(' ')
                .map(|w| {
                    let core = w.trim_matches(|c: char| !c.is_alphanumeric());
                    if !core.is_empty() && tokenize(core).iter().all(|t| words.contains(t)) {
                        w.replacen(core, &format!("<c0>{core}</c0>"), 1)
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    format!("{}<ddd/>", fragments.join("<ddd/>"))
}

/// The first `max` characters of `text`.
fn truncate_chars(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

fn user(name: &str, email: &str) -> Value {
    json!({"user": {"displayName": name, "email": email}})
}

fn site_id() -> String {
    format!(
        "{SHAREPOINT_HOST},{},{}",
        dataset::uuid("m365:site"),
        dataset::uuid("m365:web")
    )
}

fn resource(item: &M365Item, fields: &[String]) -> Value {
    let created = time::rfc3339(item.created_unix);
    let modified = time::rfc3339(item.modified_unix);
    let by = user(&item.author_name, &item.author_email);
    match item.entity_type.as_str() {
        "driveItem" => json!({
            "@odata.type": "#microsoft.graph.driveItem",
            "createdDateTime": created,
            "lastModifiedDateTime": modified,
            "name": item.name,
            "webUrl": item.web_url,
            "size": item.size,
            "id": item.id,
            "createdBy": by,
            "lastModifiedBy": by,
            "parentReference": {
                "driveId": format!("b!{}", dataset::uuid("m365:drive").replace('-', "")),
                "id": format!("01BYE5RZ{}", &dataset::uuid("m365:folder").replace('-', "").to_uppercase()[..26]),
                "siteId": site_id(),
                "sharepointIds": {
                    "listId": dataset::uuid("m365:documents"),
                    "listItemUniqueId": dataset::uuid(&format!("m365:unique:{}", item.id)),
                },
            },
            "fileSystemInfo": {"createdDateTime": created, "lastModifiedDateTime": modified},
        }),
        "listItem" => {
            let mut r = json!({
                "@odata.type": "#microsoft.graph.listItem",
                "id": dataset::uuid(&format!("m365:list-item:{}", item.id)),
                "name": item.name,
                "webUrl": item.web_url,
                "createdDateTime": created,
                "lastModifiedDateTime": modified,
                "createdBy": by,
                "lastModifiedBy": by,
                "parentReference": {"siteId": site_id(), "id": dataset::uuid("m365:incident-register")},
                "sharepointIds": {"listId": dataset::uuid("m365:incident-register"), "listItemId": item.id},
            });
            if !fields.is_empty() {
                let mut f = serde_json::Map::new();
                for name in fields {
                    match name.to_ascii_lowercase().as_str() {
                        "title" => {
                            f.insert(name.clone(), json!(item.name));
                        }
                        "description" | "body" => {
                            f.insert(name.clone(), json!(item.text));
                        }
                        _ => {}
                    }
                }
                r["fields"] = Value::Object(f);
            }
            r
        }
        // What Microsoft's example answers hold: an event no id and no link
        // (its hitId names it), a Teams message no body (its summary shows it).
        "event" => json!({
            "@odata.type": "#microsoft.graph.event",
            "start": {"dateTime": created, "timeZone": "UTC"},
            "end": {"dateTime": time::rfc3339(item.created_unix + 3600), "timeZone": "UTC"},
            "hasAttachments": false,
            "iCalUId": format!("040000008200E00074C5B7101A82E008{}", dataset::uuid(&item.id).replace('-', "").to_uppercase()),
            "isAllDay": false,
            "sensitivity": "Normal",
            "subject": item.name,
            "type": "Single",
        }),
        "chatMessage" => json!({
            "@odata.type": "microsoft.graph.chatMessage",
            "id": item.id,
            "createdDateTime": created,
            "lastModifiedDateTime": modified,
            "subject": "",
            "importance": "normal",
            "webLink": item.web_url,
            "from": {"emailAddress": {"name": item.author_name, "address": item.author_email}},
            "channelIdentity": {},
            "etag": item.id,
            "chatId": item.conversation_id,
        }),
        _ => {
            let address =
                |name: &str, email: &str| json!({"emailAddress": {"name": name, "address": email}});
            let preview: String = item.text.split_whitespace().collect::<Vec<_>>().join(" ");
            json!({
                "@odata.type": "#microsoft.graph.message",
                "id": item.id,
                "createdDateTime": created,
                "lastModifiedDateTime": modified,
                "receivedDateTime": created,
                "sentDateTime": created,
                "hasAttachments": false,
                "internetMessageId": format!("<{}@acme-shop.example>", &dataset::uuid(&item.id)[..18]),
                "subject": item.name,
                "bodyPreview": truncate_chars(&preview, 255),
                "importance": "normal",
                "parentFolderId": "AQMkADAwATM0MDAAMS1hMGYwAC0AAAIBDAAAAA==",
                "conversationId": item.conversation_id,
                "isRead": true,
                "isDraft": false,
                "webLink": item.web_url,
                "sender": address(&item.author_name, &item.author_email),
                "from": address(&item.author_name, &item.author_email),
                "toRecipients": item.recipients.iter().map(|(n, a)| address(n, a)).collect::<Vec<_>>(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kql_restrictions() {
        let k = parse_kql(
            "(checkout OR payment) AND LastModifiedTime>=2026-01-01 AND LastModifiedTime<=2026-06-30 filetype:docx",
        );
        assert_eq!(words_of(&k.text), vec!["checkout", "payment"]);
        assert_eq!(k.modified.lo, time::parse("2026-01-01").unwrap().start);
        assert_eq!(k.modified.hi, time::parse("2026-07-01").unwrap().start);
        assert_eq!(k.filetypes, vec!["docx"]);
        let k = parse_kql("received:2026-03-17");
        assert!(k.text.is_empty());
        assert_eq!(k.created.hi - k.created.lo, 86400);
    }

    #[test]
    fn summaries_highlight_the_words() {
        let s = summary(
            "Checkout failed. Unrelated line. The certificate was rotated.\nMore text",
            &search::declared("microsoft-365")
                .parse("certificate")
                .unwrap(),
        );
        assert_eq!(
            s,
            "Checkout failed<ddd/>The <c0>certificate</c0> was rotated.<ddd/>"
        );
    }
}
