//! Google Drive API v3 on www.googleapis.com: `GET /drive/v3/files` (the query
//! language's `fullText`/`name contains`, `trashed`, `mimeType`, `modifiedTime` and
//! `createdTime` comparisons, `'x' in owners`, `and`/`or`/`not`, parentheses; `fields`
//! partial responses; `pageToken` paging), `GET /drive/v3/files/{id}` and
//! `GET /drive/v3/files/{id}/export` (Docs as text/plain with Google's byte-order mark,
//! Sheets as text/csv).
//!
//! Several words in one `fullText contains 'a b'` must all appear; a quoted phrase
//! (`'"a b"'`) must appear as is. Results are ranked by the number of `fullText` terms
//! matched, then by modification time; `orderBy` is refused with `fullText`, as Drive
//! refuses it.

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::cursor::CursorFormat;
use super::google::{bad_request, google_error, not_found, unauthorized};
use super::query_lang::{self, Language, Parser, SyntaxError, Tok};
use super::{auth, sort_as};
use crate::Shared;
use crate::dataset::{self, DriveFile, MIME_DOC, MIME_SHEET};
use crate::http::{self, Req};
use crate::search::{self, Query, sort_hits};
use crate::tokens::Vendor;

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    if auth(shared, Vendor::GoogleDrive, req).user().is_none() {
        return unauthorized();
    }
    let segs = req.segments();
    match (&req.method, segs.as_slice()) {
        (&Method::GET, ["drive", "v3", "files"]) => list(req),
        (&Method::GET, ["drive", "v3", "files", id]) => match find(id) {
            Some(f) => {
                let default = "kind,id,name,mimeType";
                let mask = parse_fields(&req.param("fields").unwrap_or_else(|| default.into()));
                http::json(200, &select(&file_json(f), &mask))
            }
            None => not_found(&format!("File not found: {id}.")),
        },
        (&Method::GET, ["drive", "v3", "files", id, "export"]) => export(req, id),
        (&Method::GET, ["drive", "v3", "about"]) => http::json(
            200,
            &json!({"kind": "drive#about", "user": {"kind": "drive#user", "displayName": "Acme", "emailAddress": "drive@acme-shop.example"}}),
        ),
        _ => not_found("Not Found"),
    }
}

fn find(id: &str) -> Option<&'static DriveFile> {
    dataset::drive_files().iter().find(|f| f.id == id)
}

fn export(req: &Req, id: &str) -> Response {
    let Some(file) = find(id) else {
        return not_found(&format!("File not found: {id}."));
    };
    let Some(mime) = req.param("mimeType").filter(|m| !m.is_empty()) else {
        return google_error(
            400,
            "Required parameter: mimeType",
            "required",
            "INVALID_ARGUMENT",
        );
    };
    let text = match (file.mime_type.as_str(), mime.as_str()) {
        (MIME_DOC, "text/plain") => format!("\u{feff}{}", file.text.replace('\n', "\r\n")),
        (MIME_SHEET, "text/csv") => file.text.clone(),
        (MIME_DOC | MIME_SHEET, _) => {
            return bad_request("The requested conversion is not supported.");
        }
        _ => {
            return google_error(
                403,
                "Export only supports Docs Editors files.",
                "fileNotExportable",
                "PERMISSION_DENIED",
            );
        }
    };
    http::raw(200, &format!("{mime}; charset=utf-8"), text)
}

// ---------------------------------------------------------------------------------------
// The query language

/// Drive's `q` language.
struct DriveQuery;

impl Language for DriveQuery {
    type Clause = Term;
    const QUOTES: &'static [char] = &['\''];
    const TILDE: bool = false;
    const COMMA: bool = false;
    const WORD_CHARS: &'static [char] = &['_'];

    fn clause(p: &mut Parser<Self>) -> Result<Term, String> {
        p.term()
    }
    fn syntax_error(e: SyntaxError) -> String {
        match e {
            SyntaxError::Unterminated(_) => "unterminated string".into(),
            SyntaxError::LoneBang => "unexpected '!'".into(),
            SyntaxError::Unexpected(c) => format!("unexpected character {c:?}"),
            SyntaxError::MissingParen => "missing ')'".into(),
        }
    }
}

