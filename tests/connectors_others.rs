//! The Salesforce, Microsoft 365, Asana, Trello and Intercom connectors
//! against the fake upstreams: records that answer a cross-tool question,
//! citation URLs and field mapping, pagination, time ranges, the vendors'
//! failures mapped to connector errors, settings, and manifests that admit
//! exactly the requests each connector needs (POST only on query routes).

use std::collections::HashSet;

use fake_saas::search::Query;
use fake_saas::{Fault, RecordedRequest, dataset};
use quarry::connectors::manifest::{AuthScheme, Manifest, Method};
use quarry::connectors::policy::{GuestRequest, admit};
use quarry::connectors::{Document, ErrorKind, SearchRequest};
use quarry::secret::Secret;
use quarry_tests::{Harness, repo_root};

const NEW: [&str; 5] = ["salesforce", "microsoft-365", "asana", "trello", "intercom"];

async fn harness() -> Harness {
    Harness::start(&NEW).await
}

/// A keyword search as the host plans it, with the settings the demo uses
/// (Intercom's workspace is read from the token: no setting).
fn request(query: &str, max_results: u32) -> SearchRequest {
    SearchRequest {
        query: query.to_string(),
        terms: query.split_whitespace().map(|t| t.to_lowercase()).collect(),
        max_results,
        settings: vec![
            (
                "instance_url".into(),
                "https://acme.my.salesforce.com".into(),
            ),
            ("workspace".into(), dataset::ASANA_WORKSPACE_GID.into()),
        ],
        ..SearchRequest::default()
    }
}

/// The host the connector's API lives on (faults are set per host).
fn api_host(connector: &str) -> &'static str {
    match connector {
        "salesforce" => "acme.my.salesforce.com",
        "microsoft-365" => "graph.microsoft.com",
        "asana" => "app.asana.com",
        "trello" => "api.trello.com",
        "intercom" => "api.intercom.io",
        other => panic!("no host for {other}"),
    }
}

/// `(citation URL, story, searchable text, updated unix)` of every record a
/// connector can return.
fn records(connector: &str) -> Vec<(String, Option<String>, String, i64)> {
    use dataset::Record;
    fn rows<R: Record>(
        records: &[R],
        story: impl Fn(&R) -> Option<String>,
    ) -> Vec<(String, Option<String>, String, i64)> {
        records
            .iter()
            .map(|r| {
                (
                    r.citation_url().to_string(),
                    story(r),
                    r.searchable_text(),
                    r.updated_unix(),
                )
            })
            .collect()
    }
    match connector {
        "salesforce" => rows(dataset::salesforce_records(), |r| r.story.clone()),
        "microsoft-365" => rows(dataset::m365_items(), |r| Some(r.story.clone())),
        "asana" => rows(dataset::asana_tasks(), |r| Some(r.story.clone())),
        "trello" => rows(dataset::trello_cards(), |r| Some(r.story.clone())),
        "intercom" => rows(dataset::intercom_conversations(), |r| Some(r.story.clone())),
        other => panic!("no dataset for {other}"),
    }
}

fn citations(connector: &str) -> HashSet<String> {
    records(connector).into_iter().map(|r| r.0).collect()
}

/// The story's Jira key, else its Linear identifier.
fn ticket(story: &str) -> String {
    let info = dataset::stories()
        .iter()
        .find(|s| s.slug == story)
        .unwrap_or_else(|| panic!("no story {story}"));
    info.jira_key
        .clone()
        .or_else(|| info.linear_identifier.clone())
        .unwrap_or_else(|| panic!("{story} has a ticket"))
}

/// The search requests a connector made (not the reads that follow).
fn searches<'a>(requests: &'a [RecordedRequest], connector: &str) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| match connector {
            "salesforce" => r.path.ends_with("/parameterizedSearch"),
            "microsoft-365" => r.path == "/v1.0/search/query",
            "asana" => r.path.ends_with("/tasks/search"),
            "trello" => r.path == "/1/search",
            "intercom" => r.path == "/conversations/search",
            _ => false,
        })
        .collect()
}

