//! GitHub: `GET https://api.github.com/search/issues`, OAuth on github.com, and
//! `DELETE /applications/{client_id}/token`.

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::{int_param, oauth, ranked, sort_as};
use crate::Shared;
use crate::dataset::{self, GithubItem};
use crate::http::{self, Req};
use crate::search::{self, Index, Refusal, qualifier, split_words};
use crate::time::{self, Range};
use crate::tokens::{Auth, Vendor};

const DOCS: &str = "https://docs.github.com/rest";
const SEARCH_DOCS: &str =
    "https://docs.github.com/rest/search/search#search-issues-and-pull-requests";
/// The REST API versions GitHub publishes; the first is the default.
/// https://docs.github.com/rest/about-the-rest-api/api-versions
pub(crate) const API_VERSIONS: [&str; 2] = ["2022-11-28", "2026-03-10"];
/// GitHub's answer to an issue search without `is:issue` or
/// `is:pull-request` from a GitHub App's user access token (the tokens the
/// connector's manifest is for): "For requests made by GitHub Apps with a
/// user access token, you can't retrieve a combination of issues and pull
/// requests in a single query. Requests that don't include the is:issue or
/// is:pull-request qualifier will receive an HTTP 422 Unprocessable Entity
/// response." (the operation's description, api.github.com.json)
const KIND_REQUIRED: &str = "Query must include 'is:issue' or 'is:pull-request'";

fn message(status: u16, msg: &str, doc: &str) -> Response {
    http::json(
        status,
        &json!({"message": msg, "documentation_url": doc, "status": status.to_string()}),
    )
}

fn rate_headers(r: &mut Response, remaining: u32, reset_in: i64) {
    http::set(r, "x-ratelimit-limit", "30");
    http::set(r, "x-ratelimit-remaining", remaining.to_string());
    http::set(
        r,
        "x-ratelimit-reset",
        (time::now_unix() + reset_in).to_string(),
    );
    http::set(r, "x-ratelimit-used", (30 - remaining).to_string());
    http::set(r, "x-ratelimit-resource", "search");
}

fn common_headers(r: &mut Response, version: &str) {
    http::set(r, "x-github-api-version-selected", version);
    http::set(r, "x-github-media-type", "github.v3; format=json");
    http::set(
        r,
        "x-github-request-id",
        &http::request_id().to_uppercase()[..23],
    );
    http::set(r, "server", "github.com");
}

