//! The declared search, on a small declaration and records of its own.

use super::*;

const DECLARATION: &str = r#"
vendor = "acme"
endpoint = "GET https://api.acme.example/v1/events"
[implicit]
value = "all"
silent = "a test"
[operators]
value = []
silent = "a test"
[phrases]
value = true
silent = "a test"
[fields]
value = ["summary", "attendees"]
silent = "a test"
[stemming]
value = "none"
silent = "a test"
[stop_words]
value = false
silent = "a test"
[order]
value = "newest"
silent = "a test"
[page_size]
value = { default = 2, max = 10 }
silent = "a test"
"#;

fn search() -> DeclaredSearch {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("search.toml"), DECLARATION).unwrap();
    let records = json!([
        {"id": "1", "summary": "Checkout postmortem", "updated": "2025-02-04T10:00:00Z",
         "attendees": [{"displayName": "Aisha Bello"}]},
        {"id": "2", "summary": "Checkout review", "updated": "2025-02-06T10:00:00Z",
         "attendees": [{"displayName": "Tomás Herrera"}]},
        {"id": "3", "summary": "Planning", "updated": 1738922400,
         "attendees": [{"displayName": "Aisha Bello"}]},
        {"id": "4", "summary": "Checkout retro", "updated": "2025-02-08T10:00:00Z"},
    ]);
    std::fs::write(dir.path().join("events.json"), records.to_string()).unwrap();
    // The same fields as a routes.toml entry, here as JSON.
    let entry: SearchEntry = serde_json::from_value(json!({
        "url": "https://api.acme.example/v1/events",
        "declaration": "search.toml", "records": "events.json", "text": "q",
        "updated": "/updated", "updated_min": "updatedMin", "citation": "/id",
        "page_size": "maxResults", "page_token": "pageToken",
        "items": "/items", "next_page_token": "/nextPageToken",
        "envelope": {"kind": "acme#events"},
        "fields": {"summary": "/summary", "attendees": "/attendees/*/displayName"},
    }))
    .unwrap();
    DeclaredSearch::load(Folder::Disk(dir.path()), entry).unwrap()
}

impl DeclaredSearch {
    /// An answer with no fault capping its page.
    fn answer_all(&self, params: &[(String, String)]) -> Answer {
        self.answer(params, None)
    }
}

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// The ids of the records of an answer's page, which `items` holds.
fn ids_in<'a>(body: &'a Value, items: &str) -> Vec<&'a str> {
    body[items]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

fn ids(body: &Value) -> Vec<&str> {
    ids_in(body, "items")
}

#[test]
fn answers_as_declared_newest_first_in_pages() {
    let search = search();
    let (status, first) = search.answer_all(&params(&[("q", "checkout")]));
    assert_eq!(status, 200);
    assert_eq!(ids(&first), ["4", "2"]);
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert_eq!(first["kind"], "acme#events");
    let token = first["nextPageToken"].as_str().unwrap();
    let (_, second) = search.answer_all(&params(&[("q", "checkout"), ("pageToken", token)]));
    assert_eq!(ids(&second), ["1"]);
    assert!(second.get("nextPageToken").is_none());
}

#[test]
fn searches_the_declared_fields_with_the_declared_combination_and_bounds() {
    let search = search();
    // Every word, in any declared field (attendees too).
    let (_, body) = search.answer_all(&params(&[("q", "aisha checkout"), ("maxResults", "10")]));
    assert_eq!(ids(&body), ["1"]);
    let (_, body) = search.answer_all(&params(&[
        ("q", "aisha"),
        ("updatedMin", "2025-02-05T00:00:00Z"),
    ]));
    assert_eq!(ids(&body), ["3"]);
    // No text: every record.
    let (_, body) = search.answer_all(&params(&[("maxResults", "10")]));
    assert_eq!(ids(&body), ["4", "3", "2", "1"]);
}

#[test]
fn a_fault_caps_the_page_and_the_returned_records_are_noted() {
    let search = search();
    let (_, body) = search.answer(&params(&[("maxResults", "10")]), Some(1));
    assert_eq!(ids(&body), ["4"]);
    assert!(body.get("nextPageToken").is_some());
    assert_eq!(search.citations(&body), ["4"]);
}

