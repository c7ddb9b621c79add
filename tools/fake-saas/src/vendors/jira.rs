//! Jira Cloud through api.atlassian.com (accessible-resources, `search/jql`, issue) and
//! Atlassian OAuth on auth.atlassian.com (authorize and token: Atlassian documents no
//! revocation endpoint for OAuth 2.0 apps, so the fake has none),
//! both shared with Confluence (see `confluence.rs`).

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::cursor::CursorFormat;
use super::query_lang::{self, Language, Parser, SyntaxError, Tok};
use super::{auth, note_page, oauth, sort_as};
use crate::Shared;
use crate::dataset::{self, JiraIssue};
use crate::http::{self, Req};
use crate::search::{self, Query, sort_hits};
use crate::time::{self, Range};
use crate::tokens::{Auth, Vendor};

const ALL_FIELDS: &[&str] = &[
    "summary",
    "description",
    "creator",
    "reporter",
    "assignee",
    "created",
    "updated",
    "status",
    "issuetype",
    "priority",
    "project",
    "labels",
    "resolution",
    "resolutiondate",
];

fn errors(status: u16, messages: &[&str]) -> Response {
    http::json(
        status,
        &json!({"errorMessages": messages, "errors": {}, "warningMessages": []}),
    )
}

fn unauthorized() -> Response {
    http::json(401, &json!({"code": 401, "message": "Unauthorized"}))
}

/// Jira's error for a status (faults).
pub(crate) fn error(status: u16, retry_after: Option<u32>) -> Response {
    match status {
        401 => unauthorized(),
        429 => {
            let mut r = errors(429, &["Rate limit exceeded."]);
            let reset = time::now_unix() + retry_after.unwrap_or(30) as i64;
            http::set(&mut r, "x-ratelimit-limit", "350");
            http::set(&mut r, "x-ratelimit-remaining", "0");
            http::set(&mut r, "x-ratelimit-reset", time::rfc3339(reset));
            http::set(&mut r, "ratelimit-reason", "jira-burst-based");
            r
        }
        404 => http::json(404, &json!({"code": 404, "message": "Not Found"})),
        500 => errors(500, &["Internal server error"]),
        503 => http::json(503, &json!({"code": 503, "message": "Service Unavailable"})),
        s => errors(s, &[http::status(s).canonical_reason().unwrap_or("Error")]),
    }
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    if req.host == "auth.atlassian.com" {
        // Jira and Confluence share Atlassian's OAuth server: the scopes asked for, the
        // code or the token presented say which product a request is about.
        return match (&req.method, path) {
            (&Method::GET, "/authorize") => {
                let vendor = match req.param("scope") {
                    Some(s) if s.contains("confluence") => Vendor::Confluence,
                    _ => Vendor::Jira,
                };
                oauth::authorize(shared, vendor, req)
            }
            (&Method::POST, "/oauth/token") => {
                oauth::token(shared, atlassian_vendor(shared, req), req)
            }
            _ => http::json(
                404,
                &json!({"error": "not_found", "error_description": "Not Found"}),
            ),
        };
    }
    // api.atlassian.com
    if path == "/oauth/token/accessible-resources" && req.method == Method::GET {
        // The same site for Jira and Confluence tokens, with the token's scopes.
        let scopes = if matches!(auth(shared, Vendor::Jira, req), Auth::Ok(_)) {
            json!(["read:jira-work"])
        } else if matches!(auth(shared, Vendor::Confluence, req), Auth::Ok(_)) {
            json!([
                "search:confluence",
                "read:confluence-content.summary",
                "read:confluence-content.all"
            ])
        } else {
            return unauthorized();
        };
        return http::json(
            200,
            &json!([{
                "id": dataset::JIRA_CLOUD_ID,
                "url": dataset::JIRA_SITE,
                "name": "acme",
                "scopes": scopes,
                "avatarUrl": "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png",
            }]),
        );
    }
    let Some(user) = auth(shared, Vendor::Jira, req).user() else {
        return unauthorized();
    };
    let segs = req.segments();
    let ["ex", "jira", cloud, rest @ ..] = segs.as_slice() else {
        return http::json(404, &json!({"code": 404, "message": "Not Found"}));
    };
    if *cloud != dataset::JIRA_CLOUD_ID {
        return http::json(404, &json!({"code": 404, "message": "Not Found"}));
    }
    match (&req.method, rest) {
        (&Method::GET | &Method::POST, ["rest", "api", "3", "search", "jql"]) => search(req),
        (_, ["rest", "api", "3" | "2", "search"]) => errors(
            410,
            &[
                "The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046",
            ],
        ),
        (&Method::GET, ["rest", "api", "3", "issue", key]) => {
            let key = key.to_ascii_uppercase();
            match dataset::jira_issues()
                .iter()
                .find(|i| i.key == key || i.id == key)
            {
                Some(i) => {
                    let fields = requested_fields(
                        req.query_pairs()
                            .into_iter()
                            .filter(|(k, _)| k == "fields")
                            .map(|(_, v)| v)
                            .collect(),
                        true,
                    );
                    http::json(200, &issue_json(i, &fields))
                }
                None => errors(
                    404,
                    &["Issue does not exist or you do not have permission to see it."],
                ),
            }
        }
        (&Method::GET, ["rest", "api", "3", "myself"]) => http::json(
            200,
            &json!({
                "self": format!("{}/rest/api/3/user?accountId=712020:{}", api_base(), dataset::uuid(&format!("jira-login:{user}"))),
                "accountId": format!("712020:{}", dataset::uuid(&format!("jira-login:{user}"))),
                "accountType": "atlassian",
                "displayName": user,
                "active": true,
                "timeZone": "Europe/Berlin",
                "locale": "en_US",
            }),
        ),
        _ => errors(404, &["Not Found"]),
    }
}