fn sent(requests: &[&RecordedRequest]) -> String {
    requests
        .iter()
        .map(|r| format!("{} {}", r.query.clone().unwrap_or_default(), r.body_text()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn each_connector_answers_a_cross_tool_question_with_the_ticket() {
    let h = harness().await;
    let cases = [
        (
            "salesforce",
            "charged twice subscription invoice",
            "invoice-retry-double-charge",
        ),
        (
            "microsoft-365",
            "checkout 502 certificate rotation",
            "incident-lb-cert",
        ),
        ("asana", "apple pay", "apple-pay"),
        ("trello", "apple pay", "apple-pay"),
        (
            "intercom",
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
        let key = ticket(story);
        assert!(
            docs.iter()
                .any(|d| of_story.contains(&d.url) && d.content.contains(&key)),
            "{connector}: no record of {story} citing {key} in {:#?}",
            docs.iter()
                .map(|d| (&d.title, &d.url, &d.content))
                .collect::<Vec<_>>()
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

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds of `2026-01-01T00:00:00Z`.
fn unix(text: &str) -> i64 {
    let (date, time) = text.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let c: Vec<i64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    days_from_civil(d[0], d[1], d[2]) * 86_400 + c[0] * 3600 + c[1] * 60 + c[2]
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

    // Salesforce: a case and an account, cited by their Lightning pages.
    let case = dataset::salesforce_records()
        .iter()
        .find(|r| {
            r.object_type == "Case"
                && r.story.as_deref() == Some("invoice-retry-double-charge")
                && r.field("Account.Name") == Some("Kaffeehaus Müller")
        })
        .unwrap();
    let account = dataset::salesforce_records()
        .iter()
        .find(|r| r.object_type == "Account" && r.field("Name") == Some("Kaffeehaus Müller"))
        .unwrap();
    let docs = h
        .search("salesforce", &request("kaffeehaus charged twice", 20))
        .await
        .unwrap();
    let doc = find(&docs, &case.url);
    assert_eq!(doc.id, case.id);
    assert_eq!(Some(doc.title.as_str()), case.field("Subject"));
    assert_eq!(Some(doc.content.as_str()), case.field("Description"));
    assert_eq!(doc.author.as_deref(), case.field("CreatedBy.Name"));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(format_unix(case.updated_unix).as_str())
    );
    assert_eq!(
        doc.created_at.as_deref(),
        Some(format_unix(case.created_unix).as_str())
    );
    assert_eq!(doc.metadata["object"], "Case");
    assert_eq!(doc.metadata["account"], "Kaffeehaus Müller");
    assert_eq!(
        Some(doc.metadata["case_number"].as_str().unwrap()),
        case.field("CaseNumber")
    );
    assert_eq!(
        case.url,
        format!(
            "https://acme.my.salesforce.com/lightning/r/Case/{}/view",
            case.id
        )
    );
    let doc = find(&docs, &account.url);
    assert_eq!(doc.title, "Kaffeehaus Müller");
    assert!(
        doc.content
            .starts_with(account.field("Description").unwrap())
    );
    assert!(doc.content.contains("Location: Munich, Germany"));
    assert_eq!(doc.metadata["object"], "Account");

    // Microsoft 365: a Word post-mortem (summary, webUrl), a mail (webLink)
    // and an item of the incident register.
    let files = |story: &str, kind: &str| {
        dataset::m365_items()
            .iter()
            .find(|i| i.story == story && i.entity_type == kind)
            .unwrap()
    };
    let docs = h
        .search(
            "microsoft-365",
            &request("checkout 502 certificate rotation", 30),
        )
        .await
        .unwrap();
    let postmortem = files("incident-lb-cert", "driveItem");
    let doc = find(&docs, &postmortem.web_url);
    assert_eq!(doc.id, postmortem.id);
    assert_eq!(doc.title, postmortem.name);
    assert!(doc.title.ends_with(".docx"));
    assert_eq!(doc.author.as_deref(), Some(postmortem.author_name.as_str()));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(format_unix(postmortem.modified_unix).as_str())
    );
    assert!(
        doc.content
            .starts_with(&format!("[{}]", ticket("incident-lb-cert"))),
        "the summary, highlights removed: {}",
        doc.content
    );
    assert!(!doc.content.contains("<c0>") && !doc.content.contains("<ddd"));
    assert_eq!(doc.metadata["entity"], "driveItem");
    let mail = files("incident-lb-cert", "message");
    let doc = find(&docs, &mail.web_url);
    assert_eq!(doc.title, mail.name);
    assert_eq!(doc.author.as_deref(), Some("Marcus Olsen"));
    assert!(
        mail.web_url
            .starts_with("https://outlook.office365.com/owa/?ItemID=")
    );
    assert!(doc.content.contains(&ticket("incident-lb-cert")));
    let register = files("incident-lb-cert", "listItem");
    let doc = find(&docs, &register.web_url);
    assert_eq!(doc.title, register.name);
    assert_eq!(doc.metadata["entity"], "listItem");

    // Asana: a launch task with its notes, creator and project.
    let task = dataset::asana_tasks()
        .iter()
        .find(|t| t.name == "Launch: Add Apple Pay to web checkout")
        .unwrap();
    let docs = h.search("asana", &request("apple pay", 10)).await.unwrap();
    let doc = find(&docs, &task.permalink_url);
    assert_eq!(doc.id, task.gid);
    assert_eq!(doc.title, task.name);
    assert_eq!(doc.content, task.notes);
    assert_eq!(doc.author.as_deref(), Some(task.created_by.1.as_str()));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(format_unix(task.modified_unix).as_str())
    );
    assert_eq!(doc.metadata["projects"][0], "Product launches");
    assert_eq!(doc.metadata["assignee"], task.assignee.1.as_str());

    // Trello: a card, its description as text, its creation time from its id.
    let card = dataset::trello_cards()
        .iter()
        .find(|c| c.name == "Announce: Add Apple Pay to web checkout")
        .unwrap();
    let docs = h.search("trello", &request("apple pay", 10)).await.unwrap();
    let doc = find(&docs, &card.url);
    assert_eq!(doc.id, card.id);
    assert_eq!(doc.title, card.name);
    assert_eq!(doc.content, card.desc.replace("**", ""));
    assert_eq!(
        doc.created_at.as_deref(),
        Some(format_unix(card.created_unix).as_str())
    );
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(format_unix(card.updated_unix).as_str())
    );
    assert_eq!(doc.metadata["board"], "Marketing");
    assert_eq!(doc.metadata["list"], card.list.as_str());
    assert!(card.url.starts_with("https://trello.com/c/"));

    // Intercom: the first message and the team's replies and notes.
    let conversation = dataset::intercom_conversations()
        .iter()
        .find(|c| c.story == "invoice-retry-double-charge" && c.delivered_via == "email")
        .unwrap();
    let docs = h
        .search(
            "intercom",
            &request("charged twice subscription invoice", 5),
        )
        .await
        .unwrap();
    let doc = find(&docs, &conversation.url);
    assert_eq!(doc.id, conversation.id);
    assert_eq!(Some(doc.title.as_str()), conversation.title.as_deref());
    assert!(doc.content.starts_with("Katrin Müller: Hello,"));
    assert!(
        doc.content
            .contains("Emma Dubois (internal note): Linked to engineering")
    );
    assert_eq!(doc.author.as_deref(), Some("Katrin Müller"));
    assert_eq!(
        doc.updated_at.as_deref(),
        Some(format_unix(conversation.updated_unix).as_str())
    );
    assert_eq!(doc.metadata["state"], conversation.state.as_str());
    assert_eq!(
        conversation.url,
        format!(
            "https://app.intercom.com/a/inbox/{}/inbox/conversation/{}",
            dataset::INTERCOM_APP_ID,
            conversation.id
        )
    );
}

/// A question with at least seven answers in each tool (Asana's search needs
/// every word, so one word there).
fn busy_question(connector: &str) -> &'static str {
    match connector {
        "asana" => "launch",
        _ => "checkout payment order",
    }
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
    for connector in NEW {
        let question = busy_question(connector);
        h.fake.clear_requests();
        let docs = h
            .search(connector, &request(question, 7))
            .await
            .unwrap_or_else(|e| panic!("{connector}: {e}"));
        assert_eq!(docs.len(), 7, "{connector} collects across pages");
        let urls: HashSet<&str> = docs.iter().map(|d| d.url.as_str()).collect();
        assert_eq!(urls.len(), 7, "{connector}: no record twice");
        let requests = h.fake.requests();
        let pages = searches(&requests, connector);
        let text = sent(&pages);
        // How each vendor asks for the next page.
        let next_page: &[&str] = match connector {
            "salesforce" => &["sobject=Case", "offset=3"],
            "microsoft-365" => &["\"from\":3", "\"from\":6"],
            "asana" => &["modified_at.before="],
            "trello" => &["cards_page=1", "cards_page=2"],
            "intercom" => &["\"starting_after\""],
            _ => unreachable!(),
        };
        for needle in next_page {
            assert!(
                text.contains(needle),
                "{connector}: {needle} not in\n{text}"
            );
        }
        match connector {
            // One type's first page, then the next pages of the others.
            "salesforce" => assert!((3..=6).contains(&pages.len()), "{}", pages.len()),
            // Files, then mails: the pages each kind's answers fill (at
            // most three, seven answers).
            "microsoft-365" => {
                let query = Query::parse(question);
                let expected: usize = [&["driveItem", "listItem"][..], &["message"][..]]
                    .iter()
                    .map(|kinds| {
                        let n = dataset::m365_items()
                            .iter()
                            .filter(|i| kinds.contains(&i.entity_type.as_str()))
                            .filter(|i| query.matches_text(&dataset::Record::searchable_text(*i)))
                            .count();
                        n.min(7).div_ceil(3)
                    })
                    .sum();
                assert_eq!(pages.len(), expected);
                assert!(expected >= 4);
            }
            _ => assert_eq!(pages.len(), 3, "{connector} read 3 pages"),
        }
    }
    // Asana pages by time: each page ends before the last task of the one
    // before, newest first.
    h.fake.clear_requests();
    let docs = h.search("asana", &request("launch", 7)).await.unwrap();
    let times: Vec<&str> = docs
        .iter()
        .map(|d| d.updated_at.as_deref().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] > w[1]), "{times:?}");
}

