//! Vendor dispatch and shared helpers.

pub(crate) mod box_com;
pub(crate) mod confluence;
pub(crate) mod cursor;
pub(crate) mod drive;
pub(crate) mod from_data;
pub(crate) mod github;
pub(crate) mod gmail;
pub(crate) mod google;
pub(crate) mod hubspot;
pub(crate) mod jira;
pub(crate) mod linear;
pub(crate) mod notion;
pub(crate) mod oauth;
pub(crate) mod okta;
pub(crate) mod query_lang;
pub(crate) mod slack;
pub(crate) mod zendesk;
// Salesforce, Microsoft 365, Asana, Trello, Intercom.
pub(crate) mod asana;
pub(crate) mod intercom;
pub(crate) mod microsoft;
pub(crate) mod salesforce;
pub(crate) mod trello;

use axum::response::Response;
use serde_json::{Value, json};

use crate::Shared;
use crate::http::{self, Req};
use crate::search::{Declaration, Hit, Index, Query, Sort, sort_hits};
use crate::tokens::{Auth, Vendor};

/// Which vendor plays a host.
pub(crate) fn vendor_of(host: &str) -> Option<Vendor> {
    match host {
        "api.github.com" | "github.com" => Some(Vendor::Github),
        "slack.com" => Some(Vendor::Slack),
        "api.notion.com" => Some(Vendor::Notion),
        "api.linear.app" | "linear.app" => Some(Vendor::Linear),
        "api.atlassian.com" | "auth.atlassian.com" => Some(Vendor::Jira),
        "www.googleapis.com" | "accounts.google.com" | "oauth2.googleapis.com" => {
            Some(Vendor::GoogleDrive)
        }
        "gmail.googleapis.com" => Some(Vendor::Gmail),
        "acme.zendesk.com" => Some(Vendor::Zendesk),
        "api.hubapi.com" | "app.hubspot.com" => Some(Vendor::Hubspot),
        "acme.my.salesforce.com" | "login.salesforce.com" => Some(Vendor::Salesforce),
        "graph.microsoft.com" | "login.microsoftonline.com" => Some(Vendor::Microsoft365),
        "app.asana.com" => Some(Vendor::Asana),
        "api.trello.com" | "trello.com" => Some(Vendor::Trello),
        "api.intercom.io" | "app.intercom.com" => Some(Vendor::Intercom),
        "api.box.com" | "account.box.com" | "dl.boxcloud.com" => Some(Vendor::Box),
        "sentry.io" | "us.sentry.io" => Some(Vendor::Sentry),
        _ => None,
    }
}

/// [`vendor_of`], refined by path where vendors share a host: Confluence's API is on
/// api.atlassian.com beside Jira's.
pub(crate) fn vendor_of_request(req: &Req) -> Option<Vendor> {
    match vendor_of(&req.host)? {
        Vendor::Jira
            if req.host == "api.atlassian.com" && req.path.starts_with("/ex/confluence/") =>
        {
            Some(Vendor::Confluence)
        }
        Vendor::GoogleDrive
            if req.host == "www.googleapis.com" && req.path.starts_with("/calendar/") =>
        {
            Some(Vendor::GoogleCalendar)
        }
        v => Some(v),
    }
}

/// Google's OAuth hosts, shared by Drive, Gmail and Calendar.
fn is_google_oauth(host: &str) -> bool {
    matches!(host, "accounts.google.com" | "oauth2.googleapis.com")
}

pub(crate) fn dispatch(shared: &Shared, req: &Req) -> Response {
    // The identity provider of the dashboard's single sign-on: no data API.
    if req.host == "acme.okta.com" {
        return okta::handle(shared, req);
    }
    let vendor = vendor_of_request(req);
    if let Some(answer) = vendor.and_then(|v| oauth::serve(shared, v, req)) {
        return answer;
    }
    match vendor {
        Some(Vendor::GoogleDrive | Vendor::Gmail | Vendor::GoogleCalendar)
            if is_google_oauth(&req.host) =>
        {
            google::handle(shared, req)
        }
        Some(Vendor::Confluence) => confluence::handle(shared, req),
        Some(Vendor::GoogleDrive) => drive::handle(shared, req),
        Some(Vendor::Gmail) => gmail::handle(shared, req),
        Some(Vendor::Zendesk) => zendesk::handle(shared, req),
        Some(Vendor::Hubspot) => hubspot::handle(shared, req),
        Some(Vendor::Github) => github::handle(shared, req),
        Some(Vendor::Slack) => slack::handle(shared, req),
        Some(Vendor::Notion) => notion::handle(shared, req),
        Some(Vendor::Linear) => linear::handle(shared, req),
        Some(Vendor::Jira) => jira::handle(shared, req),
        Some(Vendor::Salesforce) => salesforce::handle(shared, req),
        Some(Vendor::Microsoft365) => microsoft::handle(shared, req),
        Some(Vendor::Asana) => asana::handle(shared, req),
        Some(Vendor::Trello) => trello::handle(shared, req),
        Some(Vendor::Intercom) => intercom::handle(shared, req),
        Some(vendor @ Vendor::GoogleCalendar) => from_data::handle(shared, vendor, req),
        Some(Vendor::Box) => box_com::handle(shared, req),
        Some(vendor @ Vendor::Sentry) => from_data::handle(shared, vendor, req),
        None => {
            let known = crate::HOSTS.contains(&req.host.as_str());
            http::json(
                404,
                &json!({
                    "error": "not_found",
                    "message": if known {
                        "fake-saas does not play this vendor's API yet"
                    } else {
                        "fake-saas does not serve this host"
                    },
                    "host": req.host,
                    "path": req.path,
                }),
            )
        }
    }
}