/// GitHub's error for a status (faults).
pub(crate) fn error(status: u16, retry_after: Option<u32>) -> Response {
    let mut r = match status {
        429 | 403 => {
            let mut r = message(
                status,
                if status == 429 {
                    "API rate limit exceeded for user ID 90211. If you reach out to GitHub Support for help, please include the request ID 0400:3A2B:1C9F0E:3B5A12:6650F1A2."
                } else {
                    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0400:3A2B:1C9F0E:3B5A12:6650F1A2."
                },
                "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            );
            rate_headers(&mut r, 0, retry_after.unwrap_or(60) as i64);
            r
        }
        401 => message(401, "Bad credentials", DOCS),
        404 => message(404, "Not Found", DOCS),
        422 => message(422, "Validation Failed", DOCS),
        500 => http::json(500, &json!({"message": "Server Error"})),
        502 => http::html(
            502,
            "<html><body><h1>502 Bad Gateway</h1>Unicorn! This page is taking too long to load.</body></html>",
        ),
        503 => message(503, "Service Unavailable", DOCS),
        s => message(
            s,
            http::status(s).canonical_reason().unwrap_or("Error"),
            DOCS,
        ),
    };
    common_headers(&mut r, API_VERSIONS[0]);
    r
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    if req.host == "github.com" {
        return match (&req.method, req.path.as_str()) {
            (&Method::GET, "/login/oauth/authorize") => {
                oauth::authorize(shared, Vendor::Github, req)
            }
            (&Method::POST, "/login/oauth/access_token") => {
                oauth::token(shared, Vendor::Github, req)
            }
            _ => http::html(404, "<html><body>Not Found</body></html>"),
        };
    }
    // api.github.com
    if req.header("user-agent").is_none_or(|u| u.trim().is_empty()) {
        return http::raw(
            403,
            "text/plain; charset=utf-8",
            "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.\n",
        );
    }
    let version = req
        .header("x-github-api-version")
        .unwrap_or(API_VERSIONS[0]);
    if !API_VERSIONS.contains(&version) {
        let mut r = message(
            400,
            &format!(
                "Unsupported 'X-GitHub-Api-Version' header: {version}. Supported versions are: {}.",
                API_VERSIONS.join(", ")
            ),
            "https://docs.github.com/rest/about-the-rest-api/api-versions",
        );
        common_headers(&mut r, API_VERSIONS[0]);
        return r;
    }
    let segs: Vec<&str> = req.path.trim_matches('/').split('/').collect();
    if segs.len() == 3 && segs[0] == "applications" && (segs[2] == "token" || segs[2] == "grant") {
        return if req.method == Method::DELETE {
            revoke(shared, req, segs[1])
        } else {
            message(404, "Not Found", DOCS)
        };
    }
    let token = req.bearer().or_else(|| {
        let v = req.header("authorization")?;
        v.strip_prefix("token ").map(|t| t.trim().to_string())
    });
    let user = match shared.tokens().check(Vendor::Github, token.as_deref()) {
        Auth::Ok(u) => u,
        // (Real GitHub allows anonymous search of public repos; Acme's are private.)
        _ => return unauthorized(version),
    };
    let mut r = match (&req.method, req.path.as_str()) {
        (&Method::GET, "/search/issues") => search(req, version),
        (&Method::GET, "/user") => http::json(200, &viewer(&user)),
        _ => message(404, "Not Found", DOCS),
    };
    common_headers(&mut r, version);
    r
}

fn unauthorized(version: &str) -> Response {
    let mut r = message(401, "Bad credentials", DOCS);
    common_headers(&mut r, version);
    r
}

fn viewer(user: &str) -> Value {
    let id = 1_000_000 + (dataset::fnv(user) % 1_000_000);
    json!({
        "login": user,
        "id": id,
        "node_id": format!("U_kgDO{:08X}", id),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "html_url": format!("https://github.com/{user}"),
        "type": "User",
        "site_admin": false,
        "name": capitalize(user),
        "company": "@acme",
    })
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn revoke(shared: &Shared, req: &Req, client_id: &str) -> Response {
    match req.basic() {
        Some((id, secret)) if id == client_id && !secret.is_empty() => {}
        _ => {
            return message(
                401,
                "Requires authentication",
                "https://docs.github.com/rest/apps/oauth-applications#delete-an-app-token",
            );
        }
    }
    let token = req.json().ok().and_then(|v| {
        v.get("access_token")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let Some(token) = token else {
        return message(
            422,
            "Invalid request.\n\n\"access_token\" wasn't supplied.",
            "https://docs.github.com/rest/apps/oauth-applications#delete-an-app-token",
        );
    };
    let mut tokens = shared.tokens();
    let owned = tokens
        .info(&token)
        .is_some_and(|t| t.client_id.as_deref().is_none_or(|c| c == client_id));
    if owned && tokens.revoke(Vendor::Github, &token) {
        http::empty(204)
    } else {
        message(
            404,
            "Not Found",
            "https://docs.github.com/rest/apps/oauth-applications#delete-an-app-token",
        )
    }
}

struct Filters {
    is_pr: Option<bool>,
    state: Option<String>,
    repos: Vec<String>,
    not_repos: Vec<String>,
    updated: Range,
    created: Range,
    closed: Range,
    authors: Vec<String>,
    labels: Vec<String>,
    not_labels: Vec<String>,
    in_fields: Vec<String>,
    none: bool,
}

fn date_range(v: &str) -> Option<Range> {
    if let Some((a, b)) = v.split_once("..") {
        let mut r = Range::default();
        if a != "*" {
            r.intersect(Range::from_op(">=", time::parse(a)?)?);
        }
        if b != "*" {
            r.intersect(Range::from_op("<=", time::parse(b)?)?);
        }
        return Some(r);
    }
    for op in [">=", "<=", ">", "<"] {
        if let Some(rest) = v.strip_prefix(op) {
            return Range::from_op(op, time::parse(rest)?);
        }
    }
    Range::from_op("=", time::parse(v)?)
}

/// Splits `q` into its qualifiers and its free text (words, phrases and the
/// `AND`/`OR`/`NOT` operators and parentheses the engine reads).
fn parse_q(q: &str) -> Result<(String, Filters), String> {
    let mut f = Filters {
        is_pr: None,
        state: None,
        repos: Vec::new(),
        not_repos: Vec::new(),
        updated: Range::default(),
        created: Range::default(),
        closed: Range::default(),
        authors: Vec::new(),
        labels: Vec::new(),
        not_labels: Vec::new(),
        in_fields: Vec::new(),
        none: false,
    };
    let mut text = Vec::new();
    for w in split_words(q) {
        let Some((neg, name, value)) = qualifier(&w) else {
            text.push(w);
            continue;
        };
        let lv = value.to_ascii_lowercase();
        match name.as_str() {
            "is" | "type" => match lv.as_str() {
                "issue" => f.is_pr = Some(neg),
                "pr" | "pull-request" => f.is_pr = Some(!neg),
                "open" | "closed" => {
                    f.state = Some(if neg {
                        if lv == "open" { "closed" } else { "open" }.into()
                    } else {
                        lv
                    })
                }
                "merged" => {
                    f.is_pr = Some(true);
                    f.state = Some("closed".into());
                }
                _ => {}
            },
            "state" => f.state = Some(lv),
            "repo" => {
                if neg {
                    f.not_repos.push(lv)
                } else {
                    f.repos.push(lv)
                }
            }
            "org" | "user" | "owner" if lv != "acme" && !neg => f.none = true,
            "author" => f.authors.push(lv),
            "label" => {
                for l in lv.split(',') {
                    if neg {
                        f.not_labels.push(l.to_string())
                    } else {
                        f.labels.push(l.to_string())
                    }
                }
            }
            "in" => f.in_fields.extend(lv.split(',').map(str::to_string)),
            "updated" | "created" | "closed" | "merged" => {
                let r = date_range(&value)
                    .ok_or_else(|| format!("The qualifier {name}:{value} is not a valid date"))?;
                match name.as_str() {
                    "updated" => f.updated.intersect(r),
                    "created" => f.created.intersect(r),
                    _ => f.closed.intersect(r),
                }
            }
            _ => {} // unknown qualifiers are ignored
        }
    }
    Ok((text.join(" "), f))
}

fn keep(item: &GithubItem, f: &Filters) -> bool {
    if f.none {
        return false;
    }
    if f.is_pr.is_some_and(|pr| item.is_pull_request != pr) {
        return false;
    }
    if f.state.as_ref().is_some_and(|s| &item.state != s) {
        return false;
    }
    let repo = item.repo.to_ascii_lowercase();
    if !f.repos.is_empty() && !f.repos.contains(&repo) {
        return false;
    }
    if f.not_repos.contains(&repo) {
        return false;
    }
    if !f.updated.contains(item.updated_unix) || !f.created.contains(item.created_unix) {
        return false;
    }
    if f.closed != Range::default() {
        match item.closed_at.as_deref().and_then(time::parse) {
            Some(c) if f.closed.contains(c.start) => {}
            _ => return false,
        }
    }
    if !f.authors.is_empty() && !f.authors.contains(&item.user_login.to_ascii_lowercase()) {
        return false;
    }
    if !f.labels.iter().all(|l| item.labels.contains(l)) {
        return false;
    }
    if f.not_labels.iter().any(|l| item.labels.contains(l)) {
        return false;
    }
    true
}

fn search(req: &Req, version: &str) -> Response {
    let validation = |msg: &str| {
        http::json(
            422,
            &json!({
                "message": "Validation Failed",
                "errors": [{"resource": "Search", "field": "q", "code": "invalid", "message": msg}],
                "documentation_url": SEARCH_DOCS,
                "status": "422",
            }),
        )
    };
    let Some(q) = req.param("q") else {
        return http::json(
            422,
            &json!({
                "message": "Validation Failed",
                "errors": [{"resource": "Search", "field": "q", "code": "missing"}],
                "documentation_url": SEARCH_DOCS,
                "status": "422",
            }),
        );
    };
    if q.chars().count() > 256 {
        return validation("The search is longer than 256 characters.");
    }
    let per_page = match int_param(req.param("per_page"), 30) {
        Ok(n) => req.page_size(n.clamp(1, 100) as usize) as u64,
        Err(_) => return validation("per_page must be an integer"),
    };
    let page = match int_param(req.param("page"), 1) {
        Ok(n) => n.max(1),
        Err(_) => return validation("page must be an integer"),
    };
    if (page - 1) * per_page >= 1000 {
        return http::json(
            422,
            &json!({"message": "Only the first 1000 search results are available", "documentation_url": SEARCH_DOCS, "status": "422"}),
        );
    }
    let (text, filters) = match parse_q(&q) {
        Ok(x) => x,
        Err(e) => return validation(&e),
    };
    if filters.is_pr.is_none() {
        return validation(KIND_REQUIRED);
    }
    let engine = search::declared("github");
    let query = match engine.parse(&text) {
        Ok(query) => query,
        Err(Refusal::TooManyOperators { max, .. }) => {
            return validation(&format!(
                "The search contains more than {max} AND / OR / NOT operators."
            ));
        }
    };
    let items = dataset::github_items();
    let title_only;
    let index = if !filters.in_fields.is_empty()
        && !filters.in_fields.iter().any(|f| f == "body")
        && filters.in_fields.iter().any(|f| f == "title")
    {
        title_only = Index::new(items.iter().map(|i| &i.title));
        &title_only
    } else {
        &dataset::docs().github
    };
    let sort = req.param("sort").filter(|s| !s.is_empty());
    let ascending = req.param("order").as_deref() == Some("asc");
    let hits = ranked(
        index,
        engine,
        &query,
        sort_as(engine, sort.is_some().then_some(ascending)),
        |i| keep(&items[i], &filters),
        |i| match sort.as_deref() {
            Some("created") => items[i].created_unix,
            Some("comments") => items[i].comments as i64,
            _ => items[i].updated_unix,
        },
    );
    let total = hits.len() as u64;
    let start = ((page - 1) * per_page) as usize;
    let page_items: Vec<Value> = hits
        .iter()
        .skip(start)
        .take(per_page as usize)
        .map(|hit| {
            item_json(
                version,
                &items[hit.index],
                if query.is_empty() { 1.0 } else { hit.score },
            )
        })
        .collect();
    let mut r = http::json(
        200,
        &json!({
            "total_count": total,
            "incomplete_results": false,
            // Lexical: the fake implements no semantic or hybrid search.
            "search_type": "lexical",
            "items": page_items,
        }),
    );
    let last = total.min(1000).div_ceil(per_page).max(1);
    let mut links = Vec::new();
    let url_for = |p: u64| {
        let mut pairs: Vec<(String, String)> = req.query_pairs();
        match pairs.iter_mut().find(|(k, _)| k == "page") {
            Some(x) => x.1 = p.to_string(),
            None => pairs.push(("page".into(), p.to_string())),
        }
        let qs: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        format!("https://api.github.com/search/issues?{qs}")
    };
    if page > 1 {
        links.push(format!("<{}>; rel=\"prev\"", url_for((page - 1).min(last))));
    }
    if page < last {
        links.push(format!("<{}>; rel=\"next\"", url_for(page + 1)));
        links.push(format!("<{}>; rel=\"last\"", url_for(last)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"first\"", url_for(1)));
    }
    if !links.is_empty() {
        http::set(&mut r, "link", links.join(", "));
    }
    rate_headers(&mut r, 29, 60);
    http::set(&mut r, "cache-control", "no-cache");
    let answered = hits.iter().skip(start).take(per_page as usize);
    http::note_returned(
        &mut r,
        answered.map(|hit| items[hit.index].html_url.as_str()),
    );
    r
}

fn label_json(name: &str) -> Value {
    let (color, desc) = match name {
        "bug" => ("d73a4a", "Something isn't working"),
        "enhancement" => ("a2eeef", "New feature or request"),
        "incident" => ("b60205", "Customer-facing incident"),
        "chore" => ("fef2c0", "Maintenance"),
        "planning" => ("c5def5", "Plans and documents"),
        _ => ("1d76db", "Team"),
    };
    let id = 5_000_000_000u64 + dataset::fnv(&format!("label:{name}")) % 1_000_000_000;
    json!({
        "id": id,
        "node_id": format!("LA_kwDOHq{:08X}", id as u32),
        "url": format!("https://api.github.com/repos/acme/shop/labels/{name}"),
        "name": name,
        "color": color,
        "default": matches!(name, "bug" | "enhancement"),
        "description": desc,
    })
}

/// An issue or pull request as the search answers with it, in the shape of
/// the API version asked for (2026-03-10 drops `assignee`).
fn item_json(version: &str, it: &GithubItem, score: f64) -> Value {
    let people = dataset::people();
    let login = &it.user_login;
    let api = format!(
        "https://api.github.com/repos/{}/issues/{}",
        it.repo, it.number
    );
    let association = if people.iter().any(|p| &p.github_login == login) {
        "MEMBER"
    } else {
        "CONTRIBUTOR"
    };
    let mut v = json!({
        "url": api,
        "repository_url": format!("https://api.github.com/repos/{}", it.repo),
        "labels_url": format!("{api}/labels{{/name}}"),
        "comments_url": format!("{api}/comments"),
        "events_url": format!("{api}/events"),
        "html_url": it.html_url,
        "id": it.id,
        "node_id": it.node_id,
        "number": it.number,
        "title": it.title,
        "user": {
            "login": login,
            "id": it.user_id,
            "node_id": format!("MDQ6VXNlcj{}", it.user_id),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", it.user_id),
            "gravatar_id": "",
            "url": format!("https://api.github.com/users/{login}"),
            "html_url": format!("https://github.com/{login}"),
            "followers_url": format!("https://api.github.com/users/{login}/followers"),
            "following_url": format!("https://api.github.com/users/{login}/following{{/other_user}}"),
            "gists_url": format!("https://api.github.com/users/{login}/gists{{/gist_id}}"),
            "starred_url": format!("https://api.github.com/users/{login}/starred{{/owner}}{{/repo}}"),
            "subscriptions_url": format!("https://api.github.com/users/{login}/subscriptions"),
            "organizations_url": format!("https://api.github.com/users/{login}/orgs"),
            "repos_url": format!("https://api.github.com/users/{login}/repos"),
            "events_url": format!("https://api.github.com/users/{login}/events{{/privacy}}"),
            "received_events_url": format!("https://api.github.com/users/{login}/received_events"),
            "type": "User",
            "user_view_type": "public",
            "site_admin": false,
        },
        "labels": it.labels.iter().map(|l| label_json(l)).collect::<Vec<_>>(),
        "state": it.state,
        "locked": false,
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "comments": it.comments,
        "created_at": it.created_at,
        "updated_at": it.updated_at,
        "closed_at": it.closed_at,
        "author_association": association,
        "type": null,
        "active_lock_reason": null,
        "body": it.body,
        "reactions": {
            "url": format!("{api}/reactions"),
            "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0,
        },
        "timeline_url": format!("{api}/timeline"),
        "performed_via_github_app": null,
        "state_reason": if it.state == "closed" && !it.is_pull_request { json!("completed") } else { Value::Null },
        "score": score,
    });
    if it.is_pull_request {
        let pulls = format!(
            "https://api.github.com/repos/{}/pulls/{}",
            it.repo, it.number
        );
        v["draft"] = json!(it.draft);
        v["pull_request"] = json!({
            "url": pulls,
            "html_url": it.html_url,
            "diff_url": format!("{}.diff", it.html_url),
            "patch_url": format!("{}.patch", it.html_url),
            "merged_at": it.merged_at,
        });
    }
    if version != API_VERSIONS[0]
        && let Some(item) = v.as_object_mut()
    {
        item.remove("assignee");
    }
    v
}