/// A question with answers inside and outside the first half of 2026.
fn ranged_question(connector: &str) -> &'static str {
    match connector {
        "asana" => "launch",
        _ => "checkout payment order customer invoice incident",
    }
}

#[tokio::test]
async fn time_ranges_reach_the_upstream() {
    let h = harness().await;
    let (lo, hi) = (unix("2026-01-01T00:00:00Z"), unix("2026-07-01T00:00:00Z"));
    for connector in NEW {
        let question = ranged_question(connector);
        let query = Query::parse(question);
        let matches_text = |text: &str| {
            if connector == "asana" {
                query.score_text(text) == query.terms.len()
            } else {
                query.matches_text(text)
            }
        };
        assert!(
            records(connector)
                .iter()
                .any(|r| matches_text(&r.2) && !(lo..hi).contains(&r.3)),
            "{connector}: the question has answers outside the range"
        );
        let mut bounded = request(question, 12);
        bounded.since = Some("2026-01-01T00:00:00Z".into());
        bounded.until = Some("2026-06-30T23:59:59Z".into());
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
        let text = sent(&searches(&requests, connector));
        let expected: &[&str] = match connector {
            "salesforce" => &[
                "Case.where=LastModifiedDate%20%3E%3D%202026-01-01T00%3A00%3A00Z%20AND%20LastModifiedDate%20%3C%3D%202026-06-30T23%3A59%3A59Z",
                "Account.where=LastModifiedDate%20%3E%3D%202026-01-01T00%3A00%3A00Z",
            ],
            // KQL restrictions on days, on each kind's own time.
            "microsoft-365" => &[
                "LastModifiedTime>=2026-01-01 AND LastModifiedTime<=2026-06-30",
                "received>=2026-01-01 AND received<=2026-06-30",
            ],
            "asana" => &[
                "modified_at.after=2025-12-31T23%3A59%3A59Z",
                "modified_at.before=2026-07-01T00%3A00%3A00Z",
            ],
            // Trello's search has no absolute dates: the range is applied
            // to the cards' last activity.
            "trello" => &[],
            "intercom" => &[
                "{\"field\":\"updated_at\",\"operator\":\">\",\"value\":1767225599}",
                "{\"field\":\"updated_at\",\"operator\":\"<\",\"value\":1782864000}",
            ],
            _ => unreachable!(),
        };
        for needle in expected {
            assert!(
                text.contains(needle),
                "{connector}: {needle} not in\n{text}"
            );
        }
    }
}

