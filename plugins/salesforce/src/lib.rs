//! Salesforce: Cases and Accounts, through the REST API's
//! `GET {instance}/services/data/v64.0/parameterizedSearch` (a SOSL search
//! without SOSL), the instance being the org's My Domain from the
//! connection's `instance_url` setting.
//!
//! One sobject per request, because `offset` (the only way to page) works
//! with one: the first page of each type, then more pages of the types that
//! still answer until `max_results` is reached, each round of pages in one
//! batch. Salesforce says nothing of further results, and a page shorter
//! than asked may come from a cap, so an empty page ends a type. The time
//! range goes in as the type's `where` (`LastModifiedDate >= ... AND
//! LastModifiedDate <= ...`). Citations are the records' Lightning pages,
//! `{instance}/lightning/r/{type}/{Id}/view`.

use quarry_connector_sdk::prelude::*;
use quarry_connector_sdk::text::{join_non_empty, terms_outside_phrases};
use quarry_connector_sdk::time::{from_unix, to_unix};

const VERSION: &str = "v64.0";
/// Pages per type (each one fetch).
const MAX_PAGES: usize = 3;
/// The types searched, with the fields asked for.
const TYPES: &[(&str, &str)] = &[
    (
        "Case",
        "Id,CaseNumber,Subject,Description,Status,Priority,Account.Name,CreatedBy.Name,CreatedDate,LastModifiedDate",
    ),
    (
        "Account",
        "Id,Name,Description,Industry,BillingCity,BillingCountry,Website,CreatedBy.Name,CreatedDate,LastModifiedDate",
    ),
];

struct Salesforce;

impl Connector for Salesforce {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let instance = instance(request.required_setting("instance_url")?)?;
        let base = format!("https://{instance}.my.salesforce.com");
        let api = format!("{base}/services/data/{VERSION}/parameterizedSearch");
        let Some(q) = search_string(&request) else {
            return Ok(Vec::new());
        };
        let filter = date_filter(&request);
        let want = request.max_results.clamp(1, 200) as usize;
        let page = |kind: &str, fields: &str, offset: usize, limit: usize| {
            let mut url = Url::new(&api)
                .param("q", &q)
                .param("sobject", kind)
                .param(&format!("{kind}.fields"), fields)
                .param(&format!("{kind}.limit"), limit)
                .param_opt(&format!("{kind}.where"), filter.as_ref());
            if offset > 0 {
                url = url.param("offset", offset);
            }
            Request::get(url.build())
        };
        let mut found: Vec<Found> = (0..TYPES.len()).map(|_| Found::default()).collect();
        for _ in 0..MAX_PAGES {
            read_round(&mut found, want, page)?;
            if total(&found) >= want || found.iter().all(|f| !f.more) {
                break;
            }
        }
        // Types take turns, so that every type is represented.
        let mut documents = Vec::new();
        let longest = found.iter().map(|f| f.records.len()).max().unwrap_or(0);
        for i in 0..longest {
            for f in &found {
                if let Some(doc) = f.records.get(i).and_then(|r| to_document(r, &base))
                    && request.in_time_range(doc.updated_at.as_deref())
                    && !documents.iter().any(|d: &Document| d.id == doc.id)
                {
                    documents.push(doc);
                }
            }
        }
        documents.truncate(want);
        Ok(documents)
    }
}

/// One type's records so far, and whether it may have more.
struct Found {
    records: Vec<Value>,
    more: bool,
}

impl Default for Found {
    fn default() -> Found {
        Found {
            records: Vec::new(),
            more: true,
        }
    }
}

impl Found {
    /// Whether the type is asked for a page: its first page always, a
    /// later one while the types have `total < want` records.
    fn asks(&self, total: usize, want: usize) -> bool {
        self.more && (self.records.is_empty() || total < want)
    }
}

fn total(found: &[Found]) -> usize {
    found.iter().map(|f| f.records.len()).sum()
}

/// One page of every type that [`Found::asks`], in one batch.
fn read_round(
    found: &mut [Found],
    want: usize,
    page: impl Fn(&str, &str, usize, usize) -> Request,
) -> Result<(), SearchError> {
    let (asked, requests) = round_requests(found, want, page);
    take_round(found, want, &asked, send_all(requests))
}

