//! Asana: tasks, through the workspace's task search
//! (`GET /api/1.0/workspaces/{gid}/tasks/search?text=...`), the workspace
//! being the connection's `workspace` setting.
//!
//! Task search has no cursor: results come newest first by `modified_at`,
//! and the next page is asked with `modified_at.before` set to the last
//! task's time; an empty page ends it (a short one may come from a cap).
//! The time range is `modified_at.after`/`.before`. Search is an Asana
//! Premium feature (402 otherwise): then the workspace's typeahead, which
//! matches task names, answers instead. `opt_fields` asks for what becomes
//! the document; citations are the tasks' `permalink_url`.

use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::{from_unix, to_unix};

const OPT_FIELDS: &str = "name,notes,permalink_url,created_at,modified_at,completed,completed_at,due_on,assignee.name,created_by.name,projects.name";
const MAX_PAGES: usize = 3;

struct Asana;

impl Connector for Asana {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let workspace = workspace(request.required_setting("workspace")?)?;
        let base = format!("https://app.asana.com/api/1.0/workspaces/{workspace}");
        let text = search_text(&request);
        let want = request.max_results.clamp(1, 100) as usize;
        let since = request.since.as_deref().and_then(to_unix);
        let until = request.until.as_deref().and_then(to_unix);
        let mut premium = true;
        let tasks = collect_pages(want, MAX_PAGES, |before: Option<String>| {
            let mut url = Url::new(format!("{base}/tasks/search"))
                .param("text", &text)
                .param("opt_fields", OPT_FIELDS)
                .param("sort_by", "modified_at")
                .param("sort_ascending", "false")
                .param("limit", want)
                .param_opt("modified_at.after", since.map(|s| from_unix(s - 1)));
            // The page's upper bound: the last task seen, else the range's.
            match before {
                Some(b) => url = url.param("modified_at.before", b),
                None => url = url.param_opt("modified_at.before", until.map(|u| from_unix(u + 1))),
            }
            let response = Request::get(url.build()).send()?;
            if response.status == 402 && premium {
                premium = false;
                return Ok(Page {
                    items: Vec::new(),
                    next: None,
                });
            }
            let body: Value = check(response)?.json()?;
            let items = body.array_at("/data").to_vec();
            let next = items
                .last()
                .and_then(|t| t.str_at("/modified_at"))
                .map(String::from);
            Ok(Page { items, next })
        })?;
        let tasks = if premium {
            tasks
        } else {
            // Not a Premium workspace: typeahead, by name.
            let url = Url::new(format!("{base}/typeahead"))
                .param("resource_type", "task")
                .param("query", &text)
                .param("count", want)
                .param("opt_fields", OPT_FIELDS)
                .build();
            let body: Value = check(Request::get(url).send()?)?.json()?;
            body.array_at("/data").to_vec()
        };
        let mut documents: Vec<Document> = Vec::new();
        for doc in tasks.iter().filter_map(to_document) {
            if request.in_time_range(doc.updated_at.as_deref())
                && !documents.iter().any(|d| d.id == doc.id)
            {
                documents.push(doc);
            }
        }
        documents.truncate(want);
        Ok(documents)
    }
}

/// A workspace gid: digits only.
fn workspace(setting: &str) -> Result<String, SearchError> {
    let s = setting.trim();
    if !s.is_empty() && s.len() <= 32 && s.bytes().all(|b| b.is_ascii_digit()) {
        Ok(s.to_string())
    } else {
        Err(SearchError::InvalidRequest(format!(
            "the workspace setting {setting:?} is not an Asana workspace gid"
        )))
    }
}

/// The words of the question (Asana's search has no phrase syntax).
fn search_text(request: &SearchRequest) -> String {
    let mut words: Vec<&str> = Vec::new();
    for w in request
        .phrases
        .iter()
        .chain(&request.terms)
        .flat_map(|p| p.split_whitespace())
    {
        if !words.iter().any(|x| x.eq_ignore_ascii_case(w)) {
            words.push(w);
        }
    }
    let text = words.join(" ").replace('"', "");
    if text.trim().is_empty() {
        request.query.clone()
    } else {
        text
    }
}

/// Asana's errors are `{"errors": [{"message"}]}`.
fn check(response: Response) -> Result<Response, SearchError> {
    if response.status < 400 {
        return Ok(response);
    }
    let body: Value = response.json().unwrap_or(Value::Null);
    let message = body
        .str_at("/errors/0/message")
        .map(String::from)
        .unwrap_or_else(|| response.error_message());
    Err(response.status_error(message))
}

fn to_document(task: &Value) -> Option<Document> {
    let gid = task.str_at("/gid")?;
    let url = task
        .str_at("/permalink_url")
        .map(String::from)
        .unwrap_or_else(|| format!("https://app.asana.com/0/0/{gid}"));
    let projects = task.strs_at("/projects", "/name");
    Some(
        Document::new(gid, task.string_at("/name"), task.string_at("/notes"), url)
            .author(task.str_at("/created_by/name"))
            .times(task.str_at("/created_at"), task.str_at("/modified_at"))
            .metadata(json!({
                "completed": task.bool_at("/completed"),
                "assignee": task.str_at("/assignee/name"),
                "projects": projects,
                "due_on": task.str_at("/due_on"),
            })),
    )
}

quarry_connector_sdk::export!(Asana);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_task() {
        let task: Value = serde_json::from_str(r#"{"gid":"1204419982316573","name":"Launch: Add Apple Pay to web checkout","notes":"Launch Apple Pay.\nEngineering: tracked as ACME-40.","permalink_url":"https://app.asana.com/1/1201994848293001/project/1203/task/1204419982316573","created_at":"2025-05-25T09:00:00.000Z","modified_at":"2025-06-25T09:00:00.000Z","completed":true,"due_on":"2025-06-24","assignee":{"gid":"1","name":"Sofia Rossi"},"created_by":{"gid":"1","name":"Sofia Rossi"},"projects":[{"gid":"1203","name":"Product launches"}]}"#).unwrap();
        let doc = to_document(&task).unwrap();
        assert_eq!(doc.id, "1204419982316573");
        assert_eq!(doc.title, "Launch: Add Apple Pay to web checkout");
        assert!(doc.content.contains("ACME-40"));
        assert_eq!(
            doc.url,
            "https://app.asana.com/1/1201994848293001/project/1203/task/1204419982316573"
        );
        assert_eq!(doc.author.as_deref(), Some("Sofia Rossi"));
        assert_eq!(doc.updated_at.as_deref(), Some("2025-06-25T09:00:00Z"));
        assert!(doc.metadata.contains("\"projects\":[\"Product launches\"]"));
    }

    #[test]
    fn reads_settings_and_words() {
        assert_eq!(workspace(" 1201994848293001 ").unwrap(), "1201994848293001");
        assert!(workspace("12/../x").is_err());
        let request = SearchRequest::new("q", &["apple", "pay", "launch"], &["apple pay"]);
        assert_eq!(search_text(&request), "apple pay launch");
    }
}
