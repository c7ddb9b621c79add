//! The ten vendors after the first five (Confluence, Google Drive, Gmail, Zendesk,
//! HubSpot, Salesforce, Microsoft 365, Asana, Trello, Intercom) over HTTPS: their OAuth
//! servers (shared ones and Trello's legacy flow included), revocation, and the response
//! shapes, paging and errors the connectors read. One test per vendor and concern, each
//! on a fake of its own, so a failure names the vendor.

mod common;

use common::{
    Caller, access_token, assert_revoked, authorize, get_json, get_status, get_text, json_of,
    revoke_by_form, start,
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
    let status = get_status(&client, &jql, &confluence).await;
    assert_eq!(status, 401, "not a Jira token");
    let resources = "https://api.atlassian.com/oauth/token/accessible-resources";
    let (_, sites) = get_json(&client, resources, &confluence).await;
    assert_eq!(sites[0]["id"], dataset::JIRA_CLOUD_ID);
    assert!(sites[0]["scopes"].to_string().contains("confluence"));
    // Refresh keeps the product.
    let refresh = json!({"grant_type": "refresh_token", "client_id": "quarry", "client_secret": "s", "refresh_token": t["refresh_token"]});
    let atlassian = Caller::anonymous(&client);
    let r = atlassian
        .post_json("https://auth.atlassian.com/oauth/token", &refresh)
        .await;
    let refreshed = access_token(&json_of(r).await);
    assert_eq!(get_status(&client, &search, &refreshed).await, 200);
    // Atlassian documents no revocation endpoint for OAuth 2.0 (3LO) apps.
    let revoke = "https://auth.atlassian.com/oauth/revoke";
    assert_eq!(revoke_by_form(&client, revoke, &refreshed).await, 404);
    assert_eq!(get_status(&client, &search, &refreshed).await, 200);
    drop(fake);
}

#[tokio::test]
async fn google_oauth_issues_a_token_per_product_and_revokes_it() {
    let (fake, client) = start().await;
    // Google: a Gmail scope makes a Gmail token; Drive's is another.
    let google = |scope: &'static str| {
        authorize(
            &client,
            "https://accounts.google.com/o/oauth2/v2/auth",
            "https://oauth2.googleapis.com/token",
            scope,
        )
    };
    let gmail = google("https://www.googleapis.com/auth/gmail.readonly").await;
    let drive = google("https://www.googleapis.com/auth/drive.readonly").await;
    assert!(gmail["access_token"].as_str().unwrap().starts_with("ya29."));
    assert_eq!(
        gmail["scope"],
        "https://www.googleapis.com/auth/gmail.readonly"
    );
    let messages = "https://gmail.googleapis.com/gmail/v1/users/me/messages?q=checkout";
    let files = "https://www.googleapis.com/drive/v3/files?q=fullText%20contains%20%27checkout%27";
    let gmail_token = access_token(&gmail);
    let drive_token = access_token(&drive);
    assert_eq!(get_status(&client, messages, &gmail_token).await, 200);
    assert_eq!(get_status(&client, files, &drive_token).await, 200);
    assert_eq!(get_status(&client, files, &gmail_token).await, 401);
    let revoke = "https://oauth2.googleapis.com/revoke";
    assert_eq!(revoke_by_form(&client, revoke, &gmail_token).await, 200);
    assert_eq!(get_status(&client, messages, &gmail_token).await, 401);
    let again = revoke_by_form(&client, revoke, &gmail_token).await;
    assert_eq!(again, 200, "revoking twice is fine (the token is known)");
    assert!(
        fake.revoked_tokens().contains(&gmail_token),
        "{gmail_token} revoked"
    );
}

#[tokio::test]
async fn zendesk_oauth_tokens_can_see_and_delete_themselves() {
    let (_fake, client) = start().await;
    // Zendesk: OAuth on the account's subdomain; the token can see and delete itself.
    let zt = access_token(
        &authorize(
            &client,
            "https://acme.zendesk.com/oauth/authorizations/new",
            "https://acme.zendesk.com/oauth/tokens",
            "tickets:read",
        )
        .await,
    );
    let zsearch = "https://acme.zendesk.com/api/v2/search.json?query=type%3Aticket%20checkout";
    assert_eq!(get_status(&client, zsearch, &zt).await, 200);
    let current = "https://acme.zendesk.com/api/v2/oauth/tokens/current.json";
    let (_, current) = get_json(&client, current, &zt).await;
    let id = current["token"]["id"].as_u64().unwrap();
    let zendesk = Caller::new(&client, &zt);
    let own = format!("https://acme.zendesk.com/api/v2/oauth/tokens/{id}.json");
    assert_eq!(zendesk.delete(own).await.status(), 204);
    assert_eq!(get_status(&client, zsearch, &zt).await, 401);
}

