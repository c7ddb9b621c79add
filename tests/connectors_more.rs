//! The Confluence, Google Drive, Gmail, Zendesk and HubSpot connectors against
//! the fake upstreams: records that answer a cross-tool question, citation
//! URLs and field mapping, pagination, time ranges, the vendors' failures
//! mapped to connector errors, and manifests that admit exactly the requests
//! each connector needs.

use std::collections::HashSet;

use fake_saas::search::Query;
use fake_saas::{Fault, RecordedRequest, dataset};
use quarry::connectors::manifest::{Manifest, Method};
use quarry::connectors::policy::{GuestRequest, admit};
use quarry::connectors::{Document, ErrorKind, SearchRequest};
use quarry_tests::{Harness, repo_root};

const NEW: [&str; 5] = ["confluence", "google-drive", "gmail", "zendesk", "hubspot"];

async fn harness() -> Harness {
    Harness::start(&NEW).await
}

/// A keyword search as the host plans it, with the settings the demo uses.
fn request(query: &str, max_results: u32) -> SearchRequest {
    SearchRequest {
        query: query.to_string(),
        terms: query.split_whitespace().map(|t| t.to_lowercase()).collect(),
        max_results,
        settings: vec![("subdomain".into(), "acme".into())],
        ..SearchRequest::default()
    }
}

/// The host the connector's API lives on (faults are set per host).
fn api_host(connector: &str) -> &'static str {
    match connector {
        "confluence" => "api.atlassian.com",
        "google-drive" => "www.googleapis.com",
        "gmail" => "gmail.googleapis.com",
        "zendesk" => "acme.zendesk.com",
        "hubspot" => "api.hubapi.com",
        other => panic!("no host for {other}"),
    }
}

/// `(citation URL, story, searchable text, updated unix)` of every record a
/// connector can return.
fn records(connector: &str) -> Vec<(String, Option<String>, String, i64)> {
    use dataset::Record;
    match connector {
        "confluence" => dataset::confluence_pages()
            .iter()
            .map(|p| {
                (
                    p.url.clone(),
                    Some(p.story.clone()),
                    p.searchable_text(),
                    p.updated_unix,
                )
            })
            .collect(),
        "google-drive" => dataset::drive_files()
            .iter()
            .filter(|f| !f.trashed)
            .map(|f| {
                (
                    f.web_view_link.clone(),
                    Some(f.story.clone()),
                    f.searchable_text(),
                    f.modified_unix,
                )
            })
            .collect(),
        "gmail" => dataset::gmail_messages()
            .iter()
            .map(|m| {
                (
                    m.url.clone(),
                    Some(m.story.clone()),
                    m.searchable_text(),
                    m.unix,
                )
            })
            .collect(),
        "zendesk" => dataset::zendesk_tickets()
            .iter()
            .map(|t| {
                (
                    t.url.clone(),
                    Some(t.story.clone()),
                    t.searchable_text(),
                    t.updated_unix,
                )
            })
            .collect(),
        "hubspot" => dataset::hubspot_objects()
            .iter()
            .map(|o| {
                (
                    o.url.clone(),
                    o.story.clone(),
                    o.searchable_text(),
                    o.updated_unix,
                )
            })
            .collect(),
        other => panic!("no dataset for {other}"),
    }
}

fn citations(connector: &str) -> HashSet<String> {
    records(connector).into_iter().map(|r| r.0).collect()
}

fn jira_key(story: &str) -> String {
    dataset::stories()
        .iter()
        .find(|s| s.slug == story)
        .and_then(|s| s.jira_key.clone())
        .unwrap_or_else(|| panic!("{story} has a Jira key"))
}

fn searches(requests: &[RecordedRequest], connector: &str) -> usize {
    requests
        .iter()
        .filter(|r| match connector {
            "confluence" => r.path.ends_with("/wiki/rest/api/search"),
            "google-drive" => r.path == "/drive/v3/files",
            "gmail" => r.path.ends_with("/messages"),
            "zendesk" => r.path == "/api/v2/search.json",
            "hubspot" => r.path.ends_with("/search"),
            _ => false,
        })
        .count()
}

