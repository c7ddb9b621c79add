//! Salesforce, Microsoft 365, Asana, Trello and Intercom over HTTPS: their OAuth (or
//! Trello's legacy) authorization and revocation, and the response shapes, paging and
//! errors the connectors read.

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

async fn get_status(client: &Client, url: &str, token: &str) -> u16 {
    client
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn oauth_servers_issue_tokens_and_revoke_them() {
    let (fake, client) = start().await;

    // Salesforce: the token response says where the org lives; RFC 7009 revocation.
    let t = authorize(
        &client,
        "https://login.salesforce.com/services/oauth2/authorize",
        "https://login.salesforce.com/services/oauth2/token",
        "api refresh_token",
    )
    .await;
    assert_eq!(t["instance_url"], dataset::SALESFORCE_INSTANCE);
    assert!(
        t.get("expires_in").is_none(),
        "the org's session timeout applies"
    );
    let sf = t["access_token"].as_str().unwrap().to_string();
    assert!(sf.starts_with(dataset::SALESFORCE_ORG_ID));
    let versions = "https://acme.my.salesforce.com/services/data";
    assert_eq!(get_status(&client, versions, &sf).await, 200);
    let r = client
        .post("https://login.salesforce.com/services/oauth2/revoke")
        .form(&[("token", sf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(get_status(&client, versions, &sf).await, 401);

    // Microsoft: the identity platform per tenant; no per-token revocation, but
    // revokeSignInSessions ends the user's sessions.
    let t = authorize(
        &client,
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
        "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        "Files.Read.All Mail.Read offline_access",
    )
    .await;
    assert_eq!(t["token_type"], "Bearer");
    assert_eq!(t["scope"], "Files.Read.All Mail.Read offline_access");
    let ms = t["access_token"].as_str().unwrap().to_string();
    let me = "https://graph.microsoft.com/v1.0/me";
    assert_eq!(get_status(&client, me, &ms).await, 200);
    let r = client
        .post("https://graph.microsoft.com/v1.0/me/revokeSignInSessions")
        .bearer_auth(&ms)
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await["value"], true);
    assert_eq!(get_status(&client, me, &ms).await, 401);

    // Asana: the user comes with the token.
    let t = authorize(
        &client,
        "https://app.asana.com/-/oauth_authorize",
        "https://app.asana.com/-/oauth_token",
        "tasks:read",
    )
    .await;
    assert_eq!(t["data"]["name"], "alice");
    let asana = t["access_token"].as_str().unwrap().to_string();
    assert!(asana.starts_with("2/"));
    let me = "https://app.asana.com/api/1.0/users/me";
    assert_eq!(get_status(&client, me, &asana).await, 200);
    let r = client
        .post("https://app.asana.com/-/oauth_revoke")
        .form(&[
            ("client_id", "quarry"),
            ("client_secret", "s"),
            ("token", asana.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(get_status(&client, me, &asana).await, 401);

    // Intercom: no refresh token, no expiry; uninstalling revokes.
    let t = authorize(
        &client,
        "https://app.intercom.com/oauth",
        "https://api.intercom.io/auth/eagle/token",
        "",
    )
    .await;
    assert_eq!(t["token"], t["access_token"]);
    assert!(t.get("refresh_token").is_none());
    let intercom = t["access_token"].as_str().unwrap().to_string();
    let me = "https://api.intercom.io/me";
    assert_eq!(get_status(&client, me, &intercom).await, 200);
    let r = client
        .post("https://api.intercom.io/auth/uninstall")
        .bearer_auth(&intercom)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(get_status(&client, me, &intercom).await, 401);

    // Trello: the legacy flow hands the token to the return URL's fragment;
    // the key and token go in the Authorization header or the query.
    let r = client
        .get("https://trello.com/1/authorize")
        .query(&[
            ("key", "0a1b2c"),
            ("scope", "read"),
            ("expiration", "30days"),
            ("response_type", "token"),
            ("return_url", "https://q.example/trello"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let trello = location
        .strip_prefix("https://q.example/trello#token=")
        .unwrap()
        .to_string();
    assert!(trello.starts_with("ATTA"));
    let header = format!("OAuth oauth_consumer_key=\"0a1b2c\", oauth_token=\"{trello}\"");
    let r = client
        .get("https://api.trello.com/1/members/me")
        .header("authorization", &header)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(json_of(r).await["fullName"], "alice");
    let r = client
        .get("https://api.trello.com/1/members/me")
        .query(&[("key", "0a1b2c"), ("token", trello.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .delete(format!("https://api.trello.com/1/tokens/{trello}"))
        .header("authorization", &header)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .get("https://api.trello.com/1/members/me")
        .header("authorization", &header)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.text().await.unwrap(), "invalid token");

    let revoked = fake.revoked_tokens();
    for t in [&sf, &ms, &asana, &intercom, &trello] {
        assert!(revoked.contains(t), "{t} revoked");
    }
}

#[tokio::test]
async fn search_responses_follow_the_vendors_shapes() {
    let (_fake, client) = start().await;

    // Salesforce: searchRecords with attributes and nested relationships; offset only
    // with one sobject; where clauses on dates.
    let url = "https://acme.my.salesforce.com/services/data/v64.0/parameterizedSearch";
    let r = client
        .get(url)
        .bearer_auth("fake-salesforce-alice")
        .query(&[
            ("q", "charged OR twice"),
            ("sobject", "Case"),
            ("Case.fields", "Id,Subject,Account.Name,LastModifiedDate"),
            ("Case.limit", "2"),
            ("Case.where", "LastModifiedDate >= 2025-01-01T00:00:00Z"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("sforce-limit-info"));
    let body = json_of(r).await;
    let records = body["searchRecords"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["attributes"]["type"], "Case");
    assert!(records[0]["Account"]["Name"].is_string());
    assert!(records[0].get("Description").is_none());
    let r = client
        .get(url)
        .bearer_auth("fake-salesforce-alice")
        .query(&[("q", "checkout"), ("offset", "2")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(json_of(r).await[0]["errorCode"], "INVALID_SEARCH");
    let r = client
        .get(url)
        .bearer_auth("fake-salesforce-alice")
        .query(&[("q", "checkout"), ("Case.fields", "Id,Nope")])
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await[0]["errorCode"], "INVALID_FIELD");
    let r = client
        .get(url)
        .query(&[("q", "checkout")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(json_of(r).await[0]["errorCode"], "INVALID_SESSION_ID");

    // Graph: one request per kind, paged with from/size; summaries highlight.
    let search = |body: Value| {
        let client = client.clone();
        async move {
            let r = client
                .post("https://graph.microsoft.com/v1.0/search/query")
                .bearer_auth("fake-microsoft-365-alice")
                .json(&body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), json_of(r).await)
        }
    };
    let (status, body) = search(json!({"requests": [{"entityTypes": ["driveItem", "listItem"], "query": {"queryString": "certificate"}, "from": 0, "size": 2}]})).await;
    assert_eq!(status, 200);
    let container = &body["value"][0]["hitsContainers"][0];
    assert_eq!(container["moreResultsAvailable"], true);
    assert!(container["total"].as_u64().unwrap() > 2);
    let hit = &container["hits"][0];
    assert!(hit["summary"].as_str().unwrap().contains("<c0>"));
    assert!(hit["summary"].as_str().unwrap().ends_with("<ddd/>"));
    assert!(
        hit["resource"]["@odata.type"]
            .as_str()
            .unwrap()
            .starts_with("#microsoft.graph.")
    );
    let (status, body) = search(json!({"requests": [{"entityTypes": ["message", "driveItem"], "query": {"queryString": "x"}}]})).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "BadRequest");
    let (_, body) = search(json!({"requests": [{"entityTypes": ["message"], "query": {"queryString": "checkout received>=2030-01-01"}}]})).await;
    assert_eq!(body["value"][0]["hitsContainers"][0]["total"], 0);

    // Asana: compact records unless opt_fields; newest first; no relevance order.
    let base = format!(
        "https://app.asana.com/api/1.0/workspaces/{}/tasks/search",
        dataset::ASANA_WORKSPACE_GID
    );
    let r = client
        .get(&base)
        .bearer_auth("fake-asana-alice")
        .query(&[("text", "launch"), ("limit", "3")])
        .send()
        .await
        .unwrap();
    let data = json_of(r).await["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 3);
    assert_eq!(data[0]["resource_type"], "task");
    assert!(data[0].get("notes").is_none());
    let r = client
        .get(&base)
        .bearer_auth("fake-asana-alice")
        .query(&[
            ("text", "launch"),
            ("limit", "5"),
            ("opt_fields", "name,modified_at,created_by.name"),
            ("modified_at.before", "2026-01-01T00:00:00.000Z"),
        ])
        .send()
        .await
        .unwrap();
    let data = json_of(r).await["data"].as_array().unwrap().clone();
    let times: Vec<&str> = data
        .iter()
        .map(|t| t["modified_at"].as_str().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]) && times.iter().all(|t| *t < "2026"));
    assert!(data[0]["created_by"]["name"].is_string());
    let r = client
        .get(&base)
        .bearer_auth("fake-asana-alice")
        .query(&[("text", "launch"), ("limit", "101")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(json_of(r).await["errors"][0]["message"].is_string());

    // Trello: cards with their board, list and members; plain-text errors.
    let r = client
        .get("https://api.trello.com/1/search")
        .header(
            "authorization",
            "OAuth oauth_consumer_key=\"k\", oauth_token=\"fake-trello-bob\"",
        )
        .query(&[
            ("query", "announce"),
            ("modelTypes", "cards"),
            ("card_fields", "name,url"),
            ("cards_limit", "2"),
            ("cards_page", "1"),
            ("card_board", "true"),
        ])
        .send()
        .await
        .unwrap();
    let body = json_of(r).await;
    let cards = body["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 2);
    assert!(
        cards[0]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://trello.com/c/")
    );
    assert!(cards[0]["board"]["name"].is_string());
    assert!(cards[0].get("desc").is_none());
    let r = client
        .get("https://api.trello.com/1/search?query=x")
        .header(
            "authorization",
            "OAuth oauth_consumer_key=\"k\", oauth_token=\"nope\"",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.text().await.unwrap(), "invalid token");

    // Intercom: nested queries, cursors, and conversations with their parts.
    let post = |body: Value| {
        let client = client.clone();
        async move {
            let r = client
                .post("https://api.intercom.io/conversations/search")
                .bearer_auth("fake-intercom-alice")
                .header("intercom-version", "2.13")
                .json(&body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), json_of(r).await)
        }
    };
    let query = json!({"operator": "OR", "value": [
        {"field": "source.body", "operator": "~", "value": "checkout"},
        {"field": "source.body", "operator": "~", "value": "order"},
    ]});
    let (status, first) = post(json!({"query": query, "pagination": {"per_page": 2}})).await;
    assert_eq!(status, 200);
    assert_eq!(first["type"], "conversation.list");
    let cursor = first["pages"]["next"]["starting_after"].as_str().unwrap();
    let (_, second) =
        post(json!({"query": query, "pagination": {"per_page": 2, "starting_after": cursor}}))
            .await;
    assert_eq!(second["pages"]["page"], 2);
    assert_ne!(
        first["conversations"][0]["id"],
        second["conversations"][0]["id"]
    );
    let (status, body) =
        post(json!({"query": {"field": "nope", "operator": "=", "value": 1}})).await;
    assert_eq!(status, 400);
    assert_eq!(body["type"], "error.list");
    let id = first["conversations"][0]["id"].as_str().unwrap();
    let r = client
        .get(format!("https://api.intercom.io/conversations/{id}"))
        .bearer_auth("fake-intercom-alice")
        .send()
        .await
        .unwrap();
    let conversation = json_of(r).await;
    assert!(
        conversation["conversation_parts"]["conversation_parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["part_type"] == "note")
    );
}
