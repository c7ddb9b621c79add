//! Asana: tasks, through the workspace's task search
//! (`GET /api/1.0/workspaces/{gid}/tasks/search?text=...`), the workspace
//! being the connection's `workspace` setting.
//!
//! Task search needs every word of its `text` (no phrases, no `OR`): the
//! connector sends a few narrower searches in one batch (the most specific
//! terms, two by two), each ranked by relevance, and merges them. Asana
//! limits search to 60 calls a minute, which bounds how many one question
//! may cost. Task search has no pagination; the time range is
//! `modified_at.after`/`.before`. Search is an Asana Premium feature (402
//! otherwise): then the workspace's typeahead, which matches task names and
//! answers only with their names, finds the tasks, and each is read in full
//! (`GET /tasks/{gid}`, together in one batch). `opt_fields` asks for what
//! becomes the document; citations are the tasks' `permalink_url`.

use quarry_connector_sdk::plan::{Term, merge, narrower, terms_by_specificity, written};
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::time::{from_unix, to_unix};

const API: &str = "https://app.asana.com/api/1.0";
/// What a task becomes a document with: values of `opt_fields` that task
/// search and `GET /tasks/{gid}` both accept.
const OPT_FIELDS: &str = "name,notes,permalink_url,created_at,modified_at,completed,completed_at,due_on,assignee.name,created_by,projects.name";
/// Searches one question may cost: Asana allows 60 search calls a minute.
const MAX_QUERIES: usize = 2;
/// Tasks read in full after a typeahead (one fetch each).
const MAX_READS: usize = 10;

struct Asana;

impl Connector for Asana {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let workspace = workspace(request.required_setting("workspace")?)?;
        let base = format!("{API}/workspaces/{workspace}");
        let want = request.max_results.clamp(1, 100) as usize;
        let texts = texts(&request);
        let searches = texts
            .iter()
            .map(|text| Request::get(search_url(&base, text, want, &request)))
            .collect();
        let answers = send_all(searches);
        let premium = !answers
            .iter()
            .any(|a| matches!(a, Ok(r) if r.status == 402));
        let tasks = if premium {
            let mut found = Vec::new();
            for answer in answers {
                let body: Value = check(answer?)?.json()?;
                found.push(body.array_at("/data").to_vec());
            }
            merge(found, |task| task.id_at("/gid"), want)
        } else {
            typeahead(&base, &texts[0], want.min(MAX_READS))?
        };
        Ok(tasks
            .iter()
            .filter_map(to_document)
            .filter(|doc| request.in_time_range(doc.updated_at.as_deref()))
            .collect())
    }
}

/// One task search: `text`, the best matches first, within the time range.
fn search_url(base: &str, text: &str, want: usize, request: &SearchRequest) -> String {
    let since = request.since.as_deref().and_then(to_unix);
    let until = request.until.as_deref().and_then(to_unix);
    Url::new(format!("{base}/tasks/search"))
        .param("text", text)
        .param("opt_fields", OPT_FIELDS)
        .param("sort_by", "relevance")
        .param("limit", want)
        .param_opt("modified_at.after", since.map(|s| from_unix(s - 1)))
        .param_opt("modified_at.before", until.map(|u| from_unix(u + 1)))
        .build()
}

/// Not a Premium workspace: the typeahead finds tasks by name (it answers
/// with names alone), then each is read in full, all in one batch.
fn typeahead(base: &str, text: &str, count: usize) -> Result<Vec<Value>, SearchError> {
    let url = Url::new(format!("{base}/typeahead"))
        .param("resource_type", "task")
        .param("query", text)
        .param("count", count)
        .param("opt_fields", "name")
        .build();
    let body: Value = check(Request::get(url).send()?)?.json()?;
    let reads = body
        .array_at("/data")
        .iter()
        .filter_map(|task| task.str_at("/gid"))
        .map(|gid| {
            let url = Url::new(format!(
                "{API}/tasks/{}",
                quarry_connector_sdk::url::segment(gid)
            ))
            .param("opt_fields", OPT_FIELDS)
            .build();
            Request::get(url)
        })
        .collect();
    send_all(reads)
        .into_iter()
        .map(|answer| {
            let body: Value = check(answer?)?.json()?;
            Ok(body.get("data").cloned().unwrap_or(Value::Null))
        })
        .collect()
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

/// The `text` of each search: narrower sets of the most specific terms
/// (Asana's search has no phrase syntax: a phrase is its words), or the
/// question as typed when it has none.
fn texts(request: &SearchRequest) -> Vec<String> {
    let terms: Vec<Term> = terms_by_specificity(request)
        .into_iter()
        .map(|term| Term::word(&term.text.replace('"', "")))
        .collect();
    let texts: Vec<String> = narrower(&terms, MAX_QUERIES)
        .iter()
        .map(|query| written(query, " "))
        .collect();
    if texts.is_empty() {
        vec![request.query.clone()]
    } else {
        texts
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
        assert_eq!(texts(&request), ["apple pay launch", "apple pay"]);
    }
}