#[derive(Clone, Debug)]
enum Term {
    /// `field op value`
    Cmp(String, String, Value),
    /// `'value' in field`
    In(String, String),
}

type Expr = query_lang::Expr<Term>;

impl Parser<DriveQuery> {
    fn term(&mut self) -> Result<Term, String> {
        match self.bump() {
            Some(Tok::Str(v)) => {
                if !self.at_keyword("in") {
                    return Err("expected 'in'".into());
                }
                self.bump();
                match self.bump() {
                    Some(Tok::Word(f))
                        if matches!(f.as_str(), "owners" | "parents" | "writers" | "readers") =>
                    {
                        Ok(Term::In(v, f))
                    }
                    _ => Err("expected a collection after 'in'".into()),
                }
            }
            Some(Tok::Word(field)) => {
                let op = match self.bump() {
                    Some(Tok::Op(o)) => o,
                    Some(Tok::Word(w)) if w == "contains" => w,
                    _ => return Err(format!("expected an operator after {field}")),
                };
                let value = match self.bump() {
                    Some(Tok::Str(v)) => Value::String(v),
                    Some(Tok::Word(w)) if w == "true" || w == "false" => Value::Bool(w == "true"),
                    _ => return Err(format!("expected a value after {field} {op}")),
                };
                let ok = match field.as_str() {
                    "fullText" => op == "contains",
                    "name" | "mimeType" => matches!(op.as_str(), "contains" | "=" | "!="),
                    "modifiedTime" | "createdTime" | "viewedByMeTime" => {
                        op != "contains" && value.as_str().and_then(crate::time::parse).is_some()
                    }
                    "trashed" | "starred" | "sharedWithMe" => {
                        matches!(op.as_str(), "=" | "!=") && value.is_boolean()
                    }
                    _ => false,
                };
                if ok {
                    Ok(Term::Cmp(field, op, value))
                } else {
                    Err(format!("invalid term on {field}"))
                }
            }
            _ => Err("expected a term".into()),
        }
    }
}

fn parse(q: &str) -> Result<Option<Expr>, String> {
    let t = query_lang::lex::<DriveQuery>(q)?;
    if t.is_empty() {
        return Ok(None);
    }
    let mut p = Parser::<DriveQuery>::new(t);
    let e = p.or()?;
    if !p.at_end() {
        return Err("unexpected trailing input".into());
    }
    Ok(Some(e))
}

/// How Drive reads the value of a `fullText contains` clause.
fn full_text_query(value: &str) -> Query {
    search::declared("google-drive")
        .parse(value)
        .unwrap_or_default()
}

/// Whether the file at `position` satisfies the expression.
fn eval(e: &Expr, f: &DriveFile, position: usize) -> bool {
    e.eval(&|term| holds(term, f, position))
}

fn holds(term: &Term, f: &DriveFile, position: usize) -> bool {
    match term {
        Term::In(v, coll) => match coll.as_str() {
            "owners" | "writers" | "readers" => f.owner_email.eq_ignore_ascii_case(v),
            _ => v == "root",
        },
        Term::Cmp(field, op, value) => {
            let text = value.as_str().unwrap_or_default();
            match field.as_str() {
                "fullText" => {
                    let q = full_text_query(text);
                    let engine = search::declared("google-drive");
                    !q.is_empty() && dataset::drive_docs().matches(position, engine, &q)
                }
                "name" => {
                    let name = f.name.to_lowercase();
                    let v = text.to_lowercase();
                    match op.as_str() {
                        "contains" => name.contains(&v),
                        "=" => name == v,
                        _ => name != v,
                    }
                }
                "mimeType" => match op.as_str() {
                    "contains" => f.mime_type.contains(text),
                    "=" => f.mime_type == text,
                    _ => f.mime_type != text,
                },
                "trashed" => (f.trashed == (value == &Value::Bool(true))) == (op == "="),
                "starred" | "sharedWithMe" => (value == &Value::Bool(false)) == (op == "="),
                "viewedByMeTime" => false,
                _ => {
                    let t = if field == "modifiedTime" {
                        f.modified_unix
                    } else {
                        f.created_unix
                    };
                    let Some(at) = crate::time::parse(text) else {
                        return false;
                    };
                    match op.as_str() {
                        "<" => t < at.start,
                        "<=" => t <= at.start,
                        ">" => t > at.start,
                        ">=" => t >= at.start,
                        "=" => t == at.start,
                        _ => t != at.start,
                    }
                }
            }
        }
    }
}