/// The types asked this round, and their requests.
fn round_requests(
    found: &[Found],
    want: usize,
    page: impl Fn(&str, &str, usize, usize) -> Request,
) -> (Vec<usize>, Vec<Request>) {
    let before = total(found);
    let asked: Vec<usize> = (0..found.len())
        .filter(|&t| found[t].asks(before, want))
        .collect();
    let requests = asked
        .iter()
        .map(|&t| {
            let offset = found[t].records.len();
            // The first page may fill `want` alone; later ones ask for
            // what is missing (`before < want` here).
            let limit = if offset == 0 { want } else { want - before };
            page(TYPES[t].0, TYPES[t].1, offset, limit)
        })
        .collect();
    (asked, requests)
}

/// A round's answers, taken in type order as if the pages had been asked
/// one after another, each knowing what the ones before it brought: a
/// later page that `want` no longer needs is dropped unread (a failure of
/// it too), and one that needs fewer records than asked for is cut to
/// them (it would have been asked for that many).
fn take_round(
    found: &mut [Found],
    want: usize,
    asked: &[usize],
    answers: Vec<Result<Response, SearchError>>,
) -> Result<(), SearchError> {
    for (&t, answer) in asked.iter().zip(answers) {
        let total = total(found);
        let found = &mut found[t];
        if !found.asks(total, want) {
            continue;
        }
        let offset = found.records.len();
        let body: Value = check(answer?)?.json()?;
        let mut records = body.array_at("/searchRecords").to_vec();
        if offset > 0 {
            records.truncate(want - total);
        }
        found.more = !records.is_empty() && offset + records.len() < 2000;
        found.records.extend(records);
    }
    Ok(())
}

/// `acme`, from `acme`, `acme.my.salesforce.com` or `https://acme.my.salesforce.com/`.
fn instance(setting: &str) -> Result<String, SearchError> {
    quarry_connector_sdk::url::tenant_name(setting, ".my.salesforce.com").ok_or_else(|| {
        SearchError::InvalidRequest(format!(
            "the instance_url setting {setting:?} is not a Salesforce My Domain (https://<name>.my.salesforce.com)"
        ))
    })
}

