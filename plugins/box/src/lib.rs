//! Box: files, folders and web links through `GET /2.0/search`, which
//! matches names, descriptions, file content, comments and tags.
//!
//! Box reads words without an operator between them as `OR` and ranks by
//! relevance; `AND`, `OR` and `NOT` are operators only in capitals, and
//! quoted text is a phrase. So the question goes out as its keywords and
//! phrases joined by `OR` (every other word lower-cased, so that a user's
//! "NOT" stays a word), in one search. A time range is `updated_at_range`
//! (`FROM,TO`, either side open).
//!
//! Search answers with names and descriptions, not text. For the best few
//! files, the text is Box's `extracted_text` representation: the file's
//! `representations` (asked for with `x-rep-hints: [extracted_text]`) give
//! a `url_template` on Box's download host, read with its `{+asset_path}`
//! empty. Reading a text is best effort: a file without one (an image, a
//! file too large, a representation not made yet) or whose text cannot be
//! read keeps its description, and the search its results. Box's errors are
//! the common ones: 401 for a token expired or revoked, 429 with
//! `retry-after`, a `ClientError` whose `message` says what is wrong.
//!
//! A document links to `https://app.box.com/file/{id}` (`/folder/{id}`),
//! as Box's documentation gives its pages, a web link to its own URL; its
//! author is who created it (else its owner), as for the other tools.

use std::collections::HashMap;

use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::{keywords, truncate};
use quarry_connector_sdk::{time, url};

const SEARCH: &str = "https://api.box.com/2.0/search";
const FILES: &str = "https://api.box.com/2.0/files";
/// Items asked for: a page of Box's search holds up to 200.
const MAX_ITEMS: u32 = 50;
/// Files whose text is read: each costs two fetches.
const MAX_TEXTS: usize = 5;
/// Text kept from a file: the host only ranks the start of long documents.
const MAX_TEXT_BYTES: usize = 100_000;

struct BoxCom;

impl Connector for BoxCom {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let want = request.max_results.clamp(1, MAX_ITEMS);
        let answer = Request::get(search_url(&request, want))
            .send()?
            .error_for_status()?;
        let items: Value = answer.json()?;
        let items = items.array_at("/entries");
        let texts = texts_of(items);
        Ok(items
            .iter()
            .filter_map(|item| to_document(item, &texts))
            .collect())
    }
}

fn search_url(request: &SearchRequest, want: u32) -> String {
    let since = request.since.as_deref().and_then(time::normalize);
    let until = request.until.as_deref().and_then(time::normalize);
    let range = (since.is_some() || until.is_some()).then(|| {
        format!(
            "{},{}",
            since.unwrap_or_default(),
            until.unwrap_or_default()
        )
    });
    Url::new(SEARCH)
        .param("query", box_query(request))
        .param("limit", want)
        .param_opt("updated_at_range", range)
        .build()
}

/// The keywords and phrases joined by `OR`, every word lower-cased: Box
/// reads `AND`, `OR` and `NOT` as operators only in capitals.
fn box_query(request: &SearchRequest) -> String {
    let lower = |words: &[String]| words.iter().map(|w| w.to_lowercase()).collect::<Vec<_>>();
    let query = keywords(&lower(&request.terms), &lower(&request.phrases), " OR ");
    if query.is_empty() {
        request.query.to_lowercase()
    } else {
        query
    }
}

/// The extracted text of the first files, by id, in two rounds of one
/// batch each: the files' representations, then the texts they point to.
/// Best effort: a file whose text cannot be read (not made yet, gone,
/// refused, rate-limited, an answer in another shape) keeps its
/// description, and the search keeps its results.
fn texts_of(items: &[Value]) -> HashMap<String, String> {
    let files: Vec<&str> = items
        .iter()
        .filter(|item| item.str_at("/type") == Some("file"))
        .filter_map(|item| item.str_at("/id"))
        .take(MAX_TEXTS)
        .collect();
    let infos = send_all(files.iter().map(|id| representations(id)).collect());
    let reads: Vec<(&str, String)> = files
        .iter()
        .zip(infos)
        .filter_map(|(id, info)| Some((*id, text_url(info.ok()?)?)))
        .collect();
    let answers = send_all(
        reads
            .iter()
            .map(|(_, url)| Request::get(url.clone()))
            .collect(),
    );
    reads
        .into_iter()
        .zip(answers)
        .filter_map(|((id, _), answer)| {
            // 202: Box is still making it.
            let answer = answer.ok().filter(|a| a.status == 200)?;
            let text = truncate(answer.text().trim(), MAX_TEXT_BYTES).to_string();
            Some((id.to_string(), text))
        })
        .collect()
}