/// The terms of the positive `fullText` clauses, for ranking.
fn collect_terms(e: &Expr) -> Query {
    let mut texts = Vec::new();
    e.for_each_clause(true, &mut |term, positive| {
        if let Term::Cmp(field, _, v) = term
            && positive
            && field == "fullText"
        {
            texts.push(full_text_query(v.as_str().unwrap_or_default()));
        }
    });
    Query::any_of(texts)
}

fn uses_full_text(e: &Expr) -> bool {
    e.any_clause(&|term| matches!(term, Term::Cmp(field, ..) if field == "fullText"))
}

// ---------------------------------------------------------------------------------------
// files.list

const PAGE_TOKEN: CursorFormat = CursorFormat::new("~!!~", "~");

fn list(req: &Req) -> Response {
    let q = req.param("q").unwrap_or_default();
    let expr = match parse(&q) {
        Ok(e) => e,
        Err(_) => {
            return google_error(400, "Invalid Value", "invalid", "INVALID_ARGUMENT");
        }
    };
    let page_size = match req.param("pageSize").filter(|s| !s.is_empty()) {
        None => 100,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=1000).contains(&n) => n,
            _ => {
                return bad_request(&format!(
                    "Invalid value '{s}'. Values must be within the range: [1, 1000]"
                ));
            }
        },
    };
    let page_size = req.page_size(page_size);
    if expr.as_ref().is_some_and(uses_full_text) && req.param("orderBy").is_some() {
        return bad_request(
            "Sorting is not supported for queries with fullText terms. Results are always in descending relevance order.",
        );
    }
    let terms = expr.as_ref().map(collect_terms).unwrap_or_default();
    let files = dataset::drive_files();
    let engine = search::declared("google-drive");
    // Every file the expression admits, those that hold the fullText terms
    // best first; a file admitted by other clauses alone still counts.
    let mut hits = dataset::drive_docs().scored(engine, &terms, |i| {
        expr.as_ref().is_none_or(|e| eval(e, &files[i], i))
    });
    sort_hits(&mut hits, sort_as(engine, None), |i| files[i].modified_unix);
    let order: Vec<usize> = hits.iter().map(|hit| hit.index).collect();
    let start = match req.param("pageToken").filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => match PAGE_TOKEN.decode(&t, &q) {
            Some(o) => o,
            None => return bad_request("Invalid Value"),
        },
    };
    let page: Vec<Value> = order
        .iter()
        .skip(start)
        .take(page_size)
        .map(|i| file_json(&files[*i]))
        .collect();
    let mut body = json!({
        "kind": "drive#fileList",
        "incompleteSearch": false,
        "files": page,
    });
    if start + page_size < order.len() {
        body["nextPageToken"] = json!(PAGE_TOKEN.encode(start + page_size, &q));
    }
    let default = "kind,nextPageToken,incompleteSearch,files(kind,id,name,mimeType)";
    let mask = parse_fields(&req.param("fields").unwrap_or_else(|| default.into()));
    let mut answer = http::json(200, &select(&body, &mask));
    let answered = order.iter().skip(start).take(page_size);
    http::note_returned(
        &mut answer,
        answered.map(|&i| files[i].web_view_link.as_str()),
    );
    answer
}