/// The vendor's error response for a status (used by faults).
pub(crate) fn error_response(req: &Req, status: u16, retry_after: Option<u32>) -> Response {
    let mut r = match vendor_of_request(req) {
        Some(Vendor::Github) => github::error(status, retry_after),
        Some(Vendor::Slack) => slack::error(status),
        Some(Vendor::Notion) => notion::error(status),
        Some(Vendor::Linear) => linear::error(status, retry_after),
        Some(Vendor::Jira) => jira::error(status, retry_after),
        Some(Vendor::Confluence) => confluence::error(status, retry_after),
        Some(Vendor::GoogleDrive | Vendor::Gmail | Vendor::GoogleCalendar) => google::error(status),
        Some(Vendor::Zendesk) => zendesk::error(status),
        Some(Vendor::Hubspot) => hubspot::error(status),
        Some(Vendor::Salesforce) => salesforce::error(status),
        Some(Vendor::Microsoft365) => microsoft::error(status),
        Some(Vendor::Asana) => asana::error(status),
        Some(Vendor::Trello) => trello::error(status),
        Some(Vendor::Intercom) => intercom::error(status),
        Some(Vendor::Box) => box_com::error(status),
        Some(Vendor::Sentry) => sentry_error(status),
        None => http::json(
            status,
            &json!({"error": http::status(status).canonical_reason().unwrap_or("error")}),
        ),
    };
    if let Some(s) = retry_after {
        http::set(&mut r, "retry-after", s.to_string());
    }
    r
}

/// Checks the bearer token of a request.
pub(crate) fn auth(shared: &Shared, vendor: Vendor, req: &Req) -> Auth {
    let token = req.bearer();
    shared.tokens().check(vendor, token.as_deref())
}

/// The records of `index` that `keep` lets through and `query` matches, as
/// `engine` matches, ordered as `sort` says with `key` giving each record's
/// sort key (its update time, unless the request sorts by another).
pub(crate) fn ranked(
    index: &Index,
    engine: &Declaration,
    query: &Query,
    sort: Sort,
    keep: impl Fn(usize) -> bool,
    key: impl Fn(usize) -> i64,
) -> Vec<Hit> {
    let mut hits = index.search(engine, query, keep);
    sort_hits(&mut hits, sort, key);
    hits
}

/// Notes on a search's answer the records it holds (`records[hit.index]`
/// for each hit on the page), for the fake's record of what it returned.
pub(crate) fn note_page<'a, R: crate::dataset::Record + 'a>(
    response: &mut Response,
    records: &'a [R],
    page: impl IntoIterator<Item = &'a Hit>,
) {
    http::note_returned(
        response,
        page.into_iter()
            .map(|hit| records[hit.index].citation_url()),
    );
}

/// The engine's default order, or the request's own sort when it asked for
/// one (`ascending` or not).
pub(crate) fn sort_as(engine: &Declaration, asked: Option<bool>) -> Sort {
    match asked {
        Some(ascending) => Sort::Key { ascending },
        None => Sort::Default(*engine.order),
    }
}

/// Parses a positive integer parameter, with a default.
pub(crate) fn int_param(v: Option<String>, default: u64) -> Result<u64, String> {
    match v {
        None => Ok(default),
        Some(s) if s.trim().is_empty() => Ok(default),
        Some(s) => s.trim().parse::<u64>().map_err(|_| s),
    }
}

/// The strings in the array at `key` of a JSON body (other values skipped; none when
/// there is no such array): the fields or properties a search asks for.
pub(crate) fn strings_at(body: &Value, key: &str) -> Vec<String> {
    body.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The array at `key` of a JSON body, within a vendor's limit on its length; the
/// vendor's words for what is wrong otherwise.
pub(crate) fn array_at_most<'a>(
    body: &'a Value,
    key: &str,
    max: usize,
    missing: &str,
    too_long: &str,
) -> Result<&'a [Value], String> {
    let items = body.get(key).and_then(Value::as_array).ok_or(missing)?;
    if items.len() > max {
        return Err(too_long.to_string());
    }
    Ok(items)
}

/// Sentry's errors: `{"detail": "..."}`.
fn sentry_error(status: u16) -> Response {
    let detail = match status {
        401 => "Invalid token",
        403 => "You do not have permission to perform this action.",
        404 => "The requested resource does not exist",
        429 => "You are attempting to use this endpoint too frequently.",
        _ => http::status(status)
            .canonical_reason()
            .unwrap_or("Internal Error"),
    };
    http::json(status, &json!({ "detail": detail }))
}
