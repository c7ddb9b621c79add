//! End-to-end tests: start the fake in-process and call it over HTTPS with reqwest.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use fake_saas::dataset;
use fake_saas::search;
use fake_saas::{FakeSaas, Fault};
use reqwest::{Client, Method, StatusCode};

mod common;

use common::{
    Caller, access_token, client_for, consent_code, get_json, get_status, json_of, redirect_param,
    revoke_by_form, send, start,
};
use serde_json::{Value, json};

// ------------------------------------------------------------------------------------ TLS

#[tokio::test]
async fn serves_every_host_over_h2_and_http1() {
    let (fake, client) = start().await;
    let github = Caller::new(&client, "fake-github-alice");
    let r = github
        .get("https://api.github.com/search/issues?q=checkout%20is%3Aissue")
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_2);

    let slack_over_h1 = Caller::new(&client_for(&fake, true), "fake-slack-bob");
    let r = slack_over_h1
        .post_form(
            "https://slack.com/api/search.messages",
            &[("query", "invoice retry")],
        )
        .await;
    assert_eq!(r.version(), reqwest::Version::HTTP_11);
    assert_eq!(json_of(r).await["ok"], true);

    let anyone = Caller::anonymous(&client);
    for host in FakeSaas::hosts() {
        let r = anyone.get(format!("https://{host}/_fake/health")).await;
        assert_eq!(r.status(), 200, "{host}");
    }
    // Every host plays its vendor now: Graph without a token is Graph's 401.
    let r = anyone
        .post("https://graph.microsoft.com/v1.0/search/query")
        .await;
    assert_eq!(r.status(), 401);
    assert_eq!(
        json_of(r).await["error"]["code"],
        "InvalidAuthenticationToken"
    );
    assert!(
        fake.ca_cert_pem()
            .starts_with("-----BEGIN CERTIFICATE-----")
    );
    fake.shutdown().await;
}

// --------------------------------------------------------------------------------- GitHub

/// What `vendor`'s search for `terms` should find among `records`, as its
/// declaration says the vendor matches: the key of each record whose text
/// matches.
fn matching<'a, R: 'a>(
    vendor: &str,
    records: impl IntoIterator<Item = &'a R>,
    terms: &str,
    text: impl Fn(&R) -> String,
    key: impl Fn(&R) -> String,
) -> HashSet<String> {
    let engine = search::declared(vendor);
    let query = engine.parse(terms).expect("a query the vendor reads");
    records
        .into_iter()
        .filter(|r| engine.matches_text(&query, &text(r)))
        .map(key)
        .collect()
}

fn github_expected(q: &str, filter: impl Fn(&dataset::GithubItem) -> bool) -> HashSet<String> {
    let items = dataset::github_items().iter().filter(|i| filter(i));
    matching(
        "github",
        items,
        q,
        |i| format!("{}\n{}", i.title, i.body),
        |i| i.html_url.clone(),
    )
}

fn next_link(r: &reqwest::Response) -> Option<String> {
    let link = r.headers().get("link")?.to_str().ok()?.to_string();
    link.split(", ").find_map(|part| {
        part.ends_with("rel=\"next\"")
            .then(|| part[1..part.find('>').unwrap()].to_string())
    })
}

#[tokio::test]
async fn github_search_pages_and_filters() {
    let (fake, client) = start().await;
    // GitHub needs every word unless told otherwise: OR.
    let expected = github_expected("checkout OR timeout", |i| {
        !i.is_pull_request && i.repo == "acme/shop"
    });
    assert!(expected.len() > 4, "{expected:?}");

    let alice = Caller::new(&client, "fake-github-alice");
    let versioned = alice
        .clone()
        .with_header("X-GitHub-Api-Version", "2022-11-28")
        .with_header("Accept", "application/vnd.github+json");
    let mut url = "https://api.github.com/search/issues?q=checkout%20OR%20timeout%20is%3Aissue%20repo%3Aacme%2Fshop&per_page=3&page=1&sort=updated&order=desc".to_string();
    let mut seen = HashSet::new();
    let mut pages = 0;
    loop {
        let r = versioned.get(&url).await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["x-ratelimit-resource"], "search");
        let next = next_link(&r);
        if pages == 0 {
            let link = r.headers()["link"].to_str().unwrap();
            assert!(link.contains("rel=\"last\""), "{link}");
        }
        let body = json_of(r).await;
        assert_eq!(
            body["total_count"].as_u64().unwrap() as usize,
            expected.len()
        );
        assert_eq!(body["incomplete_results"], false);
        for item in body["items"].as_array().unwrap() {
            assert!(item.get("pull_request").is_none());
            assert!(item["html_url"].as_str().unwrap().contains("/issues/"));
            assert!(item["user"]["login"].is_string());
            assert!(item["score"].is_number());
            seen.insert(item["html_url"].as_str().unwrap().to_string());
        }
        pages += 1;
        match next {
            Some(n) => url = n,
            None => break,
        }
    }
    assert_eq!(seen, expected);
    assert!(pages >= 2);

    // The best match ranks first: the issue with both terms in its title.
    let search = "https://api.github.com/search/issues";
    let best_first = [
        ("q", "checkout times out 50 items is:issue"),
        ("per_page", "5"),
    ];
    let bob = Caller::new(&client, "fake-github-bob");
    let body = json_of(bob.get_with(search, &best_first).await).await;
    assert_eq!(
        body["items"][0]["title"],
        "Checkout times out with more than 50 items"
    );

    // PRs carry pull_request.html_url and mention the Jira key.
    let prs = [("q", "invoice OR retry OR idempotent is:pr")];
    let body = json_of(alice.get_with(search, &prs).await).await;
    let pr = &body["items"][0];
    let pr_url = pr["pull_request"]["html_url"].as_str().unwrap();
    assert!(pr_url.contains("/pull/"));
    let story = dataset::stories()
        .iter()
        .find(|s| s.slug == "invoice-retry-double-charge")
        .unwrap();
    assert_eq!(pr["html_url"].as_str(), story.github_pr_url.as_deref());
    let title = pr["title"].as_str().unwrap();
    assert!(title.starts_with(story.jira_key.as_deref().unwrap()));

    // Time qualifiers.
    let first_half_of_2026 = [
        (
            "q",
            "checkout is:issue updated:>=2026-01-01 updated:<=2026-06-30",
        ),
        ("per_page", "100"),
    ];
    let body = json_of(alice.get_with(search, &first_half_of_2026).await).await;
    let expected = github_expected("checkout", |i| {
        !i.is_pull_request
            && i.updated_at.as_str() >= "2026-01-01"
            && i.updated_at.as_str() < "2026-07-01"
    });
    assert_eq!(
        body["total_count"].as_u64().unwrap() as usize,
        expected.len()
    );
    for it in body["items"].as_array().unwrap() {
        let u = it["updated_at"].as_str().unwrap();
        assert!(("2026-01-01".."2026-07-01").contains(&u), "{u}");
    }
    fake.shutdown().await;
}