#[tokio::test]
async fn each_connector_answers_a_cross_tool_question_with_the_jira_key() {
    let h = harness().await;
    let cases = [
        (
            "confluence",
            "invoice retry double charge",
            "invoice-retry-double-charge",
        ),
        ("google-drive", "loyalty points", "loyalty-points"),
        (
            "gmail",
            "charged twice subscription invoice",
            "invoice-retry-double-charge",
        ),
        (
            "zendesk",
            "charged twice subscription invoice",
            "invoice-retry-double-charge",
        ),
        (
            "hubspot",
            "charged twice subscription invoice",
            "invoice-retry-double-charge",
        ),
    ];
    for (connector, question, story) in cases {
        let docs = h
            .search(connector, &request(question, 10))
            .await
            .unwrap_or_else(|e| panic!("{connector}: {e}"));
        assert!(
            !docs.is_empty(),
            "{connector} found nothing for {question:?}"
        );
        let known = citations(connector);
        for doc in &docs {
            assert!(
                known.contains(&doc.url),
                "{connector}: {} is not a record's citation URL",
                doc.url
            );
            assert!(
                doc.updated_at.as_deref().is_some_and(|t| t.ends_with('Z')),
                "{connector}: times are RFC 3339 UTC"
            );
        }
        let ids: HashSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids.len(), docs.len(), "{connector}: duplicate documents");
        let of_story: HashSet<String> = records(connector)
            .into_iter()
            .filter(|r| r.1.as_deref() == Some(story))
            .map(|r| r.0)
            .collect();
        let key = jira_key(story);
        assert!(
            docs.iter()
                .any(|d| of_story.contains(&d.url) && d.content.contains(&key)),
            "{connector}: no record of {story} citing {key} in {:#?}",
            docs.iter().map(|d| (&d.title, &d.url)).collect::<Vec<_>>()
        );
    }
}

fn find<'a>(docs: &'a [Document], url: &str) -> &'a Document {
    docs.iter().find(|d| d.url == url).unwrap_or_else(|| {
        panic!(
            "{url} not among {:#?}",
            docs.iter().map(|d| &d.url).collect::<Vec<_>>()
        )
    })
}

fn rfc3339(text: &str) -> String {
    let unix = fake_saas_time(text);
    format_unix(unix)
}