#[test]
fn a_lower_bound_applies_to_the_end_when_the_entry_names_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("search.toml"), DECLARATION).unwrap();
    let records = json!([
        {"id": "1", "summary": "Checkout review", "start": "2025-02-04T10:00:00Z",
         "end": "2025-02-04T12:00:00Z"},
    ]);
    std::fs::write(dir.path().join("events.json"), records.to_string()).unwrap();
    let entry = |ends: Option<&str>| -> SearchEntry {
        serde_json::from_value(json!({
            "url": "https://api.acme.example/v1/events",
            "declaration": "search.toml", "records": "events.json", "text": "q",
            "updated": "/start", "ends": ends, "updated_min": "timeMin",
            "page_size": "maxResults", "page_token": "pageToken",
            "items": "/items", "next_page_token": "/nextPageToken",
            "fields": {"summary": "/summary", "attendees": "/attendees/*/displayName"},
        }))
        .unwrap()
    };
    // Under way at 11:00: found when the bound is on its end.
    let during = params(&[("timeMin", "2025-02-04T11:00:00Z")]);
    let by_end = DeclaredSearch::load(Folder::Disk(dir.path()), entry(Some("/end"))).unwrap();
    assert_eq!(ids(&by_end.answer_all(&during).1), ["1"]);
    let by_start = DeclaredSearch::load(Folder::Disk(dir.path()), entry(None)).unwrap();
    assert!(ids(&by_start.answer_all(&during).1).is_empty());
}

#[test]
fn refuses_what_the_vendor_would() {
    let search = search();
    for bad in [
        ("maxResults", "many"),
        ("pageToken", "xyz"),
        ("updatedMin", "soon"),
    ] {
        let (status, body) = search.answer_all(&params(&[bad]));
        assert_eq!(status, 400, "{bad:?}: {body}");
    }
}

#[test]
fn a_declared_field_without_a_place_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("search.toml"), DECLARATION).unwrap();
    std::fs::write(dir.path().join("events.json"), "[]").unwrap();
    let mut entry = search().entry().clone();
    entry.fields.remove("attendees");
    let error = DeclaredSearch::load(Folder::Disk(dir.path()), entry)
        .err()
        .unwrap();
    assert!(format!("{error:#}").contains("`attendees`"), "{error:#}");
}

/// A search paged by offset, Box's way: the whole entry's optional parts.
fn by_offset() -> DeclaredSearch {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("search.toml"), DECLARATION).unwrap();
    let records = json!([
        {"type": "file", "id": "11", "name": "Checkout postmortem.docx",
         "modified_at": "2025-02-04T10:00:00Z", "_content": "gateway timeouts in the EU"},
        {"type": "folder", "id": "12", "name": "Checkout", "modified_at": "2025-02-06T10:00:00Z"},
        {"type": "file", "id": "13", "name": "Checkout retro.pdf", "modified_at": "2025-02-08T10:00:00Z"},
    ]);
    std::fs::write(dir.path().join("items.json"), records.to_string()).unwrap();
    let entry: SearchEntry = serde_json::from_value(json!({
        "url": "https://api.acme.example/2.0/search",
        "declaration": "search.toml", "records": "items.json", "text": "query",
        "updated": "/modified_at", "updated_range": "updated_at_range",
        "citation": "https://app.acme.example/{/type}/{/id}",
        "page_size": "limit", "offset": "offset", "total": "/total_count",
        "echo": {"limit": "/limit", "offset": "/offset"},
        "items": "/entries", "envelope": {"type": "search_results_items"},
        "error": {"type": "error", "status": "{status}", "code": "bad_request", "message": "{message}"},
        "fields": {"summary": "/name", "attendees": "/_content"},
    }))
    .unwrap();
    DeclaredSearch::load(Folder::Disk(dir.path()), entry).unwrap()
}

fn entry_ids(body: &Value) -> Vec<&str> {
    ids_in(body, "entries")
}

