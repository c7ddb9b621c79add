//! Google Drive: files, through `files.list` with `fullText contains`
//! (`trashed = false`, the time range as `modifiedTime` bounds), then the
//! text of each Google Doc, Sheet or Slides file from `files.export`.
//!
//! Other files (PDFs, images...) are returned with their description: their
//! bytes are not text the host could rank.

use quarry_connector_sdk::google::{check, rate_limit_reason};
use quarry_connector_sdk::page::Page;
use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::{terms_outside_phrases, truncate};
use quarry_connector_sdk::time;

const FILES: &str = "https://www.googleapis.com/drive/v3/files";
const FIELDS: &str = "nextPageToken,incompleteSearch,files(id,name,mimeType,description,webViewLink,createdTime,modifiedTime,owners(displayName,emailAddress),lastModifyingUser(displayName))";
const MAX_PAGES: usize = 3;
/// Files whose text is exported: each costs one fetch.
const MAX_EXPORTS: usize = 12;
/// Exports are cut here: the host only ranks the start of long documents.
const MAX_TEXT_BYTES: usize = 200_000;

struct GoogleDrive;

impl Connector for GoogleDrive {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let q = drive_query(&request);
        let want = (request.max_results as usize).clamp(1, MAX_EXPORTS);
        let files = collect_pages(want, MAX_PAGES, |token: Option<String>| {
            let url = Url::new(FILES)
                .param("q", &q)
                .param("fields", FIELDS)
                .param("pageSize", want.min(100))
                .param("corpora", "allDrives")
                .param("includeItemsFromAllDrives", "true")
                .param("supportsAllDrives", "true")
                .param_opt("pageToken", token)
                .build();
            let body: Value = check(Request::get(url).send()?)?.json()?;
            Ok(Page {
                items: body.array_at("/files").to_vec(),
                next: body.cursor_at("/nextPageToken"),
            })
        })?;
        // The exports are independent of each other: one batch.
        let mut exports = Vec::new();
        let mut requests = Vec::new();
        for (i, file) in files.iter().enumerate() {
            if let (Some(id), Some(mime)) = (
                file.str_at("/id"),
                export_type(file.str_at("/mimeType").unwrap_or_default()),
            ) {
                exports.push(i);
                requests.push(export_request(id, mime));
            }
        }
        let mut texts: Vec<Option<String>> = vec![None; files.len()];
        for (i, response) in exports.into_iter().zip(send_all(requests)) {
            texts[i] = export_text(response?)?;
        }
        let mut documents = Vec::new();
        for (file, text) in files.iter().zip(texts) {
            if file.str_at("/id").is_none() {
                continue;
            }
            if let Some(doc) = to_document(file, text) {
                documents.push(doc);
            }
        }
        Ok(documents)
    }
}

/// `(fullText contains 'a' or fullText contains 'b') and trashed = false
/// and modifiedTime >= '...'`: any of the terms, phrases as phrases.
fn drive_query(request: &SearchRequest) -> String {
    let mut words: Vec<String> = request
        .phrases
        .iter()
        .map(|p| format!("\"{}\"", p.replace('"', "")))
        .collect();
    words.extend(terms_outside_phrases(&request.terms, &request.phrases).cloned());
    if words.is_empty() {
        words.push(request.query.clone());
    }
    let text = words
        .iter()
        .map(|w| format!("fullText contains {}", quote(w)))
        .collect::<Vec<_>>()
        .join(" or ");
    let mut clauses = vec![format!("({text})"), "trashed = false".to_string()];
    if let Some(since) = request.since.as_deref().and_then(time::normalize) {
        clauses.push(format!("modifiedTime >= '{since}'"));
    }
    if let Some(until) = request.until.as_deref().and_then(time::normalize) {
        clauses.push(format!("modifiedTime <= '{until}'"));
    }
    clauses.join(" and ")
}

/// A string literal of Drive's query language.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The export format of the Google file types that have text.
fn export_type(mime_type: &str) -> Option<&'static str> {
    match mime_type {
        "application/vnd.google-apps.document" => Some("text/plain"),
        "application/vnd.google-apps.spreadsheet" => Some("text/csv"),
        "application/vnd.google-apps.presentation" => Some("text/plain"),
        _ => None,
    }
}