fn file_json(f: &DriveFile) -> Value {
    let owner = json!({
        "kind": "drive#user",
        "displayName": f.owner_name,
        "emailAddress": f.owner_email,
        "me": false,
        "permissionId": format!("{:020}", dataset::fnv(&f.owner_email)),
    });
    let mut v = json!({
        "kind": "drive#file",
        "id": f.id,
        "name": f.name,
        "mimeType": f.mime_type,
        "starred": false,
        "trashed": f.trashed,
        "explicitlyTrashed": f.trashed,
        "parents": ["0AAcmeSharedDriveRootPVA"],
        "webViewLink": f.web_view_link,
        "iconLink": format!("https://drive-thirdparty.googleusercontent.com/16/type/{}", f.mime_type),
        "createdTime": f.created_time,
        "modifiedTime": f.modified_time,
        "owners": [owner],
        "lastModifyingUser": {"kind": "drive#user", "displayName": f.last_modifier_name, "me": false},
        "shared": true,
        "ownedByMe": false,
        "version": (3 + dataset::fnv(&f.id) % 200).to_string(),
    });
    if let Some(d) = &f.description {
        v["description"] = json!(d);
    }
    if f.mime_type == dataset::MIME_PDF {
        v["size"] = json!((180_000 + dataset::fnv(&f.id) % 900_000).to_string());
        v["fileExtension"] = json!("pdf");
    }
    v
}

// ---------------------------------------------------------------------------------------
// Partial responses (`fields`)

#[derive(Debug, Clone)]
struct Mask(Vec<(String, Option<Mask>)>);

fn parse_fields(spec: &str) -> Mask {
    fn parse_list(cs: &[char], i: &mut usize) -> Mask {
        let mut out = Vec::new();
        let mut name = String::new();
        while *i < cs.len() {
            let c = cs[*i];
            *i += 1;
            match c {
                ',' => {
                    if !name.trim().is_empty() {
                        out.push((name.trim().to_string(), None));
                    }
                    name.clear();
                }
                '(' => {
                    let sub = parse_list(cs, i);
                    out.push((name.trim().to_string(), Some(sub)));
                    name.clear();
                    if cs.get(*i) == Some(&',') {
                        *i += 1;
                    }
                }
                ')' => break,
                c => name.push(c),
            }
        }
        if !name.trim().is_empty() {
            out.push((name.trim().to_string(), None));
        }
        // `a/b` is `a(b)`.
        Mask(
            out.into_iter()
                .map(|(n, sub)| match n.split_once('/') {
                    Some((head, tail)) => {
                        (head.to_string(), Some(Mask(vec![(tail.to_string(), sub)])))
                    }
                    None => (n, sub),
                })
                .collect(),
        )
    }
    let cs: Vec<char> = spec.chars().collect();
    let mut i = 0;
    parse_list(&cs, &mut i)
}

fn select(v: &Value, mask: &Mask) -> Value {
    if mask.0.iter().any(|(n, _)| n == "*") {
        return v.clone();
    }
    match v {
        Value::Array(a) => Value::Array(a.iter().map(|x| select(x, mask)).collect()),
        Value::Object(o) => {
            let mut out = Map::new();
            for (name, sub) in &mask.0 {
                if let Some(x) = o.get(name) {
                    out.insert(
                        name.clone(),
                        match sub {
                            Some(m) => select(x, m),
                            None => x.clone(),
                        },
                    );
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_queries_and_masks() {
        assert!(parse("(fullText contains 'a' or fullText contains '\"b c\"') and trashed = false and modifiedTime >= '2026-06-01T00:00:00Z'").unwrap().is_some());
        assert!(parse("name contains 'o\\'brien' and 'x@y.z' in owners").is_ok());
        assert!(parse("fullText = 'a'").is_err());
        assert!(parse("bogus contains 'a'").is_err());
        assert!(parse("fullText contains 'a").is_err());
        let mask = parse_fields("nextPageToken,files(id,owners(displayName)),x/y");
        let v = json!({"nextPageToken": "t", "kind": "k", "files": [{"id": "1", "name": "n", "owners": [{"displayName": "d", "me": false}]}], "x": {"y": 1, "z": 2}});
        assert_eq!(
            select(&v, &mask),
            json!({"nextPageToken": "t", "files": [{"id": "1", "owners": [{"displayName": "d"}]}], "x": {"y": 1}})
        );
        let t = PAGE_TOKEN.encode(12, "q");
        assert_eq!(PAGE_TOKEN.decode(&t, "q"), Some(12));
        assert_eq!(PAGE_TOKEN.decode(&t, "r"), None);
    }
}