/// SOSL's reserved characters, escaped with a backslash.
fn escape(term: &str) -> String {
    let mut out = String::new();
    for c in term.chars() {
        if "?&|!{}[]()^~*:\\\"'+-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `"quoted phrase" OR term OR term`: any word finds a record, as the host
/// ranks what comes back. `None` when nothing is left to search (SOSL
/// needs two characters).
fn search_string(request: &SearchRequest) -> Option<String> {
    let mut parts: Vec<String> = request
        .phrases
        .iter()
        .map(|p| p.replace('"', " ").trim().to_string())
        .filter(|p| !p.is_empty())
        .map(|p| format!("\"{}\"", escape(&p)))
        .collect();
    parts.extend(
        terms_outside_phrases(&request.terms, &request.phrases)
            .filter(|t| !matches!(t.to_ascii_lowercase().as_str(), "and" | "or" | "not"))
            .map(|t| escape(t)),
    );
    if parts.is_empty() {
        parts.extend(
            request
                .query
                .split_whitespace()
                .filter(|t| !matches!(t.to_ascii_lowercase().as_str(), "and" | "or" | "not"))
                .map(escape),
        );
    }
    let q = parts.join(" OR ");
    (q.chars().filter(|c| c.is_alphanumeric()).count() >= 2).then_some(q)
}

/// `LastModifiedDate >= 2026-01-01T00:00:00Z AND LastModifiedDate <= ...`.
fn date_filter(request: &SearchRequest) -> Option<String> {
    let mut clauses = Vec::new();
    if let Some(since) = request.since.as_deref().and_then(to_unix) {
        clauses.push(format!("LastModifiedDate >= {}", from_unix(since)));
    }
    if let Some(until) = request.until.as_deref().and_then(to_unix) {
        clauses.push(format!("LastModifiedDate <= {}", from_unix(until)));
    }
    (!clauses.is_empty()).then(|| clauses.join(" AND "))
}

/// Salesforce's errors are `[{"message", "errorCode"}]`; an exhausted API
/// allocation is a 403 `REQUEST_LIMIT_EXCEEDED`.
fn check(response: Response) -> Result<Response, SearchError> {
    if response.status < 400 {
        return Ok(response);
    }
    let errors: Value = response.json().unwrap_or(Value::Null);
    let code = errors.str_at("/0/errorCode").unwrap_or_default();
    let message = match errors.str_at("/0/message") {
        Some(m) => format!("{code}: {m}"),
        None => response.error_message(),
    };
    if response.status == 403 && code == "REQUEST_LIMIT_EXCEEDED" {
        return Err(SearchError::RateLimited(response.retry_after()));
    }
    Err(response.status_error(message))
}

fn to_document(record: &Value, base: &str) -> Option<Document> {
    let kind = record.str_at("/attributes/type")?;
    let id = record.str_at("/Id")?;
    let (title, content) = match kind {
        "Case" => (
            record.string_at("/Subject"),
            record.string_at("/Description"),
        ),
        _ => {
            let place = join_non_empty(
                [
                    record.str_at("/BillingCity").unwrap_or_default(),
                    record.str_at("/BillingCountry").unwrap_or_default(),
                ],
                ", ",
            );
            let facts = [
                record.string_at("/Description"),
                record
                    .str_at("/Industry")
                    .map(|i| format!("Industry: {i}"))
                    .unwrap_or_default(),
                if place.is_empty() {
                    String::new()
                } else {
                    format!("Location: {place}")
                },
                record
                    .str_at("/Website")
                    .map(|w| format!("Website: {w}"))
                    .unwrap_or_default(),
            ];
            (
                record.string_at("/Name"),
                join_non_empty(facts.iter().map(String::as_str), "\n"),
            )
        }
    };
    Some(
        Document::new(
            id,
            title,
            content,
            format!("{base}/lightning/r/{kind}/{id}/view"),
        )
        .author(record.str_at("/CreatedBy/Name"))
        .times(
            record.str_at("/CreatedDate"),
            record.str_at("/LastModifiedDate"),
        )
        .metadata(json!({
            "object": kind,
            "case_number": record.str_at("/CaseNumber"),
            "status": record.str_at("/Status"),
            "priority": record.str_at("/Priority"),
            "account": record.str_at("/Account/Name"),
        })),
    )
}

quarry_connector_sdk::export!(Salesforce);

#[cfg(test)]
mod tests {
    use super::*;

    fn request(terms: &[&str], phrases: &[&str]) -> SearchRequest {
        SearchRequest::new(&terms.join(" "), terms, phrases)
    }

    #[test]
    fn maps_a_case_and_an_account() {
        let case: Value = serde_json::from_str(r#"{"attributes":{"type":"Case","url":"/services/data/v64.0/sobjects/Case/5005g00000AbCdEfGH"},"Id":"5005g00000AbCdEfGH","CaseNumber":"00001012","Subject":"Charged twice for the same subscription invoice","Description":"Katrin reported a second charge.","Status":"Closed","Priority":"Medium","Account":{"attributes":{"type":"Account","url":"/services/data/v64.0/sobjects/Account/0015g00000XyZ"},"Name":"Kaffeehaus Müller"},"CreatedBy":{"attributes":{"type":"User","url":"/services/data/v64.0/sobjects/User/0055g00000Q"},"Name":"Emma Dubois"},"CreatedDate":"2025-03-11T11:00:00.000+0000","LastModifiedDate":"2025-03-14T09:30:00.000+0100"}"#).unwrap();
        let doc = to_document(&case, "https://acme.my.salesforce.com").unwrap();
        assert_eq!(doc.id, "5005g00000AbCdEfGH");
        assert_eq!(
            doc.url,
            "https://acme.my.salesforce.com/lightning/r/Case/5005g00000AbCdEfGH/view"
        );
        assert_eq!(doc.title, "Charged twice for the same subscription invoice");
        assert_eq!(doc.content, "Katrin reported a second charge.");
        assert_eq!(doc.author.as_deref(), Some("Emma Dubois"));
        assert_eq!(doc.updated_at.as_deref(), Some("2025-03-14T08:30:00Z"));
        assert!(doc.metadata.contains("\"account\":\"Kaffeehaus Müller\""));
        let account: Value = serde_json::from_str(r#"{"attributes":{"type":"Account"},"Id":"0015g00000XyZ","Name":"Bluebird Café Group","Description":"Six cafés.","Industry":"food beverages","BillingCity":"Portland","BillingCountry":"United States"}"#).unwrap();
        let doc = to_document(&account, "https://acme.my.salesforce.com").unwrap();
        assert_eq!(doc.title, "Bluebird Café Group");
        assert_eq!(
            doc.content,
            "Six cafés.\nIndustry: food beverages\nLocation: Portland, United States"
        );
    }

    fn found(n: usize) -> Found {
        Found {
            records: (0..n).map(|i| json!({ "Id": i })).collect(),
            more: true,
        }
    }

    fn answer(ids: &[usize]) -> Result<Response, SearchError> {
        let records: Vec<Value> = ids.iter().map(|i| json!({ "Id": i })).collect();
        Ok(Response {
            status: 200,
            headers: vec![],
            body: json!({ "searchRecords": records }).to_string().into_bytes(),
        })
    }

    #[test]
    fn takes_a_round_as_if_asked_one_after_another() {
        let pages = std::cell::RefCell::new(Vec::new());
        let page = |kind: &str, _: &str, offset: usize, limit: usize| {
            pages.borrow_mut().push((kind.to_string(), offset, limit));
            Request::get("https://x.example")
        };
        // Both types' first pages, whatever the first brings.
        let mut types = vec![Found::default(), Found::default()];
        let (asked, _) = round_requests(&types, 4, page);
        assert_eq!(asked, vec![0, 1]);
        assert_eq!(
            pages.take(),
            vec![("Case".into(), 0, 4), ("Account".into(), 0, 4)]
        );
        take_round(
            &mut types,
            4,
            &asked,
            vec![answer(&[0, 1, 2, 3]), answer(&[9])],
        )
        .unwrap();
        assert_eq!((types[0].records.len(), types[1].records.len()), (4, 1));
        assert!(round_requests(&types, 4, page).0.is_empty());

        // Later pages ask for what is missing; the second is cut to what
        // the first left missing...
        let mut types = vec![found(3), found(2)];
        let (asked, _) = round_requests(&types, 7, page);
        assert_eq!(asked, vec![0, 1]);
        assert_eq!(
            pages.take(),
            vec![("Case".into(), 3, 2), ("Account".into(), 2, 2)]
        );
        take_round(&mut types, 7, &asked, vec![answer(&[3]), answer(&[2, 3])]).unwrap();
        assert_eq!((types[0].records.len(), types[1].records.len()), (4, 3));
        // ...and dropped unread, a failure too, when the first filled `want`.
        let mut types = vec![found(3), found(2)];
        let failed = Err(SearchError::RateLimited(Some(5)));
        take_round(&mut types, 7, &asked, vec![answer(&[3, 4]), failed]).unwrap();
        assert_eq!((types[0].records.len(), types[1].records.len()), (5, 2));
        // An empty page ends a type.
        let mut types = vec![found(3), found(2)];
        take_round(&mut types, 7, &asked, vec![answer(&[]), answer(&[])]).unwrap();
        assert!(types.iter().all(|t| !t.more));
    }

    #[test]
    fn builds_the_search_string_and_filter() {
        let r = request(&["invoice", "retry", "c++"], &["double charge"]);
        assert_eq!(
            search_string(&r).unwrap(),
            "\"double charge\" OR invoice OR retry OR c\\+\\+"
        );
        assert_eq!(search_string(&request(&["x"], &[])), None);
        let mut r = request(&["x"], &[]);
        r.since = Some("2026-01-01T00:00:00Z".into());
        r.until = Some("2026-06-30T23:59:59+00:00".into());
        assert_eq!(
            date_filter(&r).unwrap(),
            "LastModifiedDate >= 2026-01-01T00:00:00Z AND LastModifiedDate <= 2026-06-30T23:59:59Z"
        );
        assert_eq!(instance("https://Acme.my.salesforce.com/").unwrap(), "acme");
        assert!(instance("acme.evil.example/x").is_err());
    }
}