/// Seconds of an RFC 3339 time with optional milliseconds (`...:00.000Z`).
fn fake_saas_time(text: &str) -> i64 {
    let t = text.trim_end_matches('Z');
    let t = t.split('.').next().unwrap();
    let (date, time) = t.split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let c: Vec<i64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    days_from_civil(d[0], d[1], d[2]) * 86_400 + c[0] * 3600 + c[1] * 60 + c[2]
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn format_unix(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[tokio::test]
async fn records_are_mapped_field_for_field() {
    let h = harness().await;

    // Confluence: a postmortem page, its body made text, its web URL.
    let page = dataset::confluence_pages()
        .iter()
        .find(|p| p.title.starts_with("Postmortem:"))
        .unwrap();
    let docs = h
        .search("confluence", &request("postmortem", 50))
        .await
        .unwrap();
    let doc = find(&docs, &page.url);
    assert_eq!(doc.id, page.id);
    assert_eq!(doc.title, page.title);
    assert_eq!(doc.author.as_deref(), Some(page.author_name.as_str()));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(rfc3339(&page.updated).as_str())
    );
    assert_eq!(
        doc.created_at.as_deref(),
        Some(rfc3339(&page.created).as_str())
    );
    assert_eq!(
        doc.content, page.body_text,
        "storage XHTML became the page's text"
    );
    assert_eq!(doc.metadata["space"], page.space_name.as_str());
    assert!(
        page.url
            .starts_with("https://acme.atlassian.net/wiki/spaces/")
    );

    // Google Drive: a Doc exported as text, a Sheet as CSV, a PDF by its
    // description; trashed files never.
    let docs = h
        .search("google-drive", &request("loyalty points program", 12))
        .await
        .unwrap();
    let prd = dataset::drive_files()
        .iter()
        .find(|f| f.name == "PRD: Loyalty points program")
        .unwrap();
    let doc = find(&docs, &prd.web_view_link);
    assert_eq!(doc.id, prd.id);
    assert_eq!(doc.title, prd.name);
    assert_eq!(
        doc.content, prd.text,
        "the export, without its BOM and CRLFs"
    );
    assert_eq!(doc.author.as_deref(), Some(prd.owner_name.as_str()));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(rfc3339(&prd.modified_time).as_str())
    );
    assert!(
        prd.web_view_link
            .starts_with("https://docs.google.com/document/d/")
    );
    let trashed: HashSet<&str> = dataset::drive_files()
        .iter()
        .filter(|f| f.trashed)
        .map(|f| f.web_view_link.as_str())
        .collect();
    assert!(docs.iter().all(|d| !trashed.contains(d.url.as_str())));
    let sheet = dataset::drive_files()
        .iter()
        .find(|f| f.mime_type == dataset::MIME_SHEET)
        .unwrap();
    let docs = h
        .search(
            "google-drive",
            &request("timeline certificate rotation", 12),
        )
        .await
        .unwrap();
    let doc = find(&docs, &sheet.web_view_link);
    assert!(
        doc.content.starts_with("time_utc,who,what\n"),
        "{}",
        doc.content
    );
    let pdf = dataset::drive_files()
        .iter()
        .find(|f| f.mime_type == dataset::MIME_PDF)
        .unwrap();
    let docs = h
        .search("google-drive", &request("load test report", 12))
        .await
        .unwrap();
    let doc = find(&docs, &pdf.web_view_link);
    assert_eq!(Some(doc.content.as_str()), pdf.description.as_deref());

    // Gmail: subject, sender, date and snippet; a mail.google.com link.
    let message = dataset::gmail_messages()
        .iter()
        .find(|m| m.subject.starts_with("Re: ") && m.body.contains("Katrin"))
        .unwrap();
    let docs = h
        .search("gmail", &request("katrin charged twice", 12))
        .await
        .unwrap();
    let doc = find(
        &docs,
        &format!("https://mail.google.com/mail/u/0/#all/{}", message.id),
    );
    assert_eq!(doc.id, message.id);
    assert_eq!(doc.title, message.subject);
    assert_eq!(doc.author.as_deref(), Some(message.from_name.as_str()));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(format_unix(message.unix).as_str())
    );
    let snippet: String = message
        .body
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        snippet.starts_with(&doc.content),
        "the snippet, entities decoded: {}",
        doc.content
    );
    assert_eq!(doc.metadata["thread_id"], message.thread_id.as_str());

    // Zendesk: the agent's ticket page, the requester, the description.
    let ticket = dataset::zendesk_tickets()
        .iter()
        .find(|t| t.story == "canada-tax")
        .unwrap();
    let docs = h
        .search("zendesk", &request("quebec sales tax", 10))
        .await
        .unwrap();
    let doc = find(
        &docs,
        &format!("https://acme.zendesk.com/agent/tickets/{}", ticket.id),
    );
    assert_eq!(doc.id, ticket.id.to_string());
    assert_eq!(doc.title, ticket.subject);
    assert_eq!(doc.content, ticket.description);
    assert_eq!(doc.author.as_deref(), Some(ticket.requester_name.as_str()));
    assert_eq!(doc.updated_at.as_deref(), Some(ticket.updated_at.as_str()));
    assert_eq!(doc.metadata["status"], ticket.status.as_str());

    // HubSpot: a deal and a company, each cited by its record page.
    let deal = dataset::hubspot_objects()
        .iter()
        .find(|o| o.object_type == "deals" && o.story.as_deref() == Some("marketplace-launch-plan"))
        .unwrap();
    let company = dataset::hubspot_objects()
        .iter()
        .find(|o| o.object_type == "companies" && o.property("name") == Some("Nordic Brew Supply"))
        .unwrap();
    let docs = h
        .search("hubspot", &request("nordic brew marketplace", 20))
        .await
        .unwrap();
    let doc = find(&docs, &deal.url);
    assert_eq!(doc.id, deal.id);
    assert_eq!(Some(doc.title.as_str()), deal.property("dealname"));
    assert!(
        doc.content
            .starts_with(deal.property("description").unwrap())
    );
    assert!(doc.content.contains("Stage: contractsent"));
    assert_eq!(doc.metadata["object"], "deals");
    assert!(
        deal.url
            .starts_with("https://app.hubspot.com/contacts/24681357/record/0-3/")
    );
    let doc = find(&docs, &company.url);
    assert_eq!(doc.title, "Nordic Brew Supply");
    assert!(doc.content.contains("Domain: nordicbrew.example"));
}