fn representations(id: &str) -> Request {
    let url = Url::new(format!("{FILES}/{}", url::segment(id)))
        .param("fields", "representations")
        .build();
    Request::get(url).header("x-rep-hints", "[extracted_text]")
}

/// The text's address when Box has made it: the `url_template` with its
/// `{+asset_path}` empty. None for a file gone, refused or without text
/// (`pending`, or `none`: Box makes it when its `info.url` is requested,
/// which this connector does not do; the file keeps its description).
fn text_url(info: Response) -> Option<String> {
    let info: Value = info.error_for_status().ok()?.json().ok()?;
    let text = info
        .array_at("/representations/entries")
        .iter()
        .find(|r| r.str_at("/representation") == Some("extracted_text"))?;
    if !matches!(text.str_at("/status/state"), Some("success" | "viewable")) {
        return None;
    }
    let template = text.str_at("/content/url_template")?;
    Some(template.replace("{+asset_path}", ""))
}

/// An item as a document; a file's text from `texts` (by file id: folders
/// have ids of their own), else its description.
fn to_document(item: &Value, texts: &HashMap<String, String>) -> Option<Document> {
    let id = item.str_at("/id")?;
    let kind = item.str_at("/type")?;
    let text = texts.get(id).filter(|_| kind == "file");
    let url = match kind {
        "file" | "folder" => format!("https://app.box.com/{kind}/{id}"),
        "web_link" => item.str_at("/url")?.to_string(),
        _ => return None,
    };
    // The path below Box's root folder (id 0, "All Files").
    let folders: Vec<&str> = item
        .array_at("/path_collection/entries")
        .iter()
        .filter(|f| f.str_at("/id") != Some("0"))
        .filter_map(|f| f.str_at("/name"))
        .collect();
    let content = text
        .filter(|t| !t.is_empty())
        .cloned()
        .unwrap_or_else(|| item.string_at("/description"));
    let author = item
        .str_at("/created_by/name")
        .or(item.str_at("/owned_by/name"));
    Some(
        Document::new(
            format!("{kind}_{id}"),
            item.string_at("/name"),
            content,
            url,
        )
        .author(author)
        .times(item.str_at("/created_at"), item.str_at("/modified_at"))
        .metadata(json!({
            "type": kind,
            "path": folders.join("/"),
            "owner": item.str_at("/owned_by/login"),
            "size": item.i64_at("/size"),
        })),
    )
}

quarry_connector_sdk::export!(BoxCom);

#[cfg(test)]
mod tests {
    use quarry_connector_sdk::testing::{assert_document, with_upstream};

    use super::*;

    fn file(id: &str) -> Value {
        json!({"type": "file", "id": id, "name": format!("Report {id}.docx"), "description": "A report",
               "created_at": "2025-02-04T10:12:33-08:00", "modified_at": "2025-02-06T09:00:00-08:00",
               "path_collection": {"total_count": 2, "entries": [
                   {"type": "folder", "id": "0", "name": "All Files"},
                   {"type": "folder", "id": "7", "name": "Incidents"}]},
               "modified_by": {"type": "user", "id": "1", "name": "Aisha Bello", "login": "aisha@acme-shop.example"},
               "owned_by": {"type": "user", "id": "1", "name": "Aisha Bello", "login": "aisha@acme-shop.example"},
               "size": 2048})
    }

    #[test]
    fn maps_an_item_with_its_text() {
        let texts = HashMap::from([
            (
                "11".to_string(),
                "Summary\nCheckout returned 502s".to_string(),
            ),
            ("7".to_string(), "a file's text".to_string()),
        ]);
        let doc = to_document(&file("11"), &texts).unwrap();
        let expected = Document::new(
            "file_11",
            "Report 11.docx",
            "Summary\nCheckout returned 502s",
            "https://app.box.com/file/11",
        )
        .author(Some("Aisha Bello"))
        .times(Some("2025-02-04T18:12:33Z"), Some("2025-02-06T17:00:00Z"));
        assert_document(&doc, &expected);
        assert!(
            doc.metadata.contains("\"path\":\"Incidents\""),
            "{}",
            doc.metadata
        );
        let link = json!({"type": "web_link", "id": "3", "url": "https://status.acme-shop.example", "name": "Status"});
        assert_eq!(
            to_document(&link, &texts).unwrap().url,
            "https://status.acme-shop.example"
        );
        // Folder 7 and file 7 are two items: the folder has no text.
        let folder =
            json!({"type": "folder", "id": "7", "name": "Incidents", "description": "Postmortems"});
        let folder = to_document(&folder, &texts).unwrap();
        assert_eq!(folder.url, "https://app.box.com/folder/7");
        assert_eq!(folder.content, "Postmortems");
    }

