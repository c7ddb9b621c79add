//! Asana on app.asana.com: `GET /api/1.0/workspaces/{gid}/tasks/search`
//! (`text`, `completed`, `projects.any`, `created_at.before|after`,
//! `modified_at.before|after`, `sort_by`, `sort_ascending`, `opt_fields`,
//! `limit` up to 100), `GET /api/1.0/workspaces/{gid}/typeahead`
//! (`resource_type=task`, `query`, `count`, `opt_fields`), `GET
//! /api/1.0/tasks/{gid}`, `GET /api/1.0/users/me`, `GET
//! /api/1.0/workspaces`, and OAuth (`/-/oauth_authorize`, `/-/oauth_token`,
//! `/-/oauth_revoke`).
//!
//! Like Asana, task search has no cursor: results come in `sort_by` order
//! (`modified_at` by default, newest first; `relevance`, the best matches
//! first), and `text` needs every word in the task's name or notes
//! (declarations/asana.toml). Typeahead matches the start of names' words
//! and takes `name` alone in `opt_fields` (its description's enum).
//! Records are compact (`gid`, `name`, `resource_type`, `resource_subtype`)
//! unless `opt_fields` names more (`created_by` gives the compact user,
//! with its name).

// Parameter checks answer early with the vendor's error response.
#![allow(clippy::result_large_err)]

use axum::http::Method;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{auth, note_page, oauth, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, ASANA_WORKSPACE_GID, AsanaTask};
use crate::http::{self, Req};
use crate::search;
use crate::tokens::Vendor;

fn err(status: u16, message: &str) -> Response {
    http::json(
        status,
        &json!({"errors": [{
            "message": message,
            "help": "For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors",
        }]}),
    )
}

fn unauthorized() -> Response {
    err(401, "Not Authorized")
}

/// Asana's error for a status (faults).
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => err(400, "Bad Request"),
        401 => unauthorized(),
        402 => err(402, "Search is only available to premium users."),
        403 => err(403, "Forbidden"),
        404 => err(404, "Not Found"),
        429 => err(
            429,
            "You have made too many requests recently. Please, be chill.",
        ),
        s => http::json(
            s,
            &json!({"errors": [{"message": "Server Error", "phrase": "6 sad squid snuggle softly"}]}),
        ),
    }
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    if (&req.method, path) == (&Method::POST, "/-/oauth_revoke") {
        let missing = "The token parameter is required.";
        return oauth::revoke(shared, Vendor::Asana, req, missing);
    }
    let Some(api) = path.strip_prefix("/api/1.0/") else {
        return err(404, "No matching route for request");
    };
    let Some(user) = auth(shared, Vendor::Asana, req).user() else {
        return unauthorized();
    };
    let segs: Vec<&str> = api.split('/').collect();
    let workspace =
        || json!({"gid": ASANA_WORKSPACE_GID, "name": "Acme", "resource_type": "workspace"});
    match (&req.method, segs.as_slice()) {
        (&Method::GET, ["users", "me"]) => {
            let person = dataset::people().iter().find(|p| p.slack_username == user);
            let gid = person.map_or_else(
                || dataset::asana_gid(&format!("user:{user}")),
                dataset::asana_user_gid,
            );
            http::json(
                200,
                &json!({"data": {
                    "gid": gid,
                    "email": person.map_or_else(|| format!("{user}@acme-shop.example"), |p| p.email.clone()),
                    "name": person.map_or(user.as_str(), |p| p.name.as_str()),
                    "resource_type": "user",
                    "workspaces": [workspace()],
                }}),
            )
        }
        (&Method::GET, ["workspaces"]) => http::json(200, &json!({"data": [workspace()]})),
        (&Method::GET, ["workspaces", gid, rest @ ..]) => {
            if !gid.bytes().all(|b| b.is_ascii_digit()) {
                return err(400, &format!("workspace: Not a recognized ID: {gid}"));
            }
            if *gid != ASANA_WORKSPACE_GID {
                return err(404, &format!("workspace: Unknown object: {gid}"));
            }
            match rest {
                ["tasks", "search"] => search(req),
                ["typeahead"] => typeahead(req),
                [] => http::json(200, &json!({"data": workspace()})),
                _ => err(404, "No matching route for request"),
            }
        }
        (&Method::GET, ["tasks", gid]) => {
            match dataset::asana_tasks().iter().find(|t| t.gid == *gid) {
                Some(t) => match opt_fields(req) {
                    Ok(fields) => {
                        let fields = if fields.is_empty() {
                            all_fields()
                        } else {
                            fields
                        };
                        http::json(200, &json!({"data": project(t, &fields)}))
                    }
                    Err(r) => r,
                },
                None => err(404, &format!("task: Unknown object: {gid}")),
            }
        }
        _ => err(404, "No matching route for request"),
    }
}