#[tokio::test]
async fn upstream_failures_map_to_connector_errors() {
    let h = harness().await;
    for connector in NEW {
        let host = api_host(connector);
        let fail = |fault: Fault| {
            h.fake.set_fault(
                host,
                Fault {
                    count: Some(1),
                    ..fault
                },
            )
        };
        fail(Fault {
            status: Some(429),
            retry_after: Some(17),
            ..Fault::default()
        });
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::RateLimited, "{connector}: {error}");
        assert_eq!(error.retry_after_seconds, Some(17), "{connector}");

        fail(Fault {
            status: Some(500),
            ..Fault::default()
        });
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Upstream, "{connector}: {error}");

        fail(Fault {
            status: Some(401),
            ..Fault::default()
        });
        let error = h
            .search(connector, &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{connector}: {error}");

        fail(Fault {
            body: Some("<html><body>Bad gateway</body></html>".into()),
            ..Fault::default()
        });
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
    // Salesforce says an exhausted API allocation with a 403.
    h.fake.set_fault(
        "acme.my.salesforce.com",
        Fault {
            status: Some(403),
            count: Some(1),
            ..Fault::default()
        },
    );
    let error = h
        .search("salesforce", &request("checkout", 5))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::RateLimited, "{error}");
    assert!(
        error.message.contains("REQUEST_LIMIT_EXCEEDED") || error.retry_after_seconds.is_none()
    );
}

