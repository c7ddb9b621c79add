//! Box: its search is played from data (`declared/box/`, by
//! [`super::from_data`]); this is what is not a search. A file's text is
//! read as Box's `extracted_text` representation: `GET /2.0/files/{id}`
//! with `fields=representations` and `x-rep-hints: [extracted_text]` gives
//! a `url_template` on dl.boxcloud.com, whose content is the text (the
//! record's own `_content`). Revocation (`POST /oauth2/revoke`) takes the
//! token from the form body; the authorize page is on account.box.com and
//! the token endpoint on api.box.com, both [`super::oauth::serve`]'s. Errors
//! are Box's `ClientError`.

use std::sync::LazyLock;

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use super::{auth, from_data, oauth};
use crate::Shared;
use crate::declared::built_in_file;
use crate::http::{self, Req};
use crate::tokens::Vendor;

/// The records of the played search, by id.
static ITEMS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    let text = built_in_file("box", "items.json").expect("declared/box/items.json");
    serde_json::from_str(text).expect("declared/box/items.json is a JSON array")
});

/// Box's `ClientError` for a status.
pub(crate) fn error(status: u16) -> Response {
    let code = match status {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "access_denied_insufficient_permissions",
        404 => "not_found",
        429 => "rate_limit_exceeded",
        503 => "unavailable",
        _ => "internal_server_error",
    };
    let message = http::status(status).canonical_reason().unwrap_or("Error");
    http::json(
        status,
        &json!({
            "type": "error",
            "status": status,
            "code": code,
            "help_url": "https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/",
            "message": message,
            "request_id": "fq3a1xh6m2ge9b0k",
        }),
    )
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.as_str();
    if (&req.method, req.host.as_str(), path) == (&Method::POST, "api.box.com", "/oauth2/revoke") {
        return oauth::revoke(shared, Vendor::Box, req, "Token is missing");
    }
    if req.host == "api.box.com" && path == "/2.0/search" {
        return from_data::handle(shared, Vendor::Box, req);
    }
    if req.method != Method::GET {
        return error(405);
    }
    if auth(shared, Vendor::Box, req).user().is_none() {
        return error(401);
    }
    match (
        req.host.as_str(),
        path.split('/').collect::<Vec<_>>().as_slice(),
    ) {
        ("api.box.com", ["", "2.0", "files", id]) => representations(req, id),
        (
            "dl.boxcloud.com",
            [
                "",
                "api",
                "2.0",
                "internal_files",
                id,
                "versions",
                _,
                "representations",
                "extracted_text",
                "content",
                "",
            ],
        ) => match item(id).and_then(|item| item["_content"].as_str()) {
            Some(text) => http::raw(200, "text/plain; charset=utf-8", text.to_string()),
            None => error(404),
        },
        _ => error(404),
    }
}

fn item(id: &str) -> Option<&'static Value> {
    ITEMS
        .iter()
        .find(|item| item["type"] == "file" && item["id"] == id)
}

/// A file's representations: its extracted text when the hints ask for it.
fn representations(req: &Req, id: &str) -> Response {
    let Some(file) = item(id) else {
        return error(404);
    };
    let version = file
        .pointer("/file_version/id")
        .cloned()
        .unwrap_or(json!("1"));
    let hinted = req
        .header("x-rep-hints")
        .is_some_and(|hints| hints.contains("[extracted_text]"));
    let wants = req
        .param("fields")
        .is_some_and(|f| f.split(',').any(|f| f == "representations"));
    let base = format!(
        "internal_files/{id}/versions/{}/representations/extracted_text",
        version.as_str().unwrap_or("1")
    );
    let entries = if hinted && wants {
        vec![json!({
            "representation": "extracted_text",
            "properties": {},
            "info": { "url": format!("https://api.box.com/2.0/{base}") },
            "status": { "state": "success" },
            "content": { "url_template": format!("https://dl.boxcloud.com/api/2.0/{base}/content/{{+asset_path}}") },
        })]
    } else {
        Vec::new()
    };
    let mut body = json!({ "type": "file", "id": id, "etag": file["etag"] });
    if wants {
        body["representations"] = json!({ "entries": entries });
    }
    http::json(200, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ticket keys a text mentions (`ACME-104`, `ENG-12`).
    fn keys(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .filter(|word| {
                let (project, number) = word.split_once('-').unwrap_or_default();
                matches!(project, "ACME" | "ENG")
                    && !number.is_empty()
                    && number.bytes().all(|b| b.is_ascii_digit())
            })
            .map(String::from)
            .collect()
    }

    #[test]
    fn the_items_name_their_stories_tickets() {
        // The files were written from the stories: a ticket a file cites
        // is a ticket of the fake company, and a file that cites any
        // cites its own story's.
        let stories = crate::dataset::stories();
        let every: Vec<&String> = stories
            .iter()
            .flat_map(|s| s.jira_key.iter().chain(&s.linear_identifier))
            .collect();
        for item in ITEMS.iter() {
            let story = item["_story"].as_str().expect("every item has its story");
            let info = stories.iter().find(|s| s.slug == story).expect(story);
            let cited = keys(item["_content"].as_str().unwrap_or_default());
            for key in &cited {
                assert!(every.contains(&key), "{}: {key} is no ticket", item["name"]);
            }
            let own: Vec<&String> = info
                .jira_key
                .iter()
                .chain(&info.linear_identifier)
                .collect();
            if !cited.is_empty() && !own.is_empty() {
                assert!(
                    own.iter().any(|k| cited.contains(k)),
                    "{} cites {cited:?}, not its story's {own:?}",
                    item["name"]
                );
            }
        }
    }

    #[test]
    fn errors_are_box_client_errors() {
        assert_eq!(error(429).status(), 429);
        assert_eq!(error(401).status(), 401);
    }
}