/// Jira or Confluence: the vendor of the code or refresh token a token request presents.
fn atlassian_vendor(shared: &Shared, req: &Req) -> Vendor {
    let tokens = shared.tokens();
    let from_code = req
        .body_or_query("code")
        .and_then(|c| tokens.code_vendor(&c));
    let from_refresh = req
        .body_or_query("refresh_token")
        .and_then(|t| tokens.info(&t).map(|i| i.vendor));
    from_code
        .or(from_refresh)
        .filter(|v| *v == Vendor::Confluence)
        .unwrap_or(Vendor::Jira)
}

fn api_base() -> String {
    format!(
        "https://api.atlassian.com/ex/jira/{}",
        dataset::JIRA_CLOUD_ID
    )
}

// ---------------------------------------------------------------------------------------
// JQL

/// Jira's query language.
struct JqlLanguage;

impl Language for JqlLanguage {
    type Clause = Clause;
    const WORD_CHARS: &'static [char] = &['_', '-', '.', '/', '*', '+', ':'];

    fn clause(p: &mut Parser<Self>) -> Result<Clause, String> {
        p.clause()
    }
    fn syntax_error(e: SyntaxError) -> String {
        let detail = match e {
            SyntaxError::Unterminated(text) => {
                format!("The quoted string '{text}' has not been completed.")
            }
            SyntaxError::LoneBang => "The character '!' is a reserved JQL character.".into(),
            SyntaxError::Unexpected(c) => format!(
                "The character '{c}' is a reserved JQL character. You must enclose it in a string or use the escape '\\u{:04x}' instead.",
                c as u32
            ),
            SyntaxError::MissingParen => "Expecting ')' before the end of the query.".into(),
        };
        format!("Error in the JQL Query: {detail}")
    }
}

#[derive(Clone, Debug)]
enum Val {
    Text(String),
    Func(String, Vec<String>),
    Empty,
}

/// `field op value(s)`.
#[derive(Clone, Debug)]
struct Clause {
    field: String,
    op: String,
    vals: Vec<Val>,
}

type Expr = query_lang::Expr<Clause>;

struct Jql {
    expr: Option<Expr>,
    order: Vec<(String, bool)>,
}

const FIELDS: &[&str] = &[
    "text",
    "summary",
    "description",
    "comment",
    "project",
    "key",
    "issuekey",
    "id",
    "status",
    "statuscategory",
    "type",
    "issuetype",
    "priority",
    "labels",
    "creator",
    "reporter",
    "assignee",
    "resolution",
    "created",
    "createddate",
    "updated",
    "updateddate",
    "resolved",
    "resolutiondate",
];

