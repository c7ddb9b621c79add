//! Salesforce on the org's My Domain (`acme.my.salesforce.com`) and
//! `login.salesforce.com`: `GET /services/data` (the API versions), `GET
//! /services/data/vXX.X/parameterizedSearch` (`q`; `sobject` repeated;
//! `<Type>.fields`, `<Type>.limit`, `<Type>.where` with `AND`ed comparisons
//! of `CreatedDate`/`LastModifiedDate` and other fields; `fields`,
//! `defaultLimit`, `overallLimit`, and `offset` with one sobject), `GET
//! /services/data/vXX.X/sobjects/{Type}/{Id}`, and OAuth on both hosts
//! (`/services/oauth2/authorize`, `/token`, `/revoke`).
//!
//! Errors are Salesforce's JSON arrays (`[{"message", "errorCode"}]`); an
//! exhausted API allocation is a 403 `REQUEST_LIMIT_EXCEEDED`.

// Parameter checks answer early with the vendor's error response.
#![allow(clippy::result_large_err)]

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{auth, oauth, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, SalesforceRecord};
use crate::http::{self, Req};
use crate::search;
use crate::tokens::Vendor;

fn err(status: u16, code: &str, message: &str) -> Response {
    http::json(status, &json!([{ "message": message, "errorCode": code }]))
}

fn unauthorized() -> Response {
    err(401, "INVALID_SESSION_ID", "Session expired or invalid")
}

/// Salesforce's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => err(400, "MALFORMED_QUERY", "malformed request"),
        401 => unauthorized(),
        403 => err(
            403,
            "REQUEST_LIMIT_EXCEEDED",
            "TotalRequests Limit exceeded.",
        ),
        404 => err(404, "NOT_FOUND", "The requested resource does not exist"),
        429 => err(
            429,
            "REQUEST_LIMIT_EXCEEDED",
            "ConcurrentPerOrgLongTxn Limit exceeded.",
        ),
        503 => err(503, "SERVER_UNAVAILABLE", "Server temporarily unavailable"),
        s => err(
            s,
            "UNKNOWN_EXCEPTION",
            "An unexpected error occurred. Please include this ErrorId if you contact support: 1913441286-98312 (-1254316593)",
        ),
    }
}

const TYPES: &[&str] = &["Account", "Case"];

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    if path == "/services/oauth2/revoke" && matches!(req.method, Method::POST | Method::GET) {
        return oauth::revoke(shared, Vendor::Salesforce, req, "token is required");
    }
    if req.host != "acme.my.salesforce.com" {
        return err(404, "NOT_FOUND", "The requested resource does not exist");
    }
    if auth(shared, Vendor::Salesforce, req).user().is_none() {
        return unauthorized();
    }
    let segs = req.segments();
    let mut response = match (&req.method, segs.as_slice()) {
        (&Method::GET, ["services", "data"]) => http::json(
            200,
            &json!([
                {"label": "Spring '25", "url": "/services/data/v63.0", "version": "63.0"},
                {"label": "Summer '25", "url": "/services/data/v64.0", "version": "64.0"},
                {"label": "Winter '26", "url": "/services/data/v65.0", "version": "65.0"},
            ]),
        ),
        (&Method::GET, ["services", "data", v, "parameterizedSearch"]) => match version(v) {
            Some(n) if n >= 36.0 => search(req, v),
            _ => not_found(),
        },
        (&Method::GET, ["services", "data", v, "sobjects", kind, id]) if version(v).is_some() => {
            match dataset::salesforce_records()
                .iter()
                .find(|r| r.object_type == *kind && r.id == *id)
            {
                Some(r) => {
                    let fields: Vec<String> = r
                        .fields
                        .iter()
                        .map(|(k, _)| k.clone())
                        .filter(|k| !k.contains('.'))
                        .collect();
                    http::json(200, &record_json(r, &fields, v))
                }
                None => err(
                    404,
                    "NOT_FOUND",
                    "Provided external ID field does not exist or is not accessible: ",
                ),
            }
        }
        _ => not_found(),
    };
    http::set(&mut response, "sforce-limit-info", "api-usage=18/15000");
    response
}

fn not_found() -> Response {
    err(404, "NOT_FOUND", "The requested resource does not exist")
}