#[tokio::test]
async fn connectors_follow_pagination() {
    let h = harness().await;
    // Vendors that hold at most 3 results a page: 7 results take 3 pages.
    h.fake.set_fault(
        "*",
        Fault {
            max_page_size: Some(3),
            ..Fault::default()
        },
    );
    let question = "checkout payment order";
    let query = Query::parse(question);
    for connector in ["confluence", "google-drive", "gmail", "zendesk"] {
        let available = records(connector)
            .iter()
            .filter(|r| query.matches_text(&r.2))
            .count();
        assert!(available >= 7, "{connector} holds {available} matches");
        h.fake.clear_requests();
        let docs = h.search(connector, &request(question, 7)).await.unwrap();
        assert_eq!(docs.len(), 7, "{connector} collects across pages");
        let requests = h.fake.requests();
        assert_eq!(
            searches(&requests, connector),
            3,
            "{connector} read 3 pages"
        );
        let urls: HashSet<&str> = docs.iter().map(|d| d.url.as_str()).collect();
        assert_eq!(urls.len(), 7, "{connector}: no page read twice");
    }
    // HubSpot: only tickets say "escalated"; the first page of each type,
    // then the tickets' next pages until 7.
    let tickets = dataset::hubspot_objects()
        .iter()
        .filter(|o| Query::parse("escalated").matches_text(&dataset::Record::searchable_text(*o)))
        .collect::<Vec<_>>();
    assert!(tickets.len() >= 7 && tickets.iter().all(|o| o.object_type == "tickets"));
    h.fake.clear_requests();
    let docs = h.search("hubspot", &request("escalated", 7)).await.unwrap();
    assert_eq!(docs.len(), 7);
    let requests = h.fake.requests();
    let ticket_pages: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| r.path == "/crm/v3/objects/tickets/search")
        .collect();
    assert_eq!(ticket_pages.len(), 3, "tickets read over 3 pages");
    assert!(ticket_pages[1].body_text().contains("\"after\":\"3\""));
    assert!(ticket_pages[2].body_text().contains("\"after\":\"6\""));
    assert_eq!(
        searches(&requests, "hubspot"),
        6,
        "4 types, 2 more ticket pages"
    );
}