/// GitHub's 422 to the search `q`: its first error's message, and the body.
async fn unprocessable(alice: &Caller, search: &str, q: &str) -> (String, Value) {
    let r = alice.get_with(search, &[("q", q)]).await;
    assert_eq!(r.status(), 422);
    let body = json_of(r).await;
    let message = body["errors"][0]["message"].as_str().unwrap().to_string();
    (message, body)
}

#[tokio::test]
async fn github_rejections() {
    let (fake, client) = start().await;
    let alice = Caller::new(&client, "fake-github-alice");
    // A GitHub App user token's search must say issues or pull requests,
    // and may hold at most five AND/OR/NOT.
    let search = "https://api.github.com/search/issues";
    let (message, body) = unprocessable(&alice, search, "checkout").await;
    assert!(message.contains("is:issue"), "{body}");
    let six = "a OR b OR c OR d OR e OR f OR g is:issue";
    let (message, body) = unprocessable(&alice, search, six).await;
    assert!(
        message.contains("five") || body.to_string().contains("5"),
        "{body}"
    );
    let five = "a OR b OR c OR d OR e OR f is:issue";
    assert_eq!(alice.get_with(search, &[("q", five)]).await.status(), 200);
    // Both published API versions are served; the newer one without `assignee`.
    let newer = alice
        .clone()
        .with_header("X-GitHub-Api-Version", "2026-03-10");
    let body = json_of(newer.get_with(search, &[("q", "checkout is:issue")]).await).await;
    assert_eq!(body["search_type"], "lexical");
    assert!(body["items"][0].get("assignee").is_none(), "{body}");

    let search = "https://api.github.com/search/issues?q=x";
    let r = Caller::anonymous(&client).get(search).await;
    assert_eq!(r.status(), 401);
    let b = json_of(r).await;
    assert_eq!(b["message"], "Bad credentials");
    assert_eq!(b["status"], "401");
    assert!(b["documentation_url"].is_string());

    let not_github = get_status(&client, search, "fake-slack-alice").await;
    assert_eq!(not_github, 401);

    let alice = Caller::new(&client, "fake-github-alice");
    let old_version = alice
        .clone()
        .with_header("X-GitHub-Api-Version", "2021-01-01");
    assert_eq!(old_version.get(search).await.status(), 400);

    let no_query = alice.get("https://api.github.com/search/issues").await;
    assert_eq!(no_query.status(), 422);

    let no_ua = Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(fake.ca_cert_pem().as_bytes()).unwrap(),
        )
        .resolve("api.github.com", fake.addr())
        .build()
        .unwrap();
    let r = Caller::new(&no_ua, "fake-github-alice").get(search).await;
    assert_eq!(r.status(), 403);
    fake.shutdown().await;
}

// ---------------------------------------------------------------------------------- Slack