#[test]
fn pages_by_offset_with_the_total_and_the_page_repeated() {
    let search = by_offset();
    let (status, first) = search.answer_all(&params(&[("query", "checkout"), ("limit", "2")]));
    assert_eq!(status, 200, "{first}");
    assert_eq!(entry_ids(&first), ["13", "12"]);
    assert_eq!(first["total_count"], 3);
    assert_eq!(
        (first["limit"].clone(), first["offset"].clone()),
        (json!(2), json!(0))
    );
    assert_eq!(first["type"], "search_results_items");
    let (_, second) = search.answer_all(&params(&[
        ("query", "checkout"),
        ("limit", "2"),
        ("offset", "2"),
    ]));
    assert_eq!(entry_ids(&second), ["11"]);
    assert_eq!(second["offset"], 2);
    assert_eq!(
        search.citations(&second),
        ["https://app.acme.example/file/11"]
    );
}

#[test]
fn own_keys_are_searched_and_never_answered() {
    let search = by_offset();
    let (_, body) = search.answer_all(&params(&[("query", "gateway")]));
    assert_eq!(entry_ids(&body), ["11"]);
    assert!(body["entries"][0].get("_content").is_none(), "{body}");
}

#[test]
fn one_parameter_bounds_both_sides() {
    let search = by_offset();
    let within = |range: &str| {
        let (status, body) = search.answer_all(&params(&[("updated_at_range", range)]));
        assert_eq!(status, 200, "{range}: {body}");
        entry_ids(&body)
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(within("2025-02-05T00:00:00Z,2025-02-07T00:00:00Z"), ["12"]);
    assert_eq!(within("2025-02-05T00:00:00Z,"), ["13", "12"]);
    assert_eq!(within(",2025-02-05T00:00:00Z"), ["11"]);
}

#[test]
fn refuses_in_the_vendors_own_shape() {
    let search = by_offset();
    for bad in [
        ("updated_at_range", "yesterday"),
        (
            "updated_at_range",
            "2025-01-01T00:00:00Z,2025-02-01T00:00:00Z,",
        ),
        ("offset", "-1"),
    ] {
        let (status, body) = search.answer_all(&params(&[bad]));
        assert_eq!(status, 400, "{bad:?}");
        assert_eq!(body["type"], "error", "{body}");
        assert_eq!(body["status"], 400);
        assert!(body["message"].as_str().unwrap().contains(bad.0), "{body}");
    }
}

#[test]
fn an_entry_pages_one_way() {
    let mut entry = by_offset().entry().clone();
    entry.page_token = Some("marker".into());
    assert!(entry.paging().is_err());
}

/// Sentry's way: the answer is the array of records itself, one page, and
/// the words of the query are one phrase.
#[test]
fn answers_a_bare_array_of_one_page_with_the_words_as_a_phrase() {
    let dir = tempfile::tempdir().unwrap();
    let phrase = DECLARATION.replace(
        "[implicit]\nvalue = \"all\"",
        "[implicit]\nvalue = \"phrase\"",
    );
    std::fs::write(dir.path().join("search.toml"), phrase).unwrap();
    let records = json!([
        {"id": "21", "title": "TimeoutError: payment gateway timed out", "lastSeen": "2025-02-04T10:00:00Z"},
        {"id": "22", "title": "Gateway error: payment refused", "lastSeen": "2025-02-06T10:00:00Z"},
    ]);
    std::fs::write(dir.path().join("issues.json"), records.to_string()).unwrap();
    let entry: SearchEntry = serde_json::from_value(json!({
        "url": "https://us.acme.example/api/0/issues/",
        "declaration": "search.toml", "records": "issues.json", "text": "query",
        "updated": "/lastSeen", "page_size": "limit", "items": "",
        "fields": {"summary": "/title", "attendees": "/culprit"},
    }))
    .unwrap();
    let search = DeclaredSearch::load(Folder::Disk(dir.path()), entry).unwrap();
    let found = |query: &str| {
        let (status, body) = search.answer_all(&params(&[("query", query), ("limit", "10")]));
        assert_eq!(status, 200, "{body}");
        body.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(found("payment gateway"), ["21"], "the words in this order");
    assert_eq!(found("payment"), ["22", "21"]);
    assert!(found("gateway payment").is_empty());
}
