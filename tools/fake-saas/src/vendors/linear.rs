//! Linear: `POST https://api.linear.app/graphql` (`searchIssues`, `viewer`,
//! `organization`), OAuth on linear.app / api.linear.app, `POST /oauth/revoke`.

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{auth, oauth, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, LinearIssue};
use crate::graphql::{self, Document, Field};
use crate::http::{self, Req};
use crate::search;
use crate::time::{self, Range};
use crate::tokens::Vendor;

fn gql_error(status: u16, message: &str, code: &str) -> Response {
    http::json(
        status,
        &json!({"errors": [{"message": message, "extensions": {"code": code, "userPresentableMessage": message}}]}),
    )
}

/// Linear's error for a status (faults).
pub(crate) fn error(status: u16, retry_after: Option<u32>) -> Response {
    match status {
        429 => {
            let mut r = http::json(
                429,
                &json!({"errors": [{"message": "Rate limit exceeded", "extensions": {"code": "RATELIMITED", "type": "Ratelimited", "userPresentableMessage": "You have exceeded the rate limit. Please try again later."}}]}),
            );
            http::set(&mut r, "x-ratelimit-requests-limit", "1500");
            http::set(&mut r, "x-ratelimit-requests-remaining", "0");
            http::set(
                &mut r,
                "x-ratelimit-requests-reset",
                ((time::now_unix() + retry_after.unwrap_or(60) as i64) * 1000).to_string(),
            );
            r
        }
        401 => unauthenticated(),
        403 => gql_error(403, "Forbidden", "FORBIDDEN"),
        s if s >= 500 => gql_error(s, "Internal server error", "INTERNAL_SERVER_ERROR"),
        s => gql_error(s, "Bad request", "INVALID_INPUT"),
    }
}

fn unauthenticated() -> Response {
    http::json(
        401,
        &json!({"errors": [{"message": "Authentication required, not authenticated", "extensions": {"code": "AUTHENTICATION_ERROR", "type": "authentication error", "userPresentableMessage": "You need to authenticate to access this operation."}}]}),
    )
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    match (&req.method, req.path.trim_end_matches('/')) {
        (&Method::POST, "/oauth/revoke") => {
            oauth::revoke(shared, Vendor::Linear, req, "token is required")
        }
        (&Method::POST, "/graphql") => graphql(shared, req),
        (_, "/graphql") => gql_error(
            400,
            "GET requests are not supported, use POST",
            "BAD_REQUEST",
        ),
        _ => http::json(404, &json!({"error": "Not found"})),
    }
}

fn graphql(shared: &Shared, req: &Req) -> Response {
    let Some(user) = auth(shared, Vendor::Linear, req).user() else {
        return unauthenticated();
    };
    let Some(body) = req.json_object() else {
        let message = "POST body must be a JSON object with a query";
        return gql_error(400, message, "BAD_USER_INPUT");
    };
    let Some(src) = body.get("query").and_then(Value::as_str) else {
        return gql_error(400, "Must provide query string.", "BAD_USER_INPUT");
    };
    let doc = match graphql::parse(src) {
        Ok(d) => d,
        Err(e) => return gql_error(400, &e, "GRAPHQL_PARSE_FAILED"),
    };
    if doc.operations.iter().any(|o| o.kind != "query") {
        return gql_error(
            400,
            "fake-saas refuses mutations and subscriptions: this fake only serves read-only queries",
            "FORBIDDEN",
        );
    }
    let op_name = body.get("operationName").and_then(Value::as_str);
    let op = match op_name {
        Some(n) => doc.operations.iter().find(|o| o.name.as_deref() == Some(n)),
        None if doc.operations.len() == 1 => doc.operations.first(),
        None => {
            return gql_error(
                400,
                "Must provide operation name if query contains multiple operations.",
                "BAD_USER_INPUT",
            );
        }
    };
    let Some(op) = op else {
        return gql_error(
            400,
            &format!("Unknown operation named \"{}\".", op_name.unwrap_or("")),
            "BAD_USER_INPUT",
        );
    };
    let mut vars: Map<String, Value> = match body.get("variables") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    for (name, default) in &op.var_defaults {
        let unset = vars.get(name).is_none_or(Value::is_null);
        if let Some(d) = default.as_ref().filter(|_| unset) {
            vars.insert(name.clone(), d.resolve(&Map::new()));
        }
    }
    let mut data = Map::new();
    for f in doc.fields(&op.selections) {
        let value = match f.name.as_str() {
            "__typename" => Ok(json!("Query")),
            "searchIssues" | "issueSearch" => search(&doc, f, &vars, req),
            "viewer" => doc.project(&viewer(&user), &f.selections),
            "organization" => doc.project(&organization(), &f.selections),
            other => Err(format!("Cannot query field \"{other}\" on type \"Query\".")),
        };
        match value {
            Ok(v) => {
                data.insert(f.key().to_string(), v);
            }
            Err(e) => return gql_error(400, &e, "GRAPHQL_VALIDATION_FAILED"),
        }
    }
    http::json(200, &json!({"data": data}))
}

