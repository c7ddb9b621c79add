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
//! What other vendors need, each optional:
//!
//! ```toml
//! offset = "offset"             # paging by a record offset (instead of page_token
//! total = "/total_count"        #   and next_page_token), the match count here,
//! echo = { limit = "/limit", offset = "/offset" }   # and the page's size and offset here
//! updated_range = "updated_at_range"   # one parameter, "FROM,TO" (RFC 3339; either may be empty)
//! items = ""                    # the answer is the array of records itself
//! citation = "https://app.box.com/{/type}/{/id}"    # a link made of the record's values
//! error = { type = "error", status = "{status}", code = "bad_request", message = "{message}" }
//! ```
//!
//! `error` is the vendor's body for a request it refuses (`{status}` is the
//! number, `{message}` what is wrong); without it the body is Google's.
//! A record's keys that start with `_` are the fake's own: text the vendor
//! searches but does not return (a file's content, its comments), which
//! `[searches.fields]` may name and no answer shows.
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

mod records;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::fixtures::Folder;
use crate::search::{Declaration, Index, Sort, sort_hits};
use records::{link, put_at, strings_at, without_own_keys};

/// One built-in folder: its name and its files, each with its text.
pub type BuiltInFolder = (&'static str, &'static [(&'static str, &'static str)]);

macro_rules! built_in_folder {
    ($name:literal: $($file:literal),+) => {
        ($name, &[$(($file, include_str!(concat!("../../declared/", $name, "/", $file)))),+])
    };
}

/// The vendors fake-saas plays from data, not code: a folder of
/// `tools/fake-saas/declared/` each, named as the vendor's tokens are
/// (`fake-<name>-<user>`). Each holds `routes.toml` with its
/// `[[searches]]`, the declaration of its search (`search.toml`) and its
/// records.
pub const PLAYED_FROM_DATA: &[BuiltInFolder] = &[
    built_in_folder!("google-calendar": "routes.toml", "search.toml", "events.json"),
    built_in_folder!("box": "routes.toml", "search.toml", "items.json"),
    built_in_folder!("sentry": "routes.toml", "search.toml", "issues.json"),
];

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
    /// One parameter bounding the time on both sides, `FROM,TO`: as
    /// `updated_min` and `updated_max` would (FROM bounds `ends` when
    /// given), in their place.
    #[serde(default)]
    updated_range: Option<String>,
    /// The time `updated_min` bounds, when it is not `updated` (Google
    /// Calendar's `timeMin` bounds an event's end, `timeMax` its start).
    #[serde(default)]
    ends: Option<String>,
    /// A record's link, a JSON pointer or a template of them: the fake
    /// notes the records it returned.
    #[serde(default)]
    citation: Option<String>,
    page_size: String,
    #[serde(default)]
    page_token: Option<String>,
    #[serde(default)]
    next_page_token: Option<String>,
    /// Paging by offset: its parameter.
    #[serde(default)]
    offset: Option<String>,
    /// Paging by offset: where the answer holds the number of matches.
    #[serde(default)]
    total: Option<String>,
    /// Where the answer repeats the page's `limit` (the size it was given,
    /// after a fault's cap) and `offset`.
    #[serde(default)]
    echo: BTreeMap<String, String>,
    items: String,
    #[serde(default)]
    envelope: Map<String, Value>,
    /// The vendor's body for a refused request, `{status}` and `{message}`
    /// filled in.
    #[serde(default)]
    error: Option<Map<String, Value>>,
    fields: BTreeMap<String, String>,
}

/// How a search pages, from its entry.
#[derive(Clone, Copy, Debug)]
enum Paging<'a> {
    /// A token the answer gives (`page-N`), sent back for the next page.
    Token { param: &'a str, next: &'a str },
    /// A record offset the client counts, the answer saying how many match.
    Offset { param: &'a str, total: &'a str },
    /// One page: the vendor's paging is not played (Sentry pages in a
    /// `Link` header; its connector asks for one page of all it wants).
    None,
}

