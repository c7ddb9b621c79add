//! A vendor's search answered from data, not code: its records as the
//! vendor's own JSON, its search rules as a [`Declaration`], and where the
//! request and the answer put things. A fixtures folder lists such searches
//! in `routes.toml` beside its fixed routes:
//!
//! ```toml
//! [[searches]]
//! url = "https://api.acme.example/v1/events"   # GET unless `method` says otherwise
//! declaration = "search.toml"   # the vendor's search rules, each with its documentation page
//! records = "events.json"       # a JSON array of records, as the vendor answers them
//! text = "q"                    # the query parameter with the search text (none: every record)
//! updated = "/updated"          # a record's update time: RFC 3339, or Unix seconds
//! updated_min = "updatedMin"    # parameters that bound it (optional)
//! updated_max = "updatedMax"
//! ends = "/end"                 # the time updated_min bounds when not `updated` (optional)
//! citation = "/htmlLink"        # a record's link, noted for eval-live (optional)
//! page_size = "maxResults"      # the parameters of paging
//! page_token = "pageToken"
//! items = "/items"              # where the answer holds the page's records
//! next_page_token = "/nextPageToken"
//! envelope = { kind = "acme#events" }   # the rest of the answer (optional)
//! [searches.fields]             # each field the declaration names, as a JSON pointer; `*` for every element
//! summary = "/summary"
//! attendees = "/attendees/*/displayName"
//! ```
//!
//! The engine is the one every fake vendor uses ([`crate::search`]): the
//! declaration decides how words combine, which operators and phrases are
//! understood, stemming, the default order and the page sizes. A vendor
//! whose query is a language of its own (JQL, SOQL, a GraphQL filter)
//! still needs code; one that takes words in a parameter needs only this.
//!
//! The vendors fake-saas itself plays this way are folders of
//! `tools/fake-saas/declared/`, built in ([`PLAYED_FROM_DATA`]): each is a
//! fixtures folder (`fake-saas fixtures --dir` serves it alone too).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::fixtures::Folder;
use crate::search::{Declaration, Index, Sort, sort_hits};

/// One built-in folder: its name and its files, each with its text.
pub type BuiltInFolder = (&'static str, &'static [(&'static str, &'static str)]);

macro_rules! built_in_folder {
    ($name:literal: $($file:literal),+) => {
        ($name, &[$(($file, include_str!(concat!("../declared/", $name, "/", $file)))),+])
    };
}

/// The vendors fake-saas plays from data, not code: a folder of
/// `tools/fake-saas/declared/` each, named as the vendor's tokens are
/// (`fake-<name>-<user>`). Each holds `routes.toml` with its
/// `[[searches]]`, the declaration of its search (`search.toml`) and its
/// records.
pub const PLAYED_FROM_DATA: &[BuiltInFolder] =
    &[built_in_folder!("google-calendar": "routes.toml", "search.toml", "events.json")];

/// A file of a built-in folder (`vendor`'s records, for tests to read).
pub fn built_in_file(vendor: &str, file: &str) -> Option<&'static str> {
    let (_, files) = PLAYED_FROM_DATA.iter().find(|(name, _)| *name == vendor)?;
    files
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, text)| *text)
}

/// The declaration in a built-in folder.
pub(crate) const DECLARATION_FILE: &str = "search.toml";

/// One `[[searches]]` entry of `routes.toml`, as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchEntry {
    #[serde(default = "get")]
    pub method: String,
    pub url: String,
    declaration: PathBuf,
    records: PathBuf,
    #[serde(default)]
    text: Option<String>,
    updated: String,
    #[serde(default)]
    updated_min: Option<String>,
    #[serde(default)]
    updated_max: Option<String>,
    /// The time `updated_min` bounds, when it is not `updated` (Google
    /// Calendar's `timeMin` bounds an event's end, `timeMax` its start).
    #[serde(default)]
    ends: Option<String>,
    /// A record's link: the fake notes the records it returned.
    #[serde(default)]
    citation: Option<String>,
    page_size: String,
    page_token: String,
    items: String,
    next_page_token: String,
    #[serde(default)]
    envelope: Map<String, Value>,
    fields: BTreeMap<String, String>,
}

fn get() -> String {
    "GET".into()
}

/// A search's data, read and checked: what answers one request.
pub struct DeclaredSearch {
    entry: SearchEntry,
    engine: Declaration,
    records: Vec<Value>,
    /// Each record's update time (Unix seconds).
    updated: Vec<i64>,
    /// The time each record's lower bound applies to.
    ends: Vec<i64>,
    index: Index,
}

/// A request's answer: its status and body.
pub type Answer = (u16, Value);

impl std::fmt::Debug for DeclaredSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeclaredSearch({} {})",
            self.entry.method, self.entry.url
        )
    }
}

