//! Confluence Cloud through api.atlassian.com: `GET
//! /ex/confluence/{cloudId}/wiki/rest/api/search` (CQL with `text`/`siteSearch`/`title`
//! `~`, `type`, `space`, `id`, `creator`, `label` with `=`/`!=`/`in`/`not in`,
//! `lastmodified`/`created` comparisons, `AND`/`OR`/`NOT`, parentheses, `ORDER BY`;
//! `limit` (at most 50 with a body expansion, else 100), `cursor` paging through
//! `_links.next`, `expand` of `content.body.storage`, `content.history`,
//! `content.version`, `content.space`, and highlighted excerpts), and `GET
//! /ex/confluence/{cloudId}/wiki/api/v2/pages/{id}`. OAuth and accessible-resources are
//! Jira's (the same Atlassian site and servers).

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::cursor::CursorFormat;
use super::query_lang::{self, Language, Parser, SyntaxError, Tok};
use super::{auth, note_page, sort_as};
use crate::Shared;
use crate::dataset::{self, CONFLUENCE_BASE, ConfluencePage};
use crate::http::{self, Req};
use crate::search::{self, Query, sort_hits};
use crate::time::{self, Range};
use crate::tokens::Vendor;

fn unauthorized() -> Response {
    http::json(401, &json!({"code": 401, "message": "Unauthorized"}))
}

/// Confluence's error for a status (faults): the gateway's shapes, as for Jira.
pub(crate) fn error(status: u16, retry_after: Option<u32>) -> Response {
    match status {
        401 => unauthorized(),
        400 | 403 | 404 | 500 => bad(
            status,
            http::status(status).canonical_reason().unwrap_or("Error"),
        ),
        s => super::jira::error(s, retry_after),
    }
}

/// `{"statusCode", "data": {...}, "message"}`, Confluence's own error body.
fn bad(status: u16, message: &str) -> Response {
    http::json(
        status,
        &json!({
            "statusCode": status,
            "data": {"authorized": status != 403, "valid": status != 400, "errors": [], "successful": false},
            "message": message,
        }),
    )
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    if auth(shared, Vendor::Confluence, req).user().is_none() {
        return unauthorized();
    }
    let segs = req.segments();
    let ["ex", "confluence", cloud, "wiki", rest @ ..] = segs.as_slice() else {
        return http::json(404, &json!({"code": 404, "message": "Not Found"}));
    };
    if *cloud != dataset::JIRA_CLOUD_ID {
        return http::json(404, &json!({"code": 404, "message": "Not Found"}));
    }
    match (&req.method, rest) {
        (&Method::GET, ["rest", "api", "search"]) => search(req),
        (&Method::GET, ["api", "v2", "pages", id]) => {
            match dataset::confluence_pages()
                .iter()
                .find(|p| p.id == *id && p.content_type == "page")
            {
                Some(p) => http::json(200, &v2_page(p, req.param("body-format").as_deref())),
                None => http::json(
                    404,
                    &json!({"errors": [{"status": 404, "code": "NOT_FOUND", "title": "Not Found", "detail": null}]}),
                ),
            }
        }
        _ => bad(404, "No content found"),
    }
}

// ---------------------------------------------------------------------------------------
// CQL

/// Confluence's query language.
struct CqlLanguage;

impl Language for CqlLanguage {
    type Clause = Clause;
    const WORD_CHARS: &'static [char] = &['_', '-', '.', ':', '/'];

    fn clause(p: &mut Parser<Self>) -> Result<Clause, String> {
        p.clause()
    }
    fn syntax_error(e: SyntaxError) -> String {
        match e {
            SyntaxError::Unterminated(text) => format!("unterminated string '{text}'"),
            SyntaxError::LoneBang => "unexpected '!'".into(),
            SyntaxError::Unexpected(c) => format!("unexpected character '{c}'"),
            SyntaxError::MissingParen => "expecting ')'".into(),
        }
    }
}

/// `field op value` or `field [not] in (values)`.
#[derive(Clone, Debug)]
struct Clause {
    field: String,
    op: String,
    vals: Vec<String>,
}

type Expr = query_lang::Expr<Clause>;

struct Cql {
    expr: Expr,
    order: Option<(String, bool)>,
}

const TEXT_FIELDS: &[&str] = &["text", "sitesearch", "title"];
const DATE_FIELDS: &[&str] = &["lastmodified", "created"];
const VALUE_FIELDS: &[&str] = &[
    "type",
    "space",
    "space.key",
    "id",
    "content",
    "creator",
    "contributor",
    "label",
];

