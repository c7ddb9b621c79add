//! Confluence, Google Drive, Gmail, Zendesk and HubSpot over HTTPS: their OAuth servers
//! (shared ones included), the response shapes the connectors read, paging and errors.

use fake_saas::dataset;
use fake_saas::{FakeSaas, FakeSaasConfig};
use reqwest::Client;
use serde_json::{Value, json};

async fn start() -> (FakeSaas, Client) {
    let fake = FakeSaas::start(FakeSaasConfig::default()).await.unwrap();
    let mut b = Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(fake.ca_cert_pem().as_bytes()).unwrap(),
        )
        .redirect(reqwest::redirect::Policy::none());
    for h in FakeSaas::hosts() {
        b = b.resolve(h, fake.addr());
    }
    (fake, b.build().unwrap())
}

async fn json_of(r: reqwest::Response) -> Value {
    r.json().await.unwrap()
}

/// Runs an authorization-code flow and returns the token response.
async fn authorize(client: &Client, authorize_url: &str, token_url: &str, scope: &str) -> Value {
    let r = client
        .get(authorize_url)
        .query(&[
            ("client_id", "quarry"),
            ("redirect_uri", "https://q.example/cb"),
            ("response_type", "code"),
            ("scope", scope),
            ("state", "s"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "{authorize_url}");
    let location = reqwest::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
    let code = location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let r = client
        .post(token_url)
        .form(&[
            ("grant_type", "authorization_code"),
            ("client_id", "quarry"),
            ("client_secret", "secret"),
            ("code", code.as_str()),
            ("redirect_uri", "https://q.example/cb"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{token_url}");
    json_of(r).await
}

#[tokio::test]
async fn oauth_servers_issue_tokens_for_the_right_product_and_revoke_them() {
    let (fake, client) = start().await;
    // Atlassian: the scopes say Confluence.
    let t = authorize(
        &client,
        "https://auth.atlassian.com/authorize",
        "https://auth.atlassian.com/oauth/token",
        "search:confluence read:confluence-content.all offline_access",
    )
    .await;
    let confluence = t["access_token"].as_str().unwrap().to_string();
    assert_eq!(t["token_type"], "Bearer");
    let search = format!(
        "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql=text~checkout",
        dataset::JIRA_CLOUD_ID
    );
    let jql = format!(
        "https://api.atlassian.com/ex/jira/{}/rest/api/3/search/jql?jql=text~checkout",
        dataset::JIRA_CLOUD_ID
    );
    let status = |url: String, token: String| {
        let client = client.clone();
        async move {
            client
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(status(search.clone(), confluence.clone()).await, 200);
    assert_eq!(
        status(jql.clone(), confluence.clone()).await,
        401,
        "not a Jira token"
    );
    let sites = json_of(
        client
            .get("https://api.atlassian.com/oauth/token/accessible-resources")
            .bearer_auth(&confluence)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(sites[0]["id"], dataset::JIRA_CLOUD_ID);
    assert!(sites[0]["scopes"].to_string().contains("confluence"));
    // Refresh keeps the product.
    let r = json_of(
        client
            .post("https://auth.atlassian.com/oauth/token")
            .json(&json!({"grant_type": "refresh_token", "client_id": "quarry", "client_secret": "s", "refresh_token": t["refresh_token"]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let refreshed = r["access_token"].as_str().unwrap().to_string();
    assert_eq!(status(search.clone(), refreshed.clone()).await, 200);
    let r = client
        .post("https://auth.atlassian.com/oauth/revoke")
        .form(&[("token", refreshed.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(status(search, refreshed.clone()).await, 401);

    // Google: a Gmail scope makes a Gmail token; Drive's is another.
    let gmail = authorize(
        &client,
        "https://accounts.google.com/o/oauth2/v2/auth",
        "https://oauth2.googleapis.com/token",
        "https://www.googleapis.com/auth/gmail.readonly",
    )
    .await;
    let drive = authorize(
        &client,
        "https://accounts.google.com/o/oauth2/v2/auth",
        "https://oauth2.googleapis.com/token",
        "https://www.googleapis.com/auth/drive.readonly",
    )
    .await;
    assert!(gmail["access_token"].as_str().unwrap().starts_with("ya29."));
    assert_eq!(
        gmail["scope"],
        "https://www.googleapis.com/auth/gmail.readonly"
    );
    let messages = "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=checkout".to_string();
    let files = "https://www.googleapis.com/drive/v3/files?q=fullText%20contains%20%27checkout%27"
        .to_string();
    let gmail_token = gmail["access_token"].as_str().unwrap().to_string();
    let drive_token = drive["access_token"].as_str().unwrap().to_string();
    assert_eq!(status(messages.clone(), gmail_token.clone()).await, 200);
    assert_eq!(status(files.clone(), drive_token.clone()).await, 200);
    assert_eq!(status(files.clone(), gmail_token.clone()).await, 401);
    let r = client
        .post("https://oauth2.googleapis.com/revoke")
        .form(&[("token", gmail_token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(status(messages, gmail_token.clone()).await, 401);
    let r = client
        .post("https://oauth2.googleapis.com/revoke")
        .form(&[("token", gmail_token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        200,
        "revoking twice is fine (the token is known)"
    );

    // Zendesk: OAuth on the account's subdomain; the token can see and delete itself.
    let z = authorize(
        &client,
        "https://acme.zendesk.com/oauth/authorizations/new",
        "https://acme.zendesk.com/oauth/tokens",
        "tickets:read",
    )
    .await;
    let zt = z["access_token"].as_str().unwrap().to_string();
    let zsearch =
        "https://acme.zendesk.com/api/v2/search.json?query=type%3Aticket%20checkout".to_string();
    assert_eq!(status(zsearch.clone(), zt.clone()).await, 200);
    let current = json_of(
        client
            .get("https://acme.zendesk.com/api/v2/oauth/tokens/current.json")
            .bearer_auth(&zt)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let id = current["token"]["id"].as_u64().unwrap();
    let r = client
        .delete(format!(
            "https://acme.zendesk.com/api/v2/oauth/tokens/{id}.json"
        ))
        .bearer_auth(&zt)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(status(zsearch, zt).await, 401);

    // HubSpot: app.hubspot.com authorizes, api.hubapi.com issues and revokes.
    let h = authorize(
        &client,
        "https://app.hubspot.com/oauth/authorize",
        "https://api.hubapi.com/oauth/2026-03/token",
        "oauth crm.objects.tickets.read",
    )
    .await;
    assert_eq!(h["expires_in"], 1800);
    let ht = h["access_token"].as_str().unwrap().to_string();
    let account = "https://api.hubapi.com/account-info/v3/details".to_string();
    assert_eq!(status(account.clone(), ht.clone()).await, 200);
    let r = client
        .post("https://api.hubapi.com/oauth/2026-03/token/revoke")
        .form(&[("token", ht.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(status(account, ht.clone()).await, 401);

    let revoked = fake.revoked_tokens();
    for t in [&refreshed, &gmail_token, &ht] {
        assert!(revoked.contains(t), "{t} revoked");
    }
    // Seeded tokens of every vendor work, and only for their own vendor.
    assert_eq!(dataset::VENDORS.len(), 15);
}

#[tokio::test]
async fn search_responses_follow_the_vendors_shapes() {
    let (_fake, client) = start().await;
    let get = |url: String, token: &'static str| {
        let client = client.clone();
        async move {
            let r = client.get(url).bearer_auth(token).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };

    // Confluence: relative URLs joined with `_links.base`, a cursor in `_links.next`.
    let url = format!(
        "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql={}&limit=2&expand=content.body.storage",
        dataset::JIRA_CLOUD_ID,
        "siteSearch%20~%20%22checkout%22%20AND%20type%20%3D%20page"
    );
    let (code, body) = get(url, "fake-confluence-alice").await;
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["size"], 2);
    assert_eq!(v["_links"]["base"], "https://acme.atlassian.net/wiki");
    let first = &v["results"][0];
    assert_eq!(first["content"]["type"], "page");
    assert!(first["url"].as_str().unwrap().starts_with("/spaces/"));
    assert!(
        first["content"]["body"]["storage"]["value"]
            .as_str()
            .unwrap()
            .starts_with('<')
    );
    assert!(first["excerpt"].as_str().unwrap().contains("@@@hl@@@"));
    let next = v["_links"]["next"].as_str().unwrap();
    assert!(
        next.starts_with("/rest/api/search?next=true&cursor="),
        "{next}"
    );
    let (code, body) = get(
        format!(
            "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql=bogus%20%3D%20x",
            dataset::JIRA_CLOUD_ID
        ),
        "fake-confluence-alice",
    )
    .await;
    assert_eq!(code, 400, "{body}");

    // Drive: `fields` masks, trashed files only when asked, export with a BOM.
    let (code, body) = get(
        "https://www.googleapis.com/drive/v3/files?q=name%20contains%20%27loyalty%27&fields=files(id,name,trashed)".into(),
        "fake-google-drive-alice",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 1, "only `files`: {v}");
    assert!(
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["trashed"] == true)
    );
    let (_, body) = get(
        "https://www.googleapis.com/drive/v3/files?q=name%20contains%20%27loyalty%27%20and%20trashed%20%3D%20false&fields=files(id,mimeType)".into(),
        "fake-google-drive-alice",
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    let doc = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["mimeType"] == dataset::MIME_DOC)
        .unwrap();
    let (code, text) = get(
        format!(
            "https://www.googleapis.com/drive/v3/files/{}/export?mimeType=text/plain",
            doc["id"].as_str().unwrap()
        ),
        "fake-google-drive-alice",
    )
    .await;
    assert_eq!(code, 200);
    assert!(text.starts_with('\u{feff}') && text.contains("\r\n"));
    let (code, _) = get(
        "https://www.googleapis.com/drive/v3/files?q=fullText%20contains%20%27x%27&orderBy=modifiedTime".into(),
        "fake-google-drive-alice",
    )
    .await;
    assert_eq!(code, 400, "no sorting with fullText");

    // Gmail: ids only in the list, metadata headers on request.
    let (code, body) = get(
        "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=stripe&maxResults=2".into(),
        "fake-gmail-alice",
    )
    .await;
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    let m = &v["messages"][0];
    assert_eq!(m.as_object().unwrap().len(), 2, "id and threadId: {m}");
    assert!(v["nextPageToken"].is_string());
    let (_, body) = get(
        format!(
            "https://gmail.googleapis.com/gmail/v1/users/me/messages/{}?format=metadata&metadataHeaders=Subject",
            m["id"].as_str().unwrap()
        ),
        "fake-gmail-alice",
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    let headers = v["payload"]["headers"].as_array().unwrap();
    assert_eq!(headers.len(), 1);
    assert_eq!(headers[0]["name"], "Subject");
    assert!(v["internalDate"].as_str().unwrap().ends_with("000"));
    let (_, body) = get(
        "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=zzzznothing".into(),
        "fake-gmail-alice",
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"resultSizeEstimate": 0})
    );

    // Zendesk: `next_page` URLs, a 422 past 1000 results.
    let (code, body) = get(
        "https://acme.zendesk.com/api/v2/search.json?query=type%3Aticket%20checkout&per_page=2"
            .into(),
        "fake-zendesk-alice",
    )
    .await;
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["results"][0]["result_type"], "ticket");
    assert!(v["next_page"].as_str().unwrap().contains("page=2"));
    assert!(v["count"].as_u64().unwrap() > 2);
    let (code, _) = get(
        "https://acme.zendesk.com/api/v2/search.json?query=checkout&per_page=100&page=11".into(),
        "fake-zendesk-alice",
    )
    .await;
    assert_eq!(code, 422);

    // HubSpot: search by POST, `paging.next.after`, filters on dates.
    let r = client
        .post("https://api.hubapi.com/crm/v3/objects/deals/search")
        .bearer_auth("fake-hubspot-alice")
        .json(&json!({
            "filterGroups": [{"filters": [{"propertyName": "dealstage", "operator": "EQ", "value": "closedwon"}]}],
            "properties": ["dealname", "amount"],
            "limit": 2,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v = json_of(r).await;
    assert_eq!(v["paging"]["next"]["after"], "2");
    let deal = &v["results"][0];
    assert!(deal["properties"]["dealname"].is_string());
    assert!(deal["properties"]["hs_lastmodifieddate"].is_string());
    assert!(deal["updatedAt"].is_string());
    let won = dataset::hubspot_objects()
        .iter()
        .filter(|o| o.object_type == "deals" && o.property("dealstage") == Some("closedwon"))
        .count();
    assert_eq!(v["total"], won);
    let r = client
        .post("https://api.hubapi.com/crm/v3/objects/widgets/search")
        .bearer_auth("fake-hubspot-alice")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

#[test]
fn dataset_sizes() {
    let hubspot = |t: &str| {
        dataset::hubspot_objects()
            .iter()
            .filter(|o| o.object_type == t)
            .count()
    };
    eprintln!(
        "dataset: confluence {}, drive {} ({} trashed), gmail {}, zendesk {}, hubspot {} (companies {}, contacts {}, deals {}, tickets {})",
        dataset::confluence_pages().len(),
        dataset::drive_files().len(),
        dataset::drive_files().iter().filter(|f| f.trashed).count(),
        dataset::gmail_messages().len(),
        dataset::zendesk_tickets().len(),
        dataset::hubspot_objects().len(),
        hubspot("companies"),
        hubspot("contacts"),
        hubspot("deals"),
        hubspot("tickets"),
    );
    assert!(dataset::confluence_pages().len() >= 25);
}
