//! What the fake's HTTPS tests share: a fake with a client that reaches it, and the
//! OAuth round trips the vendors' tests make.

#![allow(dead_code)] // each test binary uses its own part

use fake_saas::{FakeSaas, FakeSaasConfig};
use reqwest::Client;
use serde_json::Value;

/// A fake, and a client that trusts its CA and sends every vendor host to it.
pub async fn start() -> (FakeSaas, Client) {
    let fake = FakeSaas::start(FakeSaasConfig::default()).await.unwrap();
    let client = client_for(&fake, false);
    (fake, client)
}

/// A client for `fake` (HTTP/1.1 only if `http1`). Redirects are not followed: the
/// OAuth tests read the codes and tokens in them.
pub fn client_for(fake: &FakeSaas, http1: bool) -> Client {
    let mut b = Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(fake.ca_cert_pem().as_bytes()).unwrap(),
        )
        .user_agent("quarry-tests/0.1")
        .redirect(reqwest::redirect::Policy::none());
    if http1 {
        b = b.http1_only();
    }
    for h in FakeSaas::hosts() {
        b = b.resolve(h, fake.addr());
    }
    b.build().unwrap()
}

pub async fn json_of(r: reqwest::Response) -> Value {
    r.json().await.unwrap()
}

/// The `access_token` of a token response.
pub fn access_token(token_response: &Value) -> String {
    token_response["access_token"].as_str().unwrap().to_string()
}

/// Runs an authorization-code flow and returns the token response.
pub async fn authorize(
    client: &Client,
    authorize_url: &str,
    token_url: &str,
    scope: &str,
) -> Value {
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

/// The status of a GET with a bearer token: whether the vendor takes the token.
pub async fn get_status(client: &Client, url: &str, token: &str) -> u16 {
    client
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// RFC 7009 revocation: the token in a form, no client authentication; the status.
pub async fn revoke_by_form(client: &Client, url: &str, token: &str) -> u16 {
    client
        .post(url)
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The status and body of a GET with a bearer token.
pub async fn get_text(client: &Client, url: String, token: &str) -> (u16, String) {
    let r = client.get(url).bearer_auth(token).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// After a revocation: `probe` refuses the token, and the fake lists it as revoked.
pub async fn assert_revoked(fake: &FakeSaas, client: &Client, probe: &str, token: &str) {
    assert_eq!(get_status(client, probe, token).await, 401, "{probe}");
    let revoked = fake.revoked_tokens();
    assert!(revoked.iter().any(|t| t == token), "{token} revoked");
}