impl Parser<JqlLanguage> {
    fn parse(&mut self) -> Result<Jql, String> {
        let expr = if self.peek().is_none() || self.at_keyword("order") {
            None
        } else {
            Some(self.or()?)
        };
        let mut order = Vec::new();
        if self.at_keyword("order") {
            self.bump();
            if !self.at_keyword("by") {
                return Err(
                    "Error in the JQL Query: Expecting 'by' but got the end of the query.".into(),
                );
            }
            self.bump();
            loop {
                let f = match self.bump() {
                    Some(Tok::Word(w)) | Some(Tok::Str(w)) => w.to_ascii_lowercase(),
                    _ => {
                        return Err(
                            "Error in the JQL Query: Expecting a field name after 'order by'."
                                .into(),
                        );
                    }
                };
                let by_key = matches!(f.as_str(), "key" | "issuekey" | "id");
                order.push((f, self.direction().unwrap_or(by_key)));
                if self.peek() == Some(&Tok::Comma) {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        if let Some(t) = self.peek() {
            return Err(format!(
                "Error in the JQL Query: Expecting either 'OR' or 'AND' but got '{}'.",
                show(t)
            ));
        }
        Ok(Jql { expr, order })
    }
    fn clause(&mut self) -> Result<Clause, String> {
        let field =
            match self.bump() {
                Some(Tok::Word(w)) | Some(Tok::Str(w)) => w,
                Some(t) => {
                    return Err(format!(
                        "Error in the JQL Query: Expecting a field name but got '{}'.",
                        show(&t)
                    ));
                }
                None => return Err(
                    "Error in the JQL Query: Expecting a field name but got the end of the query."
                        .into(),
                ),
            };
        let lf = field.to_ascii_lowercase();
        if !FIELDS.contains(&lf.as_str()) {
            return Err(format!(
                "Field '{field}' does not exist or you do not have permission to view it."
            ));
        }
        let op = match self.bump() {
            Some(Tok::Op(o)) => o,
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("in") => "in".into(),
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("is") => {
                if self.at_keyword("not") {
                    self.bump();
                    "is not".into()
                } else {
                    "is".into()
                }
            }
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("not") && self.at_keyword("in") => {
                self.bump();
                "not in".into()
            }
            _ => {
                return Err(format!(
                    "Error in the JQL Query: Expecting operator but got the end of the query or an invalid operator after '{field}'."
                ));
            }
        };
        let text_field = matches!(lf.as_str(), "text" | "summary" | "description" | "comment");
        if (op == "~" || op == "!~") != text_field
            && !(text_field && (op == "is" || op == "is not"))
        {
            return Err(format!(
                "The operator '{op}' is not supported by the '{field}' field."
            ));
        }
        let vals = if op == "in" || op == "not in" {
            if self.bump() != Some(Tok::LParen) {
                return Err("Error in the JQL Query: Expecting '(' after 'in'.".into());
            }
            let mut v = Vec::new();
            loop {
                v.push(self.value()?);
                match self.bump() {
                    Some(Tok::Comma) => continue,
                    Some(Tok::RParen) => break,
                    _ => {
                        return Err(
                            "Error in the JQL Query: Expecting ')' or ',' in the list.".into()
                        );
                    }
                }
            }
            v
        } else {
            vec![self.value()?]
        };
        Ok(Clause {
            field: lf,
            op,
            vals,
        })
    }
    fn value(&mut self) -> Result<Val, String> {
        match self.bump() {
            Some(Tok::Str(s)) => Ok(Val::Text(s)),
            Some(Tok::Word(w)) => {
                if w.eq_ignore_ascii_case("empty") || w.eq_ignore_ascii_case("null") {
                    return Ok(Val::Empty);
                }
                if self.peek() == Some(&Tok::LParen) {
                    self.bump();
                    let mut args = Vec::new();
                    while self.peek() != Some(&Tok::RParen) {
                        match self.bump() {
                            Some(Tok::Word(a)) | Some(Tok::Str(a)) => args.push(a),
                            Some(Tok::Comma) => {}
                            _ => {
                                return Err(format!(
                                    "Error in the JQL Query: Unterminated call to function '{w}'."
                                ));
                            }
                        }
                    }
                    self.bump();
                    return Ok(Val::Func(w.to_ascii_lowercase(), args));
                }
                Ok(Val::Text(w))
            }
            Some(t) => Err(format!(
                "Error in the JQL Query: Expecting a value but got '{}'.",
                show(&t)
            )),
            None => Err(
                "Error in the JQL Query: Expecting a value but got the end of the query.".into(),
            ),
        }
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Word(w) | Tok::Str(w) | Tok::Op(w) => w.clone(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
        Tok::Comma => ",".into(),
    }
}

fn parse_jql(s: &str) -> Result<Jql, String> {
    Parser::<JqlLanguage>::new(query_lang::lex::<JqlLanguage>(s)?).parse()
}

/// `-7d`, `2w`, `-4h`, `30m` as seconds.
fn relative(s: &str) -> Option<i64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.len().checked_sub(1)?);
    let n: i64 = num.parse().ok()?;
    let mult = match unit {
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        "w" => 7 * 86400,
        _ => return None,
    };
    Some(n * mult)
}

fn date_value(v: &Val) -> Result<i64, String> {
    match v {
        Val::Text(s) => {
            if let Some(off) = relative(s) {
                return Ok(time::now_unix() + off);
            }
            time::parse(s)
                .map(|i| i.start)
                .ok_or_else(|| format!("Date value '{s}' for field is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'."))
        }
        Val::Func(f, args) => {
            let now = time::now_unix();
            let off = args.first().and_then(|a| relative(a)).unwrap_or(0);
            let day = now.div_euclid(86400) * 86400;
            let (y, m, _) = time::civil_from_days(now.div_euclid(86400));
            let t = match f.as_str() {
                "now" => now,
                "startofday" => day,
                "endofday" => day + 86399,
                "startofweek" => day - ((now.div_euclid(86400) + 3).rem_euclid(7) + 1) % 7 * 86400,
                "startofmonth" => time::unix_of_date(y, m, 1),
                "startofyear" => time::unix_of_date(y, 1, 1),
                _ => return Err(format!("Unable to find JQL function '{f}()'.")),
            };
            Ok(t + off)
        }
        Val::Empty => Err("EMPTY is not a valid date".into()),
    }
}

/// Validates date values and functions before evaluation (so errors become 400s).
fn validate(e: &Expr) -> Result<(), String> {
    let mut first_error = Ok(());
    e.for_each_clause(true, &mut |Clause { field, op, vals }, _| {
        if first_error.is_ok() && is_date_field(field) && !op.starts_with("is") {
            first_error = vals.iter().try_for_each(|v| date_value(v).map(|_| ()));
        }
    });
    first_error
}

fn is_date_field(f: &str) -> bool {
    matches!(
        f,
        "created" | "createddate" | "updated" | "updateddate" | "resolved" | "resolutiondate"
    )
}

fn text_of(v: &Val) -> String {
    match v {
        Val::Text(s) => s.clone(),
        Val::Func(f, _) => format!("{f}()"),
        Val::Empty => String::new(),
    }
}

struct Ctx<'a> {
    issue: &'a JiraIssue,
    /// The issue's position in the index.
    position: usize,
}

/// How Jira reads the text of a `~` clause.
fn text_search(text: &str) -> Query {
    search::declared("jira").parse(text).unwrap_or_default()
}

fn eval(e: &Expr, c: &Ctx) -> bool {
    e.eval(&|Clause { field, op, vals }| clause(field, op, vals, c))
}

fn clause(field: &str, op: &str, vals: &[Val], c: &Ctx) -> bool {
    let i = c.issue;
    let negate = matches!(op, "!=" | "!~" | "not in" | "is not");
    let result = match field {
        "text" | "summary" | "description" | "comment" => {
            if op.starts_with("is") {
                match field {
                    "description" => i.description.is_empty(),
                    "comment" => true,
                    _ => false,
                }
            } else {
                let q = text_search(&text_of(&vals[0]));
                let engine = search::declared("jira");
                match field {
                    "text" => dataset::docs().jira.matches(c.position, engine, &q),
                    "summary" => engine.matches_text(&q, &i.summary),
                    "description" => engine.matches_text(&q, &i.description),
                    _ => false,
                }
            }
        }
        f if is_date_field(f) => {
            let t = match f {
                "created" | "createddate" => Some(i.created_unix),
                "updated" | "updateddate" => Some(i.updated_unix),
                _ => i
                    .resolution_date
                    .as_deref()
                    .and_then(time::parse)
                    .map(|x| x.start),
            };
            if op.starts_with("is") {
                t.is_none()
            } else {
                let Some(t) = t else { return false };
                vals.iter().any(|v| {
                    let Ok(at) = date_value(v) else { return false };
                    let sym = match op {
                        "!=" | "not in" | "in" => "=",
                        o => o,
                    };
                    Range::from_op(
                        sym,
                        time::Instant {
                            start: at,
                            end: at + 1,
                        },
                    )
                    .is_some_and(|r| r.contains(t))
                })
            }
        }
        _ => {
            let candidates: Vec<String> = match field {
                "project" => vec!["acme".into(), "acme shop".into(), "10000".into()],
                "key" | "issuekey" | "id" => vec![i.key.to_ascii_lowercase(), i.id.clone()],
                "status" => vec![i.status.to_ascii_lowercase()],
                "statuscategory" => vec![
                    i.status_category.clone(),
                    match i.status_category.as_str() {
                        "done" => "done".into(),
                        "indeterminate" => "in progress".into(),
                        _ => "to do".into(),
                    },
                ],
                "type" | "issuetype" => vec![i.issue_type.to_ascii_lowercase()],
                "priority" => vec![i.priority.to_ascii_lowercase()],
                "labels" => i.labels.clone(),
                "creator" | "reporter" => vec![
                    i.creator_display_name.to_ascii_lowercase(),
                    i.creator_account_id.to_ascii_lowercase(),
                ],
                "assignee" => vec![
                    i.assignee_display_name.to_ascii_lowercase(),
                    i.assignee_account_id.to_ascii_lowercase(),
                ],
                "resolution" => {
                    if i.resolution_date.is_some() {
                        vec!["done".into()]
                    } else {
                        vec![]
                    }
                }
                _ => vec![],
            };
            if op.starts_with("is") {
                candidates.is_empty()
            } else {
                vals.iter().any(|v| match v {
                    Val::Empty => candidates.is_empty(),
                    Val::Func(..) => false, // currentUser(): alice/bob are not employees
                    Val::Text(t) => {
                        let t = t.to_ascii_lowercase();
                        if field == "resolution" && t == "unresolved" {
                            candidates.is_empty()
                        } else {
                            candidates.contains(&t)
                        }
                    }
                })
            }
        }
    };
    result != negate
}

/// Terms of the positive `~` clauses, for ranking.
/// `nextPageToken`: opaque, as Jira's are.
const PAGE_TOKEN: CursorFormat = CursorFormat::new("o=", ";q=").lenient();

fn collect_terms(e: &Expr) -> Query {
    let mut texts = Vec::new();
    e.for_each_clause(true, &mut |Clause { field, op, vals }, positive| {
        let text_field = matches!(field.as_str(), "text" | "summary" | "description");
        if positive && op == "~" && text_field {
            texts.push(text_search(&text_of(&vals[0])));
        }
    });
    Query::any_of(texts)
}

/// The fields to return: `None`-like empty vec means ids only.
fn requested_fields(raw: Vec<String>, default_all: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut excluded: Vec<String> = Vec::new();
    if raw.is_empty() && default_all {
        return ALL_FIELDS.iter().map(|s| s.to_string()).collect();
    }
    for f in raw.iter().flat_map(|r| r.split(',')) {
        let f = f.trim();
        match f {
            "" => {}
            "*all" | "*navigable" => out.extend(ALL_FIELDS.iter().map(|s| s.to_string())),
            _ if f.starts_with('-') => excluded.push(f[1..].to_string()),
            _ => {
                if ALL_FIELDS.contains(&f) && !out.iter().any(|o| o == f) {
                    out.push(f.to_string());
                }
            }
        }
    }
    out.retain(|f| !excluded.contains(f));
    out.dedup();
    out
}

fn search(req: &Req) -> Response {
    let (jql, fields_raw, max, token) = if req.method == Method::POST {
        let Some(body) = req.json_object() else {
            return errors(
                400,
                &["Invalid request payload. Refer to the REST API documentation and try again."],
            );
        };
        let fields = match body.get("fields") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => vec![],
        };
        (
            body.get("jql")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            fields,
            body.get("maxResults").and_then(Value::as_u64),
            body.get("nextPageToken")
                .and_then(Value::as_str)
                .map(str::to_string),
        )
    } else {
        let pairs = req.query_pairs();
        let get = |n: &str| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let max = match get("maxResults") {
            None => None,
            Some(m) => match m.trim().parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    return errors(
                        400,
                        &[&format!(
                            "The value '{m}' is invalid for the maxResults parameter."
                        )],
                    );
                }
            },
        };
        (
            get("jql").unwrap_or_default(),
            pairs
                .iter()
                .filter(|(k, _)| k == "fields")
                .map(|(_, v)| v.clone())
                .collect(),
            max,
            get("nextPageToken").filter(|t| !t.is_empty()),
        )
    };
    let parsed = match parse_jql(&jql) {
        Ok(p) => p,
        Err(e) => return errors(400, &[&e]),
    };
    let Some(expr) = parsed.expr else {
        return errors(
            400,
            &[
                "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.",
            ],
        );
    };
    if let Err(e) = validate(&expr) {
        return errors(400, &[&e]);
    }
    let fields = requested_fields(fields_raw, false);
    let cap = if fields.is_empty() { 5000 } else { 100 };
    let max = req.page_size(max.unwrap_or(50).clamp(1, cap) as usize);
    let terms = collect_terms(&expr);
    let engine = search::declared("jira");
    let order = parsed.order.first().map(|(f, a)| (f.clone(), *a));
    let issues = dataset::jira_issues();
    let mut hits = dataset::docs().jira.scored(engine, &terms, |i| {
        eval(
            &expr,
            &Ctx {
                issue: &issues[i],
                position: i,
            },
        )
    });
    let sort_field = order
        .as_ref()
        .map_or("updated", |(f, _)| f.as_str())
        .to_string();
    sort_hits(
        &mut hits,
        sort_as(engine, order.map(|(_, ascending)| ascending)),
        |i| match sort_field.as_str() {
            "created" | "createddate" | "key" | "issuekey" | "id" => issues[i].created_unix,
            _ => issues[i].updated_unix,
        },
    );
    let start = match &token {
        None => 0,
        Some(t) => match PAGE_TOKEN.decode(t, &jql) {
            Some(o) => o,
            None => {
                return errors(
                    400,
                    &["The provided next page token is invalid or expired."],
                );
            }
        },
    };
    let out: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(max)
        .map(|hit| {
            if fields.is_empty() {
                json!({"id": issues[hit.index].id})
            } else {
                issue_json(&issues[hit.index], &fields)
            }
        })
        .collect();
    let is_last = start + max >= hits.len();
    let mut body = json!({"issues": out, "isLast": is_last});
    if !is_last {
        body["nextPageToken"] = json!(PAGE_TOKEN.encode(start + max, &jql));
    }
    let mut answer = http::json(200, &body);
    note_page(&mut answer, issues, hits.iter().skip(start).take(max));
    answer
}