#[tokio::test]
async fn time_ranges_reach_the_upstream() {
    let h = harness().await;
    let question = "checkout payment order customer invoice";
    let mut bounded = request(question, 12);
    bounded.since = Some("2026-01-01T00:00:00Z".into());
    bounded.until = Some("2026-06-30T23:59:59Z".into());
    let query = Query::parse(question);
    let (lo, hi) = (
        fake_saas_time("2026-01-01T00:00:00Z"),
        fake_saas_time("2026-07-01T00:00:00Z"),
    );
    for connector in NEW {
        // The range matters: the question has answers outside it.
        assert!(
            records(connector)
                .iter()
                .any(|r| query.matches_text(&r.2) && !(lo..hi).contains(&r.3)),
            "{connector}: the question has answers outside the range"
        );
        h.fake.clear_requests();
        let docs = h.search(connector, &bounded).await.unwrap();
        assert!(
            !docs.is_empty(),
            "{connector}: something in the first half of 2026"
        );
        for doc in &docs {
            let updated = doc.updated_at.as_deref().unwrap();
            assert!(
                ("2026-01-01".."2026-07-01").contains(&updated),
                "{connector}: {} updated {updated}",
                doc.url
            );
        }
        let requests = h.fake.requests();
        let sent = requests
            .iter()
            .map(|r| format!("{} {}", r.query.clone().unwrap_or_default(), r.body_text()))
            .collect::<Vec<_>>()
            .join("\n");
        let expected: &[&str] = match connector {
            // CQL dates are the user's local time: a day wider each side.
            "confluence" => &[
                "lastmodified%20%3E%3D%20%222025-12-31%2000%3A00%22",
                "lastmodified%20%3C%3D%20%222026-07-01%2023%3A59%22",
            ],
            "google-drive" => &[
                "modifiedTime%20%3E%3D%20%272026-01-01T00%3A00%3A00Z%27",
                "modifiedTime%20%3C%3D%20%272026-06-30T23%3A59%3A59Z%27",
            ],
            "gmail" => &["after%3A1767225599", "before%3A1782864000"],
            "zendesk" => &[
                "updated%3E2025-12-31T23%3A59%3A59Z",
                "updated%3C2026-07-01T00%3A00%3A00Z",
            ],
            "hubspot" => &[
                "\"operator\":\"GTE\",\"propertyName\":\"hs_lastmodifieddate\",\"value\":\"1767225600000\"",
                "\"value\":\"1782863999999\"",
            ],
            _ => unreachable!(),
        };
        for needle in expected {
            assert!(
                sent.contains(needle),
                "{connector}: {needle} not in\n{sent}"
            );
        }
    }
}

#[tokio::test]
async fn upstream_failures_map_to_connector_errors() {
    let h = harness().await;
    for connector in NEW {
        let host = api_host(connector);
        h.fake.set_fault(
            host,
            Fault {
                status: Some(429),
                retry_after: Some(17),
                count: Some(1),
                ..Fault::default()
            },
        );
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::RateLimited, "{connector}: {error}");
        assert_eq!(error.retry_after_seconds, Some(17), "{connector}");

        h.fake.set_fault(
            host,
            Fault {
                status: Some(500),
                count: Some(1),
                ..Fault::default()
            },
        );
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Upstream, "{connector}: {error}");

        h.fake.set_fault(
            host,
            Fault {
                status: Some(401),
                count: Some(1),
                ..Fault::default()
            },
        );
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{connector}: {error}");

        h.fake.set_fault(
            host,
            Fault {
                body: Some("<html><body>Bad gateway</body></html>".into()),
                count: Some(1),
                ..Fault::default()
            },
        );
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::InvalidResponse,
            "{connector}: {error}"
        );
    }
    // Google also says "rate limited" with a 403 and a reason.
    for connector in ["google-drive", "gmail"] {
        h.fake.set_fault(
            api_host(connector),
            Fault {
                status: Some(403),
                retry_after: Some(5),
                count: Some(1),
                body: Some(r#"{"error":{"code":403,"message":"User Rate Limit Exceeded","errors":[{"message":"User Rate Limit Exceeded","domain":"usageLimits","reason":"userRateLimitExceeded"}]}}"#.into()),
                ..Fault::default()
            },
        );
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::RateLimited, "{connector}: {error}");
        assert_eq!(error.retry_after_seconds, Some(5), "{connector}");
    }
}

#[tokio::test]
async fn a_bad_token_is_unauthorized() {
    let h = harness().await;
    for connector in NEW {
        let error = h
            .search_as(connector, "mallory", &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{connector}: {error}");
    }
    // Each user's own credential goes upstream.
    h.fake.clear_requests();
    h.search_as("hubspot", "bob", &request("invoice", 5))
        .await
        .unwrap();
    assert!(
        h.fake
            .requests()
            .iter()
            .filter(|r| r.host == "api.hubapi.com")
            .all(|r| r.header("authorization") == Some("Bearer fake-hubspot-bob"))
    );
}

#[tokio::test]
async fn zendesk_needs_its_subdomain_setting() {
    let h = harness().await;
    let mut without = request("checkout", 5);
    without.settings.clear();
    let error = h.search("zendesk", &without).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::InvalidRequest, "{error}");
    let mut tricky = request("checkout", 5);
    tricky.settings = vec![("subdomain".into(), "acme.evil.example/x".into())];
    let error = h.search("zendesk", &tricky).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::InvalidRequest, "{error}");
    assert!(h.fake.requests().is_empty(), "nothing left the sandbox");
}