/// How a vendor takes a token back.
enum Revocation {
    /// RFC 7009: the token in a form to this URL, which answers with this status.
    Form(&'static str, u16),
    /// Asana's: the token in a form with the client's credentials.
    FormWithClient(&'static str),
    /// Microsoft's: no per-token revocation, but ending the user's sign-in sessions
    /// (a POST with the token) ends the token.
    SignOut(&'static str),
    /// Intercom's: uninstalling the app (a POST with the token) revokes it.
    Uninstall(&'static str),
}

/// A vendor's OAuth round trip: authorize, take the code for a token, call the API with
/// it, revoke it; the API refuses it then, and the fake lists it as revoked.
struct RoundTrip {
    authorize: &'static str,
    token: &'static str,
    scope: &'static str,
    /// Checks what the vendor's token response says besides the token.
    token_response: fn(&Value),
    /// A GET the token is good for.
    probe: &'static str,
    revocation: Revocation,
}

impl RoundTrip {
    async fn run(&self) {
        let (fake, client) = start().await;
        let response = authorize(&client, self.authorize, self.token, self.scope).await;
        (self.token_response)(&response);
        let token = access_token(&response);
        assert_eq!(get_status(&client, self.probe, &token).await, 200);
        let with_token = Caller::new(&client, &token);
        match self.revocation {
            Revocation::Form(url, status) => {
                assert_eq!(revoke_by_form(&client, url, &token).await, status, "{url}");
            }
            Revocation::FormWithClient(url) => {
                let form = [
                    ("client_id", "quarry"),
                    ("client_secret", "s"),
                    ("token", token.as_str()),
                ];
                let r = Caller::anonymous(&client).post_form(url, &form).await;
                assert_eq!(r.status(), 200, "{url}");
            }
            Revocation::SignOut(url) => {
                assert_eq!(json_of(with_token.post(url).await).await["value"], true);
            }
            Revocation::Uninstall(url) => {
                assert_eq!(with_token.post(url).await.status(), 200, "{url}");
            }
        }
        assert_revoked(&fake, &client, self.probe, &token).await;
    }
}

#[tokio::test]
async fn hubspot_oauth_authorizes_on_app_and_issues_and_revokes_on_api() {
    // HubSpot: app.hubspot.com authorizes, api.hubapi.com issues and revokes.
    RoundTrip {
        authorize: "https://app.hubspot.com/oauth/authorize",
        token: "https://api.hubapi.com/oauth/2026-03/token",
        scope: "oauth crm.objects.tickets.read",
        token_response: |t| assert_eq!(t["expires_in"], 1800),
        probe: "https://api.hubapi.com/account-info/v3/details",
        revocation: Revocation::Form("https://api.hubapi.com/oauth/2026-03/token/revoke", 204),
    }
    .run()
    .await;
}

#[tokio::test]
async fn salesforce_oauth_says_where_the_org_lives_and_revokes() {
    // Salesforce: the token response says where the org lives; RFC 7009 revocation.
    RoundTrip {
        authorize: "https://login.salesforce.com/services/oauth2/authorize",
        token: "https://login.salesforce.com/services/oauth2/token",
        scope: "api refresh_token",
        token_response: |t| {
            assert_eq!(t["instance_url"], dataset::SALESFORCE_INSTANCE);
            let expiry = t.get("expires_in");
            assert!(expiry.is_none(), "the org's session timeout applies");
            assert!(access_token(t).starts_with(dataset::SALESFORCE_ORG_ID));
        },
        probe: "https://acme.my.salesforce.com/services/data",
        revocation: Revocation::Form("https://login.salesforce.com/services/oauth2/revoke", 200),
    }
    .run()
    .await;
}

#[tokio::test]
async fn microsoft_revoking_sign_in_sessions_ends_the_token() {
    // Microsoft: the identity platform per tenant; no per-token revocation, but
    // revokeSignInSessions ends the user's sessions.
    RoundTrip {
        authorize: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
        token: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        scope: "Files.Read.All Mail.Read offline_access",
        token_response: |t| {
            assert_eq!(t["token_type"], "Bearer");
            assert_eq!(t["scope"], "Files.Read.All Mail.Read offline_access");
        },
        probe: "https://graph.microsoft.com/v1.0/me",
        revocation: Revocation::SignOut("https://graph.microsoft.com/v1.0/me/revokeSignInSessions"),
    }
    .run()
    .await;
}

#[tokio::test]
async fn asana_oauth_returns_the_user_with_the_token_and_revokes() {
    // Asana: the user comes with the token.
    RoundTrip {
        authorize: "https://app.asana.com/-/oauth_authorize",
        token: "https://app.asana.com/-/oauth_token",
        scope: "tasks:read",
        token_response: |t| {
            assert_eq!(t["data"]["name"], "alice");
            assert!(access_token(t).starts_with("2/"));
        },
        probe: "https://app.asana.com/api/1.0/users/me",
        revocation: Revocation::FormWithClient("https://app.asana.com/-/oauth_revoke"),
    }
    .run()
    .await;
}

#[tokio::test]
async fn intercom_uninstalling_revokes_the_token() {
    // Intercom: no refresh token, no expiry; uninstalling revokes.
    RoundTrip {
        authorize: "https://app.intercom.com/oauth",
        token: "https://api.intercom.io/auth/eagle/token",
        scope: "",
        token_response: |t| {
            assert_eq!(t["token"], t["access_token"]);
            assert!(t.get("refresh_token").is_none());
        },
        probe: "https://api.intercom.io/me",
        revocation: Revocation::Uninstall("https://api.intercom.io/auth/uninstall"),
    }
    .run()
    .await;
}

#[tokio::test]
async fn trello_legacy_authorization_hands_the_token_to_the_fragment() {
    let (fake, client) = start().await;
    // Trello: the legacy flow hands the token to the return URL's fragment;
    // the key and token go in the Authorization header or the query.
    let consent = [
        ("key", "0a1b2c"),
        ("scope", "read"),
        ("expiration", "30days"),
        ("response_type", "token"),
        ("return_url", "https://q.example/trello"),
    ];
    let r = Caller::anonymous(&client)
        .get_with("https://trello.com/1/authorize", &consent)
        .await;
    assert_eq!(r.status(), 302);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let trello = location
        .strip_prefix("https://q.example/trello#token=")
        .unwrap()
        .to_string();
    assert!(trello.starts_with("ATTA"));
    let header = format!("OAuth oauth_consumer_key=\"0a1b2c\", oauth_token=\"{trello}\"");
    let by_header = Caller::anonymous(&client).with_header("authorization", &header);
    let me = "https://api.trello.com/1/members/me";
    let r = by_header.get(me).await;
    assert_eq!(r.status(), 200);
    assert_eq!(json_of(r).await["fullName"], "alice");
    let in_query = [("key", "0a1b2c"), ("token", trello.as_str())];
    let r = Caller::anonymous(&client).get_with(me, &in_query).await;
    assert_eq!(r.status(), 200);
    let own = format!("https://api.trello.com/1/tokens/{trello}");
    assert_eq!(by_header.delete(own).await.status(), 200);
    let r = by_header.get(me).await;
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
    let storage = first["content"]["body"]["storage"]["value"].as_str();
    assert!(storage.unwrap().starts_with('<'));
    assert!(first["excerpt"].as_str().unwrap().contains("@@@hl@@@"));
    let next = v["_links"]["next"].as_str().unwrap();
    assert!(
        next.starts_with("/rest/api/search?next=true&cursor="),
        "{next}"
    );
    let bogus = format!(
        "https://api.atlassian.com/ex/confluence/{}/wiki/rest/api/search?cql=bogus%20%3D%20x",
        dataset::JIRA_CLOUD_ID
    );
    let (code, body) = get_text(&client, bogus, "fake-confluence-alice").await;
    assert_eq!(code, 400, "{body}");
}

#[tokio::test]
async fn google_drive_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Drive: `fields` masks, trashed files only when asked, export with a BOM.
    let files = "https://www.googleapis.com/drive/v3/files";
    let drive = |url: String| get_text(&client, url, "fake-google-drive-alice");
    let (code, body) = drive(format!(
        "{files}?q=name%20contains%20%27loyalty%27&fields=files(id,name,trashed)"
    ))
    .await;
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 1, "only `files`: {v}");
    let trashed = v["files"].as_array().unwrap();
    assert!(trashed.iter().any(|f| f["trashed"] == true));
    let (_, body) = drive(format!(
        "{files}?q=name%20contains%20%27loyalty%27%20and%20trashed%20%3D%20false&fields=files(id,mimeType)"
    ))
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    let kept = v["files"].as_array().unwrap();
    let doc = kept.iter().find(|f| f["mimeType"] == dataset::MIME_DOC);
    let doc_id = doc.unwrap()["id"].as_str().unwrap();
    let (code, text) = drive(format!("{files}/{doc_id}/export?mimeType=text/plain")).await;
    assert_eq!(code, 200);
    assert!(text.starts_with('\u{feff}') && text.contains("\r\n"));
    let (code, _) = drive(format!(
        "{files}?q=fullText%20contains%20%27x%27&orderBy=modifiedTime"
    ))
    .await;
    assert_eq!(code, 400, "no sorting with fullText");
}

#[tokio::test]
async fn gmail_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Gmail: ids only in the list, metadata headers on request.
    let messages = "https://gmail.googleapis.com/gmail/v1/users/me/messages";
    let gmail = |query: &str| get_json(&client, format!("{messages}{query}"), "fake-gmail-alice");
    let (code, v) = gmail("?q=stripe&maxResults=2").await;
    assert_eq!(code, 200);
    let m = &v["messages"][0];
    assert_eq!(m.as_object().unwrap().len(), 2, "id and threadId: {m}");
    assert!(v["nextPageToken"].is_string());
    let id = m["id"].as_str().unwrap();
    let (_, v) = gmail(&format!("/{id}?format=metadata&metadataHeaders=Subject")).await;
    let headers = v["payload"]["headers"].as_array().unwrap();
    assert_eq!(headers.len(), 1);
    assert_eq!(headers[0]["name"], "Subject");
    assert!(v["internalDate"].as_str().unwrap().ends_with("000"));
    let (_, v) = gmail("?q=zzzznothing").await;
    assert_eq!(v, json!({"resultSizeEstimate": 0}));
}

#[tokio::test]
async fn zendesk_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Zendesk: `next_page` URLs, a 422 past 1000 results.
    let search = "https://acme.zendesk.com/api/v2/search.json";
    let zendesk =
        |query: &str| get_json(&client, format!("{search}?{query}"), "fake-zendesk-alice");
    let (code, v) = zendesk("query=type%3Aticket%20checkout&per_page=2").await;
    assert_eq!(code, 200);
    assert_eq!(v["results"][0]["result_type"], "ticket");
    assert!(v["next_page"].as_str().unwrap().contains("page=2"));
    assert!(v["count"].as_u64().unwrap() > 2);
    let (code, _) = zendesk("query=checkout&per_page=100&page=11").await;
    assert_eq!(code, 422);
}