fn adf(text: &str) -> Value {
    let paragraphs: Vec<Value> = text
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let mut nodes: Vec<Value> = Vec::new();
            let mut buf = String::new();
            for (n, word) in p.split(' ').enumerate() {
                let sep = if n == 0 { "" } else { " " };
                if word.starts_with("https://") {
                    buf.push_str(sep);
                    if !buf.is_empty() {
                        nodes.push(json!({"type": "text", "text": std::mem::take(&mut buf)}));
                    }
                    let url = word.trim_end_matches(['.', ',']);
                    nodes.push(json!({"type": "text", "text": url, "marks": [{"type": "link", "attrs": {"href": url}}]}));
                    buf.push_str(&word[url.len()..]);
                } else {
                    buf.push_str(sep);
                    buf.push_str(word);
                }
            }
            if !buf.is_empty() {
                nodes.push(json!({"type": "text", "text": buf}));
            }
            json!({"type": "paragraph", "content": nodes})
        })
        .collect();
    json!({"type": "doc", "version": 1, "content": paragraphs})
}

fn user_json(name: &str, account_id: &str) -> Value {
    let avatar = format!(
        "https://secure.gravatar.com/avatar/{:032x}?d=https%3A%2F%2Favatar-management--avatars.us-west-2.prod.public.atl-paas.net%2Finitials%2F{}-0.png",
        dataset::fnv(account_id) as u128 * 0x1_0000_0001,
        name.split(' ')
            .filter_map(|w| w.chars().next())
            .collect::<String>()
    );
    json!({
        "self": format!("{}/rest/api/3/user?accountId={}", api_base(), account_id),
        "accountId": account_id,
        "avatarUrls": {"48x48": avatar, "24x24": avatar, "16x16": avatar, "32x32": avatar},
        "displayName": name,
        "active": true,
        "timeZone": "Europe/Berlin",
        "accountType": "atlassian",
    })
}

