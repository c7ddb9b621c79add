//! HubSpot on api.hubapi.com and app.hubspot.com: CRM search (`POST
//! /crm/v3/objects/{contacts,companies,deals,tickets}/search` with `query`,
//! `filterGroups` (EQ, NEQ, LT, LTE, GT, GTE, BETWEEN, IN, NOT_IN, HAS_PROPERTY,
//! NOT_HAS_PROPERTY, CONTAINS_TOKEN, NOT_CONTAINS_TOKEN), `sorts`, `properties`, `limit`
//! up to 200 and the `after` cursor), `GET /crm/v3/objects/{type}/{id}`, `GET
//! /account-info/v3/details`, and OAuth (`app.hubspot.com/oauth/authorize`, the
//! 2026-03 and v1 token endpoints, `POST /oauth/2026-03/token/revoke`, `DELETE
//! /oauth/v1/refresh-tokens/{token}`).
//!
//! `query` matches a record's default searchable properties with the fake's shared
//! semantics (any word; more words matched first).

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{array_at_most, auth, note_page, oauth, ranked, sort_as, strings_at};
use crate::Shared;
use crate::dataset::{self, HUBSPOT_PORTAL_ID, HubspotObject};
use crate::http::{self, Req};
use crate::search;
use crate::tokens::Vendor;

fn err(status: u16, category: &str, message: &str) -> Response {
    http::json(
        status,
        &json!({
            "status": "error",
            "message": message,
            "correlationId": http::request_id(),
            "category": category,
        }),
    )
}

fn unauthorized() -> Response {
    err(
        401,
        "INVALID_AUTHENTICATION",
        "Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview",
    )
}

/// HubSpot's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => err(400, "VALIDATION_ERROR", "Invalid input JSON"),
        401 => unauthorized(),
        403 => err(
            403,
            "MISSING_SCOPES",
            "This app hasn't been granted all required scopes to make this call.",
        ),
        404 => err(404, "OBJECT_NOT_FOUND", "resource not found"),
        429 => {
            let mut r = http::json(
                429,
                &json!({
                    "status": "error",
                    "message": "You have reached your secondly limit.",
                    "errorType": "RATE_LIMIT",
                    "correlationId": http::request_id(),
                    "policyName": "SECONDLY",
                    "groupName": "publicapi:oauth:search",
                }),
            );
            http::set(&mut r, "x-hubspot-ratelimit-secondly", "5");
            http::set(&mut r, "x-hubspot-ratelimit-secondly-remaining", "0");
            r
        }
        s => err(s, "INTERNAL_ERROR", "internal error, reference: fake-saas"),
    }
}

/// The CRM object types searched here, with their type ids.
const TYPES: &[(&str, &str)] = &[
    ("contacts", "0-1"),
    ("companies", "0-2"),
    ("deals", "0-3"),
    ("tickets", "0-5"),
];