#[tokio::test]
async fn hubspot_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // HubSpot: search by POST, `paging.next.after`, filters on dates.
    let hubspot = Caller::new(&client, "fake-hubspot-alice");
    let won_deals = json!({
        "filterGroups": [{"filters": [{"propertyName": "dealstage", "operator": "EQ", "value": "closedwon"}]}],
        "properties": ["dealname", "amount"],
        "limit": 2,
    });
    let r = hubspot
        .post_json(
            "https://api.hubapi.com/crm/v3/objects/deals/search",
            &won_deals,
        )
        .await;
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
    let r = hubspot
        .post_json(
            "https://api.hubapi.com/crm/v3/objects/widgets/search",
            &json!({}),
        )
        .await;
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn salesforce_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Salesforce: searchRecords with attributes and nested relationships; offset only
    // with one sobject; where clauses on dates.
    let url = "https://acme.my.salesforce.com/services/data/v64.0/parameterizedSearch";
    let salesforce = Caller::new(&client, "fake-salesforce-alice");
    let cases = [
        ("q", "charged OR twice"),
        ("sobject", "Case"),
        ("Case.fields", "Id,Subject,Account.Name,LastModifiedDate"),
        ("Case.limit", "2"),
        ("Case.where", "LastModifiedDate >= 2025-01-01T00:00:00Z"),
    ];
    let r = salesforce.get_with(url, &cases).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("sforce-limit-info"));
    let body = json_of(r).await;
    let records = body["searchRecords"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["attributes"]["type"], "Case");
    assert!(records[0]["Account"]["Name"].is_string());
    assert!(records[0].get("Description").is_none());
    let r = salesforce
        .get_with(url, &[("q", "checkout"), ("offset", "2")])
        .await;
    assert_eq!(r.status(), 400);
    assert_eq!(json_of(r).await[0]["errorCode"], "INVALID_SEARCH");
    let r = salesforce
        .get_with(url, &[("q", "checkout"), ("Case.fields", "Id,Nope")])
        .await;
    assert_eq!(json_of(r).await[0]["errorCode"], "INVALID_FIELD");
    let r = Caller::anonymous(&client)
        .get_with(url, &[("q", "checkout")])
        .await;
    assert_eq!(r.status(), 401);
    assert_eq!(json_of(r).await[0]["errorCode"], "INVALID_SESSION_ID");
}