const FIELDS: &[&str] = &[
    "name",
    "notes",
    "permalink_url",
    "created_at",
    "modified_at",
    "completed",
    "completed_at",
    "due_on",
    "assignee",
    "created_by",
    "projects",
    "workspace",
    "resource_type",
    "resource_subtype",
];

fn all_fields() -> Vec<String> {
    FIELDS.iter().map(|f| f.to_string()).collect()
}

fn opt_fields(req: &Req) -> Result<Vec<String>, Response> {
    let fields: Vec<String> = req
        .param("opt_fields")
        .unwrap_or_default()
        .split(',')
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
        .collect();
    for f in &fields {
        let top = f.split('.').next().unwrap_or_default();
        if top != "gid" && !FIELDS.contains(&top) {
            return Err(err(400, &format!("opt_fields: Unknown field: {f}")));
        }
    }
    Ok(fields)
}

fn full(t: &AsanaTask) -> Value {
    let user =
        |(gid, name): &(String, String)| json!({"gid": gid, "name": name, "resource_type": "user"});
    json!({
        "gid": t.gid,
        "resource_type": "task",
        "resource_subtype": "default_task",
        "name": t.name,
        "notes": t.notes,
        "permalink_url": t.permalink_url,
        "created_at": t.created_at,
        "modified_at": t.modified_at,
        "completed": t.completed,
        "completed_at": t.completed_at,
        "due_on": t.due_on,
        "assignee": user(&t.assignee),
        "created_by": user(&t.created_by),
        "projects": t.projects.iter().map(|(gid, name)| json!({"gid": gid, "name": name, "resource_type": "project"})).collect::<Vec<_>>(),
        "workspace": {"gid": ASANA_WORKSPACE_GID, "name": "Acme", "resource_type": "workspace"},
    })
}

/// The task with `gid` and the fields asked for (`a.b`: `a` as `{gid, b}`).
fn project(t: &AsanaTask, fields: &[String]) -> Value {
    let all = full(t);
    let mut out = Map::new();
    out.insert("gid".into(), json!(t.gid));
    for f in fields {
        let mut parts = f.splitn(2, '.');
        let top = parts.next().unwrap_or_default();
        let Some(value) = all.get(top) else {
            continue;
        };
        match parts.next() {
            None => {
                out.insert(top.into(), value.clone());
            }
            Some(sub) => {
                let pick = |v: &Value| -> Value {
                    let mut m = Map::new();
                    m.insert("gid".into(), v.get("gid").cloned().unwrap_or(Value::Null));
                    if let Some(x) = v.get(sub) {
                        m.insert(sub.into(), x.clone());
                    }
                    Value::Object(m)
                };
                let picked = match value {
                    Value::Array(a) => Value::Array(a.iter().map(pick).collect()),
                    Value::Null => Value::Null,
                    v => pick(v),
                };
                match (out.get_mut(top), picked) {
                    (Some(Value::Object(existing)), Value::Object(new)) => existing.extend(new),
                    (Some(Value::Array(existing)), Value::Array(new)) => {
                        for (e, n) in existing.iter_mut().zip(new) {
                            if let (Value::Object(e), Value::Object(n)) = (e, n) {
                                e.extend(n);
                            }
                        }
                    }
                    (_, picked) => {
                        out.insert(top.into(), picked);
                    }
                }
            }
        }
    }
    Value::Object(out)
}

fn compact(t: &AsanaTask) -> Value {
    json!({"gid": t.gid, "name": t.name, "resource_type": "task", "resource_subtype": "default_task"})
}

fn time_param(req: &Req, name: &str) -> Result<Option<i64>, Response> {
    match req.param(name).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => match crate::time::parse(&v) {
            Some(i) => Ok(Some(i.start)),
            None => Err(err(400, &format!("{name}: Invalid date value: {v}"))),
        },
    }
}

fn unix_of(text: &Option<String>) -> Option<i64> {
    text.as_deref()
        .and_then(crate::time::parse)
        .map(|i| i.start)
}