impl SearchEntry {
    fn paging(&self) -> Result<Paging<'_>> {
        match (
            &self.page_token,
            &self.next_page_token,
            &self.offset,
            &self.total,
        ) {
            (Some(param), Some(next), None, None) => Ok(Paging::Token { param, next }),
            (None, None, Some(param), Some(total)) => Ok(Paging::Offset { param, total }),
            (None, None, None, None) => Ok(Paging::None),
            _ => anyhow::bail!(
                "{}: page by token (page_token and next_page_token) or by offset (offset and total), or not at all",
                self.url
            ),
        }
    }
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
        entry.paging()?;
        for echoed in entry.echo.keys() {
            ensure!(
                echoed == "limit" || echoed == "offset",
                "echo: `{echoed}` is neither `limit` nor `offset`"
            );
        }
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
            Err(message) => (400, self.refusal(400, &message)),
        }
    }

    /// The vendor's body for a refused request.
    fn refusal(&self, status: u16, message: &str) -> Value {
        let Some(template) = &self.entry.error else {
            return json!({ "error": { "code": status, "message": message } });
        };
        fill(&Value::Object(template.clone()), status, message)
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
            .filter_map(|record| link(record, citation))
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
        let (mut after, mut before) = (
            bound(entry.updated_min.as_deref())?,
            bound(entry.updated_max.as_deref())?,
        );
        if let Some((name, range)) = entry
            .updated_range
            .as_deref()
            .and_then(|name| Some((name, param(name)?)))
        {
            (after, before) = time_range(name, range)?;
        }
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
        let paging = entry.paging().map_err(|e| e.to_string())?;
        let start = match paging {
            Paging::Token { param: name, .. } => match param(name) {
                None | Some("") => 0,
                Some(token) => token
                    .strip_prefix("page-")
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(|| format!("{name}: not a token this search gave"))?,
            },
            Paging::Offset { param: name, .. } => param(name)
                .map(|v| v.parse::<usize>())
                .transpose()
                .map_err(|_| format!("{name}: not a number"))?
                .unwrap_or(0),
            Paging::None => 0,
        };
        // Paging reaches this many results at most; a page starting past
        // them is refused (Box: "offset parameter value exceeding 10000").
        let reachable = match self.engine.max_results.as_deref() {
            Some(&max) if start > max => {
                return Err(format!(
                    "paging reaches {max} results; this page starts at {start}"
                ));
            }
            Some(&max) => hits.len().min(max),
            None => hits.len(),
        };
        let end = (start + size).min(reachable);
        let page: Vec<Value> = hits
            .get(start.min(end)..end)
            .unwrap_or_default()
            .iter()
            .map(|hit| without_own_keys(&self.records[hit.index]))
            .collect();
        let mut body = Value::Object(entry.envelope.clone());
        put_at(&mut body, &entry.items, Value::Array(page));
        match paging {
            Paging::Token { next, .. } if end < reachable => {
                put_at(&mut body, next, json!(format!("page-{end}")));
            }
            Paging::Token { .. } | Paging::None => {}
            Paging::Offset { total, .. } => put_at(&mut body, total, json!(hits.len())),
        }
        for (echoed, pointer) in &entry.echo {
            let value = if echoed == "limit" { size } else { start };
            put_at(&mut body, pointer, json!(value));
        }
        Ok(body)
    }
}

/// An error template with `{status}` and `{message}` filled in, at any depth.
fn fill(template: &Value, status: u16, message: &str) -> Value {
    match template {
        Value::String(s) if s == "{status}" => json!(status),
        Value::String(s) if s == "{message}" => json!(message),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, status, message)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| fill(v, status, message)).collect())
        }
        other => other.clone(),
    }
}

/// A `FROM,TO` parameter's bounds (either may be empty).
fn time_range(name: &str, range: &str) -> Result<(Option<i64>, Option<i64>), String> {
    let refused = || format!("{name}: not FROM,TO in RFC 3339: {range}");
    let (from, to) = range.split_once(',').ok_or_else(refused)?;
    let at = |text: &str| -> Result<Option<i64>, String> {
        match text.trim() {
            "" => Ok(None),
            text => crate::time::parse(text)
                .map(|at| Some(at.start))
                .ok_or_else(refused),
        }
    };
    if to.contains(',') {
        return Err(refused());
    }
    Ok((at(from)?, at(to)?))
}

/// The time at a pointer: RFC 3339 text or Unix seconds.
fn time_at(record: &Value, pointer: &str) -> Option<i64> {
    match record.pointer(pointer)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => crate::time::parse(s).map(|at| at.start),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