fn manifest(connector: &str) -> Manifest {
    let path = repo_root().join(format!("plugins/{connector}/connector.toml"));
    Manifest::parse(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{connector}: {e:#}"))
}

fn guest(method: Method, url: &str, body: Option<&str>) -> GuestRequest {
    GuestRequest {
        method,
        url: url.to_string(),
        headers: vec![("accept".into(), "application/json".into())],
        body: body.map(|b| b.as_bytes().to_vec()),
    }
}

/// Requests as `(method, URL, body)`.
type Requests<'a> = &'a [(Method, String, Option<&'a str>)];

#[test]
fn manifests_admit_exactly_the_requests_each_connector_needs() {
    use Method::{Get, Head, Post};
    let cloud = dataset::JIRA_CLOUD_ID;
    let search_body = Some(r#"{"query":"x","limit":5}"#);
    let cases: &[(&str, Requests, Requests)] = &[
        (
            "confluence",
            &[
                (Get, "https://api.atlassian.com/oauth/token/accessible-resources".into(), None),
                (Get, format!("https://api.atlassian.com/ex/confluence/{cloud}/wiki/rest/api/search?cql=siteSearch%20~%20%22x%22"), None),
            ],
            &[
                (Post, format!("https://api.atlassian.com/ex/confluence/{cloud}/wiki/rest/api/search"), search_body),
                (Post, format!("https://api.atlassian.com/ex/confluence/{cloud}/wiki/rest/api/content"), search_body),
                (Get, format!("https://api.atlassian.com/ex/confluence/{cloud}/wiki/rest/api/content/123"), None),
                (Get, format!("https://api.atlassian.com/ex/jira/{cloud}/rest/api/3/search/jql"), None),
                (Get, "https://acme.atlassian.net/wiki/rest/api/search?cql=x".into(), None),
            ],
        ),
        (
            "google-drive",
            &[
                (Get, "https://www.googleapis.com/drive/v3/files?q=fullText%20contains%20%27x%27".into(), None),
                (Get, "https://www.googleapis.com/drive/v3/files/1AbC/export?mimeType=text%2Fplain".into(), None),
                (Head, "https://www.googleapis.com/drive/v3/files".into(), None),
            ],
            &[
                (Post, "https://www.googleapis.com/drive/v3/files".into(), Some("{}")),
                (Post, "https://www.googleapis.com/drive/v3/files/1AbC/copy".into(), Some("{}")),
                (Get, "https://www.googleapis.com/drive/v3/files/1AbC".into(), None),
                (Get, "https://www.googleapis.com/drive/v3/files/1AbC/permissions".into(), None),
                (Get, "https://www.googleapis.com/upload/drive/v3/files".into(), None),
                (Get, "https://gmail.googleapis.com/gmail/v1/users/me/messages".into(), None),
            ],
        ),
        (
            "gmail",
            &[
                (Get, "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=x".into(), None),
                (Get, "https://gmail.googleapis.com/gmail/v1/users/me/messages/18f2a9c0?format=metadata".into(), None),
            ],
            &[
                (Post, "https://gmail.googleapis.com/gmail/v1/users/me/messages/send".into(), Some("{}")),
                (Post, "https://gmail.googleapis.com/gmail/v1/users/me/messages".into(), Some("{}")),
                (Post, "https://gmail.googleapis.com/gmail/v1/users/me/messages/18f2a9c0/trash".into(), None),
                (Get, "https://gmail.googleapis.com/gmail/v1/users/me/messages/18f2a9c0/attachments/1".into(), None),
                (Get, "https://gmail.googleapis.com/gmail/v1/users/other@example.com/messages".into(), None),
                (Get, "https://gmail.googleapis.com/gmail/v1/users/me/settings/filters".into(), None),
            ],
        ),
        (
            "zendesk",
            &[
                (Get, "https://acme.zendesk.com/api/v2/search.json?query=type%3Aticket%20x".into(), None),
                (Get, "https://other.zendesk.com/api/v2/search.json?query=x".into(), None),
            ],
            &[
                (Post, "https://acme.zendesk.com/api/v2/search.json".into(), Some("{}")),
                (Post, "https://acme.zendesk.com/api/v2/tickets.json".into(), Some("{}")),
                (Get, "https://acme.zendesk.com/api/v2/tickets/4001.json".into(), None),
                (Get, "https://acme.zendesk.com/api/v2/users.json".into(), None),
                (Get, "https://acme.zendesk.example/api/v2/search.json".into(), None),
                (Get, "https://a.b.zendesk.com/api/v2/search.json".into(), None),
            ],
        ),
        (
            "hubspot",
            &[
                (Get, "https://api.hubapi.com/account-info/v3/details".into(), None),
                (Post, "https://api.hubapi.com/crm/v3/objects/tickets/search".into(), search_body),
                (Post, "https://api.hubapi.com/crm/v3/objects/deals/search".into(), search_body),
                (Post, "https://api.hubapi.com/crm/v3/objects/companies/search".into(), search_body),
                (Post, "https://api.hubapi.com/crm/v3/objects/contacts/search".into(), search_body),
            ],
            &[
                // Creating, updating, merging or archiving records: POSTs
                // outside the four search routes.
                (Post, "https://api.hubapi.com/crm/v3/objects/contacts".into(), Some(r#"{"properties":{"email":"x@y.z"}}"#)),
                (Post, "https://api.hubapi.com/crm/v3/objects/contacts/batch/archive".into(), Some("{}")),
                (Post, "https://api.hubapi.com/crm/v3/objects/contacts/merge".into(), Some("{}")),
                (Post, "https://api.hubapi.com/crm/v3/objects/notes/search".into(), search_body),
                (Post, "https://api.hubapi.com/crm/v3/objects/contacts/search/extra".into(), search_body),
                (Post, "https://api.hubapi.com/account-info/v3/details".into(), Some("{}")),
                (Post, "https://api.hubapi.com/oauth/2026-03/token/revoke".into(), Some("token=x")),
                // Reads the connector does not need.
                (Get, "https://api.hubapi.com/crm/v3/objects/contacts/search".into(), None),
                (Get, "https://api.hubapi.com/crm/v3/objects/contacts".into(), None),
                (Get, "https://api.hubapi.com/crm/v3/objects/contacts/151".into(), None),
            ],
        ),
    ];
    for (connector, admitted, refused) in cases {
        let m = manifest(connector);
        assert!(
            m.routes
                .iter()
                .all(|r| r.method != Post || *connector == "hubspot"),
            "{connector}: POST is declared only by HubSpot"
        );
        let scopes = m
            .oauth
            .as_ref()
            .map(|o| o.scopes.clone())
            .unwrap_or_default();
        assert!(
            !scopes.is_empty(),
            "{connector}: read-only scopes are declared"
        );
        for (method, url, body) in *admitted {
            admit(&m, guest(*method, url, *body))
                .unwrap_or_else(|e| panic!("{connector}: {method:?} {url} refused: {e}"));
        }
        for (method, url, body) in *refused {
            assert!(
                admit(&m, guest(*method, url, *body)).is_err(),
                "{connector}: {method:?} {url} was admitted"
            );
        }
    }
    // Revocation endpoints where the vendor has one (Zendesk's is per
    // subdomain and per token id, which a manifest cannot express).
    for (connector, revoke) in [
        (
            "confluence",
            Some("https://auth.atlassian.com/oauth/revoke"),
        ),
        ("google-drive", Some("https://oauth2.googleapis.com/revoke")),
        ("gmail", Some("https://oauth2.googleapis.com/revoke")),
        ("zendesk", None),
        (
            "hubspot",
            Some("https://api.hubapi.com/oauth/2026-03/token/revoke"),
        ),
    ] {
        let m = manifest(connector);
        let got = m
            .oauth
            .as_ref()
            .and_then(|o| o.revoke.as_ref())
            .map(|r| r.url.as_str());
        assert_eq!(got, revoke, "{connector}");
    }
}