/// `v64.0` → 64.0.
fn version(v: &str) -> Option<f64> {
    let n = v.strip_prefix('v')?;
    let (major, minor) = n.split_once('.')?;
    if major.is_empty()
        || minor.is_empty()
        || !major
            .bytes()
            .chain(minor.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    n.parse().ok()
}

fn all_params(req: &Req, name: &str) -> Vec<String> {
    req.query_pairs()
        .into_iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .collect()
}

fn param(req: &Req, name: &str) -> Option<String> {
    all_params(req, name).into_iter().next()
}

fn int(req: &Req, name: &str) -> Result<Option<usize>, Response> {
    match param(req, name) {
        None => Ok(None),
        Some(v) => v.trim().parse::<usize>().map(Some).map_err(|_| {
            err(
                400,
                "INVALID_SEARCH",
                &format!("{name}: '{v}' is not a valid number"),
            )
        }),
    }
}

/// A comparison of a `where` clause.
struct Comparison {
    field: String,
    op: &'static str,
    value: String,
}

/// `LastModifiedDate >= 2025-01-01T00:00:00Z AND Status = 'Closed'`.
fn parse_where(text: &str) -> Result<Vec<Comparison>, String> {
    let mut out = Vec::new();
    let upper = text.to_ascii_uppercase();
    let mut clauses = Vec::new();
    let mut start = 0;
    while let Some(i) = upper[start..].find(" AND ") {
        clauses.push(&text[start..start + i]);
        start += i + 5;
    }
    clauses.push(&text[start..]);
    for clause in clauses {
        let clause = clause.trim();
        if clause.to_ascii_uppercase().contains(" OR ") {
            return Err(format!("unexpected token: OR in '{clause}'"));
        }
        let ops = ["!=", ">=", "<=", "=", ">", "<"];
        let Some((pos, op)) = ops
            .iter()
            .filter_map(|op| clause.find(op).map(|p| (p, *op)))
            .min_by_key(|(p, op)| (*p, std::cmp::Reverse(op.len())))
        else {
            return Err(format!("unexpected token: '{clause}'"));
        };
        let field = clause[..pos].trim();
        let value = clause[pos + op.len()..].trim();
        if field.is_empty() || value.is_empty() {
            return Err(format!("unexpected token: '{clause}'"));
        }
        out.push(Comparison {
            field: field.to_string(),
            op,
            value: value.trim_matches('\'').to_string(),
        });
    }
    Ok(out)
}

/// Checks the fields and values of a `where` clause against the type.
fn validate(kind: &str, conditions: &[Comparison]) -> Result<(), String> {
    for c in conditions {
        let known = c.field.eq_ignore_ascii_case("Id")
            || dataset::salesforce_records()
                .iter()
                .any(|r| r.object_type == kind && r.field(&c.field).is_some());
        if !known {
            return Err(format!("No such column '{}' on entity '{kind}'", c.field));
        }
        if is_date(&c.field) && crate::time::parse(&c.value).is_none() {
            return Err(format!(
                "value of filter criterion for field '{}' must be of type dateTime and should not be enclosed in quotes",
                c.field
            ));
        }
    }
    Ok(())
}

fn is_date(field: &str) -> bool {
    field.to_ascii_lowercase().ends_with("date")
}

fn compare(record: &SalesforceRecord, c: &Comparison) -> bool {
    let actual = if c.field.eq_ignore_ascii_case("Id") {
        Some(record.id.as_str())
    } else {
        record.field(&c.field)
    };
    let Some(actual) = actual else {
        return c.op == "!=";
    };
    let ordering = match (crate::time::parse(actual), crate::time::parse(&c.value)) {
        (Some(a), Some(b)) if is_date(&c.field) => a.start.cmp(&b.start),
        _ => actual.to_lowercase().cmp(&c.value.to_lowercase()),
    };
    use std::cmp::Ordering::*;
    match c.op {
        "=" => ordering == Equal,
        "!=" => ordering != Equal,
        ">" => ordering == Greater,
        ">=" => ordering != Less,
        "<" => ordering == Less,
        _ => ordering != Greater,
    }
}

fn search(req: &Req, v: &str) -> Response {
    let q = param(req, "q").unwrap_or_default();
    let words: String = q.chars().filter(|c| c.is_alphanumeric()).collect();
    if words.chars().count() < 2 {
        return err(
            400,
            "INVALID_SEARCH",
            &format!("search term must be longer than one character: {q}"),
        );
    }
    let mut types: Vec<&str> = Vec::new();
    for s in all_params(req, "sobject") {
        match TYPES.iter().find(|t| t.eq_ignore_ascii_case(&s)) {
            Some(t) if !types.contains(t) => types.push(t),
            Some(_) => {}
            None => {
                return err(
                    400,
                    "INVALID_TYPE",
                    &format!("sObject type '{s}' is not supported."),
                );
            }
        }
    }
    if types.is_empty() {
        types = TYPES.to_vec();
    }
    let (offset, default_limit, overall) = match (
        int(req, "offset"),
        int(req, "defaultLimit"),
        int(req, "overallLimit"),
    ) {
        (Ok(o), Ok(d), Ok(a)) => (o.unwrap_or(0), d, a.unwrap_or(2000).min(2000)),
        (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => return e,
    };
    if offset > 2000 {
        return err(400, "INVALID_SEARCH", "maximum SOSL offset allowed is 2000");
    }
    if offset > 0 && types.len() > 1 {
        return err(
            400,
            "INVALID_SEARCH",
            "offset is supported only when one sobject is specified",
        );
    }
    let global_fields = param(req, "fields");
    let engine = search::declared("salesforce");
    let query = engine.parse(&q).unwrap_or_default();
    let records = dataset::salesforce_records();
    let mut out: Vec<Value> = Vec::new();
    let mut returned: Vec<&str> = Vec::new();
    for kind in types {
        let fields: Vec<String> = param(req, &format!("{kind}.fields"))
            .or_else(|| global_fields.clone())
            .unwrap_or_else(|| "Id".into())
            .split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        for f in &fields {
            let known = f.eq_ignore_ascii_case("Id")
                || records
                    .iter()
                    .any(|r| r.object_type == kind && r.field(f).is_some());
            if !known {
                return err(
                    400,
                    "INVALID_FIELD",
                    &format!(
                        "No such column '{f}' on entity '{kind}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name."
                    ),
                );
            }
        }
        let conditions = match param(req, &format!("{kind}.where")).map(|w| parse_where(&w)) {
            None => Vec::new(),
            Some(Ok(c)) => c,
            Some(Err(e)) => return err(400, "MALFORMED_SEARCH", &e),
        };
        let limit = match int(req, &format!("{kind}.limit")) {
            Ok(l) => l.or(default_limit).unwrap_or(2000).min(2000),
            Err(e) => return e,
        };
        let limit = req.page_size(limit.max(1));
        if let Err(e) = validate(kind, &conditions) {
            return err(400, "INVALID_FIELD", &e);
        }
        let hits = ranked(
            dataset::salesforce_docs(),
            engine,
            &query,
            sort_as(engine, None),
            |i| {
                let r = &records[i];
                r.object_type == kind && conditions.iter().all(|c| compare(r, c))
            },
            |i| records[i].updated_unix,
        );
        // A query without terms matches nothing in SOSL.
        if query.is_empty() {
            continue;
        }
        for hit in hits.iter().skip(offset).take(limit) {
            out.push(record_json(&records[hit.index], &fields, v));
            returned.push(records[hit.index].url.as_str());
        }
    }
    out.truncate(overall);
    returned.truncate(overall);
    let mut answer = http::json(200, &json!({ "searchRecords": out }));
    http::note_returned(&mut answer, returned);
    answer
}

fn attributes(kind: &str, id: &str, v: &str) -> Value {
    json!({"type": kind, "url": format!("/services/data/{v}/sobjects/{kind}/{id}")})
}

/// A record with the fields asked for (relationship paths as nested objects).
fn record_json(r: &SalesforceRecord, fields: &[String], v: &str) -> Value {
    let mut m = Map::new();
    m.insert("attributes".into(), attributes(&r.object_type, &r.id, v));
    for f in fields {
        if f.eq_ignore_ascii_case("Id") {
            m.insert("Id".into(), json!(r.id));
            continue;
        }
        let Some((name, value)) = r.fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(f)) else {
            continue;
        };
        match name.split_once('.') {
            Some((relation, field)) => {
                let (kind, id) = match relation {
                    "Account" => (
                        "Account",
                        r.field("AccountId").unwrap_or_default().to_string(),
                    ),
                    _ => (
                        "User",
                        format!("0055g00000{}", &dataset::uuid(value).replace('-', "")[..8]),
                    ),
                };
                let entry = m
                    .entry(relation.to_string())
                    .or_insert_with(|| json!({ "attributes": attributes(kind, &id, v) }));
                entry[field] = json!(value);
            }
            None => {
                m.insert(name.clone(), json!(value));
            }
        }
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_clauses() {
        let c =
            parse_where("LastModifiedDate >= 2026-01-01T00:00:00Z AND Status != 'Closed'").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].field.as_str(), c[0].op), ("LastModifiedDate", ">="));
        assert_eq!((c[1].op, c[1].value.as_str()), ("!=", "Closed"));
        assert!(parse_where("Status = 'A' OR Status = 'B'").is_err());
        assert_eq!(version("v64.0"), Some(64.0));
        assert_eq!(version("64.0"), None);
        let case = dataset::salesforce_records()
            .iter()
            .find(|r| r.object_type == "Case")
            .unwrap();
        let json = record_json(
            case,
            &["Id".into(), "Subject".into(), "Account.Name".into()],
            "v64.0",
        );
        assert_eq!(json["attributes"]["type"], "Case");
        assert_eq!(json["Account"]["attributes"]["type"], "Account");
        assert!(json["Account"]["Name"].is_string());
    }
}