    #[test]
    fn operators_stay_words_and_phrases_stay_phrases() {
        let request =
            SearchRequest::new("checkout NOT working", &["checkout", "NOT", "working"], &[]);
        assert_eq!(box_query(&request), "checkout OR not OR working");
        let request = SearchRequest::new("\"Gateway Timeout\" EU", &["EU"], &["Gateway Timeout"]);
        assert_eq!(box_query(&request), "\"gateway timeout\" OR eu");
    }

    #[test]
    fn reads_the_text_of_the_first_files_and_keeps_descriptions_otherwise() {
        let entries: Vec<Value> = (1..=7).map(|n| file(&n.to_string())).collect();
        let search = json!({"type": "search_results_items", "total_count": 7, "limit": 30, "offset": 0, "entries": entries});
        let (result, sent) = with_upstream(
            move |sent| {
                let url = sent.url.as_str();
                Ok(if url.starts_with(SEARCH) {
                    Response::for_test(200, &[], search.to_string())
                } else if url.starts_with("https://dl.boxcloud.com/") {
                    Response::for_test(200, &[], "the text")
                } else if url.contains("/files/2?") {
                    // No text made for this one.
                    Response::for_test(
                        200,
                        &[],
                        r#"{"type":"file","id":"2","representations":{"entries":[]}}"#,
                    )
                } else if url.contains("/files/3?") {
                    // Refused: the file keeps its description, the
                    // search its results.
                    Response::for_test(403, &[], r#"{"type":"error","status":403}"#)
                } else {
                    let id = sent.without_query().rsplit('/').next().unwrap().to_string();
                    // An address with a query string, as Box's example has.
                    let template = format!(
                        "https://dl.boxcloud.com/api/2.0/internal_files/{id}/versions/9/representations/extracted_text/content/{{+asset_path}}?watermark_content=4567"
                    );
                    Response::for_test(200, &[], json!({"type": "file", "id": id, "representations": {"entries": [
                        {"representation": "extracted_text", "status": {"state": "success"}, "content": {"url_template": template}}]}}).to_string())
                })
            },
            || BoxCom::search(SearchRequest::new("report", &["report"], &[])),
        );
        let docs = result.unwrap();
        assert_eq!(docs.len(), 7);
        let contents: Vec<&str> = docs.iter().map(|d| d.content.as_str()).collect();
        assert_eq!(
            contents,
            [
                "the text", "A report", "A report", "the text", "the text", "A report", "A report"
            ]
        );
        let infos = sent.iter().filter(|s| s.url.starts_with(FILES)).count();
        assert_eq!(infos, MAX_TEXTS);
        let first_info = sent.iter().find(|s| s.url.starts_with(FILES)).unwrap();
        assert_eq!(first_info.header("x-rep-hints"), Some("[extracted_text]"));
        assert_eq!(
            first_info.param("fields").as_deref(),
            Some("representations")
        );
        let read = sent
            .iter()
            .find(|s| s.url.starts_with("https://dl.boxcloud.com/"))
            .unwrap();
        assert!(
            read.url.ends_with("/content/?watermark_content=4567"),
            "{}",
            read.url
        );
        assert_eq!(sent[0].param("query").as_deref(), Some("report"));
        assert_eq!(sent[0].param("limit").as_deref(), Some("10"));
    }

    #[test]
    fn a_range_is_one_parameter_and_errors_are_boxs() {
        let request =
            SearchRequest::new("x", &["x"], &[]).between(Some("2025-02-01T00:00:00Z"), None);
        assert!(search_url(&request, 5).contains("updated_at_range=2025-02-01T00%3A00%3A00Z%2C"));
        let revoked = Response::for_test(
            401,
            &[],
            r#"{"type":"error","status":401,"code":"unauthorized","message":"Unauthorized"}"#,
        );
        assert!(matches!(
            revoked.error_for_status(),
            Err(SearchError::Unauthorized(_))
        ));
        let busy = Response::for_test(
            429,
            &[("retry-after", "100")],
            r#"{"type":"error","status":429,"code":"rate_limit_exceeded"}"#,
        );
        assert!(matches!(
            busy.error_for_status(),
            Err(SearchError::RateLimited(Some(100)))
        ));
    }
}
