//! What the fake's HTTPS tests share: a fake with a client that reaches it, and the
//! OAuth round trips the vendors' tests make.

#![allow(dead_code)] // each test binary uses its own part

use fake_saas::{FakeSaas, FakeSaasConfig};
use reqwest::{Client, IntoUrl, Method, RequestBuilder, Response};
use serde::Serialize;
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

/// Sends a request; a transport error fails the test.
pub async fn send(request: RequestBuilder) -> Response {
    request.send().await.unwrap()
}

/// One user of a vendor's API: the client, the bearer token (if any) and the headers
/// every request carries (an API version, say). Each call sends at once and fails the
/// test on a transport error, so that a test reads as the requests it makes.
#[derive(Clone)]
pub struct Caller {
    client: Client,
    token: Option<String>,
    headers: Vec<(&'static str, String)>,
}

impl Caller {
    /// Calls with `token` as the bearer token.
    pub fn new(client: &Client, token: &str) -> Self {
        Caller {
            client: client.clone(),
            token: Some(token.to_string()),
            headers: Vec::new(),
        }
    }

    /// Calls without a token.
    pub fn anonymous(client: &Client) -> Self {
        Caller {
            client: client.clone(),
            token: None,
            headers: Vec::new(),
        }
    }

    /// The same caller, with `name: value` on every request.
    pub fn with_header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_string()));
        self
    }

    /// A request with the token and the headers, to add to before [`send`]ing it.
    pub fn request(&self, method: Method, url: impl IntoUrl) -> RequestBuilder {
        let mut request = self.client.request(method, url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        request
    }

    pub async fn get(&self, url: impl IntoUrl) -> Response {
        send(self.request(Method::GET, url)).await
    }

    /// A GET with query parameters.
    pub async fn get_with<Q: Serialize + ?Sized>(&self, url: impl IntoUrl, query: &Q) -> Response {
        send(self.request(Method::GET, url).query(query)).await
    }

    /// A POST without a body.
    pub async fn post(&self, url: impl IntoUrl) -> Response {
        send(self.request(Method::POST, url)).await
    }

    pub async fn post_json(&self, url: impl IntoUrl, body: &Value) -> Response {
        send(self.request(Method::POST, url).json(body)).await
    }

    /// A POST of `body`, and the status and JSON of the answer.
    pub async fn post_for_json(&self, url: &str, body: Value) -> (u16, Value) {
        let r = self.post_json(url, &body).await;
        (r.status().as_u16(), json_of(r).await)
    }

    pub async fn post_form<F: Serialize + ?Sized>(&self, url: impl IntoUrl, form: &F) -> Response {
        send(self.request(Method::POST, url).form(form)).await
    }

    pub async fn delete(&self, url: impl IntoUrl) -> Response {
        send(self.request(Method::DELETE, url)).await
    }
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
    let vendor = Caller::anonymous(client);
    let consent = [
        ("client_id", "quarry"),
        ("redirect_uri", "https://q.example/cb"),
        ("response_type", "code"),
        ("scope", scope),
        ("state", "s"),
    ];
    let r = vendor.get_with(authorize_url, &consent).await;
    assert_eq!(r.status(), 302, "{authorize_url}");
    let code = redirect_param(&r, "code");
    let grant = [
        ("grant_type", "authorization_code"),
        ("client_id", "quarry"),
        ("client_secret", "secret"),
        ("code", code.as_str()),
        ("redirect_uri", "https://q.example/cb"),
    ];
    let r = vendor.post_form(token_url, &grant).await;
    assert_eq!(r.status(), 200, "{token_url}");
    json_of(r).await
}

/// Goes through a vendor's consent page (`params` in its query), which redirects at
/// once; the authorization code the redirect carries.
pub async fn consent_code(client: &Client, authorize_url: &str, params: &[(&str, &str)]) -> String {
    let r = Caller::anonymous(client)
        .get_with(authorize_url, params)
        .await;
    redirect_param(&r, "code")
}

/// A query parameter of the URL a redirect (`r`) goes to.
pub fn redirect_param(r: &Response, name: &str) -> String {
    let location = reqwest::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
    let value = location.query_pairs().find(|(k, _)| k == name);
    value.unwrap().1.into_owned()
}

/// The status of a GET with a bearer token: whether the vendor takes the token.
pub async fn get_status(client: &Client, url: &str, token: &str) -> u16 {
    let r = Caller::new(client, token).get(url).await;
    r.status().as_u16()
}

/// RFC 7009 revocation: the token in a form, no client authentication; the status.
pub async fn revoke_by_form(client: &Client, url: &str, token: &str) -> u16 {
    let r = Caller::anonymous(client)
        .post_form(url, &[("token", token)])
        .await;
    r.status().as_u16()
}

/// The status and body of a GET with a bearer token.
pub async fn get_text(client: &Client, url: String, token: &str) -> (u16, String) {
    let r = Caller::new(client, token).get(url).await;
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The status and JSON body of a GET with a bearer token.
pub async fn get_json(client: &Client, url: impl IntoUrl, token: &str) -> (u16, Value) {
    let r = Caller::new(client, token).get(url).await;
    (r.status().as_u16(), json_of(r).await)
}

/// After a revocation: `probe` refuses the token, and the fake lists it as revoked.
pub async fn assert_revoked(fake: &FakeSaas, client: &Client, probe: &str, token: &str) {
    assert_eq!(get_status(client, probe, token).await, 401, "{probe}");
    let revoked = fake.revoked_tokens();
    assert!(revoked.iter().any(|t| t == token), "{token} revoked");
}