/// A file's text through `files.export`. A file that cannot be exported
/// (too large: 403 `exportSizeLimitExceeded`; gone: 404) keeps its
/// description; other failures fail the search.
fn export_request(id: &str, mime_type: &str) -> Request {
    let url = Url::new(format!(
        "{FILES}/{}/export",
        quarry_connector_sdk::url::segment(id)
    ))
    .param("mimeType", mime_type)
    .build();
    Request::get(url).header("accept", mime_type)
}

fn export_text(response: Response) -> Result<Option<String>, SearchError> {
    if matches!(response.status, 403 | 404) && rate_limit_reason(&response).is_none() {
        return Ok(None);
    }
    let response = check(response)?;
    // Docs come as text/plain with a byte-order mark and CRLF line ends.
    let text = response.text().replace("\r\n", "\n");
    let text = text.trim_start_matches('\u{feff}');
    Ok(Some(truncate(text, MAX_TEXT_BYTES).trim().to_string()))
}

fn to_document(file: &Value, text: Option<String>) -> Option<Document> {
    let id = file.str_at("/id")?;
    let name = file.string_at("/name");
    let content = text
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| file.string_at("/description"));
    let owner = file
        .array_at("/owners")
        .first()
        .and_then(|o| o.str_at("/displayName"))
        .or_else(|| file.str_at("/lastModifyingUser/displayName"));
    Some(
        Document::new(id, name, content, file.str_at("/webViewLink")?)
            .author(owner)
            .times(file.str_at("/createdTime"), file.str_at("/modifiedTime"))
            .metadata(json!({
                "mime_type": file.str_at("/mimeType"),
                "owner_email": file
                    .array_at("/owners")
                    .first()
                    .and_then(|o| o.str_at("/emailAddress")),
            })),
    )
}

quarry_connector_sdk::export!(GoogleDrive);

#[cfg(test)]
mod tests {
    use quarry_connector_sdk::testing::assert_document;

    use super::*;

    #[test]
    fn maps_a_file() {
        let file: Value = serde_json::from_str(r#"{"id":"1AbCdEf","name":"PRD: Loyalty points","mimeType":"application/vnd.google-apps.document","webViewLink":"https://docs.google.com/document/d/1AbCdEf/edit?usp=drivesdk","createdTime":"2026-04-01T09:00:00.000Z","modifiedTime":"2026-04-20T16:30:12.345Z","owners":[{"displayName":"Sofia Rossi","emailAddress":"sofia.rossi@acme-shop.example"}]}"#).unwrap();
        let doc = to_document(&file, Some("Goals\nPoints per order".into())).unwrap();
        let expected = Document::new(
            "1AbCdEf",
            "PRD: Loyalty points",
            "Goals\nPoints per order",
            "https://docs.google.com/document/d/1AbCdEf/edit?usp=drivesdk",
        )
        .author(Some("Sofia Rossi"))
        .times(Some("2026-04-01T09:00:00Z"), Some("2026-04-20T16:30:12Z"));
        assert_document(&doc, &expected);
        assert!(
            doc.metadata
                .contains("application/vnd.google-apps.document")
        );
        let pdf: Value = serde_json::from_str(r#"{"id":"2","name":"Report.pdf","mimeType":"application/pdf","description":"Load test results","webViewLink":"https://drive.google.com/file/d/2/view?usp=drivesdk"}"#).unwrap();
        assert_eq!(
            to_document(&pdf, None).unwrap().content,
            "Load test results"
        );
        assert_eq!(export_type("application/pdf"), None);
    }

    #[test]
    fn builds_the_query() {
        let request = SearchRequest::new(
            "x",
            &["rollout", "o'brien", "checkout"],
            &["loyalty points"],
        )
        .between(
            Some("2026-06-01T00:00:00Z"),
            Some("2026-06-30T00:00:00+02:00"),
        );
        assert_eq!(
            drive_query(&request),
            "(fullText contains '\"loyalty points\"' or fullText contains 'rollout' or fullText contains 'o\\'brien' or fullText contains 'checkout') \
             and trashed = false and modifiedTime >= '2026-06-01T00:00:00Z' and modifiedTime <= '2026-06-29T22:00:00Z'"
        );
    }
}