#[tokio::test]
async fn slack_search_messages() {
    let (fake, client) = start().await;
    let messages = dataset::slack_messages();
    let expected = matching(
        "slack",
        messages,
        "invoice retry",
        |m| m.text.clone(),
        |m| m.permalink.clone(),
    );
    assert!(expected.len() > 3);
    let search = "https://slack.com/api/search.messages";
    let alice = Caller::new(&client, "fake-slack-alice");
    let mut seen = HashSet::new();
    let mut page = 1;
    loop {
        let page_param = page.to_string();
        let params = [
            ("query", "invoice retry"),
            ("count", "3"),
            ("page", &page_param),
        ];
        let r = alice.get_with(search, &params).await;
        assert_eq!(r.status(), 200);
        let b = json_of(r).await;
        assert_eq!(b["ok"], true);
        assert_eq!(b["query"], "invoice retry");
        let m = &b["messages"];
        assert_eq!(m["total"].as_u64().unwrap() as usize, expected.len());
        assert_eq!(m["paging"]["count"], 3);
        assert_eq!(m["paging"]["page"], page);
        assert_eq!(m["pagination"]["per_page"], 3);
        assert_eq!(m["pagination"]["first"], (page - 1) * 3 + 1);
        for x in m["matches"].as_array().unwrap() {
            let ts = x["ts"].as_str().unwrap();
            let chan = x["channel"]["id"].as_str().unwrap();
            assert_eq!(
                x["permalink"].as_str().unwrap(),
                format!(
                    "https://acme.slack.com/archives/{chan}/p{}",
                    ts.replace('.', "")
                )
            );
            assert!(x["channel"]["name"].is_string());
            assert!(x["user"].as_str().unwrap().starts_with('U'));
            seen.insert(x["permalink"].as_str().unwrap().to_string());
        }
        if page >= m["paging"]["pages"].as_u64().unwrap() {
            break;
        }
        page += 1;
    }
    assert_eq!(seen, expected);

    // The fixture's message is there, with in: and from: filters.
    let fixture = [(
        "query",
        "invoice retry job paused until Monday in:#billing-eng from:@priya",
    )];
    let r = Caller::new(&client, "fake-slack-bob")
        .post_form(search, &fixture)
        .await;
    let b = json_of(r).await;
    let first = &b["messages"]["matches"][0];
    assert_eq!(first["text"], "The invoice retry job is paused until Monday. I filed <https://acme.atlassian.net/browse/ACME-125|ACME-125>.".replace("ACME-125", dataset::stories().iter().find(|s| s.slug == "invoice-retry-double-charge").unwrap().jira_key.as_deref().unwrap()));
    assert_eq!(first["channel"]["id"], "C024BE91L");
    assert_eq!(first["user"], "U061F7AUR");
    let matches = b["messages"]["matches"].as_array().unwrap();
    assert!(matches.iter().all(|m| m["username"] == "priya"));

    let (status, body) = get_json(&client, format!("{search}?query=x"), "nope").await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"ok": false, "error": "invalid_auth"}));
    let r = Caller::anonymous(&client)
        .get(format!("{search}?query=x"))
        .await;
    assert_eq!(json_of(r).await["error"], "invalid_auth");
    fake.shutdown().await;
}

// --------------------------------------------------------------------------------- Notion

/// The plain-text title of a page in Notion's answer.
fn notion_title(page: &Value) -> &str {
    page["properties"]["title"]["title"][0]["plain_text"]
        .as_str()
        .unwrap()
}

#[tokio::test]
async fn notion_search_and_blocks() {
    let (fake, client) = start().await;
    let search_url = "https://api.notion.com/v1/search";
    let alice = Caller::new(&client, "fake-notion-alice");
    let notion = alice.clone().with_header("Notion-Version", "2025-09-03");
    let search = |body| notion.post_for_json(search_url, body);
    let (_, b) =
        search(json!({"query": "launch plan", "filter": {"property": "object", "value": "page"}}))
            .await;
    let results = b["results"].as_array().unwrap();
    let titles: Vec<&str> = results.iter().map(notion_title).collect();
    assert!(titles.contains(&"Q3 launch plan"), "{titles:?}");
    assert_eq!(b["type"], "page_or_data_source");
    let q3 = results
        .iter()
        .find(|p| notion_title(p) == "Q3 launch plan")
        .unwrap();
    let id = q3["id"].as_str().unwrap();
    assert_eq!(
        q3["url"].as_str().unwrap(),
        format!(
            "https://www.notion.so/Q3-launch-plan-{}",
            id.replace('-', "")
        )
    );
    assert_eq!(q3["object"], "page");
    assert_eq!(q3["parent"]["workspace"], true);

    // Titles only: "PagerDuty" is only in page bodies.
    let (_, b) = search(json!({"query": "PagerDuty"})).await;
    assert_eq!(b["results"].as_array().unwrap().len(), 0);

    // Cursor pagination over every page.
    let total = dataset::notion_pages().len();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    loop {
        let mut body = json!({"page_size": 7, "sort": {"timestamp": "last_edited_time", "direction": "descending"}});
        if let Some(c) = &cursor {
            body["start_cursor"] = json!(c);
        }
        let (_, b) = search(body).await;
        for p in b["results"].as_array().unwrap() {
            assert!(seen.insert(p["id"].as_str().unwrap().to_string()));
        }
        if b["has_more"] == false {
            assert!(b["next_cursor"].is_null());
            break;
        }
        cursor = Some(b["next_cursor"].as_str().unwrap().to_string());
    }
    assert_eq!(seen.len(), total);

    // Blocks of the Q3 plan, two pages.
    let page = dataset::notion_pages().iter().find(|p| p.id == id).unwrap();
    let bob = Caller::new(&client, "fake-notion-bob").with_header("Notion-Version", "2022-06-28");
    let mut texts = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!(
            "https://api.notion.com/v1/blocks/{}/children?page_size=4",
            id.replace('-', "")
        );
        if let Some(c) = &cursor {
            url.push_str(&format!("&start_cursor={c}"));
        }
        let b = json_of(bob.get(&url).await).await;
        for blk in b["results"].as_array().unwrap() {
            let t = blk["type"].as_str().unwrap();
            assert!(["paragraph", "heading_2", "bulleted_list_item"].contains(&t));
            let text = blk[t]["rich_text"][0]["plain_text"].as_str().unwrap();
            texts.push(text.to_string());
        }
        if b["has_more"] == false {
            break;
        }
        cursor = Some(b["next_cursor"].as_str().unwrap().to_string());
    }
    let written: Vec<String> = page.blocks.iter().map(|b| b.text.clone()).collect();
    assert_eq!(texts, written);

    let (status, b) = alice.post_for_json(search_url, json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(b["code"], "missing_version");
    let (status, b) = Caller::anonymous(&client)
        .with_header("Notion-Version", "2025-09-03")
        .post_for_json(search_url, json!({}))
        .await;
    assert_eq!(status, 401);
    assert_eq!(b["object"], "error");
    assert_eq!(b["code"], "unauthorized");
    assert_eq!(b["message"], "API token is invalid.");
    fake.shutdown().await;
}