#[tokio::test]
async fn a_bad_token_is_unauthorized_and_each_user_sends_their_own() {
    let h = harness().await;
    for connector in NEW {
        let error = h
            .search_as(connector, "mallory", &request("checkout", 5))
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{connector}: {error}");
    }
    for connector in NEW {
        h.fake.clear_requests();
        h.search_as(connector, "bob", &request("checkout", 3))
            .await
            .unwrap_or_else(|e| panic!("{connector}: {e}"));
        let expected = match connector {
            // The manifest's header, the credential as stored.
            "trello" => "fake-trello-bob".to_string(),
            _ => format!("Bearer fake-{connector}-bob"),
        };
        let requests = h.fake.requests();
        assert!(!requests.is_empty());
        assert!(
            requests
                .iter()
                .all(|r| r.header("authorization") == Some(expected.as_str())),
            "{connector}: {:?}",
            requests
                .iter()
                .map(|r| r.header("authorization"))
                .collect::<Vec<_>>()
        );
    }
}

#[tokio::test]
async fn trello_takes_its_key_and_token_as_the_authorization_header() {
    let h = harness().await;
    let credential = "OAuth oauth_consumer_key=\"0a1b2c3d4e5f\", oauth_token=\"fake-trello-alice\"";
    h.fake.clear_requests();
    let docs = h
        .registry
        .search(
            "trello",
            &request("apple pay", 5),
            Some(Secret::new(credential)),
        )
        .await
        .unwrap();
    assert!(!docs.is_empty());
    let requests = h.fake.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some(credential)
                && !r.query.as_deref().unwrap_or_default().contains("token"))
    );
    // Without the key, Trello refuses.
    let error = h
        .registry
        .search(
            "trello",
            &request("apple pay", 5),
            Some(Secret::new("OAuth oauth_token=\"fake-trello-alice\"")),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unauthorized, "{error}");
}

#[tokio::test]
async fn asana_without_premium_falls_back_to_typeahead() {
    let h = harness().await;
    h.fake.set_fault(
        "app.asana.com",
        Fault {
            status: Some(402),
            count: Some(1),
            ..Fault::default()
        },
    );
    h.fake.clear_requests();
    let docs = h.search("asana", &request("apple pay", 10)).await.unwrap();
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 2, "search (402), then typeahead");
    assert!(requests[0].path.ends_with("/tasks/search"));
    assert!(requests[1].path.ends_with("/typeahead"));
    assert!(
        requests[1]
            .query
            .as_deref()
            .unwrap()
            .contains("resource_type=task")
    );
    let task = dataset::asana_tasks()
        .iter()
        .find(|t| t.name == "Launch: Add Apple Pay to web checkout")
        .unwrap();
    let doc = find(&docs, &task.permalink_url);
    assert_eq!(doc.content, task.notes);
}

