//! The ten vendors after the first five (Confluence, Google Drive, Gmail, Zendesk,
//! HubSpot, Salesforce, Microsoft 365, Asana, Trello, Intercom) over HTTPS: their OAuth
//! servers (shared ones and Trello's legacy flow included), revocation, and the response
//! shapes, paging and errors the connectors read. One test per vendor and concern, each
//! on a fake of its own, so a failure names the vendor.

mod common;

use common::{
    access_token, assert_revoked, authorize, get_status, get_text, json_of, revoke_by_form, start,
};
use fake_saas::dataset;
use serde_json::{Value, json};

#[tokio::test]
async fn atlassian_oauth_issues_confluence_tokens_that_refresh_and_revoke() {
    let (fake, client) = start().await;
    // Atlassian: the scopes say Confluence.
    let t = authorize(
        &client,
        "https://auth.atlassian.com/authorize",
        "https://auth.atlassian.com/oauth/token",
        "search:confluence read:confluence-content.all offline_access",
    )
    .await;
    let confluence = access_token(&t);
    assert_eq!(t["token_type"], "Bearer");
    let search = format!(
        "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql=text~checkout",
        dataset::JIRA_CLOUD_ID
    );
    let jql = format!(
        "https://api.atlassian.com/ex/jira/{}/rest/api/3/search/jql?jql=text~checkout",
        dataset::JIRA_CLOUD_ID
    );
    assert_eq!(get_status(&client, &search, &confluence).await, 200);
    assert_eq!(
        get_status(&client, &jql, &confluence).await,
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
    let refreshed = access_token(&r);
    assert_eq!(get_status(&client, &search, &refreshed).await, 200);
    assert_eq!(
        revoke_by_form(
            &client,
            "https://auth.atlassian.com/oauth/revoke",
            &refreshed
        )
        .await,
        200
    );
    assert_revoked(&fake, &client, &search, &refreshed).await;
}

#[tokio::test]
async fn google_oauth_issues_a_token_per_product_and_revokes_it() {
    let (fake, client) = start().await;
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
    let gmail_token = access_token(&gmail);
    let drive_token = access_token(&drive);
    assert_eq!(get_status(&client, &messages, &gmail_token).await, 200);
    assert_eq!(get_status(&client, &files, &drive_token).await, 200);
    assert_eq!(get_status(&client, &files, &gmail_token).await, 401);
    assert_eq!(
        revoke_by_form(
            &client,
            "https://oauth2.googleapis.com/revoke",
            &gmail_token
        )
        .await,
        200
    );
    assert_eq!(get_status(&client, &messages, &gmail_token).await, 401);
    assert_eq!(
        revoke_by_form(
            &client,
            "https://oauth2.googleapis.com/revoke",
            &gmail_token
        )
        .await,
        200,
        "revoking twice is fine (the token is known)"
    );
    assert!(
        fake.revoked_tokens().contains(&gmail_token),
        "{gmail_token} revoked"
    );
}

#[tokio::test]
async fn zendesk_oauth_tokens_can_see_and_delete_themselves() {
    let (_fake, client) = start().await;
    // Zendesk: OAuth on the account's subdomain; the token can see and delete itself.
    let z = authorize(
        &client,
        "https://acme.zendesk.com/oauth/authorizations/new",
        "https://acme.zendesk.com/oauth/tokens",
        "tickets:read",
    )
    .await;
    let zt = access_token(&z);
    let zsearch =
        "https://acme.zendesk.com/api/v2/search.json?query=type%3Aticket%20checkout".to_string();
    assert_eq!(get_status(&client, &zsearch, &zt).await, 200);
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
    assert_eq!(get_status(&client, &zsearch, &zt).await, 401);
}

#[tokio::test]
async fn hubspot_oauth_authorizes_on_app_and_issues_and_revokes_on_api() {
    let (fake, client) = start().await;
    // HubSpot: app.hubspot.com authorizes, api.hubapi.com issues and revokes.
    let h = authorize(
        &client,
        "https://app.hubspot.com/oauth/authorize",
        "https://api.hubapi.com/oauth/2026-03/token",
        "oauth crm.objects.tickets.read",
    )
    .await;
    assert_eq!(h["expires_in"], 1800);
    let ht = access_token(&h);
    let account = "https://api.hubapi.com/account-info/v3/details".to_string();
    assert_eq!(get_status(&client, &account, &ht).await, 200);
    assert_eq!(
        revoke_by_form(
            &client,
            "https://api.hubapi.com/oauth/2026-03/token/revoke",
            &ht
        )
        .await,
        204
    );
    assert_revoked(&fake, &client, &account, &ht).await;
}

#[tokio::test]
async fn salesforce_oauth_says_where_the_org_lives_and_revokes() {
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
    let sf = access_token(&t);
    assert!(sf.starts_with(dataset::SALESFORCE_ORG_ID));
    let versions = "https://acme.my.salesforce.com/services/data";
    assert_eq!(get_status(&client, versions, &sf).await, 200);
    assert_eq!(
        revoke_by_form(
            &client,
            "https://login.salesforce.com/services/oauth2/revoke",
            &sf
        )
        .await,
        200
    );
    assert_revoked(&fake, &client, versions, &sf).await;
}

#[tokio::test]
async fn microsoft_revoking_sign_in_sessions_ends_the_token() {
    let (fake, client) = start().await;
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
    let ms = access_token(&t);
    let me = "https://graph.microsoft.com/v1.0/me";
    assert_eq!(get_status(&client, me, &ms).await, 200);
    let r = client
        .post("https://graph.microsoft.com/v1.0/me/revokeSignInSessions")
        .bearer_auth(&ms)
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await["value"], true);
    assert_revoked(&fake, &client, me, &ms).await;
}