#[tokio::test]
async fn microsoft_graph_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Graph: one request per kind, paged with from/size; summaries highlight.
    let graph = Caller::new(&client, "fake-microsoft-365-alice");
    let search = |body| graph.post_for_json("https://graph.microsoft.com/v1.0/search/query", body);
    let (status, body) = search(json!({"requests": [{"entityTypes": ["driveItem", "listItem"], "query": {"queryString": "certificate"}, "from": 0, "size": 2}]})).await;
    assert_eq!(status, 200);
    let container = &body["value"][0]["hitsContainers"][0];
    assert_eq!(container["moreResultsAvailable"], true);
    assert!(container["total"].as_u64().unwrap() > 2);
    let hit = &container["hits"][0];
    assert!(hit["summary"].as_str().unwrap().contains("<c0>"));
    assert!(hit["summary"].as_str().unwrap().ends_with("<ddd/>"));
    let odata_type = hit["resource"]["@odata.type"].as_str().unwrap();
    assert!(odata_type.starts_with("#microsoft.graph."));
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
    let asana = Caller::new(&client, "fake-asana-alice");
    let r = asana
        .get_with(&base, &[("text", "launch"), ("limit", "3")])
        .await;
    let data = json_of(r).await["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 3);
    assert_eq!(data[0]["resource_type"], "task");
    assert!(data[0].get("notes").is_none());
    let older_with_authors = [
        ("text", "launch"),
        ("limit", "5"),
        ("opt_fields", "name,modified_at,created_by.name"),
        ("modified_at.before", "2026-01-01T00:00:00.000Z"),
    ];
    let r = asana.get_with(&base, &older_with_authors).await;
    let data = json_of(r).await["data"].as_array().unwrap().clone();
    let times: Vec<&str> = data
        .iter()
        .map(|t| t["modified_at"].as_str().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]) && times.iter().all(|t| *t < "2026"));
    assert!(data[0]["created_by"]["name"].is_string());
    let r = asana
        .get_with(&base, &[("text", "launch"), ("limit", "101")])
        .await;
    assert_eq!(r.status(), 400);
    assert!(json_of(r).await["errors"][0]["message"].is_string());
}