// --------------------------------------------------------------------------------- Linear

#[tokio::test]
async fn linear_graphql() {
    let (fake, client) = start().await;
    let graphql = "https://api.linear.app/graphql";
    let query = "query Search($term: String!, $first: Int, $after: String) {
        searchIssues(term: $term, first: $first, after: $after) {
          nodes { id identifier title description url createdAt updatedAt creator { name } state { name } }
          pageInfo { hasNextPage endCursor }
        }
      }";
    let expected = matching(
        "linear",
        dataset::linear_issues(),
        "checkout",
        |i| format!("{}\n{}", i.title, i.description),
        |i| i.url.clone(),
    );
    assert!(expected.len() >= 3);
    let alice = Caller::new(&client, "fake-linear-alice");
    let mut after = Value::Null;
    let mut seen = HashSet::new();
    loop {
        let variables = json!({"term": "checkout", "first": 2, "after": after});
        let request = json!({"query": query, "variables": variables});
        let (_, b) = alice.post_for_json(graphql, request).await;
        let s = &b["data"]["searchIssues"];
        for n in s["nodes"].as_array().unwrap() {
            assert!(n["identifier"].as_str().unwrap().starts_with("ENG-"));
            let url = n["url"].as_str().unwrap();
            assert!(url.starts_with("https://linear.app/acme/issue/ENG-"));
            assert!(n["creator"]["name"].is_string());
            assert!(n["state"]["name"].is_string());
            assert!(n.get("priority").is_none(), "only the selected fields");
            seen.insert(url.to_string());
        }
        if s["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = s["pageInfo"]["endCursor"].clone();
    }
    assert_eq!(seen, expected);

    // Inline literal arguments.
    let inline = json!({"query": "{ searchIssues(term: \"Android 15 crash\", first: 1) { nodes { identifier title } } }"});
    let bob = Caller::new(&client, "fake-linear-bob");
    let (_, b) = bob.post_for_json(graphql, inline).await;
    assert_eq!(
        b["data"]["searchIssues"]["nodes"][0]["title"],
        "Mobile app crashes on Android 15 when opening order history"
    );

    // Mutations are refused, but recorded.
    fake.clear_requests();
    let mutation = json!({"query": "mutation { issueDelete(id: \"x\") { success } }"});
    let (status, b) = alice.post_for_json(graphql, mutation).await;
    assert_eq!(status, 400);
    let message = b["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("mutation"));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].body_text().contains("issueDelete"));

    let viewer = json!({"query": "{ viewer { id } }"});
    let (status, b) = Caller::anonymous(&client)
        .post_for_json(graphql, viewer)
        .await;
    assert_eq!(status, 401);
    assert_eq!(b["errors"][0]["extensions"]["code"], "AUTHENTICATION_ERROR");
    fake.shutdown().await;
}

// ----------------------------------------------------------------------------------- Jira

#[tokio::test]
async fn jira_search_jql() {
    let (fake, client) = start().await;
    let resources = "https://api.atlassian.com/oauth/token/accessible-resources";
    let (_, b) = get_json(&client, resources, "fake-jira-alice").await;
    assert_eq!(b[0]["url"], "https://acme.atlassian.net");
    let cloud = b[0]["id"].as_str().unwrap().to_string();
    assert_eq!(cloud, dataset::JIRA_CLOUD_ID);

    let base = format!("https://api.atlassian.com/ex/jira/{cloud}/rest/api/3/search/jql");
    let jql = r#"text ~ "invoice OR retry" AND updated >= "2025-01-01" ORDER BY updated DESC"#;
    let expected = matching(
        "jira",
        dataset::jira_issues(),
        "invoice OR retry",
        |i| format!("{}\n{}", i.summary, i.description),
        |i| i.key.clone(),
    );
    assert!(expected.len() >= 3, "{expected:?}");
    let bob = Caller::new(&client, "fake-jira-bob");
    let mut token: Option<String> = None;
    let mut seen = HashSet::new();
    loop {
        let mut params = vec![
            ("jql", jql.to_string()),
            (
                "fields",
                "summary,description,creator,created,updated".to_string(),
            ),
            ("maxResults", "2".to_string()),
        ];
        if let Some(t) = &token {
            params.push(("nextPageToken", t.clone()));
        }
        let b = json_of(bob.get_with(&base, &params).await).await;
        for i in b["issues"].as_array().unwrap() {
            let f = &i["fields"];
            assert!(i["key"].as_str().unwrap().starts_with("ACME-"));
            assert!(f["summary"].is_string());
            assert_eq!(f["description"]["type"], "doc");
            assert_eq!(f["description"]["content"][0]["type"], "paragraph");
            assert!(f["description"]["content"][0]["content"][0]["text"].is_string());
            assert!(f["creator"]["displayName"].is_string());
            assert!(f["created"].as_str().unwrap().ends_with(".000+0000"));
            assert!(f.get("status").is_none());
            seen.insert(i["key"].as_str().unwrap().to_string());
        }
        if b["isLast"] == true {
            assert!(b.get("nextPageToken").is_none());
            break;
        }
        token = Some(b["nextPageToken"].as_str().unwrap().to_string());
    }
    assert_eq!(seen, expected);

    // No fields: ids only.
    let ids_only = [("jql", "project = ACME AND text ~ checkout")];
    let b = json_of(bob.get_with(&base, &ids_only).await).await;
    let first = b["issues"][0].as_object().unwrap();
    assert_eq!(first.keys().collect::<Vec<_>>(), vec!["id"]);

    // POST variant and date bounds.
    let first_quarter = json!({"jql": "updated >= \"2026-01-01\" AND updated <= \"2026-03-31\" ORDER BY updated ASC", "fields": ["summary", "updated"], "maxResults": 50});
    let (_, b) = bob.post_for_json(&base, first_quarter).await;
    let ups: Vec<&str> = b["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fields"]["updated"].as_str().unwrap())
        .collect();
    assert!(!ups.is_empty());
    assert!(ups.windows(2).all(|w| w[0] <= w[1]), "{ups:?}");
    assert!(ups.iter().all(|u| ("2026-01-01".."2026-03-31").contains(u)));

    let other_site = "https://api.atlassian.com/ex/jira/00000000-0000-4000-8000-000000000000/rest/api/3/search/jql?jql=text~x";
    assert_eq!(bob.get(other_site).await.status(), 404);
    let r = Caller::anonymous(&client)
        .get_with(&base, &[("jql", "text ~ x")])
        .await;
    assert_eq!(r.status(), 401);
    assert_eq!(
        json_of(r).await,
        json!({"code": 401, "message": "Unauthorized"})
    );
    let no_clause = [("jql", "ORDER BY updated DESC")];
    assert_eq!(bob.get_with(&base, &no_clause).await.status(), 400);
    fake.shutdown().await;
}