#[tokio::test]
async fn settings_are_checked_before_anything_leaves() {
    let h = harness().await;
    for (connector, name, bad) in [
        ("salesforce", "instance_url", "https://acme.evil.example/x"),
        ("asana", "workspace", "1201/../../users"),
        ("intercom", "workspace_id", "ac3m/../x"),
    ] {
        let mut without = request("checkout", 5);
        without.settings.retain(|(n, _)| n != name);
        if connector != "intercom" {
            let error = h.search(connector, &without).await.unwrap_err();
            assert_eq!(
                error.kind,
                ErrorKind::InvalidRequest,
                "{connector}: {error}"
            );
        }
        let mut tricky = without.clone();
        tricky.settings.push((name.into(), bad.into()));
        let error = h.search(connector, &tricky).await.unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::InvalidRequest,
            "{connector}: {error}"
        );
    }
    assert!(h.fake.requests().is_empty(), "nothing left the sandbox");

    // Intercom reads its workspace from the token unless told.
    let docs = h.search("intercom", &request("checkout", 3)).await.unwrap();
    assert!(h.fake.requests().iter().any(|r| r.path == "/me"));
    h.fake.clear_requests();
    let mut told = request("checkout", 3);
    told.settings
        .push(("workspace_id".into(), dataset::INTERCOM_APP_ID.into()));
    let again = h.search("intercom", &told).await.unwrap();
    assert!(h.fake.requests().iter().all(|r| r.path != "/me"));
    assert_eq!(
        docs.iter().map(|d| &d.url).collect::<Vec<_>>(),
        again.iter().map(|d| &d.url).collect::<Vec<_>>()
    );
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