#[tokio::test]
async fn trello_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Trello: cards with their board, list and members; plain-text errors.
    let trello = |token: &str| {
        let header = format!("OAuth oauth_consumer_key=\"k\", oauth_token=\"{token}\"");
        Caller::anonymous(&client).with_header("authorization", &header)
    };
    let cards_with_boards = [
        ("query", "announce"),
        ("modelTypes", "cards"),
        ("card_fields", "name,url"),
        ("cards_limit", "2"),
        ("cards_page", "1"),
        ("card_board", "true"),
    ];
    let r = trello("fake-trello-bob")
        .get_with("https://api.trello.com/1/search", &cards_with_boards)
        .await;
    let body = json_of(r).await;
    let cards = body["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 2);
    let url = cards[0]["url"].as_str().unwrap();
    assert!(url.starts_with("https://trello.com/c/"));
    assert!(cards[0]["board"]["name"].is_string());
    assert!(cards[0].get("desc").is_none());
    let r = trello("nope")
        .get("https://api.trello.com/1/search?query=x")
        .await;
    assert_eq!(r.status(), 401);
    assert_eq!(r.text().await.unwrap(), "invalid token");
}

#[tokio::test]
async fn intercom_search_follows_the_vendors_shape() {
    let (_fake, client) = start().await;
    // Intercom: nested queries, cursors, and conversations with their parts.
    let intercom =
        Caller::new(&client, "fake-intercom-alice").with_header("intercom-version", "2.13");
    let post = |body| intercom.post_for_json("https://api.intercom.io/conversations/search", body);
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
    let (_, conversation) = get_json(
        &client,
        format!("https://api.intercom.io/conversations/{id}"),
        "fake-intercom-alice",
    )
    .await;
    let parts = conversation["conversation_parts"]["conversation_parts"].as_array();
    assert!(parts.unwrap().iter().any(|p| p["part_type"] == "note"));
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
    assert_eq!(dataset::VENDORS.len(), 18);
}