fn viewer(user: &str) -> Value {
    let mut c = user.chars();
    let name = c
        .next()
        .map(|f| f.to_uppercase().chain(c).collect::<String>())
        .unwrap_or_default();
    json!({
        "__typename": "User",
        "id": dataset::uuid(&format!("linear-login:{user}")),
        "name": name,
        "displayName": user,
        "email": format!("{user}@acme-shop.example"),
        "active": true,
        "admin": false,
    })
}

fn organization() -> Value {
    json!({"__typename": "Organization", "id": dataset::uuid("linear-org:acme"), "name": "Acme", "urlKey": dataset::LINEAR_ORG})
}

fn arg(f: &Field, name: &str, vars: &Map<String, Value>) -> Value {
    f.arg(name).map(|v| v.resolve(vars)).unwrap_or(Value::Null)
}

fn comparator_range(v: &Value) -> Result<Range, String> {
    let mut r = Range::default();
    let Some(m) = v.as_object() else { return Ok(r) };
    for (op, val) in m {
        let Some(s) = val.as_str() else { continue };
        let at = time::parse(s).ok_or_else(|| format!("Invalid date value \"{s}\""))?;
        // Linear compares instants; a bare date means its midnight.
        let at = time::Instant {
            start: at.start,
            end: at.start + 1,
        };
        let sym = match op.as_str() {
            "gt" => ">",
            "gte" => ">=",
            "lt" => "<",
            "lte" => "<=",
            "eq" => "=",
            _ => continue,
        };
        if let Some(x) = Range::from_op(sym, at) {
            r.intersect(x);
        }
    }
    Ok(r)
}