fn object_type(name: &str) -> Option<&'static str> {
    TYPES
        .iter()
        .find(|(n, id)| *n == name || *id == name)
        .map(|(n, _)| *n)
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    if (&req.method, path) == (&Method::POST, "/oauth/2026-03/token/revoke") {
        return match oauth::token_to_revoke(req, "token")
            .or_else(|| req.body_or_query("refresh_token"))
        {
            Some(t) if shared.tokens().revoke(Vendor::Hubspot, &t) => http::empty(204),
            Some(_) => err(
                400,
                "BAD_REQUEST",
                "The token is invalid or already revoked.",
            ),
            None => err(400, "VALIDATION_ERROR", "token is required"),
        };
    }
    if let (&Method::DELETE, Some(token)) =
        (&req.method, path.strip_prefix("/oauth/v1/refresh-tokens/"))
    {
        shared.tokens().revoke(Vendor::Hubspot, token);
        return http::empty(204);
    }
    if auth(shared, Vendor::Hubspot, req).user().is_none() {
        return unauthorized();
    }
    let segs = req.segments();
    match (&req.method, segs.as_slice()) {
        (&Method::GET, ["account-info", "v3", "details"]) => http::json(
            200,
            &json!({
                "portalId": HUBSPOT_PORTAL_ID,
                "accountType": "STANDARD",
                "timeZone": "Europe/Berlin",
                "companyCurrency": "EUR",
                "additionalCurrencies": ["GBP", "USD", "CAD"],
                "utcOffset": "+01:00",
                "utcOffsetMilliseconds": 3_600_000,
                "uiDomain": "app.hubspot.com",
                "dataHostingLocation": "na1",
            }),
        ),
        (&Method::POST, ["crm", "v3", "objects", kind, "search"]) => match object_type(kind) {
            Some(kind) => search(req, kind),
            None => err(
                400,
                "VALIDATION_ERROR",
                &format!("Unable to infer object type from: {kind}"),
            ),
        },
        (&Method::GET, ["crm", "v3", "objects", kind, id]) => {
            let Some(kind) = object_type(kind) else {
                return err(
                    400,
                    "VALIDATION_ERROR",
                    &format!("Unable to infer object type from: {kind}"),
                );
            };
            let wanted: Vec<String> = req
                .query_pairs()
                .into_iter()
                .filter(|(k, _)| k == "properties")
                .flat_map(|(_, v)| v.split(',').map(str::to_string).collect::<Vec<_>>())
                .collect();
            match dataset::hubspot_objects()
                .iter()
                .find(|o| o.object_type == kind && o.id == *id)
            {
                Some(o) => http::json(200, &object_json(o, &wanted)),
                None => err(404, "OBJECT_NOT_FOUND", "resource not found"),
            }
        }
        _ => err(404, "OBJECT_NOT_FOUND", "resource not found"),
    }
}

fn default_properties(kind: &str) -> &'static [&'static str] {
    match kind {
        "contacts" => &[
            "createdate",
            "email",
            "firstname",
            "hs_object_id",
            "lastmodifieddate",
            "lastname",
        ],
        "companies" => &[
            "createdate",
            "domain",
            "hs_lastmodifieddate",
            "hs_object_id",
            "name",
        ],
        "deals" => &[
            "amount",
            "closedate",
            "createdate",
            "dealname",
            "dealstage",
            "hs_lastmodifieddate",
            "hs_object_id",
            "pipeline",
        ],
        _ => &[
            "content",
            "createdate",
            "hs_lastmodifieddate",
            "hs_object_id",
            "hs_pipeline",
            "hs_pipeline_stage",
            "hs_ticket_category",
            "hs_ticket_priority",
            "subject",
        ],
    }
}

fn object_json(o: &HubspotObject, wanted: &[String]) -> Value {
    let mut props = Map::new();
    let names: Vec<String> = if wanted.is_empty() {
        default_properties(&o.object_type)
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        let mut n: Vec<String> = wanted.to_vec();
        for always in [
            "createdate",
            HubspotObject::modified_property(&o.object_type),
            "hs_object_id",
        ] {
            if !n.iter().any(|x| x == always) {
                n.push(always.to_string());
            }
        }
        n
    };
    for name in names {
        props.insert(
            name.clone(),
            o.property(&name).map_or(Value::Null, |v| json!(v)),
        );
    }
    json!({
        "id": o.id,
        "properties": props,
        "createdAt": crate::time::rfc3339_millis(o.created_unix, 0),
        "updatedAt": crate::time::rfc3339_millis(o.updated_unix, 0),
        "archived": false,
    })
}

/// A property value as a number: numbers as they are, dates as epoch milliseconds.
fn as_number(v: &str) -> Option<f64> {
    if let Ok(n) = v.trim().parse::<f64>() {
        return Some(n);
    }
    crate::time::parse(v).map(|i| (i.start * 1000) as f64)
}