fn search(req: &Req) -> Response {
    let fields = match opt_fields(req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let limit = match req.param("limit") {
        None => 20,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => return err(400, "limit: Must be between 1 and 100"),
        },
    };
    let limit = req.page_size(limit);
    let mut bounds = Vec::new();
    for name in [
        "created_at.before",
        "created_at.after",
        "modified_at.before",
        "modified_at.after",
    ] {
        match time_param(req, name) {
            Ok(v) => bounds.push(v),
            Err(r) => return r,
        }
    }
    let completed = match req.param("completed").as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(v) => return err(400, &format!("completed: Not a boolean: {v}")),
    };
    let projects: Vec<String> = req
        .param("projects.any")
        .map(|p| p.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let sort_by = req.param("sort_by").unwrap_or_else(|| "modified_at".into());
    if ![
        "due_date",
        "created_at",
        "completed_at",
        "likes",
        "modified_at",
        "relevance",
    ]
    .contains(&sort_by.as_str())
    {
        return err(400, &format!("sort_by: Invalid value: {sort_by}"));
    }
    let ascending = req.param("sort_ascending").as_deref() == Some("true");
    let engine = search::declared("asana");
    let text = engine
        .parse(&req.param("text").unwrap_or_default())
        .unwrap_or_default();
    let tasks = dataset::asana_tasks();
    let in_bounds = |t: &AsanaTask| {
        let c = t.created_unix;
        let m = t.modified_unix;
        bounds[0].is_none_or(|b| c < b)
            && bounds[1].is_none_or(|a| c > a)
            && bounds[2].is_none_or(|b| m < b)
            && bounds[3].is_none_or(|a| m > a)
    };
    let mut hits: Vec<&AsanaTask> = dataset::asana_docs()
        .search(engine, &text, |i| {
            let t = &tasks[i];
            in_bounds(t)
                && completed.is_none_or(|c| t.completed == c)
                && (projects.is_empty() || t.projects.iter().any(|(g, _)| projects.contains(g)))
        })
        .into_iter()
        .map(|hit| &tasks[hit.index])
        .collect();
    let key = |t: &AsanaTask| -> i64 {
        match sort_by.as_str() {
            "created_at" => t.created_unix,
            "completed_at" => unix_of(&t.completed_at).unwrap_or(i64::MIN),
            "due_date" => t
                .due_on
                .as_deref()
                .and_then(crate::time::parse)
                .map_or(i64::MIN, |i| i.start),
            "likes" => 0,
            _ => t.modified_unix,
        }
    };
    // Relevance: the order the engine found them in (best first).
    if sort_by != "relevance" {
        hits.sort_by(|a, b| {
            let o = key(a).cmp(&key(b)).then(a.gid.cmp(&b.gid));
            if ascending { o } else { o.reverse() }
        });
    }
    hits.truncate(limit);
    let data: Vec<Value> = hits
        .iter()
        .map(|t| {
            if fields.is_empty() {
                compact(t)
            } else {
                project(t, &fields)
            }
        })
        .collect();
    let mut answer = http::json(200, &json!({ "data": data }));
    http::note_returned(&mut answer, hits.iter().map(|t| t.permalink_url.as_str()));
    answer
}

fn typeahead(req: &Req) -> Response {
    let fields = match opt_fields(req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    // Typeahead's opt_fields takes `name` alone.
    if let Some(other) = fields.iter().find(|f| *f != "name") {
        return err(400, &format!("opt_fields: Unknown field: {other}"));
    }
    let Some(kind) = req.param("resource_type") else {
        return err(400, "resource_type: Missing input");
    };
    let count = match req.param("count") {
        None => 20,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => return err(400, "count: Must be between 1 and 100"),
        },
    };
    if kind != "task" {
        return http::json(200, &json!({"data": []}));
    }
    let engine = search::declared("asana-typeahead");
    let q = engine
        .parse(&req.param("query").unwrap_or_default())
        .unwrap_or_default();
    let tasks = dataset::asana_tasks();
    let hits = ranked(
        dataset::asana_name_docs(),
        engine,
        &q,
        sort_as(engine, None),
        |_| true,
        |i| tasks[i].modified_unix,
    );
    let page = &hits[..hits.len().min(req.page_size(count))];
    let data: Vec<Value> = page
        .iter()
        .map(|hit| {
            if fields.is_empty() {
                compact(&tasks[hit.index])
            } else {
                project(&tasks[hit.index], &fields)
            }
        })
        .collect();
    let mut answer = http::json(200, &json!({ "data": data }));
    note_page(&mut answer, tasks, page);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_fields_pick_nested_fields() {
        let t = &dataset::asana_tasks()[0];
        let v = project(
            t,
            &[
                "name".into(),
                "created_by.name".into(),
                "projects.name".into(),
            ],
        );
        assert_eq!(v["gid"], t.gid.as_str());
        assert_eq!(v["name"], t.name.as_str());
        assert_eq!(v["created_by"]["name"], t.created_by.1.as_str());
        assert!(v["created_by"].get("resource_type").is_none());
        assert_eq!(v["projects"][0]["name"], t.projects[0].1.as_str());
        assert!(v.get("notes").is_none());
    }
}