impl Parser<CqlLanguage> {
    fn value(&mut self) -> Result<String, String> {
        match self.bump() {
            Some(Tok::Str(v)) | Some(Tok::Word(v)) => Ok(v),
            _ => Err("expecting a value".into()),
        }
    }
    fn clause(&mut self) -> Result<Clause, String> {
        let field = match self.bump() {
            Some(Tok::Word(w)) => w.to_ascii_lowercase(),
            _ => return Err("expecting a field".into()),
        };
        let known = TEXT_FIELDS.contains(&field.as_str())
            || DATE_FIELDS.contains(&field.as_str())
            || VALUE_FIELDS.contains(&field.as_str());
        if !known {
            return Err(format!("unknown field '{field}'"));
        }
        let op = match self.bump() {
            Some(Tok::Op(o)) => o,
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("in") => "in".into(),
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("not") && self.at_keyword("in") => {
                self.bump();
                "not in".into()
            }
            _ => return Err(format!("expecting an operator after '{field}'")),
        };
        let ok = if TEXT_FIELDS.contains(&field.as_str()) {
            matches!(op.as_str(), "~" | "!~")
                || (field == "title" && matches!(op.as_str(), "=" | "!="))
        } else if DATE_FIELDS.contains(&field.as_str()) {
            matches!(op.as_str(), "=" | "!=" | ">" | ">=" | "<" | "<=")
        } else {
            matches!(op.as_str(), "=" | "!=" | "in" | "not in")
        };
        if !ok {
            return Err(format!(
                "operator '{op}' is not supported for field '{field}'"
            ));
        }
        let vals = if op.ends_with("in") {
            if self.bump() != Some(Tok::LParen) {
                return Err("expecting '(' after in".into());
            }
            let mut vals = vec![self.value()?];
            while self.peek() == Some(&Tok::Comma) {
                self.bump();
                vals.push(self.value()?);
            }
            if self.bump() != Some(Tok::RParen) {
                return Err("expecting ')'".into());
            }
            vals
        } else {
            vec![self.value()?]
        };
        if DATE_FIELDS.contains(&field.as_str()) && time::parse(&vals[0]).is_none() {
            return Err(format!("'{}' is not a date", vals[0]));
        }
        Ok(Clause { field, op, vals })
    }
}

fn parse_cql(s: &str) -> Result<Cql, String> {
    let mut p = Parser::<CqlLanguage>::new(query_lang::lex::<CqlLanguage>(s)?);
    if p.peek().is_none() || p.at_keyword("order") {
        return Err("a CQL query needs at least one clause".into());
    }
    let expr = p.or()?;
    let mut order = None;
    if p.at_keyword("order") {
        p.bump();
        if !p.at_keyword("by") {
            return Err("expecting 'by'".into());
        }
        p.bump();
        let field = match p.bump() {
            Some(Tok::Word(w)) => w.to_ascii_lowercase(),
            _ => return Err("expecting a field after 'order by'".into()),
        };
        let ascending = p.direction().unwrap_or(field == "title");
        order = Some((field, ascending));
    }
    if let Some(t) = p.peek() {
        return Err(format!("unexpected {t:?}"));
    }
    Ok(Cql { expr, order })
}

/// How Confluence reads the text of a `~` clause.
fn text_search(text: &str) -> Query {
    search::declared("confluence")
        .parse(text)
        .unwrap_or_default()
}

/// Whether the page at `position` holds `clause`.
fn holds(clause: &Clause, page: &ConfluencePage, position: usize) -> bool {
    let Clause { field, op, vals } = clause;
    let negate = op.starts_with('!') || op.starts_with("not");
    let hit = match field.as_str() {
        "text" | "sitesearch" => dataset::confluence_docs().matches(
            position,
            search::declared("confluence"),
            &text_search(&vals[0]),
        ),
        "title" if op.contains('~') => {
            search::declared("confluence").matches_text(&text_search(&vals[0]), &page.title)
        }
        "title" => page.title.eq_ignore_ascii_case(&vals[0]),
        "lastmodified" | "created" => {
            let t = if field == "created" {
                page.created_unix
            } else {
                page.updated_unix
            };
            let at = time::parse(&vals[0]).expect("checked at parse time");
            // `!=` is `=` negated below.
            let op = if op == "!=" { "=" } else { op.as_str() };
            Range::from_op(op, at).is_some_and(|r| r.contains(t))
        }
        _ => vals.iter().any(|v| {
            let v = v.to_lowercase();
            match field.as_str() {
                "type" => page.content_type == v,
                "space" | "space.key" => page.space_key.to_lowercase() == v,
                "id" | "content" => page.id == v,
                "creator" | "contributor" => {
                    page.author_name.to_lowercase() == v
                        || page.author_account_id.to_lowercase() == v
                        || (field == "contributor"
                            && (page.editor_name.to_lowercase() == v
                                || page.editor_account_id.to_lowercase() == v))
                }
                _ => false,
            }
        }),
    };
    hit != negate
}