impl DeclaredSearch {
    /// Reads the entry's declaration and records from `folder` and checks
    /// that every record has an update time and that the declaration's
    /// fields are each given a place.
    pub fn load(folder: Folder, entry: SearchEntry) -> Result<DeclaredSearch> {
        let declaration = folder.read(&entry.declaration)?;
        let engine = Declaration::from_toml(&declaration)
            .map_err(|e| anyhow::anyhow!("{}: {e}", entry.declaration.display()))?;
        for field in engine.fields.iter() {
            ensure!(
                entry.fields.contains_key(field),
                "the declaration searches `{field}`: give its place in [searches.fields]"
            );
        }
        let records: Vec<Value> = serde_json::from_str(&folder.read(&entry.records)?)
            .with_context(|| format!("{}: a JSON array of records", entry.records.display()))?;
        let times = |pointer: &str| {
            records
                .iter()
                .enumerate()
                .map(|(n, record)| {
                    time_at(record, pointer).with_context(|| {
                        format!(
                            "{} record {}: no time at {pointer} (RFC 3339 or Unix seconds)",
                            entry.records.display(),
                            n + 1,
                        )
                    })
                })
                .collect::<Result<Vec<i64>>>()
        };
        let updated = times(&entry.updated)?;
        let ends = match &entry.ends {
            Some(pointer) => times(pointer)?,
            None => updated.clone(),
        };
        let texts = records.iter().map(|record| {
            engine
                .fields
                .iter()
                .flat_map(|field| strings_at(record, &entry.fields[field]))
                .collect::<Vec<_>>()
                .join("\n")
        });
        let index = Index::new(texts);
        Ok(DeclaredSearch {
            entry,
            engine,
            records,
            updated,
            ends,
            index,
        })
    }

    pub fn entry(&self) -> &SearchEntry {
        &self.entry
    }

    /// Answers a request with these query parameters, its page holding at
    /// most `page_cap` records when given (a fault's).
    pub fn answer(&self, params: &[(String, String)], page_cap: Option<usize>) -> Answer {
        match self.page(params, page_cap) {
            Ok(body) => (200, body),
            Err(message) => (400, json!({ "error": { "code": 400, "message": message } })),
        }
    }

    /// The links of the records an answer holds (none without `citation`).
    pub fn citations(&self, answer: &Value) -> Vec<String> {
        let Some(citation) = &self.entry.citation else {
            return Vec::new();
        };
        let items = answer.pointer(&self.entry.items).and_then(Value::as_array);
        items
            .into_iter()
            .flatten()
            .filter_map(|record| record.pointer(citation)?.as_str().map(String::from))
            .collect()
    }

    fn page(&self, params: &[(String, String)], page_cap: Option<usize>) -> Result<Value, String> {
        let param = |name: &str| {
            params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let entry = &self.entry;
        let text = entry.text.as_deref().and_then(param).unwrap_or_default();
        let query = self
            .engine
            .parse(text)
            .map_err(|refusal| format!("{refusal:?}"))?;
        let bound = |name: Option<&str>| -> Result<Option<i64>, String> {
            let Some((name, value)) = name.and_then(|name| Some((name, param(name)?))) else {
                return Ok(None);
            };
            let at = crate::time::parse(value).ok_or(format!("{name}: not a time: {value}"))?;
            Ok(Some(at.start))
        };
        let after = bound(entry.updated_min.as_deref())?;
        let before = bound(entry.updated_max.as_deref())?;
        let within = |i: usize| {
            after.is_none_or(|t| self.ends[i] >= t) && before.is_none_or(|t| self.updated[i] < t)
        };
        let mut hits = self.index.search(&self.engine, &query, within);
        sort_hits(&mut hits, Sort::Default(*self.engine.order), |i| {
            self.updated[i]
        });
        let asked = param(&entry.page_size)
            .map(|v| {
                v.parse::<usize>()
                    .map_err(|_| format!("{}: not a number: {v}", entry.page_size))
            })
            .transpose()?;
        let size = self
            .engine
            .page_size_for(asked)
            .min(page_cap.unwrap_or(usize::MAX).max(1));
        let start = match param(&entry.page_token) {
            None | Some("") => 0,
            Some(token) => token
                .strip_prefix("page-")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| format!("{}: not a token this search gave", entry.page_token))?,
        };
        let end = (start + size).min(hits.len());
        let page: Vec<Value> = hits
            .get(start.min(end)..end)
            .unwrap_or_default()
            .iter()
            .map(|hit| self.records[hit.index].clone())
            .collect();
        let mut body = Value::Object(entry.envelope.clone());
        put_at(&mut body, &entry.items, Value::Array(page));
        if end < hits.len() {
            put_at(
                &mut body,
                &entry.next_page_token,
                json!(format!("page-{end}")),
            );
        }
        Ok(body)
    }
}

/// The strings at a JSON pointer whose `*` segments stand for every
/// element of an array (numbers are written as text).
fn strings_at(value: &Value, pointer: &str) -> Vec<String> {
    let mut found = vec![value];
    for segment in pointer.split('/').skip(1) {
        found = found
            .into_iter()
            .flat_map(|v| match (segment, v) {
                ("*", Value::Array(items)) => items.iter().collect(),
                (key, Value::Object(map)) => map.get(key).into_iter().collect(),
                (index, Value::Array(items)) => index
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
    }
    found
        .into_iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect()
}

/// The time at a pointer: RFC 3339 text or Unix seconds.
fn time_at(record: &Value, pointer: &str) -> Option<i64> {
    match record.pointer(pointer)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => crate::time::parse(s).map(|at| at.start),
        _ => None,
    }
}

/// Puts `value` at a JSON pointer, making the objects on the way.
fn put_at(target: &mut Value, pointer: &str, value: Value) {
    let mut at = target;
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    for (n, segment) in segments.iter().enumerate() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let map = at.as_object_mut().expect("made an object");
        if n + 1 == segments.len() {
            map.insert((*segment).to_string(), value);
            return;
        }
        at = map
            .entry(*segment)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
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

    fn ids(body: &Value) -> Vec<&str> {
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect()
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
        let (_, body) =
            search.answer_all(&params(&[("q", "aisha checkout"), ("maxResults", "10")]));
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
}
