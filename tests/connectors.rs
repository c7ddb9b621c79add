//! Each connector against the fake upstreams: the right records with the
//! right citation URLs, pagination, and the vendors' failures mapped to
//! connector errors.

use std::collections::HashSet;

use fake_saas::{Fault, dataset};
use quarry::connectors::Document;
use quarry_tests::{Harness, assert_cited_once, request};

const ALL: [&str; 5] = ["github", "slack", "notion", "linear", "jira"];

async fn harness() -> Harness {
    Harness::start(&ALL).await
}

/// The citation URL of every record the fake holds, per connector.
fn citations(connector: &str) -> HashSet<String> {
    match connector {
        "github" => dataset::github_items()
            .iter()
            .map(|i| i.html_url.clone())
            .collect(),
        "slack" => dataset::slack_messages()
            .iter()
            .map(|m| m.permalink.clone())
            .collect(),
        "notion" => dataset::notion_pages()
            .iter()
            .map(|p| p.url.clone())
            .collect(),
        "linear" => dataset::linear_issues()
            .iter()
            .map(|i| i.url.clone())
            .collect(),
        "jira" => dataset::jira_issues()
            .iter()
            .map(|i| i.url.clone())
            .collect(),
        other => panic!("no dataset for {other}"),
    }
}

fn mentions(doc: &Document, term: &str) -> bool {
    let text = format!("{} {}", doc.title, doc.content).to_lowercase();
    text.contains(term)
}

#[tokio::test]
async fn every_connector_returns_cited_matching_records() {
    let h = harness().await;
    for connector in ALL {
        let docs = h
            .search(connector, &request("checkout", 20))
            .await
            .unwrap_or_else(|e| panic!("{connector}: {e}"));
        assert!(!docs.is_empty(), "{connector} found nothing for 'checkout'");
        assert_cited_once(connector, &docs, &citations(connector));
        for doc in &docs {
            assert!(
                mentions(doc, "checkout"),
                "{connector}: {:?} does not mention checkout",
                doc.title
            );
        }
    }
}

#[tokio::test]
async fn records_are_mapped_field_for_field() {
    let h = harness().await;
    let item = dataset::github_items()
        .iter()
        .find(|i| i.repo == "acme/shop" && !i.body.is_empty())
        .unwrap();
    let word = item
        .title
        .split_whitespace()
        .find(|w| w.len() > 6)
        .unwrap()
        .to_lowercase();
    let docs = h.search("github", &request(&word, 100)).await.unwrap();
    let doc = docs
        .iter()
        .find(|d| d.url == item.html_url)
        .expect("the record is found by a word of its title");
    assert_eq!(doc.id, format!("acme/shop#{}", item.number));
    assert_eq!(doc.title, item.title);
    assert_eq!(doc.content, item.body);
    assert_eq!(doc.author.as_deref(), Some(item.user_login.as_str()));

    let issue = &dataset::jira_issues()[0];
    let word = issue
        .summary
        .split_whitespace()
        .find(|w| w.len() > 6)
        .unwrap()
        .to_lowercase();
    let docs = h.search("jira", &request(&word, 100)).await.unwrap();
    let doc = docs
        .iter()
        .find(|d| d.id == issue.key)
        .expect("the Jira issue is found");
    assert_eq!(
        doc.url,
        format!("https://acme.atlassian.net/browse/{}", issue.key)
    );
    assert_eq!(
        doc.author.as_deref(),
        Some(issue.creator_display_name.as_str())
    );
    assert!(!doc.content.is_empty(), "the ADF description became text");

    let (page, word) = quarry_tests::notion_page_and_title_word();
    let docs = h.search("notion", &request(&word, 10)).await.unwrap();
    quarry_tests::assert_finds_notion_page(&docs, page);
}