fn compare(
    actual: Option<&str>,
    op: &str,
    value: &str,
    high: Option<&str>,
    values: &[String],
) -> bool {
    let num = |v: &str| as_number(v);
    let cmp = |a: &str, b: &str| -> Option<std::cmp::Ordering> {
        match (num(a), num(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => Some(a.to_lowercase().cmp(&b.to_lowercase())),
        }
    };
    match op {
        "HAS_PROPERTY" => actual.is_some_and(|a| !a.is_empty()),
        "NOT_HAS_PROPERTY" => actual.is_none_or(str::is_empty),
        _ => {
            let Some(a) = actual else {
                return matches!(op, "NEQ" | "NOT_IN" | "NOT_CONTAINS_TOKEN");
            };
            match op {
                "EQ" => cmp(a, value) == Some(std::cmp::Ordering::Equal),
                "NEQ" => cmp(a, value) != Some(std::cmp::Ordering::Equal),
                "LT" => cmp(a, value) == Some(std::cmp::Ordering::Less),
                "LTE" => cmp(a, value) != Some(std::cmp::Ordering::Greater),
                "GT" => cmp(a, value) == Some(std::cmp::Ordering::Greater),
                "GTE" => cmp(a, value) != Some(std::cmp::Ordering::Less),
                "BETWEEN" => {
                    cmp(a, value) != Some(std::cmp::Ordering::Less)
                        && high.is_some_and(|h| cmp(a, h) != Some(std::cmp::Ordering::Greater))
                }
                "IN" => values.iter().any(|v| v.eq_ignore_ascii_case(a)),
                "NOT_IN" => !values.iter().any(|v| v.eq_ignore_ascii_case(a)),
                "CONTAINS_TOKEN" => contains_token(a, value),
                "NOT_CONTAINS_TOKEN" => !contains_token(a, value),
                _ => false,
            }
        }
    }
}

/// `CONTAINS_TOKEN` with `*` wildcards, on whole words.
fn contains_token(text: &str, token: &str) -> bool {
    let token = token.to_lowercase();
    let text = text.to_lowercase();
    if token.contains('*') {
        let inner = token.trim_matches('*');
        return text.contains(inner);
    }
    text.split(|c: char| !c.is_alphanumeric() && c != '@' && c != '.')
        .any(|w| w == token)
}

struct Filter {
    property: String,
    op: String,
    value: String,
    high: Option<String>,
    values: Vec<String>,
}

fn parse_filters(body: &Value) -> Result<Vec<Vec<Filter>>, String> {
    let Some(groups) = body.get("filterGroups").filter(|g| !g.is_null()) else {
        return Ok(Vec::new());
    };
    let groups = groups.as_array().ok_or("filterGroups must be an array")?;
    if groups.len() > 5 {
        return Err("Too many filter groups (max 5)".into());
    }
    let mut out = Vec::new();
    for g in groups {
        let filters = array_at_most(
            g,
            "filters",
            6,
            "each filter group needs filters",
            "Too many filters in a group (max 6)",
        )?;
        let mut group = Vec::new();
        for f in filters {
            let required = |key: &str| {
                f.get(key)
                    .and_then(Value::as_str)
                    .ok_or(format!("a filter needs {key}"))
            };
            let property = required("propertyName")?;
            let op = required("operator")?;
            const OPS: &[&str] = &[
                "EQ",
                "NEQ",
                "LT",
                "LTE",
                "GT",
                "GTE",
                "BETWEEN",
                "IN",
                "NOT_IN",
                "HAS_PROPERTY",
                "NOT_HAS_PROPERTY",
                "CONTAINS_TOKEN",
                "NOT_CONTAINS_TOKEN",
            ];
            if !OPS.contains(&op) {
                return Err(format!("Invalid operator {op}"));
            }
            let text = |v: Option<&Value>| -> Option<String> {
                match v? {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    Value::Bool(b) => Some(b.to_string()),
                    _ => None,
                }
            };
            let needs_value = !matches!(op, "HAS_PROPERTY" | "NOT_HAS_PROPERTY" | "IN" | "NOT_IN");
            let value = text(f.get("value"));
            if needs_value && value.is_none() {
                return Err(format!("filter on {property} with {op} needs a value"));
            }
            group.push(Filter {
                property: property.to_string(),
                op: op.to_string(),
                value: value.unwrap_or_default(),
                high: text(f.get("highValue")),
                values: f
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(|v| text(Some(v))).collect())
                    .unwrap_or_default(),
            });
        }
        out.push(group);
    }
    Ok(out)
}