// ------------------------------------------------------------------- faults and recording

/// A fault on every request to a host until `count` have had it (`None`: until cleared).
fn fault(fault: Fault, count: Option<u32>) -> Fault {
    Fault { count, ..fault }
}

#[tokio::test]
async fn faults_latency_and_recording() {
    let (fake, client) = start().await;
    let github = Caller::new(&client, "fake-github-alice");
    let search = || github.get("https://api.github.com/search/issues?q=checkout%20is%3Aissue");
    let answering = |status: u16| Fault {
        status: Some(status),
        ..Default::default()
    };
    fake.set_fault(
        "api.github.com",
        Fault {
            retry_after: Some(7),
            ..fault(answering(429), Some(1))
        },
    );
    let r = search().await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "7");
    assert_eq!(r.headers()["x-ratelimit-remaining"], "0");
    let message = json_of(r).await["message"].as_str().unwrap().to_string();
    assert!(message.contains("rate limit"));
    assert_eq!(search().await.status(), 200);

    fake.set_fault("slack.com", fault(answering(429), Some(2)));
    let slack = Caller::new(&client, "fake-slack-alice");
    let slack_search = "https://slack.com/api/search.messages?query=x";
    for _ in 0..2 {
        let r = slack.get(slack_search).await;
        assert_eq!(r.status(), 429);
        assert!(r.headers().contains_key("retry-after"));
        assert_eq!(
            json_of(r).await,
            json!({"ok": false, "error": "ratelimited"})
        );
    }

    fake.set_fault("api.notion.com", fault(answering(500), None));
    for _ in 0..3 {
        let r = Caller::anonymous(&client)
            .post("https://api.notion.com/v1/search")
            .await;
        assert_eq!(r.status(), 500);
        assert_eq!(json_of(r).await["code"], "internal_server_error");
    }
    fake.clear_faults();

    let redirect = Fault {
        redirect_to: Some("https://evil.example/x".into()),
        ..Default::default()
    };
    fake.set_fault("api.github.com", fault(redirect, Some(1)));
    let r = search().await;
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "https://evil.example/x");

    let oversize = Fault {
        oversize_bytes: Some(3_000_000),
        ..Default::default()
    };
    fake.set_fault("api.github.com", fault(oversize, Some(1)));
    let r = search().await;
    assert_eq!(r.status(), 200);
    let bytes = r.bytes().await.unwrap();
    assert_eq!(bytes.len(), 3_000_000);
    assert!(serde_json::from_slice::<Value>(&bytes).is_ok());

    let slow = Fault {
        latency: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    fake.set_fault("api.github.com", fault(slow, Some(1)));
    let t = Instant::now();
    assert_eq!(search().await.status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(300));

    fake.set_latency(Duration::from_millis(150));
    let t = Instant::now();
    assert_eq!(search().await.status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(150));
    fake.set_latency(Duration::ZERO);

    // Recording: every vendor request, before faults, with headers and body.
    fake.clear_requests();
    fake.set_fault("api.linear.app", fault(answering(503), Some(1)));
    let viewer = json!({"query": "{ viewer { id } }"});
    let linear = Caller::new(&client, "fake-linear-alice");
    let r = linear
        .post_json("https://api.linear.app/graphql", &viewer)
        .await;
    assert_eq!(r.status(), 503);
    let anyone = Caller::anonymous(&client);
    anyone.get("https://api.linear.app/_fake/health").await;
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].host, "api.linear.app");
    assert_eq!(reqs[0].path, "/graphql");
    assert_eq!(
        reqs[0].header("authorization"),
        Some("Bearer fake-linear-alice")
    );
    assert!(reqs[0].headers.iter().all(|(n, _)| n == &n.to_lowercase()));
    assert!(reqs[0].body_text().contains("viewer"));

    // The control API over HTTP.
    let via = "https://api.github.com/_fake";
    let b = json_of(anyone.get(format!("{via}/requests")).await).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
    let slack_fails = json!({"host": "slack.com", "status": 500, "count": 1, "latency_ms": 10});
    let r = anyone
        .post_json(format!("{via}/faults"), &slack_fails)
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(slack.get(slack_search).await.status(), 500);
    let cleared = anyone.delete(format!("{via}/requests")).await;
    assert_eq!(cleared.status(), 204);
    assert!(fake.requests().is_empty());
    let no_latency = anyone
        .post_json(format!("{via}/latency"), &json!({"ms": 0}))
        .await;
    assert_eq!(no_latency.status(), 200);
    let cleared = anyone.delete(format!("{via}/faults")).await;
    assert_eq!(cleared.status(), 204);
    fake.shutdown().await;
}