fn issue_json(i: &JiraIssue, fields: &[String]) -> Value {
    let base = api_base();
    let mut f = Map::new();
    for name in fields {
        let v = match name.as_str() {
            "summary" => json!(i.summary),
            "description" => adf(&i.description),
            "creator" | "reporter" => user_json(&i.creator_display_name, &i.creator_account_id),
            "assignee" => user_json(&i.assignee_display_name, &i.assignee_account_id),
            "created" => json!(i.created),
            "updated" => json!(i.updated),
            "status" => {
                let (cid, ckey, cname, color) = match i.status_category.as_str() {
                    "done" => (3, "done", "Done", "green"),
                    "indeterminate" => (4, "indeterminate", "In Progress", "yellow"),
                    _ => (2, "new", "To Do", "blue-gray"),
                };
                let sid = if i.status == "Done" { "10002" } else { "3" };
                json!({
                    "self": format!("{base}/rest/api/3/status/{sid}"),
                    "description": "",
                    "iconUrl": format!("{}/", dataset::JIRA_SITE),
                    "name": i.status,
                    "id": sid,
                    "statusCategory": {"self": format!("{base}/rest/api/3/statuscategory/{cid}"), "id": cid, "key": ckey, "colorName": color, "name": cname},
                })
            }
            "issuetype" => {
                let (id, level) = match i.issue_type.as_str() {
                    "Bug" => ("10004", 0),
                    "Story" => ("10001", 0),
                    "Epic" => ("10000", 1),
                    _ => ("10002", 0),
                };
                json!({
                    "self": format!("{base}/rest/api/3/issuetype/{id}"),
                    "id": id,
                    "description": "",
                    "iconUrl": format!("{}/rest/api/2/universal_avatar/view/type/issuetype/avatar/{id}?size=medium", dataset::JIRA_SITE),
                    "name": i.issue_type,
                    "subtask": false,
                    "avatarId": 10300 + id[3..].parse::<u32>().unwrap_or(0),
                    "hierarchyLevel": level,
                })
            }
            "priority" => {
                let id = match i.priority.as_str() {
                    "Highest" => "1",
                    "High" => "2",
                    _ => "3",
                };
                json!({"self": format!("{base}/rest/api/3/priority/{id}"), "iconUrl": format!("{}/images/icons/priorities/{}.svg", dataset::JIRA_SITE, i.priority.to_lowercase()), "name": i.priority, "id": id})
            }
            "project" => json!({
                "self": format!("{base}/rest/api/3/project/10000"),
                "id": "10000",
                "key": dataset::JIRA_PROJECT,
                "name": "Acme Shop",
                "projectTypeKey": "software",
                "simplified": false,
            }),
            "labels" => json!(i.labels),
            "resolution" => match &i.resolution_date {
                Some(_) => {
                    json!({"self": format!("{base}/rest/api/3/resolution/10000"), "id": "10000", "description": "Work has been completed on this issue.", "name": "Done"})
                }
                None => Value::Null,
            },
            "resolutiondate" => json!(i.resolution_date),
            _ => continue,
        };
        f.insert(name.clone(), v);
    }
    json!({
        "expand": "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
        "id": i.id,
        "self": format!("{base}/rest/api/3/issue/{}", i.id),
        "key": i.key,
        "fields": f,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jql_parses() {
        let j = parse_jql(r#"text ~ "checkout timeout" AND updated >= "2025-01-01" AND updated <= '2025-12-31' ORDER BY updated DESC"#).unwrap();
        assert!(j.expr.is_some());
        assert_eq!(j.order, vec![("updated".to_string(), false)]);
        assert!(parse_jql("ORDER BY updated DESC").unwrap().expr.is_none());
        assert!(parse_jql("foo = bar").is_err());
        assert!(
            parse_jql("project = ACME AND (status in (Done, \"In Progress\") OR NOT labels = bug)")
                .is_ok()
        );
        assert!(parse_jql("text ~ \"unterminated").is_err());
        let tok = PAGE_TOKEN.encode(50, "x");
        assert_eq!(PAGE_TOKEN.decode(&tok, "x"), Some(50));
        assert_eq!(PAGE_TOKEN.decode(&tok, "y"), None);
    }
}