fn search(req: &Req, kind: &str) -> Response {
    let body: Value = if req.body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match req.json() {
            Ok(v) if v.is_object() => v,
            _ => return err(400, "VALIDATION_ERROR", "Invalid input JSON on line 1"),
        }
    };
    let query = match body.get("query") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return err(400, "VALIDATION_ERROR", "query must be a string"),
    };
    let limit = match body.get("limit") {
        None | Some(Value::Null) => 10,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=200).contains(&n) => n as usize,
            _ => return err(400, "VALIDATION_ERROR", "limit must be between 1 and 200"),
        },
    };
    let limit = req.page_size(limit);
    let start = match body.get("after") {
        None | Some(Value::Null) => 0,
        Some(Value::String(s)) => match s.parse::<usize>() {
            Ok(n) => n,
            Err(_) => {
                return err(
                    400,
                    "VALIDATION_ERROR",
                    &format!("Invalid after value: {s}"),
                );
            }
        },
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0) as usize,
        Some(_) => return err(400, "VALIDATION_ERROR", "after must be a string"),
    };
    if start + limit > 10_000 {
        return err(
            400,
            "VALIDATION_ERROR",
            "Search results are limited to 10,000 records",
        );
    }
    let groups = match parse_filters(&body) {
        Ok(g) => g,
        Err(e) => return err(400, "VALIDATION_ERROR", &e),
    };
    let wanted = strings_at(&body, "properties");
    let (sort_property, ascending) = match body
        .get("sorts")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        Some(Value::String(s)) => match s.strip_prefix('-') {
            Some(p) => (p.to_string(), false),
            None => (s.clone(), true),
        },
        Some(Value::Object(o)) => (
            o.get("propertyName")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            o.get("direction").and_then(Value::as_str) != Some("DESCENDING"),
        ),
        _ => (HubspotObject::modified_property(kind).to_string(), false),
    };
    let asked_sort = body
        .get("sorts")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let all = dataset::hubspot_objects();
    let engine = search::declared("hubspot");
    let q = engine.parse(&query).unwrap_or_default();
    let hits = ranked(
        dataset::hubspot_docs(),
        engine,
        &q,
        sort_as(engine, asked_sort.then_some(ascending)),
        |i| {
            all[i].object_type == kind
                && (groups.is_empty()
                    || groups.iter().any(|g| {
                        g.iter().all(|f| {
                            compare(
                                all[i].property(&f.property),
                                &f.op,
                                &f.value,
                                f.high.as_deref(),
                                &f.values,
                            )
                        })
                    }))
        },
        |i| {
            all[i]
                .property(&sort_property)
                .and_then(as_number)
                .map_or(all[i].updated_unix, |n| (n / 1000.0) as i64)
        },
    );
    let results: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(limit)
        .map(|hit| object_json(&all[hit.index], &wanted))
        .collect();
    let mut out = json!({ "total": hits.len(), "results": results });
    if start + limit < hits.len() {
        let after = (start + limit).to_string();
        out["paging"] = json!({"next": {
            "after": after,
            "link": format!("https://api.hubapi.com/crm/v3/objects/{kind}/search?after={after}"),
        }});
    }
    let mut answer = http::json(200, &out);
    note_page(&mut answer, all, hits.iter().skip(start).take(limit));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compare_numbers_dates_and_tokens() {
        assert!(compare(
            Some("2025-03-15T12:00:00.000Z"),
            "GTE",
            "1741996800000",
            None,
            &[]
        ));
        assert!(!compare(
            Some("2025-03-14T12:00:00.000Z"),
            "GTE",
            "1741996800000",
            None,
            &[]
        ));
        assert!(compare(
            Some("12000"),
            "BETWEEN",
            "10000",
            Some("15000"),
            &[]
        ));
        assert!(compare(
            Some("closedwon"),
            "IN",
            "",
            None,
            &["CLOSEDWON".into()]
        ));
        assert!(compare(None, "NOT_HAS_PROPERTY", "", None, &[]));
        assert!(compare(
            Some("dana@bluebird-cafe.example"),
            "CONTAINS_TOKEN",
            "*bluebird*",
            None,
            &[]
        ));
        assert!(compare(
            Some("Bluebird Café Group"),
            "CONTAINS_TOKEN",
            "bluebird",
            None,
            &[]
        ));
    }
}