// ----------------------------------------------------------------- OAuth and revocation

/// Trades a GitHub refresh token at the token endpoint; the JSON answer.
async fn github_refresh(client: &Client, refresh: &str) -> Value {
    let grant = [
        ("client_id", "Iv1.quarry"),
        ("client_secret", "shh"),
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh),
    ];
    github_token(client, &grant).await
}

/// A POST to GitHub's token endpoint, which answers in JSON when asked to.
async fn github_token(client: &Client, form: &[(&str, &str)]) -> Value {
    let github = Caller::anonymous(client).with_header("Accept", "application/json");
    let r = github
        .post_form("https://github.com/login/oauth/access_token", form)
        .await;
    json_of(r).await
}

/// Revokes a GitHub token as its OAuth app; the status.
async fn github_revoke(client: &Client, token: &str) -> StatusCode {
    let app = Caller::anonymous(client);
    let revocation = app
        .request(
            Method::DELETE,
            "https://api.github.com/applications/Iv1.quarry/token",
        )
        .basic_auth("Iv1.quarry", Some("shh"))
        .json(&json!({ "access_token": token }));
    send(revocation).await.status()
}

#[tokio::test]
async fn github_oauth_refresh_and_revoke() {
    let (fake, client) = start().await;
    let github = Caller::anonymous(&client);
    let authorize = "https://github.com/login/oauth/authorize";
    // PKCE S256 (challenge = base64url(sha256(verifier))).
    let verifier = "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = "ngF5GsXcbwljx6u133FFr3Xht9xooA_DuaX_3QwODtc";
    let consent = [
        ("client_id", "Iv1.quarry"),
        ("redirect_uri", "https://quarry.example/oauth/callback"),
        ("state", "st4te"),
        ("scope", ""),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ];
    let r = github.get_with(authorize, &consent).await;
    assert_eq!(r.status(), 302);
    let location = r.headers()["location"].to_str().unwrap();
    assert!(location.starts_with("https://quarry.example/oauth/callback?"));
    assert_eq!(redirect_param(&r, "state"), "st4te");
    let code = redirect_param(&r, "code");

    // Wrong verifier fails and burns the code, like a real server.
    let wrong_verifier = [
        ("client_id", "Iv1.quarry"),
        ("client_secret", "s"),
        ("code", code.as_str()),
        ("code_verifier", "wrong"),
    ];
    let bad = github_token(&client, &wrong_verifier).await;
    assert_eq!(bad["error"], "bad_verification_code");

    let consent = [
        ("client_id", "Iv1.quarry"),
        ("redirect_uri", "https://quarry.example/cb"),
        ("state", "s2"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ];
    let code = consent_code(&client, authorize, &consent).await;
    let grant = [
        ("client_id", "Iv1.quarry"),
        ("client_secret", "shh"),
        ("code", code.as_str()),
        ("redirect_uri", "https://quarry.example/cb"),
        ("code_verifier", verifier),
    ];
    let tok = github_token(&client, &grant).await;
    assert_eq!(tok["token_type"], "bearer", "{tok}");
    assert_eq!(tok["expires_in"], 28800);
    let access = access_token(&tok);
    let refresh = tok["refresh_token"].as_str().unwrap().to_string();
    assert!(access.starts_with("ghu_"));
    let search = "https://api.github.com/search/issues?q=checkout%20is%3Aissue";
    let status_with = |t: String| {
        let github = Caller::new(&client, &t);
        async move { github.get(search).await.status() }
    };
    assert_eq!(status_with(access.clone()).await, 200);

    // Refresh rotates the refresh token.
    let tok2 = github_refresh(&client, &refresh).await;
    let access2 = access_token(&tok2);
    assert_ne!(access2, access);
    assert_eq!(status_with(access2.clone()).await, 200);
    let again = github_refresh(&client, &refresh).await;
    assert_eq!(again["error"], "bad_refresh_token");

    // Revocation.
    assert_eq!(github_revoke(&client, &access2).await, 204);
    assert_eq!(status_with(access2.clone()).await, 401);
    assert!(fake.revoked_tokens().contains(&access2));

    // Seeded tokens can be revoked too.
    assert_eq!(github_revoke(&client, "fake-github-bob").await, 204);
    assert_eq!(status_with("fake-github-bob".into()).await, 401);
    assert_eq!(status_with("fake-github-alice".into()).await, 200);

    // Expired tokens.
    let pair = fake.issue_token("github", "alice", Some(Duration::ZERO));
    assert_eq!(status_with(pair.access_token).await, 401);
    let pair = fake.issue_token("github", "alice", None);
    assert_eq!(status_with(pair.access_token).await, 200);
    fake.shutdown().await;
}

#[tokio::test]
async fn other_vendors_oauth_and_revoke() {
    let (fake, client) = start().await;
    let anyone = Caller::anonymous(&client);
    // Slack
    let consent = [
        ("client_id", "123.456"),
        ("user_scope", "search:read"),
        ("redirect_uri", "https://q.example/cb"),
        ("state", "x"),
    ];
    let code = consent_code(&client, "https://slack.com/oauth/v2/authorize", &consent).await;
    let grant = [
        ("client_id", "123.456"),
        ("client_secret", "s"),
        ("code", code.as_str()),
        ("redirect_uri", "https://q.example/cb"),
    ];
    let r = anyone
        .post_form("https://slack.com/api/oauth.v2.access", &grant)
        .await;
    let b = json_of(r).await;
    assert_eq!(b["ok"], true);
    let user_token = access_token(&b["authed_user"]);
    assert!(b["authed_user"]["refresh_token"].is_string());
    assert_eq!(b["authed_user"]["scope"], "search:read");
    let search = "https://slack.com/api/search.messages?query=checkout";
    let (_, b) = get_json(&client, search, &user_token).await;
    assert_eq!(b["ok"], true);
    let revoked = Caller::new(&client, &user_token)
        .post("https://slack.com/api/auth.revoke")
        .await;
    assert_eq!(json_of(revoked).await, json!({"ok": true, "revoked": true}));
    let (_, b) = get_json(&client, search, &user_token).await;
    assert_eq!(b["ok"], false);

    // Notion
    let consent = [
        ("client_id", "nid"),
        ("response_type", "code"),
        ("owner", "user"),
        ("redirect_uri", "https://q.example/cb"),
        ("state", "n"),
    ];
    let authorize = "https://api.notion.com/v1/oauth/authorize";
    let code = consent_code(&client, authorize, &consent).await;
    let notion_app = |url: &str, body: Value| {
        let request = anyone.request(Method::POST, url);
        send(request.basic_auth("nid", Some("nsecret")).json(&body))
    };
    let grant = json!({"grant_type": "authorization_code", "code": code, "redirect_uri": "https://q.example/cb"});
    let r = notion_app("https://api.notion.com/v1/oauth/token", grant).await;
    let nt = access_token(&json_of(r).await);
    let notion = Caller::new(&client, &nt).with_header("Notion-Version", "2025-09-03");
    let notion_search = "https://api.notion.com/v1/search";
    let r = notion
        .post_json(notion_search, &json!({"query": "postmortem"}))
        .await;
    assert_eq!(r.status(), 200);
    let revocation = json!({"token": nt});
    let r = notion_app("https://api.notion.com/v1/oauth/revoke", revocation).await;
    assert_eq!(r.status(), 200);
    let r = notion.post_json(notion_search, &json!({})).await;
    assert_eq!(r.status(), 401);

    // Linear (refresh, then revoke with a form)
    let pair = fake.issue_token("linear", "bob", Some(Duration::from_secs(3600)));
    let refresh = [
        ("grant_type", "refresh_token"),
        ("refresh_token", pair.refresh_token.as_str()),
        ("client_id", "lin"),
        ("client_secret", "s"),
    ];
    let r = anyone
        .post_form("https://api.linear.app/oauth/token", &refresh)
        .await;
    let lt = access_token(&json_of(r).await);
    let viewer = json!({"query": "{ viewer { name } }"});
    let gql = |t: String| {
        let viewer = viewer.clone();
        let linear = Caller::new(&client, &t);
        async move {
            let r = linear
                .post_json("https://api.linear.app/graphql", &viewer)
                .await;
            r.status()
        }
    };
    assert_eq!(gql(lt.clone()).await, 200);
    let linear_revoke = "https://api.linear.app/oauth/revoke";
    assert_eq!(revoke_by_form(&client, linear_revoke, &lt).await, 200);
    assert_eq!(gql(lt.clone()).await, 401);

    // Jira
    let consent = [
        ("audience", "api.atlassian.com"),
        ("client_id", "jid"),
        ("scope", "read:jira-work offline_access"),
        ("redirect_uri", "https://q.example/cb"),
        ("state", "j"),
        ("response_type", "code"),
        ("prompt", "consent"),
    ];
    let code = consent_code(&client, "https://auth.atlassian.com/authorize", &consent).await;
    let grant = json!({"grant_type": "authorization_code", "client_id": "jid", "client_secret": "js", "code": code, "redirect_uri": "https://q.example/cb"});
    let (_, b) = anyone
        .post_for_json("https://auth.atlassian.com/oauth/token", grant)
        .await;
    let jt = access_token(&b);
    assert_eq!(b["scope"], "read:jira-work offline_access");
    let resources = "https://api.atlassian.com/oauth/token/accessible-resources";
    assert_eq!(get_status(&client, resources, &jt).await, 200);
    // Atlassian documents no revocation endpoint for OAuth 2.0 (3LO) apps.
    let jira_revoke = "https://auth.atlassian.com/oauth/revoke";
    assert_eq!(revoke_by_form(&client, jira_revoke, &jt).await, 404);
    assert_eq!(get_status(&client, resources, &jt).await, 200);

    let revoked = fake.revoked_tokens();
    for t in [&user_token, &nt, &lt] {
        assert!(revoked.contains(t));
    }
    fake.shutdown().await;
}

// ---------------------------------------------------------------------------------- binary

#[tokio::test]
async fn binary_prints_its_address_and_stops_on_sigterm() {
    use tokio::io::AsyncBufReadExt;
    let dir = std::env::temp_dir().join(format!("fake-saas-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_fake-saas"))
        .args(["--listen", "127.0.0.1:0", "--latency-ms", "1", "--ca-out"])
        .arg(&ca)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let info: Value = serde_json::from_str(&line).unwrap();
    let addr: std::net::SocketAddr = info["addr"].as_str().unwrap().parse().unwrap();
    assert!(
        info["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h == "api.notion.com")
    );
    let pem = std::fs::read_to_string(info["ca_cert"].as_str().unwrap()).unwrap();
    let client = Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap())
        .resolve("api.github.com", addr)
        .build()
        .unwrap();
    let r = client
        .get("https://api.github.com/_fake/health")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let pid = child.id().unwrap();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dataset_size() {
    let (g, s, n, l, j) = dataset::counts();
    eprintln!(
        "dataset: github {g}, slack {s}, notion {n}, linear {l}, jira {j}, total {}",
        g + s + n + l + j
    );
    assert!(g + s + n + l + j >= 300);
}

// ------------------------------------------------------------------------- rate limits

/// Spends `limit` calls of the caller's to `url`, each answered 200, then
/// makes one more: its answer.
async fn past_the_limit(
    caller: &Caller,
    url: &str,
    query: &[(&str, &str)],
    limit: usize,
) -> reqwest::Response {
    for _ in 0..limit {
        assert_eq!(caller.get_with(url, query).await.status(), 200);
    }
    caller.get_with(url, query).await
}

/// With the declared rate limits on, a vendor refuses the call past its
/// limit as it does (Slack: 429, `ratelimited`, Retry-After; GitHub's
/// search: 403 with no request left), per token: another token still
/// searches.
#[tokio::test]
async fn declared_rate_limits_refuse_as_the_vendors_do() {
    let (fake, client) = start().await;
    fake.set_rate_limits(true);
    let slack = Caller::new(&client, "fake-slack-alice");
    let search = "https://slack.com/api/search.messages";
    // Tier 2: 20 a minute.
    let r = past_the_limit(&slack, search, &[("query", "checkout")], 20).await;
    assert_eq!(r.status(), 429);
    let wait: u32 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(json_of(r).await["error"], "ratelimited");
    let bob = Caller::new(&client, "fake-slack-bob");
    assert_eq!(
        bob.get_with(search, &[("query", "checkout")])
            .await
            .status(),
        200
    );

    let github = Caller::new(&client, "fake-github-alice");
    let issues = "https://api.github.com/search/issues";
    let r = past_the_limit(&github, issues, &[("q", "checkout is:issue")], 30).await;
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["x-ratelimit-remaining"], "0");
    fake.set_rate_limits(false);
    assert_eq!(
        github
            .get_with(issues, &[("q", "checkout is:issue")])
            .await
            .status(),
        200
    );
    fake.shutdown().await;
}