#[test]
fn manifests_admit_exactly_the_requests_each_connector_needs() {
    use Method::{Get, Head, Post};
    let sf = "https://acme.my.salesforce.com/services/data";
    let ws = dataset::ASANA_WORKSPACE_GID;
    let graph_body =
        Some(r#"{"requests":[{"entityTypes":["message"],"query":{"queryString":"x"}}]}"#);
    let intercom_body = Some(
        r#"{"query":{"field":"source.body","operator":"~","value":"x"},"pagination":{"per_page":5}}"#,
    );
    type Case<'a> = (Method, String, Option<&'a str>);
    let cases: &[(&str, &[Case], &[Case])] = &[
        (
            "salesforce",
            &[
                (Get, format!("{sf}/v64.0/parameterizedSearch?q=x&sobject=Case"), None),
                (Get, "https://other-org.my.salesforce.com/services/data/v64.0/parameterizedSearch?q=x".into(), None),
                (Head, format!("{sf}/v64.0/parameterizedSearch"), None),
            ],
            &[
                (Post, format!("{sf}/v64.0/parameterizedSearch"), Some(r#"{"q":"x"}"#)),
                (Post, format!("{sf}/v64.0/sobjects/Case"), Some(r#"{"Subject":"x"}"#)),
                (Post, format!("{sf}/v64.0/composite"), Some("{}")),
                (Get, format!("{sf}/v64.0/query?q=SELECT+Id+FROM+User"), None),
                (Get, format!("{sf}/v64.0/sobjects/Case/5005g00000AbCdEfGH"), None),
                (Get, format!("{sf}/v63.0/parameterizedSearch?q=x"), None),
                (Get, "https://login.salesforce.com/services/oauth2/revoke?token=x".into(), None),
                (Get, "https://acme.my.salesforce.com.evil.example/services/data/v64.0/parameterizedSearch".into(), None),
            ],
        ),
        (
            "microsoft-365",
            &[(Post, "https://graph.microsoft.com/v1.0/search/query".into(), graph_body)],
            &[
                (Post, "https://graph.microsoft.com/v1.0/me/sendMail".into(), Some("{}")),
                (Post, "https://graph.microsoft.com/v1.0/me/revokeSignInSessions".into(), Some("{}")),
                (Post, "https://graph.microsoft.com/v1.0/me/drive/root/children".into(), Some("{}")),
                (Post, "https://graph.microsoft.com/beta/search/query".into(), graph_body),
                (Get, "https://graph.microsoft.com/v1.0/me/messages".into(), None),
                (Get, "https://graph.microsoft.com/v1.0/search/query".into(), None),
                (Post, "https://login.microsoftonline.com/common/oauth2/v2.0/token".into(), Some("grant_type=x")),
            ],
        ),
        (
            "asana",
            &[
                (Get, format!("https://app.asana.com/api/1.0/workspaces/{ws}/tasks/search?text=x"), None),
                (Get, format!("https://app.asana.com/api/1.0/workspaces/{ws}/typeahead?resource_type=task&query=x"), None),
            ],
            &[
                (Post, "https://app.asana.com/api/1.0/tasks".into(), Some(r#"{"data":{"name":"x"}}"#)),
                (Post, format!("https://app.asana.com/api/1.0/workspaces/{ws}/tasks/search"), Some("{}")),
                (Post, format!("https://app.asana.com/api/1.0/workspaces/{ws}/addUser"), Some("{}")),
                (Get, "https://app.asana.com/api/1.0/tasks/1204419982316573".into(), None),
                (Get, "https://app.asana.com/api/1.0/users/me".into(), None),
                (Post, "https://app.asana.com/-/oauth_revoke".into(), Some("token=x")),
            ],
        ),
        (
            "trello",
            &[(Get, "https://api.trello.com/1/search?query=x&modelTypes=cards".into(), None)],
            &[
                (Post, "https://api.trello.com/1/cards".into(), Some("{}")),
                (Post, "https://api.trello.com/1/search".into(), Some("{}")),
                (Get, "https://api.trello.com/1/members/me/boards".into(), None),
                (Get, "https://api.trello.com/1/tokens/x".into(), None),
                (Get, "https://trello.com/1/search?query=x".into(), None),
            ],
        ),
        (
            "intercom",
            &[
                (Post, "https://api.intercom.io/conversations/search".into(), intercom_body),
                (Get, "https://api.intercom.io/conversations/2150000011".into(), None),
                (Get, "https://api.intercom.io/me".into(), None),
            ],
            &[
                (Post, "https://api.intercom.io/conversations/2150000011/reply".into(), Some("{}")),
                (Post, "https://api.intercom.io/conversations/2150000011".into(), Some("{}")),
                (Post, "https://api.intercom.io/conversations".into(), Some("{}")),
                (Post, "https://api.intercom.io/contacts/search".into(), intercom_body),
                (Post, "https://api.intercom.io/auth/uninstall".into(), None),
                (Get, "https://api.intercom.io/contacts".into(), None),
                (Get, "https://api.intercom.io/conversations/1/parts".into(), None),
            ],
        ),
    ];
    for (connector, admitted, refused) in cases {
        let m = manifest(connector);
        assert_eq!(m.id, *connector);
        // POST only on query routes, and only where the vendor's search is one.
        for route in &m.routes {
            assert_eq!(
                route.method == Post,
                route.kind == quarry::connectors::manifest::RouteKind::Query,
                "{connector}: POST exactly on query routes"
            );
        }
        let posts = m.routes.iter().filter(|r| r.method == Post).count();
        let expected_posts = match *connector {
            "microsoft-365" | "intercom" => 1,
            _ => 0,
        };
        assert_eq!(posts, expected_posts, "{connector}");
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
        assert!(
            m.warnings().iter().all(|w| w.code != "scope-name"),
            "{connector}"
        );
    }
    // Scopes (all read-only: the manifest refuses others) and revocation
    // where the vendor has an endpoint a manifest can express.
    for (connector, scopes, revoke) in [
        (
            "salesforce",
            &[][..],
            Some((
                "https://login.salesforce.com/services/oauth2/revoke",
                "form",
            )),
        ),
        (
            "microsoft-365",
            &[
                "Files.Read.All",
                "Sites.Read.All",
                "Mail.Read",
                "offline_access",
            ][..],
            None,
        ),
        (
            "asana",
            &[
                "tasks:read",
                "projects:read",
                "users:read",
                "workspaces.typeahead:read",
            ][..],
            Some(("https://app.asana.com/-/oauth_revoke", "form")),
        ),
        ("trello", &["read"][..], None),
        (
            "intercom",
            &[][..],
            Some(("https://api.intercom.io/auth/uninstall", "bearer")),
        ),
    ] {
        let m = manifest(connector);
        let oauth = m.oauth.as_ref().expect("an [oauth] section");
        assert_eq!(oauth.scopes, scopes, "{connector}");
        assert!(oauth.authorize_url.starts_with("https://"), "{connector}");
        let got = oauth
            .revoke
            .as_ref()
            .map(|r| (r.url.as_str(), r.style.as_str()));
        assert_eq!(got, revoke, "{connector}");
    }
    // Trello's credential is its own Authorization header; the others' a
    // bearer token, sent only to the hosts of their routes.
    assert_eq!(
        manifest("trello").auth.scheme,
        AuthScheme::Header("authorization".into())
    );
    for connector in ["salesforce", "microsoft-365", "asana", "intercom"] {
        assert_eq!(manifest(connector).auth.scheme, AuthScheme::Bearer);
    }
}