fn search(
    doc: &Document,
    f: &Field,
    vars: &Map<String, Value>,
    req: &Req,
) -> Result<Value, String> {
    let term_name = if f.name == "issueSearch" {
        "query"
    } else {
        "term"
    };
    let term = match arg(f, term_name, vars) {
        Value::String(s) => s,
        Value::Null if f.name == "issueSearch" => String::new(),
        Value::Null => {
            return Err(
                "Field \"searchIssues\" argument \"term\" of type \"String!\" is required, but it was not provided."
                    .to_string(),
            );
        }
        other => {
            return Err(format!(
                "String cannot represent a non string value: {other}"
            ));
        }
    };
    let first = match arg(f, "first", vars) {
        Value::Null => 50,
        Value::Number(n) => match n.as_u64() {
            Some(n) if (1..=250).contains(&n) => n as usize,
            _ => {
                return Err(format!(
                    "Argument \"first\" must be between 1 and 250, got {n}"
                ));
            }
        },
        other => return Err(format!("Int cannot represent non-integer value: {other}")),
    };
    let first = req.page_size(first);
    let after = match arg(f, "after", vars) {
        Value::String(s) if !s.is_empty() => Some(s),
        _ => None,
    };
    let filter = arg(f, "filter", vars);
    let updated = comparator_range(filter.get("updatedAt").unwrap_or(&Value::Null))?;
    let created = comparator_range(filter.get("createdAt").unwrap_or(&Value::Null))?;
    let issues = dataset::linear_issues();
    let engine = search::declared("linear");
    let q = engine
        .parse(&term)
        .map_err(|_| "Argument Validation Error".to_string())?;
    let hits: Vec<usize> = ranked(
        &dataset::docs().linear,
        engine,
        &q,
        sort_as(engine, None),
        |i| updated.contains(issues[i].updated_unix) && created.contains(issues[i].created_unix),
        |i| issues[i].updated_unix,
    )
    .into_iter()
    .map(|hit| hit.index)
    .collect();
    let start = match &after {
        None => 0,
        Some(c) => match hits.iter().position(|i| &issues[*i].id == c) {
            Some(p) => p + 1,
            None => return Err(format!("Invalid cursor: {c}")),
        },
    };
    let page: Vec<&LinearIssue> = hits
        .iter()
        .skip(start)
        .take(first)
        .map(|i| &issues[*i])
        .collect();
    let has_next = hits.len() > start + first;
    let nodes: Vec<Value> = page.iter().map(|i| node_json(i)).collect();
    let edges: Vec<Value> = page
        .iter()
        .zip(&nodes)
        .map(|(i, n)| json!({"__typename": "IssueSearchResultEdge", "node": n, "cursor": i.id}))
        .collect();
    let full = json!({
        "__typename": "IssueSearchPayload",
        "nodes": nodes,
        "edges": edges,
        "pageInfo": {
            "__typename": "PageInfo",
            "hasNextPage": has_next,
            "hasPreviousPage": start > 0,
            "startCursor": page.first().map(|i| i.id.clone()),
            "endCursor": page.last().map(|i| i.id.clone()),
        },
        "totalCount": hits.len(),
        "archivePayload": {"__typename": "ArchiveResponse", "totalCount": 0},
    });
    doc.project(&full, &f.selections)
}

fn user_json(name: &str, id: &str) -> Value {
    let p = dataset::people().iter().find(|p| p.name == name);
    json!({
        "__typename": "User",
        "id": id,
        "name": name,
        "displayName": p.map(|p| p.slack_username.clone()).unwrap_or_default(),
        "email": p.map(|p| p.email.clone()).unwrap_or_default(),
        "active": true,
    })
}

fn node_json(i: &LinearIssue) -> Value {
    let (state_color, state_id) = match i.state_type.as_str() {
        "completed" => ("#5e6ad2", dataset::uuid("linear-state:done")),
        _ => ("#f2c94c", dataset::uuid("linear-state:in-progress")),
    };
    json!({
        "__typename": "IssueSearchResult",
        "id": i.id,
        "identifier": i.identifier,
        "number": i.number,
        "title": i.title,
        "description": i.description,
        "url": i.url,
        "branchName": i.branch_name,
        "createdAt": i.created_at,
        "updatedAt": i.updated_at,
        "completedAt": i.completed_at,
        "canceledAt": null,
        "archivedAt": null,
        "startedAt": null,
        "dueDate": null,
        "estimate": null,
        "priority": i.priority,
        "priorityLabel": i.priority_label,
        "trashed": false,
        "creator": user_json(&i.creator_name, &i.creator_id),
        "assignee": user_json(&i.assignee_name, &i.assignee_id),
        "state": {"__typename": "WorkflowState", "id": state_id, "name": i.state_name, "type": i.state_type, "color": state_color},
        "team": {"__typename": "Team", "id": dataset::uuid("linear-team:eng"), "key": dataset::LINEAR_TEAM, "name": "Engineering"},
        "labels": {
            "__typename": "IssueLabelConnection",
            "nodes": i.labels.iter().map(|l| json!({"__typename": "IssueLabel", "id": dataset::uuid(&format!("linear-label:{l}")), "name": l, "color": "#bec2c8"})).collect::<Vec<_>>(),
        },
        "metadata": {"score": 1},
    })
}
