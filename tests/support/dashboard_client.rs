//! A person's browser at the dashboard, driven by hand: a cookie kept by
//! hand, redirects followed by hand, forms posted with their CSRF token and
//! an Origin. The dashboard's tests and the replicas' tests share it.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::server::Demo;

/// The demo users' dashboard password.
pub const PASSWORD: &str = "quarry-demo-password";

/// A browser of one person: their session cookie, and a client that trusts
/// the demo's CA and the fake vendors' CA and follows no redirect.
pub struct Browser {
    pub client: reqwest::Client,
    pub origin: String,
    /// The session cookie (`name=value`).
    pub cookie: Option<String>,
    /// The single sign-on flow's cookie, while one is in flight.
    pub sso_cookie: Option<String>,
    /// The authorization request to come back to after signing in.
    pub return_cookie: Option<String>,
}

pub struct Page {
    pub status: StatusCode,
    pub location: Option<String>,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Browser {
    /// A browser at the demo's (first) server.
    pub fn new(demo: &Demo) -> Browser {
        Browser::on(demo, 0)
    }

    /// A browser at one of the demo's replicas.
    pub fn on(demo: &Demo, replica: usize) -> Browser {
        let ca = std::fs::read(&demo.ca_cert).expect("demo CA");
        let fake_ca =
            std::fs::read(demo.data_dir.join("tls/fake-saas-ca.pem")).expect("fake vendors' CA");
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
            .add_root_certificate(reqwest::Certificate::from_pem(&fake_ca).unwrap())
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Browser {
            client,
            origin: demo.replicas[replica].trim_end_matches("/v1").to_string(),
            cookie: None,
            sso_cookie: None,
            return_cookie: None,
        }
    }

    pub async fn read(&mut self, response: reqwest::Response) -> Page {
        let status = response.status();
        let headers = response.headers().clone();
        for value in headers.get_all("set-cookie") {
            let value = value.to_str().unwrap();
            let pair = value.split(';').next().unwrap();
            let (name, v) = pair.split_once('=').unwrap();
            for attribute in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
                assert!(value.contains(attribute), "{value} lacks {attribute}");
            }
            let kept = (!v.is_empty()).then(|| pair.to_string());
            match name {
                "__Host-quarry_session" => self.cookie = kept,
                "__Host-quarry_sso" => self.sso_cookie = kept,
                "__Host-quarry_return" => self.return_cookie = kept,
                other => panic!("an unexpected cookie {other}"),
            }
        }
        Page {
            status,
            location: headers
                .get("location")
                .map(|l| l.to_str().unwrap().to_string()),
            headers,
            text: response.text().await.unwrap(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        if path.starts_with("https://") {
            path.to_string()
        } else {
            format!("{}{path}", self.origin)
        }
    }

    /// The Cookie header this browser sends.
    fn cookies(&self) -> Option<String> {
        let all: Vec<&str> = [&self.cookie, &self.sso_cookie, &self.return_cookie]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        (!all.is_empty()).then(|| all.join("; "))
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let mut request = self.client.get(self.url(path));
        if let Some(cookies) = self.cookies() {
            request = request.header("cookie", cookies);
        }
        let response = request.send().await.unwrap();
        self.read(response).await
    }

    pub async fn post_from(&mut self, path: &str, form: &[(&str, &str)], origin: &str) -> Page {
        let mut request = self
            .client
            .post(self.url(path))
            .header("origin", origin)
            .form(form);
        if let Some(cookies) = self.cookies() {
            request = request.header("cookie", cookies);
        }
        let response = request.send().await.unwrap();
        self.read(response).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let origin = self.origin.clone();
        self.post_from(path, form, &origin).await
    }

    pub async fn sign_in(&mut self, email: &str, password: &str) -> Page {
        self.post(
            "/dashboard/login",
            &[("email", email), ("password", password)],
        )
        .await
    }

    /// The CSRF token of the page at `path`.
    pub async fn csrf(&mut self, path: &str) -> String {
        let page = self.get(path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.text);
        between(&page.text, r#"name="csrf" value=""#, "\"").expect("a csrf field")
    }

    /// Deletes the signed-in person's data, typing `email` to confirm.
    pub async fn delete_account(&mut self, email: &str) -> Page {
        let page = "/dashboard/account/delete";
        self.submit(page, page, &[("confirm_email", email)]).await
    }

    /// Posts a form of the page at `path` to `action`, with its CSRF token.
    pub async fn submit(&mut self, path: &str, action: &str, fields: &[(&str, &str)]) -> Page {
        let csrf = self.csrf(path).await;
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.post(action, &form).await
    }
}

pub fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(text[from..to].to_string())
}

/// A browser signed in as `name`@acme.test with the demo's password.
pub async fn signed_in(demo: &Demo, name: &str) -> Browser {
    signed_in_on(demo, 0, name).await
}

/// The same, at one of the demo's replicas.
pub async fn signed_in_on(demo: &Demo, replica: usize, name: &str) -> Browser {
    let mut browser = Browser::on(demo, replica);
    let page = browser
        .sign_in(&format!("{name}@acme.test"), PASSWORD)
        .await;
    assert_eq!(page.status, 303, "{}", page.text);
    assert_eq!(page.location.as_deref(), Some("/dashboard/tools"));
    assert!(browser.cookie.is_some());
    browser
}

/// Posts a form to one of the `/oauth/*` endpoints of a replica, as an
/// assistant does; the JSON answer.
pub async fn oauth_form(demo: &Demo, replica: usize, path: &str, form: &[(&str, &str)]) -> Value {
    let origin = demo.replicas[replica].trim_end_matches("/v1");
    demo.client
        .post(format!("{origin}{path}"))
        .form(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// An assistant asks the first replica for a device code and the signed-in
/// person approves it at `/device` of their own replica (typing it in lower
/// case); returns the device code.
pub async fn approve_at_device(demo: &Demo, person: &mut Browser, client_id: &str) -> String {
    let start = oauth_form(
        demo,
        0,
        "/oauth/device_authorization",
        &[("client_id", client_id)],
    )
    .await;
    let user_code = start["user_code"].as_str().unwrap();
    let page = person.get(&format!("/device?user_code={user_code}")).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(user_code), "the code is filled in");
    let wrong = person
        .submit("/device", "/device", &[("user_code", "BCDF-BCDF")])
        .await;
    assert_eq!(wrong.status, 404, "{}", wrong.text);
    let typed = user_code.to_lowercase();
    let review = person
        .submit("/device", "/device", &[("user_code", &typed)])
        .await;
    assert_eq!(review.status, 200, "{}", review.text);
    let escaped = client_id.replace('<', "&lt;").replace('>', "&gt;");
    assert!(
        review.text.contains(&escaped),
        "the assistant is named, escaped: {}",
        review.text
    );
    let csrf = between(&review.text, r#"name="csrf" value=""#, "\"").unwrap();
    let approved = person
        .post(
            "/device/decide",
            &[
                ("csrf", &csrf),
                ("user_code", user_code),
                ("decision", "approve"),
            ],
        )
        .await;
    assert_eq!(approved.status, 200, "{}", approved.text);
    start["device_code"].as_str().unwrap().to_string()
}

/// The assistant's poll after approval, at a replica: its API token and
/// refresh token.
pub async fn collect_device_tokens(
    demo: &Demo,
    replica: usize,
    device_code: &str,
    client_id: &str,
) -> Value {
    oauth_form(
        demo,
        replica,
        "/oauth/token",
        &[
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("device_code", device_code),
            ("client_id", client_id),
        ],
    )
    .await
}

/// Plays the person at the consent page the client sent them to: answers
/// `decision`, and returns where the browser was sent back.
pub async fn consent(person: &mut Browser, authorize_url: &str, decision: &str) -> String {
    let page = person.get(authorize_url).await;
    assert_eq!(page.status, 200, "the consent page: {}", page.text);
    let mut form = hidden_fields(&page);
    form.push(("decision".into(), decision.into()));
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let answered = person.post("/oauth/authorize", &form).await;
    assert_eq!(answered.status, 303, "{}", answered.text);
    answered.location.expect("sent back to the client")
}

/// The consent form's hidden fields (the request, carried; the CSRF token).
fn hidden_fields(page: &Page) -> Vec<(String, String)> {
    page.text
        .split(r#"<input type="hidden" name=""#)
        .skip(1)
        .map(|rest| {
            let name = rest.split('"').next().unwrap().to_string();
            let value = between(rest, r#"value=""#, "\"").unwrap_or_default();
            (name, unescape(&value))
        })
        .collect()
}

fn unescape(html: &str) -> String {
    html.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A verifier and its S256 challenge (RFC 7636's example).
pub const PKCE_VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const PKCE_CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// An MCP client registers (RFC 7591) as `name` and the signed-in person
/// allows it: the authorization code it was sent back with, and its id.
pub async fn authorized_mcp_client(
    demo: &Demo,
    person: &mut Browser,
    name: &str,
) -> (String, String) {
    let origin = demo.mcp_url.trim_end_matches("/mcp").to_string();
    let redirect = "http://127.0.0.1:33418/callback";
    let client: Value = demo
        .client
        .post(format!("{origin}/oauth/register"))
        .json(&serde_json::json!({ "client_name": name, "redirect_uris": [redirect] }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = client["client_id"]
        .as_str()
        .expect("registered")
        .to_string();
    let mut url = url::Url::parse(&format!("{origin}/oauth/authorize")).unwrap();
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", redirect)
        .append_pair("code_challenge", PKCE_CHALLENGE)
        .append_pair("code_challenge_method", "S256");
    let sent = consent(person, url.as_str(), "allow").await;
    let code = url::Url::parse(&sent)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code");
    (code, client_id)
}

/// The client exchanges its code: the token endpoint's answer.
pub async fn exchange_code(demo: &Demo, code: &str, client_id: &str) -> Value {
    oauth_form(
        demo,
        0,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", "http://127.0.0.1:33418/callback"),
            ("client_id", client_id),
            ("code_verifier", PKCE_VERIFIER),
        ],
    )
    .await
}
