//! End-to-end tests: start the fake in-process and call it over HTTPS with reqwest.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use fake_saas::dataset;
use fake_saas::search::Query;
use fake_saas::{FakeSaas, Fault};
use reqwest::{Client, StatusCode};

mod common;

use common::{access_token, client_for, get_status, json_of, revoke_by_form, start};
use serde_json::{Value, json};

// ------------------------------------------------------------------------------------ TLS

#[tokio::test]
async fn serves_every_host_over_h2_and_http1() {
    let (fake, client) = start().await;
    let r = client
        .get("https://api.github.com/search/issues?q=checkout")
        .bearer_auth("fake-github-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.version(), reqwest::Version::HTTP_2);

    let h1 = client_for(&fake, true);
    let r = h1
        .post("https://slack.com/api/search.messages")
        .bearer_auth("fake-slack-bob")
        .form(&[("query", "invoice retry")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_11);
    assert_eq!(json_of(r).await["ok"], true);

    for host in FakeSaas::hosts() {
        let r = client
            .get(format!("https://{host}/_fake/health"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{host}");
    }
    // Every host plays its vendor now: Graph without a token is Graph's 401.
    let r = client
        .post("https://graph.microsoft.com/v1.0/search/query")
        .send()
        .await
        .unwrap();
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

fn github_expected(q: &str, filter: impl Fn(&dataset::GithubItem) -> bool) -> HashSet<String> {
    let query = Query::parse(q);
    dataset::github_items()
        .iter()
        .filter(|i| filter(i) && query.matches_text(&format!("{}\n{}", i.title, i.body)))
        .map(|i| i.html_url.clone())
        .collect()
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
    let expected = github_expected("checkout timeout", |i| {
        !i.is_pull_request && i.repo == "acme/shop"
    });
    assert!(expected.len() > 4, "{expected:?}");

    let mut url = "https://api.github.com/search/issues?q=checkout%20timeout%20is%3Aissue%20repo%3Aacme%2Fshop&per_page=3&page=1&sort=updated&order=desc".to_string();
    let mut seen = HashSet::new();
    let mut pages = 0;
    loop {
        let r = client
            .get(&url)
            .bearer_auth("fake-github-alice")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .header("Accept", "application/vnd.github+json")
            .send()
            .await
            .unwrap();
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
    let r = client
        .get("https://api.github.com/search/issues")
        .query(&[
            ("q", "checkout times out 50 items is:issue"),
            ("per_page", "5"),
        ])
        .bearer_auth("fake-github-bob")
        .send()
        .await
        .unwrap();
    let body = json_of(r).await;
    assert_eq!(
        body["items"][0]["title"],
        "Checkout times out with more than 50 items"
    );

    // PRs carry pull_request.html_url and mention the Jira key.
    let r = client
        .get("https://api.github.com/search/issues")
        .query(&[("q", "invoice retry idempotent is:pr")])
        .bearer_auth("fake-github-alice")
        .send()
        .await
        .unwrap();
    let body = json_of(r).await;
    let pr = &body["items"][0];
    assert!(
        pr["pull_request"]["html_url"]
            .as_str()
            .unwrap()
            .contains("/pull/")
    );
    let story = dataset::stories()
        .iter()
        .find(|s| s.slug == "invoice-retry-double-charge")
        .unwrap();
    assert_eq!(pr["html_url"].as_str(), story.github_pr_url.as_deref());
    assert!(
        pr["title"]
            .as_str()
            .unwrap()
            .starts_with(story.jira_key.as_deref().unwrap())
    );

    // Time qualifiers.
    let r = client
        .get("https://api.github.com/search/issues")
        .query(&[
            ("q", "checkout updated:>=2026-01-01 updated:<=2026-06-30"),
            ("per_page", "100"),
        ])
        .bearer_auth("fake-github-alice")
        .send()
        .await
        .unwrap();
    let body = json_of(r).await;
    let expected = github_expected("checkout", |i| {
        i.updated_at.as_str() >= "2026-01-01" && i.updated_at.as_str() < "2026-07-01"
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

#[tokio::test]
async fn github_rejections() {
    let (fake, client) = start().await;
    let r = client
        .get("https://api.github.com/search/issues?q=x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let b = json_of(r).await;
    assert_eq!(b["message"], "Bad credentials");
    assert_eq!(b["status"], "401");
    assert!(b["documentation_url"].is_string());

    let r = client
        .get("https://api.github.com/search/issues?q=x")
        .bearer_auth("fake-slack-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    let r = client
        .get("https://api.github.com/search/issues?q=x")
        .bearer_auth("fake-github-alice")
        .header("X-GitHub-Api-Version", "2021-01-01")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    let r = client
        .get("https://api.github.com/search/issues")
        .bearer_auth("fake-github-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);

    let no_ua = Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(fake.ca_cert_pem().as_bytes()).unwrap(),
        )
        .resolve("api.github.com", fake.addr())
        .build()
        .unwrap();
    let r = no_ua
        .get("https://api.github.com/search/issues?q=x")
        .bearer_auth("fake-github-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    fake.shutdown().await;
}

// ---------------------------------------------------------------------------------- Slack

#[tokio::test]
async fn slack_search_messages() {
    let (fake, client) = start().await;
    let query = Query::parse("invoice retry");
    let expected: HashSet<String> = dataset::slack_messages()
        .iter()
        .filter(|m| query.matches_text(&m.text))
        .map(|m| m.permalink.clone())
        .collect();
    assert!(expected.len() > 3);
    let mut seen = HashSet::new();
    let mut page = 1;
    loop {
        let r = client
            .get("https://slack.com/api/search.messages")
            .query(&[
                ("query", "invoice retry"),
                ("count", "3"),
                ("page", &page.to_string()),
            ])
            .bearer_auth("fake-slack-alice")
            .send()
            .await
            .unwrap();
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
    let r = client
        .post("https://slack.com/api/search.messages")
        .bearer_auth("fake-slack-bob")
        .form(&[(
            "query",
            "invoice retry job paused until Monday in:#billing-eng from:@priya",
        )])
        .send()
        .await
        .unwrap();
    let b = json_of(r).await;
    let first = &b["messages"]["matches"][0];
    assert_eq!(first["text"], "The invoice retry job is paused until Monday. I filed <https://acme.atlassian.net/browse/ACME-125|ACME-125>.".replace("ACME-125", dataset::stories().iter().find(|s| s.slug == "invoice-retry-double-charge").unwrap().jira_key.as_deref().unwrap()));
    assert_eq!(first["channel"]["id"], "C024BE91L");
    assert_eq!(first["user"], "U061F7AUR");
    assert!(
        b["messages"]["matches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["username"] == "priya")
    );

    let r = client
        .get("https://slack.com/api/search.messages?query=x")
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        json_of(r).await,
        json!({"ok": false, "error": "invalid_auth"})
    );
    let r = client
        .get("https://slack.com/api/search.messages?query=x")
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await["error"], "invalid_auth");
    fake.shutdown().await;
}

// --------------------------------------------------------------------------------- Notion

#[tokio::test]
async fn notion_search_and_blocks() {
    let (fake, client) = start().await;
    let search = |body: Value| {
        client
            .post("https://api.notion.com/v1/search")
            .bearer_auth("fake-notion-alice")
            .header("Notion-Version", "2025-09-03")
            .json(&body)
            .send()
    };
    let b = json_of(
        search(json!({"query": "launch plan", "filter": {"property": "object", "value": "page"}}))
            .await
            .unwrap(),
    )
    .await;
    let titles: Vec<&str> = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["properties"]["title"]["title"][0]["plain_text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(titles.contains(&"Q3 launch plan"), "{titles:?}");
    assert_eq!(b["type"], "page_or_data_source");
    let q3 = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["properties"]["title"]["title"][0]["plain_text"] == "Q3 launch plan")
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
    let b = json_of(search(json!({"query": "PagerDuty"})).await.unwrap()).await;
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
        let b = json_of(search(body).await.unwrap()).await;
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
        let b = json_of(
            client
                .get(&url)
                .bearer_auth("fake-notion-bob")
                .header("Notion-Version", "2022-06-28")
                .send()
                .await
                .unwrap(),
        )
        .await;
        for blk in b["results"].as_array().unwrap() {
            let t = blk["type"].as_str().unwrap();
            assert!(["paragraph", "heading_2", "bulleted_list_item"].contains(&t));
            texts.push(
                blk[t]["rich_text"][0]["plain_text"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        if b["has_more"] == false {
            break;
        }
        cursor = Some(b["next_cursor"].as_str().unwrap().to_string());
    }
    assert_eq!(
        texts,
        page.blocks
            .iter()
            .map(|b| b.text.clone())
            .collect::<Vec<_>>()
    );

    let r = client
        .post("https://api.notion.com/v1/search")
        .bearer_auth("fake-notion-alice")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(json_of(r).await["code"], "missing_version");
    let r = client
        .post("https://api.notion.com/v1/search")
        .header("Notion-Version", "2025-09-03")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let b = json_of(r).await;
    assert_eq!(b["object"], "error");
    assert_eq!(b["code"], "unauthorized");
    assert_eq!(b["message"], "API token is invalid.");
    fake.shutdown().await;
}

// --------------------------------------------------------------------------------- Linear

#[tokio::test]
async fn linear_graphql() {
    let (fake, client) = start().await;
    let query = "query Search($term: String!, $first: Int, $after: String) {
        searchIssues(term: $term, first: $first, after: $after) {
          nodes { id identifier title description url createdAt updatedAt creator { name } state { name } }
          pageInfo { hasNextPage endCursor }
        }
      }";
    let q = Query::parse("checkout");
    let expected: HashSet<String> = dataset::linear_issues()
        .iter()
        .filter(|i| q.matches_text(&format!("{}\n{}", i.title, i.description)))
        .map(|i| i.url.clone())
        .collect();
    assert!(expected.len() >= 3);
    let mut after = Value::Null;
    let mut seen = HashSet::new();
    loop {
        let b = json_of(
            client
                .post("https://api.linear.app/graphql")
                .bearer_auth("fake-linear-alice")
                .json(&json!({"query": query, "variables": {"term": "checkout", "first": 2, "after": after}}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let s = &b["data"]["searchIssues"];
        for n in s["nodes"].as_array().unwrap() {
            assert!(n["identifier"].as_str().unwrap().starts_with("ENG-"));
            assert!(
                n["url"]
                    .as_str()
                    .unwrap()
                    .starts_with("https://linear.app/acme/issue/ENG-")
            );
            assert!(n["creator"]["name"].is_string());
            assert!(n["state"]["name"].is_string());
            assert!(n.get("priority").is_none(), "only the selected fields");
            seen.insert(n["url"].as_str().unwrap().to_string());
        }
        if s["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = s["pageInfo"]["endCursor"].clone();
    }
    assert_eq!(seen, expected);

    // Inline literal arguments.
    let b = json_of(
        client
            .post("https://api.linear.app/graphql")
            .bearer_auth("fake-linear-bob")
            .json(&json!({"query": "{ searchIssues(term: \"Android 15 crash\", first: 1) { nodes { identifier title } } }"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        b["data"]["searchIssues"]["nodes"][0]["title"],
        "Mobile app crashes on Android 15 when opening order history"
    );

    // Mutations are refused, but recorded.
    fake.clear_requests();
    let r = client
        .post("https://api.linear.app/graphql")
        .bearer_auth("fake-linear-alice")
        .json(&json!({"query": "mutation { issueDelete(id: \"x\") { success } }"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(
        json_of(r).await["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("mutation")
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].body_text().contains("issueDelete"));

    let r = client
        .post("https://api.linear.app/graphql")
        .json(&json!({"query": "{ viewer { id } }"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        json_of(r).await["errors"][0]["extensions"]["code"],
        "AUTHENTICATION_ERROR"
    );
    fake.shutdown().await;
}

// ----------------------------------------------------------------------------------- Jira

#[tokio::test]
async fn jira_search_jql() {
    let (fake, client) = start().await;
    let r = client
        .get("https://api.atlassian.com/oauth/token/accessible-resources")
        .bearer_auth("fake-jira-alice")
        .send()
        .await
        .unwrap();
    let b = json_of(r).await;
    assert_eq!(b[0]["url"], "https://acme.atlassian.net");
    let cloud = b[0]["id"].as_str().unwrap().to_string();
    assert_eq!(cloud, dataset::JIRA_CLOUD_ID);

    let base = format!("https://api.atlassian.com/ex/jira/{cloud}/rest/api/3/search/jql");
    let jql = r#"text ~ "invoice retry" AND updated >= "2025-01-01" ORDER BY updated DESC"#;
    let q = Query::parse("invoice retry");
    let expected: HashSet<String> = dataset::jira_issues()
        .iter()
        .filter(|i| q.matches_text(&format!("{}\n{}", i.summary, i.description)))
        .map(|i| i.key.clone())
        .collect();
    assert!(expected.len() >= 3, "{expected:?}");
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
        let b = json_of(
            client
                .get(&base)
                .query(&params)
                .bearer_auth("fake-jira-bob")
                .send()
                .await
                .unwrap(),
        )
        .await;
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
    let b = json_of(
        client
            .get(&base)
            .query(&[("jql", "project = ACME AND text ~ checkout")])
            .bearer_auth("fake-jira-bob")
            .send()
            .await
            .unwrap(),
    )
    .await;
    let first = b["issues"][0].as_object().unwrap();
    assert_eq!(first.keys().collect::<Vec<_>>(), vec!["id"]);

    // POST variant and date bounds.
    let b = json_of(
        client
            .post(&base)
            .bearer_auth("fake-jira-bob")
            .json(&json!({"jql": "updated >= \"2026-01-01\" AND updated <= \"2026-03-31\" ORDER BY updated ASC", "fields": ["summary", "updated"], "maxResults": 50}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let ups: Vec<&str> = b["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fields"]["updated"].as_str().unwrap())
        .collect();
    assert!(!ups.is_empty());
    assert!(ups.windows(2).all(|w| w[0] <= w[1]), "{ups:?}");
    assert!(ups.iter().all(|u| ("2026-01-01".."2026-03-31").contains(u)));

    let r = client
        .get("https://api.atlassian.com/ex/jira/00000000-0000-4000-8000-000000000000/rest/api/3/search/jql?jql=text~x")
        .bearer_auth("fake-jira-bob")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = client
        .get(&base)
        .query(&[("jql", "text ~ x")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        json_of(r).await,
        json!({"code": 401, "message": "Unauthorized"})
    );
    let r = client
        .get(&base)
        .query(&[("jql", "ORDER BY updated DESC")])
        .bearer_auth("fake-jira-bob")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    fake.shutdown().await;
}

// ------------------------------------------------------------------- faults and recording

#[tokio::test]
async fn faults_latency_and_recording() {
    let (fake, client) = start().await;
    let search = || {
        client
            .get("https://api.github.com/search/issues?q=checkout")
            .bearer_auth("fake-github-alice")
            .send()
    };
    fake.set_fault(
        "api.github.com",
        Fault {
            status: Some(429),
            retry_after: Some(7),
            count: Some(1),
            ..Default::default()
        },
    );
    let r = search().await.unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "7");
    assert_eq!(r.headers()["x-ratelimit-remaining"], "0");
    assert!(
        json_of(r).await["message"]
            .as_str()
            .unwrap()
            .contains("rate limit")
    );
    assert_eq!(search().await.unwrap().status(), 200);

    fake.set_fault(
        "slack.com",
        Fault {
            status: Some(429),
            count: Some(2),
            ..Default::default()
        },
    );
    for _ in 0..2 {
        let r = client
            .get("https://slack.com/api/search.messages?query=x")
            .bearer_auth("fake-slack-alice")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429);
        assert!(r.headers().contains_key("retry-after"));
        assert_eq!(
            json_of(r).await,
            json!({"ok": false, "error": "ratelimited"})
        );
    }

    fake.set_fault(
        "api.notion.com",
        Fault {
            status: Some(500),
            ..Default::default()
        },
    );
    for _ in 0..3 {
        let r = client
            .post("https://api.notion.com/v1/search")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 500);
        assert_eq!(json_of(r).await["code"], "internal_server_error");
    }
    fake.clear_faults();

    fake.set_fault(
        "api.github.com",
        Fault {
            redirect_to: Some("https://evil.example/x".into()),
            count: Some(1),
            ..Default::default()
        },
    );
    let r = search().await.unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "https://evil.example/x");

    fake.set_fault(
        "api.github.com",
        Fault {
            oversize_bytes: Some(3_000_000),
            count: Some(1),
            ..Default::default()
        },
    );
    let r = search().await.unwrap();
    assert_eq!(r.status(), 200);
    let bytes = r.bytes().await.unwrap();
    assert_eq!(bytes.len(), 3_000_000);
    assert!(serde_json::from_slice::<Value>(&bytes).is_ok());

    fake.set_fault(
        "api.github.com",
        Fault {
            latency: Some(Duration::from_millis(300)),
            count: Some(1),
            ..Default::default()
        },
    );
    let t = Instant::now();
    assert_eq!(search().await.unwrap().status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(300));

    fake.set_latency(Duration::from_millis(150));
    let t = Instant::now();
    assert_eq!(search().await.unwrap().status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(150));
    fake.set_latency(Duration::ZERO);

    // Recording: every vendor request, before faults, with headers and body.
    fake.clear_requests();
    fake.set_fault(
        "api.linear.app",
        Fault {
            status: Some(503),
            count: Some(1),
            ..Default::default()
        },
    );
    let r = client
        .post("https://api.linear.app/graphql")
        .bearer_auth("fake-linear-alice")
        .json(&json!({"query": "{ viewer { id } }"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let _ = client
        .get("https://api.linear.app/_fake/health")
        .send()
        .await
        .unwrap();
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
    let b: Value = json_of(client.get(format!("{via}/requests")).send().await.unwrap()).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
    let r = client
        .post(format!("{via}/faults"))
        .json(&json!({"host": "slack.com", "status": 500, "count": 1, "latency_ms": 10}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .get("https://slack.com/api/search.messages?query=x")
        .bearer_auth("fake-slack-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    assert_eq!(
        client
            .delete(format!("{via}/requests"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert!(fake.requests().is_empty());
    assert_eq!(
        client
            .post(format!("{via}/latency"))
            .json(&json!({"ms": 0}))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        client
            .delete(format!("{via}/faults"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    fake.shutdown().await;
}

// ----------------------------------------------------------------- OAuth and revocation

fn location_params(r: &reqwest::Response) -> Vec<(String, String)> {
    let loc = r.headers()["location"].to_str().unwrap();
    let url = reqwest::Url::parse(loc).unwrap();
    url.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param(p: &[(String, String)], n: &str) -> String {
    p.iter()
        .find(|(k, _)| k == n)
        .map(|(_, v)| v.clone())
        .unwrap()
}

/// Trades a GitHub refresh token at the token endpoint; the JSON answer.
async fn github_refresh(client: &Client, refresh: &str) -> Value {
    let r = client
        .post("https://github.com/login/oauth/access_token")
        .header("Accept", "application/json")
        .form(&[
            ("client_id", "Iv1.quarry"),
            ("client_secret", "shh"),
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
        ])
        .send()
        .await
        .unwrap();
    json_of(r).await
}

/// Revokes a GitHub token as its OAuth app; the status.
async fn github_revoke(client: &Client, token: &str) -> StatusCode {
    client
        .delete("https://api.github.com/applications/Iv1.quarry/token")
        .basic_auth("Iv1.quarry", Some("shh"))
        .json(&json!({ "access_token": token }))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn github_oauth_refresh_and_revoke() {
    let (fake, client) = start().await;
    // PKCE S256 (challenge = base64url(sha256(verifier))).
    let verifier = "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = "ngF5GsXcbwljx6u133FFr3Xht9xooA_DuaX_3QwODtc";
    let r = client
        .get("https://github.com/login/oauth/authorize")
        .query(&[
            ("client_id", "Iv1.quarry"),
            ("redirect_uri", "https://quarry.example/oauth/callback"),
            ("state", "st4te"),
            ("scope", ""),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    assert!(
        r.headers()["location"]
            .to_str()
            .unwrap()
            .starts_with("https://quarry.example/oauth/callback?")
    );
    let p = location_params(&r);
    assert_eq!(param(&p, "state"), "st4te");
    let code = param(&p, "code");

    // Wrong verifier fails and burns the code, like a real server.
    let bad = client
        .post("https://github.com/login/oauth/access_token")
        .header("Accept", "application/json")
        .form(&[
            ("client_id", "Iv1.quarry"),
            ("client_secret", "s"),
            ("code", code.as_str()),
            ("code_verifier", "wrong"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(bad).await["error"], "bad_verification_code");

    let r = client
        .get("https://github.com/login/oauth/authorize")
        .query(&[
            ("client_id", "Iv1.quarry"),
            ("redirect_uri", "https://quarry.example/cb"),
            ("state", "s2"),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ])
        .send()
        .await
        .unwrap();
    let code = param(&location_params(&r), "code");
    let tok = json_of(
        client
            .post("https://github.com/login/oauth/access_token")
            .header("Accept", "application/json")
            .form(&[
                ("client_id", "Iv1.quarry"),
                ("client_secret", "shh"),
                ("code", code.as_str()),
                ("redirect_uri", "https://quarry.example/cb"),
                ("code_verifier", verifier),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(tok["token_type"], "bearer", "{tok}");
    assert_eq!(tok["expires_in"], 28800);
    let access = tok["access_token"].as_str().unwrap().to_string();
    let refresh = tok["refresh_token"].as_str().unwrap().to_string();
    assert!(access.starts_with("ghu_"));
    let ok = |t: String| {
        let client = client.clone();
        async move {
            client
                .get("https://api.github.com/search/issues?q=checkout")
                .bearer_auth(t)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(ok(access.clone()).await, 200);

    // Refresh rotates the refresh token.
    let tok2 = github_refresh(&client, &refresh).await;
    let access2 = tok2["access_token"].as_str().unwrap().to_string();
    assert_ne!(access2, access);
    assert_eq!(ok(access2.clone()).await, 200);
    let again = github_refresh(&client, &refresh).await;
    assert_eq!(again["error"], "bad_refresh_token");

    // Revocation.
    assert_eq!(github_revoke(&client, &access2).await, 204);
    assert_eq!(ok(access2.clone()).await, 401);
    assert!(fake.revoked_tokens().contains(&access2));

    // Seeded tokens can be revoked too.
    assert_eq!(github_revoke(&client, "fake-github-bob").await, 204);
    assert_eq!(ok("fake-github-bob".into()).await, 401);
    assert_eq!(ok("fake-github-alice".into()).await, 200);

    // Expired tokens.
    let pair = fake.issue_token("github", "alice", Some(Duration::ZERO));
    assert_eq!(ok(pair.access_token).await, 401);
    let pair = fake.issue_token("github", "alice", None);
    assert_eq!(ok(pair.access_token).await, 200);
    fake.shutdown().await;
}

#[tokio::test]
async fn other_vendors_oauth_and_revoke() {
    let (fake, client) = start().await;
    // Slack
    let r = client
        .get("https://slack.com/oauth/v2/authorize")
        .query(&[
            ("client_id", "123.456"),
            ("user_scope", "search:read"),
            ("redirect_uri", "https://q.example/cb"),
            ("state", "x"),
        ])
        .send()
        .await
        .unwrap();
    let code = param(&location_params(&r), "code");
    let b = json_of(
        client
            .post("https://slack.com/api/oauth.v2.access")
            .form(&[
                ("client_id", "123.456"),
                ("client_secret", "s"),
                ("code", code.as_str()),
                ("redirect_uri", "https://q.example/cb"),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(b["ok"], true);
    let user_token = b["authed_user"]["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(b["authed_user"]["refresh_token"].is_string());
    assert_eq!(b["authed_user"]["scope"], "search:read");
    let search = |t: String| {
        let client = client.clone();
        async move {
            json_of(
                client
                    .get("https://slack.com/api/search.messages?query=checkout")
                    .bearer_auth(t)
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    assert_eq!(search(user_token.clone()).await["ok"], true);
    let b = json_of(
        client
            .post("https://slack.com/api/auth.revoke")
            .bearer_auth(&user_token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(b, json!({"ok": true, "revoked": true}));
    assert_eq!(search(user_token.clone()).await["ok"], false);

    // Notion
    let r = client
        .get("https://api.notion.com/v1/oauth/authorize")
        .query(&[
            ("client_id", "nid"),
            ("response_type", "code"),
            ("owner", "user"),
            ("redirect_uri", "https://q.example/cb"),
            ("state", "n"),
        ])
        .send()
        .await
        .unwrap();
    let code = param(&location_params(&r), "code");
    let b = json_of(
        client
            .post("https://api.notion.com/v1/oauth/token")
            .basic_auth("nid", Some("nsecret"))
            .json(&json!({"grant_type": "authorization_code", "code": code, "redirect_uri": "https://q.example/cb"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let nt = access_token(&b);
    let r = client
        .post("https://api.notion.com/v1/search")
        .bearer_auth(&nt)
        .header("Notion-Version", "2025-09-03")
        .json(&json!({"query": "postmortem"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .post("https://api.notion.com/v1/oauth/revoke")
        .basic_auth("nid", Some("nsecret"))
        .json(&json!({"token": nt}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .post("https://api.notion.com/v1/search")
        .bearer_auth(&nt)
        .header("Notion-Version", "2025-09-03")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // Linear (refresh, then revoke with a form)
    let pair = fake.issue_token("linear", "bob", Some(Duration::from_secs(3600)));
    let b = json_of(
        client
            .post("https://api.linear.app/oauth/token")
            .form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", pair.refresh_token.as_str()),
                ("client_id", "lin"),
                ("client_secret", "s"),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    let lt = access_token(&b);
    let gql = |t: String| {
        let client = client.clone();
        async move {
            client
                .post("https://api.linear.app/graphql")
                .bearer_auth(t)
                .json(&json!({"query": "{ viewer { name } }"}))
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(gql(lt.clone()).await, 200);
    let linear_revoke = "https://api.linear.app/oauth/revoke";
    assert_eq!(revoke_by_form(&client, linear_revoke, &lt).await, 200);
    assert_eq!(gql(lt.clone()).await, 401);

    // Jira
    let r = client
        .get("https://auth.atlassian.com/authorize")
        .query(&[
            ("audience", "api.atlassian.com"),
            ("client_id", "jid"),
            ("scope", "read:jira-work offline_access"),
            ("redirect_uri", "https://q.example/cb"),
            ("state", "j"),
            ("response_type", "code"),
            ("prompt", "consent"),
        ])
        .send()
        .await
        .unwrap();
    let code = param(&location_params(&r), "code");
    let b = json_of(
        client
            .post("https://auth.atlassian.com/oauth/token")
            .json(&json!({"grant_type": "authorization_code", "client_id": "jid", "client_secret": "js", "code": code, "redirect_uri": "https://q.example/cb"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let jt = access_token(&b);
    assert_eq!(b["scope"], "read:jira-work offline_access");
    let resources = "https://api.atlassian.com/oauth/token/accessible-resources";
    assert_eq!(get_status(&client, resources, &jt).await, 200);
    let jira_revoke = "https://auth.atlassian.com/oauth/revoke";
    assert_eq!(revoke_by_form(&client, jira_revoke, &jt).await, 200);
    assert_eq!(get_status(&client, resources, &jt).await, 401);

    let revoked = fake.revoked_tokens();
    for t in [&user_token, &nt, &lt, &jt] {
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