/// Terms of the positive `~` clauses on text fields, for ranking.
fn collect_terms(e: &Expr) -> Query {
    let mut texts = Vec::new();
    e.for_each_clause(true, &mut |Clause { field, op, vals }, positive| {
        if positive && op == "~" && TEXT_FIELDS.contains(&field.as_str()) {
            texts.push(text_search(&vals[0]));
        }
    });
    Query::any_of(texts)
}

// ---------------------------------------------------------------------------------------
// Search

/// Cursors like Confluence's own (`_sa_…`).
const CURSOR: CursorFormat = CursorFormat::new("_sa_WyJcdDEiLCJ", "|").lenient();

fn search(req: &Req) -> Response {
    let Some(cql) = req.param("cql").filter(|c| !c.trim().is_empty()) else {
        return bad(400, "The CQL query parameter is required");
    };
    let parsed = match parse_cql(&cql) {
        Ok(p) => p,
        Err(e) => return bad(400, &format!("Could not parse cql : {cql} ({e})")),
    };
    let expand: Vec<String> = req
        .query_pairs()
        .into_iter()
        .filter(|(k, _)| k == "expand")
        .flat_map(|(_, v)| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let with_body = expand.iter().any(|e| e.starts_with("content.body"));
    let cap = if with_body { 50 } else { 100 };
    let limit = match req.param("limit").filter(|l| !l.is_empty()) {
        None => 25,
        Some(l) => match l.parse::<usize>() {
            Ok(n) => n.clamp(1, cap),
            Err(_) => return bad(400, &format!("limit '{l}' is not a number")),
        },
    };
    let limit = req.page_size(limit);
    let start = match req.param("cursor").filter(|c| !c.is_empty()) {
        Some(c) => match CURSOR.decode(&c, &cql) {
            Some(o) => o,
            None => return bad(400, "Invalid cursor"),
        },
        None => req.param("start").and_then(|s| s.parse().ok()).unwrap_or(0),
    };
    let terms = collect_terms(&parsed.expr);
    let pages = dataset::confluence_pages();
    let engine = search::declared("confluence");
    let mut hits = dataset::confluence_docs().scored(engine, &terms, |i| {
        parsed.expr.eval(&|c| holds(c, &pages[i], i))
    });
    let field = parsed
        .order
        .as_ref()
        .map_or("lastmodified", |(f, _)| f.as_str());
    sort_hits(
        &mut hits,
        sort_as(
            engine,
            parsed.order.as_ref().map(|(_, ascending)| *ascending),
        ),
        |i| match field {
            "created" => pages[i].created_unix,
            _ => pages[i].updated_unix,
        },
    );
    let results: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(limit)
        .map(|hit| result_json(&pages[hit.index], &terms, &expand))
        .collect();
    let size = results.len();
    let mut links = json!({
        "base": CONFLUENCE_BASE,
        "context": "/wiki",
        "self": format!("{CONFLUENCE_BASE}/rest/api/search"),
    });
    if start + limit < hits.len() {
        let mut params = vec![
            ("next", "true".to_string()),
            ("cursor", CURSOR.encode(start + limit, &cql)),
        ];
        if !expand.is_empty() {
            params.push(("expand", expand.join(",")));
        }
        params.push(("limit", limit.to_string()));
        params.push(("start", (start + limit).to_string()));
        params.push(("cql", cql.clone()));
        let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        links["next"] = json!(http::with_query("/rest/api/search", &refs));
    }
    let mut answer = http::json(
        200,
        &json!({
            "results": results,
            "start": start,
            "limit": limit,
            "size": size,
            "totalSize": hits.len(),
            "cqlQuery": cql,
            "searchDuration": 37 + (hits.len() % 50),
            "archivedResultCount": 0,
            "_links": links,
        }),
    );
    note_page(&mut answer, pages, hits.iter().skip(start).take(limit));
    answer
}

/// Wraps the query's words in Confluence's highlight markers.
fn highlight(text: &str, terms: &Query) -> String {
    let words = terms.positive_words();
    let stemming = *search::declared("confluence").stemming;
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let norm = stemming.stem(&word.to_lowercase());
        if words.contains(&norm) {
            out.push_str(&format!("@@@hl@@@{word}@@@endhl@@@"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn excerpt(page: &ConfluencePage, terms: &Query) -> String {
    let flat = page.body_text.replace('\n', " ");
    let mut cut = flat.len().min(240);
    while !flat.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut text = flat[..cut].to_string();
    if cut < flat.len() {
        text.push_str("...");
    }
    highlight(&text, terms)
}

fn user(name: &str, account_id: &str) -> Value {
    json!({
        "type": "known",
        "accountId": account_id,
        "accountType": "atlassian",
        "displayName": name,
        "publicName": name,
    })
}

fn result_json(page: &ConfluencePage, terms: &Query, expand: &[String]) -> Value {
    let has = |e: &str| expand.iter().any(|x| x == e);
    let mut content = json!({
        "id": page.id,
        "type": page.content_type,
        "status": "current",
        "title": page.title,
        "macroRenderedOutput": {},
        "extensions": {"position": 1 + dataset::fnv(&page.id) % 900},
        "_expandable": {
            "container": "",
            "metadata": "",
            "restrictions": format!("/rest/api/content/{}/restriction/byOperation", page.id),
            "history": format!("/rest/api/content/{}/history", page.id),
            "body": "",
            "version": "",
            "descendants": format!("/rest/api/content/{}/descendant", page.id),
            "space": format!("/rest/api/space/{}", page.space_key),
        },
        "_links": {
            "webui": page.webui,
            "self": format!("https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/content/{}", dataset::JIRA_CLOUD_ID, page.id),
            "tinyui": format!("/x/{}", &dataset::fnv(&page.id).to_string()[..6]),
        },
    });
    if has("content.body.storage") {
        content["body"] = json!({"storage": {"value": page.body_storage, "representation": "storage", "embeddedContent": []}});
    } else if has("content.body.view") {
        content["body"] = json!({"view": {"value": page.body_storage, "representation": "view"}});
    }
    if has("content.history") {
        content["history"] = json!({
            "latest": true,
            "createdBy": user(&page.author_name, &page.author_account_id),
            "createdDate": page.created,
        });
    }
    if has("content.version") {
        content["version"] = json!({
            "by": user(&page.editor_name, &page.editor_account_id),
            "when": page.updated,
            "number": page.version,
            "minorEdit": false,
        });
    }
    if has("content.space") {
        let space = format!("/rest/api/space/{}", page.space_key);
        content["space"] = json!({
            "key": page.space_key,
            "name": page.space_name,
            "type": "global",
            "status": "current",
            "_expandable": {"settings": format!("{space}/settings"), "homepage": "", "description": ""},
            "_links": {"webui": format!("/spaces/{}", page.space_key), "self": format!("{CONFLUENCE_BASE}{space}")},
        });
    }
    if let Some(map) = content["_expandable"].as_object_mut() {
        for (key, e) in [
            ("body", "content.body"),
            ("history", "content.history"),
            ("version", "content.version"),
            ("space", "content.space"),
        ] {
            if expand.iter().any(|x| x.starts_with(e)) {
                map.remove(key);
            }
        }
    }
    let (y, m, d, ..) = time::parts(page.updated_unix);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    json!({
        "content": content,
        "title": highlight(&page.title, terms),
        "excerpt": excerpt(page, terms),
        "url": page.webui,
        "resultGlobalContainer": {"title": page.space_name, "displayUrl": format!("/spaces/{}", page.space_key)},
        "breadcrumbs": [],
        "entityType": "content",
        "iconCssClass": if page.content_type == "blogpost" { "aui-icon content-type-blogpost" } else { "aui-icon content-type-page" },
        "lastModified": page.updated,
        "friendlyLastModified": format!("{} {d:02}, {y}", MONTHS[(m - 1) as usize]),
        "score": 0.0,
    })
}

fn v2_page(page: &ConfluencePage, body_format: Option<&str>) -> Value {
    let mut v = json!({
        "id": page.id,
        "status": "current",
        "title": page.title,
        "spaceId": (dataset::fnv(&page.space_key) % 100_000_000).to_string(),
        "authorId": page.author_account_id,
        "createdAt": page.created,
        "version": {"number": page.version, "createdAt": page.updated, "authorId": page.editor_account_id, "minorEdit": false},
        "body": {},
        "_links": {"webui": page.webui, "base": CONFLUENCE_BASE},
    });
    if body_format == Some("storage") {
        v["body"] = json!({"storage": {"value": page.body_storage, "representation": "storage"}});
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cql() {
        let q = parse_cql(
            "siteSearch ~ \"\\\"load balancer\\\" checkout\" AND type in (page, blogpost) AND lastmodified >= \"2026-05-31 00:00\" ORDER BY lastmodified DESC",
        )
        .unwrap();
        assert_eq!(q.order, Some(("lastmodified".into(), false)));
        let terms = collect_terms(&q.expr);
        assert_eq!(terms, text_search("\"load balancer\" checkout"));
        assert!(parse_cql("bogus = x").is_err());
        assert!(parse_cql("lastmodified >= \"yesterday\"").is_err());
        assert!(parse_cql("text ~ \"open").is_err());
        assert!(parse_cql("ORDER BY created").is_err());
        assert_eq!(CURSOR.decode(&CURSOR.encode(7, "x"), "x"), Some(7));
        assert_eq!(CURSOR.decode(&CURSOR.encode(7, "x"), "y"), None);
        assert_eq!(
            highlight("Checkout timeouts, again", &text_search("timeout")),
            "Checkout @@@hl@@@timeouts@@@endhl@@@, again"
        );
    }
}