#[tokio::test]
async fn connectors_follow_pagination() {
    let h = harness().await;
    // Vendors that hold at most 3 results a page: 7 results take 3 pages.
    // Jira says a page may hold fewer than asked; Linear pages by cursor.
    h.fake.set_fault(
        "*",
        Fault {
            max_page_size: Some(3),
            ..Fault::default()
        },
    );
    let question = "checkout payment order";
    for connector in ["linear", "jira"] {
        h.fake.clear_requests();
        let docs = h.search(connector, &request(question, 7)).await.unwrap();
        assert_eq!(docs.len(), 7, "{connector} collects across pages");
        let search_calls = h
            .fake
            .requests()
            .iter()
            .filter(|r| !r.path.ends_with("accessible-resources"))
            .count();
        assert_eq!(
            search_calls, 3,
            "{connector} asked for every page it needed"
        );
    }
}

/// GitHub, Slack and Notion ask for all they want in one page per query
/// (their vendors answer up to 100 a page), the queries together: one
/// round trip.
#[tokio::test]
async fn one_page_per_query_in_one_batch() {
    let h = harness().await;
    let question = "checkout payment order";
    for connector in ["github", "slack", "notion"] {
        h.fake.clear_requests();
        let docs = h.search(connector, &request(question, 7)).await.unwrap();
        assert!(!docs.is_empty(), "{connector} found nothing");
        let requests = h.fake.requests();
        let searches: Vec<_> = requests
            .iter()
            .filter(|r| !r.path.contains("/blocks/"))
            .collect();
        assert!(
            searches.len() >= 2,
            "{connector}: {} searches",
            searches.len()
        );
        let first = searches.iter().map(|r| r.received_ms).min().unwrap();
        assert!(
            searches.iter().all(|r| r.received_ms < first + 150),
            "{connector}: the searches went out together"
        );
        for search in &searches {
            let sent = format!(
                "{} {}",
                search.query.clone().unwrap_or_default(),
                search.body_text()
            );
            assert!(
                !sent.contains("page=2") && !sent.contains("start_cursor"),
                "{connector}: {sent}"
            );
        }
    }
}

#[tokio::test]
async fn upstream_failures_map_to_connector_errors() {
    let h = harness().await;
    let hosts = [
        ("github", "api.github.com"),
        ("slack", "slack.com"),
        ("notion", "api.notion.com"),
        ("linear", "api.linear.app"),
        ("jira", "api.atlassian.com"),
    ];
    for (connector, host) in hosts {
        h.assert_common_failures_mapped(connector, host, &request("checkout", 5))
            .await;
    }
}

#[tokio::test]
async fn a_bad_or_revoked_token_is_unauthorized() {
    let h = harness().await;
    for connector in ALL {
        h.assert_bad_token_unauthorized(connector, &request("checkout", 5))
            .await;
    }
}

#[tokio::test]
async fn time_ranges_reach_the_upstream() {
    let h = harness().await;
    let mut recent = request("checkout", 50);
    recent.since = Some("2026-06-01T00:00:00Z".into());
    for connector in ALL {
        let docs = h.search(connector, &recent).await.unwrap();
        for doc in docs {
            let updated = doc.updated_at.unwrap();
            assert!(
                updated.as_str() >= "2026-06-01",
                "{connector}: {} updated {updated}",
                doc.url
            );
        }
    }
    let github = h
        .fake
        .requests()
        .into_iter()
        .find(|r| r.host == "api.github.com")
        .unwrap();
    assert!(
        github.query.unwrap().contains("updated%3A%3E%3D2026-06-01"),
        "GitHub gets an updated: qualifier"
    );
}

#[tokio::test]
async fn the_credential_is_the_users_own() {
    let h = harness().await;
    h.search_as("slack", "bob", &request("invoice", 5))
        .await
        .unwrap();
    let seen = h.fake.requests();
    assert!(
        seen.iter()
            .all(|r| r.header("authorization") == Some("Bearer fake-slack-bob"))
    );
}