#[tokio::test]
async fn asana_oauth_returns_the_user_with_the_token_and_revokes() {
    let (fake, client) = start().await;
    // Asana: the user comes with the token.
    let t = authorize(
        &client,
        "https://app.asana.com/-/oauth_authorize",
        "https://app.asana.com/-/oauth_token",
        "tasks:read",
    )
    .await;
    assert_eq!(t["data"]["name"], "alice");
    let asana = access_token(&t);
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
    assert_revoked(&fake, &client, me, &asana).await;
}

#[tokio::test]
async fn intercom_uninstalling_revokes_the_token() {
    let (fake, client) = start().await;
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
    let intercom = access_token(&t);
    let me = "https://api.intercom.io/me";
    assert_eq!(get_status(&client, me, &intercom).await, 200);
    let r = client
        .post("https://api.intercom.io/auth/uninstall")
        .bearer_auth(&intercom)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_revoked(&fake, &client, me, &intercom).await;
}

#[tokio::test]
async fn trello_legacy_authorization_hands_the_token_to_the_fragment() {
    let (fake, client) = start().await;
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
    assert!(fake.revoked_tokens().contains(&trello), "{trello} revoked");
}

#[tokio::test]
async fn confluence_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Confluence: relative URLs joined with `_links.base`, a cursor in `_links.next`.
    let url = format!(
        "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql={}&limit=2&expand=content.body.storage",
        dataset::JIRA_CLOUD_ID,
        "siteSearch%20~%20%22checkout%22%20AND%20type%20%3D%20page"
    );
    let (code, body) = get_text(&client, url, "fake-confluence-alice").await;
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
    let (code, body) = get_text(
        &client,
        format!(
            "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql=bogus%20%3D%20x",
            dataset::JIRA_CLOUD_ID
        ),
        "fake-confluence-alice",
    )
    .await;
    assert_eq!(code, 400, "{body}");
}

#[tokio::test]
async fn google_drive_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Drive: `fields` masks, trashed files only when asked, export with a BOM.
    let (code, body) = get_text(&client,
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
    let (_, body) = get_text(&client,
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
    let (code, text) = get_text(
        &client,
        format!(
            "https://www.googleapis.com/drive/v3/files/{}/export?mimeType=text/plain",
            doc["id"].as_str().unwrap()
        ),
        "fake-google-drive-alice",
    )
    .await;
    assert_eq!(code, 200);
    assert!(text.starts_with('\u{feff}') && text.contains("\r\n"));
    let (code, _) = get_text(&client,
        "https://www.googleapis.com/drive/v3/files?q=fullText%20contains%20%27x%27&orderBy=modifiedTime".into(),
        "fake-google-drive-alice",
    )
    .await;
    assert_eq!(code, 400, "no sorting with fullText");
}

#[tokio::test]
async fn gmail_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Gmail: ids only in the list, metadata headers on request.
    let (code, body) = get_text(
        &client,
        "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=stripe&maxResults=2".into(),
        "fake-gmail-alice",
    )
    .await;
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    let m = &v["messages"][0];
    assert_eq!(m.as_object().unwrap().len(), 2, "id and threadId: {m}");
    assert!(v["nextPageToken"].is_string());
    let (_, body) = get_text(&client,
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
    let (_, body) = get_text(
        &client,
        "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=zzzznothing".into(),
        "fake-gmail-alice",
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"resultSizeEstimate": 0})
    );
}

#[tokio::test]
async fn zendesk_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Zendesk: `next_page` URLs, a 422 past 1000 results.
    let (code, body) = get_text(
        &client,
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
    let (code, _) = get_text(
        &client,
        "https://acme.zendesk.com/api/v2/search.json?query=checkout&per_page=100&page=11".into(),
        "fake-zendesk-alice",
    )
    .await;
    assert_eq!(code, 422);
}

#[tokio::test]
async fn hubspot_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
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

#[tokio::test]
async fn salesforce_search_follows_the_vendors_shape() {
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
}

#[tokio::test]
async fn microsoft_graph_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
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
}

#[tokio::test]
async fn asana_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
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
}

#[tokio::test]
async fn trello_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
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
}

#[tokio::test]
async fn intercom_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
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
    // Seeded tokens of every vendor work, and only for their own vendor.
    assert_eq!(dataset::VENDORS.len(), 15);
}
