//! The dashboard, black-box: the real `quarry demo` binary over HTTPS,
//! driven like a browser would be (a cookie kept by hand, redirects
//! followed by hand, forms posted with their CSRF token and an Origin).

use std::time::Duration;

use quarry_tests::dashboard_client::{
    Browser, PASSWORD, Page, approve_at_device, authorized_mcp_client, between,
    collect_device_tokens, exchange_code, oauth_form, signed_in,
};
use quarry_tests::server::Demo;
use serde_json::{Value, json};

/// Whether the dashboard page at `path` shows `marker` (an item's
/// `data-…-id`, a signed-in email).
async fn shows(browser: &mut Browser, path: &str, marker: &str) -> bool {
    browser.get(path).await.text.contains(marker)
}

/// Disconnects `connector` on the tools page; returns the page it answers.
async fn disconnect(browser: &mut Browser, connector: &str) -> Page {
    let action = format!("/dashboard/tools/{connector}/disconnect");
    let page = browser.submit("/dashboard/tools", &action, &[]).await;
    assert_eq!(page.status, 200, "{}", page.text);
    page
}

#[tokio::test]
async fn signing_in_checks_the_password_and_limits_failures() {
    let demo = Demo::start(&[]);
    let mut browser = Browser::new(&demo);
    // Not signed in: the pages send you to sign in.
    let page = browser.get("/dashboard/tokens").await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location.as_deref(), Some("/dashboard/login"));
    let page = browser.get("/dashboard/login").await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains(r#"<label for="password">"#));
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(page.headers["x-frame-options"], "DENY");

    let wrong = browser.sign_in("bob@acme.test", "not-the-password").await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.text.contains("wrong"), "{}", wrong.text);
    assert!(browser.cookie.is_none());
    let unknown = browser.sign_in("nobody@acme.test", PASSWORD).await;
    assert_eq!(unknown.status, 401);
    assert_eq!(
        between(&unknown.text, "role=\"alert\">", "<"),
        between(&wrong.text, "role=\"alert\">", "<"),
        "unknown emails and wrong passwords look the same"
    );
    for _ in 0..3 {
        let page = browser.sign_in("bob@acme.test", "still-wrong!").await;
        assert_eq!(page.status, 401);
    }
    // Five failures from this address: even the right password waits now.
    let limited = browser.sign_in("bob@acme.test", PASSWORD).await;
    assert_eq!(limited.status, 429, "{}", limited.text);
    assert!(limited.headers.contains_key("retry-after"));
    assert!(browser.cookie.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_ins_made_at_once_cannot_pass_the_failure_limit() {
    // Five failures per address and email in the window (the default):
    // twenty wrong passwords sent at the same moment check at most five
    // passwords; the others are refused before any argon2id work.
    let demo = Demo::start(&[]);
    let attempts = (0..20).map(|n| {
        let mut browser = Browser::new(&demo);
        async move {
            browser
                .sign_in("bob@acme.test", &format!("wrong-{n}"))
                .await
                .status
        }
    });
    let statuses = futures::future::join_all(attempts).await;
    let checked = statuses.iter().filter(|s| s.as_u16() == 401).count();
    let refused = statuses.iter().filter(|s| s.as_u16() == 429).count();
    assert_eq!(checked + refused, 20, "{statuses:?}");
    assert!(checked <= 5, "at most five passwords checked: {statuses:?}");
}

#[tokio::test]
async fn wrong_codes_at_device_decide_are_limited_like_at_device() {
    let demo = Demo::start(&[]);
    let mut alice = signed_in(&demo, "alice").await;
    let mut statuses = Vec::new();
    for n in 0..7 {
        let code = format!("BCDF-BCD{}", ["F", "G", "H", "J", "K", "L", "M"][n]);
        let page = alice
            .submit(
                "/device",
                "/device/decide",
                &[("user_code", &code), ("decision", "approve")],
            )
            .await;
        statuses.push(page.status.as_u16());
    }
    assert_eq!(statuses[..5], [404; 5], "{statuses:?}");
    assert_eq!(statuses[5..], [429; 2], "{statuses:?}");
}

#[tokio::test]
async fn one_person_cannot_fill_the_connections_in_flight() {
    let demo = Demo::start(&[]);
    let mut alice = signed_in(&demo, "alice").await;
    let mut statuses = Vec::new();
    for _ in 0..31 {
        let page = alice
            .submit("/dashboard/tools", "/dashboard/tools/linear/connect", &[])
            .await;
        statuses.push(page.status.as_u16());
    }
    assert_eq!(statuses[..30], [303; 30], "{statuses:?}");
    assert_eq!(statuses[30], 429, "{statuses:?}");
}

#[tokio::test]
async fn the_right_password_signs_in() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "alice").await;
    let page = browser.get("/dashboard/tools").await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("alice@acme.test"));
    assert!(
        page.text
            .contains(r#"data-connector="linear" data-status="connected""#)
    );
}

#[tokio::test]
async fn forms_without_the_csrf_token_or_from_elsewhere_are_refused() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "alice").await;
    let csrf = browser.csrf("/dashboard/tokens").await;
    let missing = browser.post("/dashboard/tokens", &[]).await;
    assert_eq!(missing.status, 403, "{}", missing.text);
    let wrong = browser.post("/dashboard/tokens", &[("csrf", "nope")]).await;
    assert_eq!(wrong.status, 403);
    let elsewhere = browser
        .post_from(
            "/dashboard/tokens",
            &[("csrf", &csrf)],
            "https://evil.example",
        )
        .await;
    assert_eq!(elsewhere.status, 403);
    // Another person's token does not work in this session either.
    let mut bob = signed_in(&demo, "bob").await;
    let bobs = bob.csrf("/dashboard/tokens").await;
    let crossed = browser.post("/dashboard/tokens", &[("csrf", &bobs)]).await;
    assert_eq!(crossed.status, 403);
    let issued = browser.post("/dashboard/tokens", &[("csrf", &csrf)]).await;
    assert_eq!(issued.status, 200, "{}", issued.text);
    assert!(issued.text.contains("qt_"));
}

#[tokio::test]
async fn sessions_end_when_idle_and_on_sign_out() {
    let demo = Demo::start(&[("QUARRY_DASHBOARD__SESSION_IDLE_SECONDS", "2")]);
    let mut browser = signed_in(&demo, "alice").await;
    assert_eq!(browser.get("/dashboard/tokens").await.status, 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let page = browser.get("/dashboard/tokens").await;
    assert_eq!(page.status, 303, "an idle session has ended");
    assert_eq!(page.location.as_deref(), Some("/dashboard/login"));

    let mut browser = signed_in(&demo, "alice").await;
    let cookie = browser.cookie.clone();
    let out = browser
        .submit("/dashboard/tokens", "/dashboard/logout", &[])
        .await;
    assert_eq!(out.status, 303);
    assert!(browser.cookie.is_none(), "sign-out clears the cookie");
    // The old cookie is dead on the server too.
    browser.cookie = cookie;
    assert_eq!(browser.get("/dashboard/tokens").await.status, 303);
}

#[tokio::test]
async fn a_token_issued_on_the_dashboard_works_until_revoked() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "alice").await;
    let page = browser
        .submit("/dashboard/tokens", "/dashboard/tokens", &[])
        .await;
    assert_eq!(page.status, 200, "{}", page.text);
    let token = between(&page.text, r#"aria-label="New API token">"#, "<").expect("the token");
    assert!(token.starts_with("qt_"));
    let reply = demo
        .query(&token, &json!({ "query": "checkout timeouts" }))
        .await;
    assert_eq!(reply.status, 200, "{reply}");
    let me = demo.get("/me", Some(&token)).await;
    assert_eq!(me.body["email"], json!("alice@acme.test"), "{me}");

    // Listed without the secret, then revoked.
    let list = browser.get("/dashboard/tokens").await;
    assert!(!list.text.contains(&token), "the list never shows a token");
    let ids: Vec<String> = list
        .text
        .split(r#"data-token-id=""#)
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty());
    for id in &ids {
        let page = browser
            .submit(
                "/dashboard/tokens",
                &format!("/dashboard/tokens/{id}/revoke"),
                &[],
            )
            .await;
        assert_eq!(page.status, 303, "{}", page.text);
    }
    assert_eq!(demo.get("/me", Some(&token)).await.status, 401);
    assert!(!shows(&mut browser, "/dashboard/tokens", "data-token-id").await);
}

#[tokio::test]
async fn connecting_a_tool_runs_oauth_with_pkce_against_the_vendor() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "alice").await;
    // Disconnect the demo's Linear connection first.
    let page = disconnect(&mut browser, "linear").await;
    assert!(page.text.contains("disconnected"), "{}", page.text);
    let tools = browser.get("/dashboard/tools").await;
    assert!(
        tools
            .text
            .contains(r#"data-connector="linear" data-status="not_connected""#)
    );
    let csp = tools.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("form-action 'self' https://127.0.0.1:"),
        "{csp}"
    );

    let start = browser
        .submit("/dashboard/tools", "/dashboard/tools/linear/connect", &[])
        .await;
    assert_eq!(start.status, 303, "{}", start.text);
    let authorize = url::Url::parse(start.location.as_deref().unwrap()).unwrap();
    assert_eq!(authorize.path(), "/_vendor/linear.app/oauth/authorize");
    let params: std::collections::HashMap<String, String> =
        authorize.query_pairs().into_owned().collect();
    assert_eq!(params["response_type"], "code");
    assert_eq!(params["code_challenge_method"], "S256");
    assert_eq!(
        params["scope"], "read",
        "only the manifest's read-only scopes"
    );
    assert_eq!(params["client_id"], "quarry-demo-linear");
    assert!(params["code_challenge"].len() >= 43);
    assert_eq!(
        params["redirect_uri"],
        format!("{}/dashboard/oauth/callback", browser.origin)
    );

    // The fake vendor approves (for alice) and sends the browser back.
    let approved = browser.get(authorize.as_str()).await;
    assert_eq!(approved.status, 302, "{}", approved.text);
    let callback = approved.location.unwrap();
    assert!(callback.starts_with(&format!("{}/dashboard/oauth/callback?", browser.origin)));

    // Another session cannot complete it.
    let mut bob = signed_in(&demo, "bob").await;
    let stolen = bob.get(&callback).await;
    assert_eq!(stolen.status, 400, "{}", stolen.text);
    // Bob's attempt used the state up: alice starts again.
    let start = browser
        .submit("/dashboard/tools", "/dashboard/tools/linear/connect", &[])
        .await;
    let approved = browser.get(start.location.as_deref().unwrap()).await;
    let callback = approved.location.unwrap();
    let done = browser.get(&callback).await;
    assert_eq!(done.status, 303, "{}", done.text);
    assert_eq!(
        done.location.as_deref(),
        Some("/dashboard/tools?connected=linear")
    );
    let again = browser.get(&callback).await;
    assert_eq!(again.status, 400, "a state is used once");

    let tools = browser.get("/dashboard/tools").await;
    assert!(
        tools
            .text
            .contains(r#"data-connector="linear" data-status="connected""#)
    );
    // The vendor saw the verifier, and the new token answers queries.
    let requests = demo.fake("/_fake/requests").await;
    let exchange = requests
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == json!("/oauth/token") && r["host"] == json!("api.linear.app"))
        .expect("a token exchange at Linear");
    let body: Vec<u8> = serde_json::from_value(exchange["body"].clone()).unwrap();
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains("code_verifier="), "{body}");
    assert!(body.contains("grant_type=authorization_code"), "{body}");
    answers(&demo, demo.alice(), "linear").await;
}

#[tokio::test]
async fn webhooks_are_registered_and_removed_on_the_dashboard() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "alice").await;
    let bad = browser
        .submit(
            "/dashboard/webhooks",
            "/dashboard/webhooks",
            &[("url", "ftp://example.com/x")],
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    let page = browser
        .submit(
            "/dashboard/webhooks",
            "/dashboard/webhooks",
            &[
                ("url", "http://127.0.0.1:9/hook"),
                ("events", "user.deleted"),
            ],
        )
        .await;
    assert_eq!(page.status, 201, "{}", page.text);
    let secret = between(&page.text, r#"aria-label="Signing secret">"#, "<").unwrap();
    assert!(secret.starts_with("whsec_"));
    let id = between(&page.text, r#"data-webhook-id=""#, "\"").unwrap();
    let listed = demo.get("/webhooks", Some(demo.alice())).await;
    assert!(listed.raw.windows(id.len()).any(|w| w == id.as_bytes()));
    let list = browser.get("/dashboard/webhooks").await;
    assert!(!list.text.contains(&secret), "the secret is shown once");
    let removed = browser
        .submit(
            "/dashboard/webhooks",
            &format!("/dashboard/webhooks/{id}/remove"),
            &[],
        )
        .await;
    assert_eq!(removed.status, 303);
    assert!(!shows(&mut browser, "/dashboard/webhooks", "data-webhook-id").await);
}

#[tokio::test]
async fn deleting_my_data_needs_the_email_then_ends_everything() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "alice").await;
    let wrong = browser.delete_account("bob@acme.test").await;
    assert_eq!(wrong.status, 400);
    assert_eq!(demo.get("/me", Some(demo.alice())).await.status, 200);
    let cookie = browser.cookie.clone();
    let done = browser.delete_account("Alice@acme.test").await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(done.text.contains("Goodbye"));
    assert!(browser.cookie.is_none());
    assert_eq!(demo.get("/me", Some(demo.alice())).await.status, 401);
    browser.cookie = cookie;
    assert_eq!(browser.get("/dashboard/tools").await.status, 303);
    let again = browser.sign_in("alice@acme.test", PASSWORD).await;
    assert_eq!(again.status, 401);
    // Bob is untouched.
    assert_eq!(demo.get("/me", Some(demo.bob())).await.status, 200);
}

/// The device flow end to end: an assistant asks for a code, alice enters
/// it at `/device` and approves, the assistant's poll gets an API token
/// that queries as alice and a refresh token that rotates.
#[tokio::test]
async fn an_assistant_is_approved_at_device_and_gets_tokens() {
    let demo = Demo::start(&[]);
    let mut alice = signed_in(&demo, "alice").await;
    let device_code = approve_at_device(&demo, &mut alice, "Test Assistant <3>").await;
    let tokens = collect_device_tokens(&demo, 0, &device_code, "Test Assistant <3>").await;
    let access = tokens["access_token"].as_str().expect("an API token");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    let me = demo.get("/me", Some(access)).await;
    me.expect(200, None);
    assert_eq!(me.body["email"], "alice@acme.test");

    let renewed: Value = oauth_form(
        &demo,
        0,
        "/oauth/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", "Test Assistant <3>"),
        ],
    )
    .await;
    let second = renewed["access_token"].as_str().expect("a renewed token");
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"], "rotated");
    demo.get("/me", Some(second)).await.expect(200, None);
}

// ---- single sign-on (the demo's Okta, played by fake-saas) ----------------

/// Starts a sign-in with the identity provider and returns the authorize
/// URL the browser was sent to.
async fn start_sso(browser: &mut Browser) -> url::Url {
    let start = browser.get("/dashboard/sso/start").await;
    assert_eq!(start.status, 303, "{}", start.text);
    assert!(
        browser.sso_cookie.is_some(),
        "the flow is bound to this browser"
    );
    url::Url::parse(start.location.as_deref().unwrap()).unwrap()
}

/// Signs in at the provider as `email` and returns the callback's page.
async fn sso_as(browser: &mut Browser, email: &str) -> Page {
    let mut authorize = start_sso(browser).await;
    authorize.query_pairs_mut().append_pair("fake_user", email);
    let approved = browser.get(authorize.as_str()).await;
    assert_eq!(approved.status, 302, "{}", approved.text);
    let callback = approved.location.unwrap();
    browser.get(&callback).await
}

/// Signs `email` in with the identity provider in a new browser, and sees
/// the dashboard as that person.
async fn signs_in_by_sso(demo: &Demo, email: &str) {
    let mut browser = Browser::new(demo);
    let page = sso_as(&mut browser, email).await;
    assert_eq!(page.status, 303, "{}", page.text);
    assert!(shows(&mut browser, "/dashboard/tools", email).await);
}

/// The alert a refused sign-in shows.
fn alert(page: &Page) -> String {
    between(&page.text, "role=\"alert\">", "</p>").unwrap_or_default()
}

#[tokio::test]
async fn single_sign_on_links_an_account_by_verified_email_then_by_subject() {
    let demo = Demo::start(&[]);
    let mut browser = Browser::new(&demo);
    let login = browser.get("/dashboard/login").await;
    assert!(
        login
            .text
            .contains(r#"href="/dashboard/sso/start">Sign in with Okta"#),
        "{}",
        login.text
    );

    let authorize = start_sso(&mut browser).await;
    assert_eq!(
        authorize.path(),
        "/_vendor/acme.okta.com/oauth2/v1/authorize"
    );
    let params: std::collections::HashMap<String, String> =
        authorize.query_pairs().into_owned().collect();
    assert_eq!(params["response_type"], "code");
    assert_eq!(params["client_id"], "quarry-demo-sso");
    assert_eq!(params["scope"], "openid email");
    assert_eq!(params["code_challenge_method"], "S256");
    assert!(params["nonce"].len() >= 32 && params["state"].len() >= 32);
    assert_eq!(
        params["redirect_uri"],
        format!("{}/dashboard/sso/callback", browser.origin)
    );
    // The provider asks who is signing in.
    let chooser = browser.get(authorize.as_str()).await;
    assert_eq!(chooser.status, 200);
    assert!(chooser.text.contains("alice@acme.test"), "{}", chooser.text);

    let done = sso_as(&mut browser, "alice@acme.test").await;
    assert_eq!(done.status, 303, "{}", done.text);
    assert_eq!(done.location.as_deref(), Some("/dashboard/tools"));
    assert!(browser.cookie.is_some() && browser.sso_cookie.is_none());
    let tools = browser.get("/dashboard/tools").await;
    assert!(tools.text.contains("alice@acme.test"), "{}", tools.text);
    // The code went back with the verifier and the client's credentials.
    let requests = demo.fake("/_fake/requests").await;
    let exchange = requests
        .as_array()
        .unwrap()
        .iter()
        .rfind(|r| r["path"] == json!("/oauth2/v1/token"))
        .expect("a code exchange at Okta");
    let basic =
        exchange["headers"].as_array().unwrap().iter().any(|h| {
            h[0] == json!("authorization") && h[1].as_str().unwrap().starts_with("Basic ")
        });
    assert!(basic, "client_secret_basic: {exchange}");
    let body: Vec<u8> = serde_json::from_value(exchange["body"].clone()).unwrap();
    assert!(String::from_utf8(body).unwrap().contains("code_verifier="));

    // Alice's email changes at the provider: the link by subject still
    // reaches her account.
    demo.fake_post(
        "/_fake/oidc/identities",
        &json!({"email": "alice.ng@acme.test", "sub": "00u1alice0000000001"}),
    )
    .await;
    let mut renamed = Browser::new(&demo);
    let page = sso_as(&mut renamed, "alice.ng@acme.test").await;
    assert_eq!(page.status, 303, "{}", page.text);
    let tools = renamed.get("/dashboard/tools").await;
    assert!(tools.text.contains("alice@acme.test"));

    // Her old email handed to someone else at the provider does not reach
    // her account, which is linked to her.
    demo.fake_post(
        "/_fake/oidc/identities",
        &json!({"email": "alice@acme.test", "sub": "00u1newcomer"}),
    )
    .await;
    let mut newcomer = Browser::new(&demo);
    let page = sso_as(&mut newcomer, "alice@acme.test").await;
    assert_eq!(page.status, 403, "{}", page.text);
    assert!(
        alert(&page).contains("linked to another identity"),
        "{}",
        page.text
    );
    assert!(newcomer.cookie.is_none());

    // Deleting her data removes her link too, in the deletion itself (a
    // sign-in would also drop a link to a deleted account, so none is tried).
    let mut browser = renamed;
    let deleted = browser.delete_account("alice@acme.test").await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    let mut demo = demo;
    demo.stop();
    let store = quarry_store::Store::open(&demo.data_dir, None).unwrap();
    let linked = quarry::dashboard::sso::linked_users(&store).unwrap();
    assert!(linked.is_empty(), "links left: {linked:?}");
}

#[tokio::test]
async fn single_sign_on_refuses_what_it_cannot_trust() {
    // Every refusal counts against the address; allow this test's many.
    let demo = Demo::start(&[("QUARRY_DASHBOARD__LOGIN_FAILURES", "50")]);
    let refused = |page: &Page, status: u16, says: &str| {
        assert_eq!(page.status, status, "{}", page.text);
        assert!(alert(page).contains(says), "{says:?} not in {}", page.text);
    };
    let page = sso_as(&mut Browser::new(&demo), "carol@acme.test").await;
    refused(&page, 403, "has not verified carol@acme.test");
    let page = sso_as(&mut Browser::new(&demo), "eve@elsewhere.test").await;
    refused(&page, 403, "no Quarry account for eve@elsewhere.test");

    // A callback opened in another browser (no flow cookie) is refused;
    // in the browser that started it, it signs in, once.
    let mut browser = Browser::new(&demo);
    let mut authorize = start_sso(&mut browser).await;
    authorize
        .query_pairs_mut()
        .append_pair("fake_user", "bob@acme.test");
    let callback = browser.get(authorize.as_str()).await.location.unwrap();
    let mut elsewhere = Browser::new(&demo);
    refused(
        &elsewhere.get(&callback).await,
        400,
        "started in another browser",
    );
    assert!(elsewhere.cookie.is_none());
    let sso_cookie = browser.sso_cookie.clone();
    assert_eq!(browser.get(&callback).await.status, 303);
    assert!(browser.cookie.is_some() && browser.sso_cookie.is_none());
    // The same callback again, even with the flow's cookie put back.
    let mut replay = Browser::new(&demo);
    replay.sso_cookie = sso_cookie;
    refused(&replay.get(&callback).await, 401, "did not work");
    assert!(replay.cookie.is_none());

    // ID tokens wrong in each way are refused, and sign no one in.
    for (how, says) in [
        ("wrong_audience", "InvalidAudience"),
        ("wrong_issuer", "InvalidIssuer"),
        ("expired", "ExpiredSignature"),
        ("wrong_nonce", "nonce"),
        ("issued_in_future", "iat"),
        ("bad_signature", "InvalidSignature"),
        ("unsigned", "header"),
        ("symmetric", "HS256"),
    ] {
        demo.fake_post("/_fake/oidc/misbehave", &json!({ "next": how }))
            .await;
        let mut browser = Browser::new(&demo);
        let page = sso_as(&mut browser, "bob@acme.test").await;
        refused(&page, 401, says);
        assert!(browser.cookie.is_none(), "{how}");
    }

    // The provider denies: said plainly.
    let mut browser = Browser::new(&demo);
    let authorize = start_sso(&mut browser).await;
    let mut denied =
        url::Url::parse(&format!("{}/dashboard/sso/callback", browser.origin)).unwrap();
    let state = authorize
        .query_pairs()
        .find(|(k, _)| k == "state")
        .unwrap()
        .1
        .into_owned();
    denied
        .query_pairs_mut()
        .append_pair("error", "access_denied")
        .append_pair("state", &state);
    refused(&browser.get(denied.as_str()).await, 401, "access_denied");

    // The provider rotates to a new ES256 key: its keys are fetched again.
    let rotated = demo.fake_post("/_fake/oidc/rotate", &json!({})).await;
    assert!(
        rotated["kid"]
            .as_str()
            .unwrap()
            .starts_with("fake-okta-ec-")
    );
    signs_in_by_sso(&demo, "bob@acme.test").await;
}

/// Sign-ins started and never finished leave nothing on the server: one
/// address starting hundreds (or thousands of addresses starting some)
/// cannot stop anyone else signing in. (Each start once stored a flow,
/// 30 per address and 10,000 in all: 334 addresses locked single sign-on
/// for everyone for ten minutes.)
#[tokio::test]
async fn sign_ins_started_and_abandoned_cannot_lock_single_sign_on() {
    let demo = Demo::start(&[]);
    for _ in 0..300 {
        let page = Browser::new(&demo).get("/dashboard/sso/start").await;
        assert_eq!(page.status, 303, "{}", page.text);
    }
    signs_in_by_sso(&demo, "alice@acme.test").await;
}

/// Connects `connector` for the signed-in person through the fake vendor,
/// typing `settings` on the settings step when there is one; returns the
/// callback's page.
async fn connect_with(browser: &mut Browser, connector: &str, settings: &[(&str, &str)]) -> Page {
    let action = format!("/dashboard/tools/{connector}/connect");
    let mut start = browser.submit("/dashboard/tools", &action, &[]).await;
    if start.status == 200 {
        let csrf = between(&start.text, r#"name="csrf" value=""#, "\"").unwrap();
        let mut form = vec![("csrf", csrf), ("settings_step", "1".to_string())];
        for (name, value) in settings {
            form.push((*name, value.to_string()));
        }
        let form: Vec<(&str, &str)> = form.iter().map(|(n, v)| (*n, v.as_str())).collect();
        start = browser.post(&action, &form).await;
    }
    assert_eq!(start.status, 303, "{}", start.text);
    let approved = browser.get(start.location.as_deref().unwrap()).await;
    assert_eq!(approved.status, 302, "{}", approved.text);
    browser.get(&approved.location.unwrap()).await
}

/// `token`'s query to one connector is answered by it without error.
async fn answers(demo: &Demo, token: &str, connector: &str) {
    let reply = demo
        .query(
            token,
            &json!({ "query": "checkout timeouts", "connectors": [connector] }),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply}");
    let result = &reply.body["results"][0];
    assert_eq!(result["connector"], json!(connector), "{reply}");
    assert!(result.get("error").is_none_or(|e| e.is_null()), "{reply}");
}

#[tokio::test]
async fn connecting_asks_for_the_settings_a_tool_needs() {
    let demo = Demo::start(&[]);
    let mut browser = signed_in(&demo, "bob").await;
    for connector in ["zendesk", "salesforce", "github", "google-calendar"] {
        let action = format!("/dashboard/tools/{connector}/disconnect");
        let page = browser.submit("/dashboard/tools", &action, &[]).await;
        assert_eq!(page.status, 200, "{connector}: {}", page.text);
    }

    // Zendesk's OAuth lives on the account's subdomain: asked for first.
    let step = browser
        .submit("/dashboard/tools", "/dashboard/tools/zendesk/connect", &[])
        .await;
    assert_eq!(step.status, 200, "{}", step.text);
    assert!(
        step.text.contains(r#"name="setting.subdomain""#),
        "{}",
        step.text
    );
    let csp = step.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("https://*.zendesk.com"), "{csp}");
    let csrf = between(&step.text, r#"name="csrf" value=""#, "\"").unwrap();
    for (typed, says) in [
        ("", "subdomain is required"),
        ("evil.com/x", "hyphens only"),
    ] {
        let page = browser
            .post(
                "/dashboard/tools/zendesk/connect",
                &[
                    ("csrf", &csrf),
                    ("settings_step", "1"),
                    ("setting.subdomain", typed),
                ],
            )
            .await;
        assert_eq!(page.status, 400, "{}", page.text);
        assert!(page.text.contains(says), "{says}: {}", page.text);
    }
    let done = connect_with(&mut browser, "zendesk", &[("setting.subdomain", "acme")]).await;
    assert_eq!(done.status, 303, "{}", done.text);
    answers(&demo, demo.bob(), "zendesk").await;
    let requests = demo.fake("/_fake/requests").await;
    assert!(
        requests
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["host"] == json!("acme.zendesk.com") && r["path"] == json!("/oauth/tokens")),
        "the code went to the account's subdomain"
    );

    // Salesforce's instance comes with the token: nothing to type.
    let done = connect_with(&mut browser, "salesforce", &[]).await;
    assert_eq!(done.status, 303, "{}", done.text);
    answers(&demo, demo.bob(), "salesforce").await;

    // Trello issues tokens on its own legacy page, not by OAuth 2: no
    // Connect button, and a forged one is refused.
    disconnect(&mut browser, "trello").await;
    let tools = browser.get("/dashboard/tools").await;
    assert!(!tools.text.contains("/dashboard/tools/trello/connect"));
    assert!(
        tools
            .text
            .contains("Trello does not issue tokens through OAuth 2")
    );
    let refused = browser
        .submit("/dashboard/tools", "/dashboard/tools/trello/connect", &[])
        .await;
    assert_eq!(refused.status, 409, "{}", refused.text);

    // GitHub needs the search's bounds (a required setting).
    let done = connect_with(&mut browser, "github", &[("setting.scope", "org:acme")]).await;
    assert_eq!(done.status, 303, "{}", done.text);
    answers(&demo, demo.bob(), "github").await;

    // Google Calendar (played by fake-saas from data): nothing to type,
    // Google's OAuth with Calendar's own read-only scope.
    let done = connect_with(&mut browser, "google-calendar", &[]).await;
    assert_eq!(done.status, 303, "{}", done.text);
    answers(&demo, demo.bob(), "google-calendar").await;
}

/// The registry of user data, proven on a whole life: alice leaves a record
/// in every kind of space (sessions, a single sign-on link, a connection in
/// flight, a device code she approved that no assistant collected, an
/// assistant's refresh tokens, a query with an idempotency key, so archive,
/// history and counters too, a webhook with its test event queued), then
/// deletes her data on the dashboard. With the server stopped, every space
/// in the data folder is declared (as user data or not), and none holds a
/// record that names her.
#[tokio::test]
async fn after_a_deletion_no_space_holds_a_record_that_names_the_user() {
    let data = tempfile::tempdir().unwrap();
    let mut demo = Demo::options().data_dir(data.path()).start();
    let me = demo.get("/me", Some(demo.alice())).await;
    let user_id = me.body["user_id"].as_str().unwrap().to_string();

    let mut alice = signed_in(&demo, "alice").await;
    let mut single_sign_on = Browser::new(&demo);
    let signed = sso_as(&mut single_sign_on, "alice@acme.test").await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let started = alice
        .submit("/dashboard/tools", "/dashboard/tools/linear/connect", &[])
        .await;
    assert_eq!(
        started.status, 303,
        "a connection in flight: {}",
        started.text
    );
    let collected = approve_at_device(&demo, &mut alice, "Assistant A").await;
    let tokens = collect_device_tokens(&demo, 0, &collected, "Assistant A").await;
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    approve_at_device(&demo, &mut alice, "Assistant B").await;
    // An MCP client allowed and holding tokens, and one with its code not
    // yet exchanged.
    let (code, client) = authorized_mcp_client(&demo, &mut alice, "MCP client A").await;
    let mcp_tokens = exchange_code(&demo, &code, &client).await;
    assert!(mcp_tokens["refresh_token"].is_string(), "{mcp_tokens}");
    authorized_mcp_client(&demo, &mut alice, "MCP client B").await;
    demo.call(reqwest::Method::POST, "/query")
        .token(demo.alice())
        .idempotency_key("5f0c6a43-1d9e-4c1b-8b7a-2e3f4a5b6c7d")
        .json(&json!({ "query": "checkout timeouts", "max_results": 2 }))
        .send()
        .await
        .expect(200, None);
    let webhook = demo
        .post(
            "/webhooks",
            Some(demo.alice()),
            &json!({ "url": "https://127.0.0.1:9/never-answers" }),
        )
        .await;
    webhook.expect(201, None);
    let test_event = format!("/webhooks/{}/test", webhook.body["id"].as_str().unwrap());
    demo.post(&test_event, Some(demo.alice()), &json!({}))
        .await
        .expect(202, None);

    let deleted = alice.delete_account("alice@acme.test").await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    demo.stop();

    let store = quarry_store::Store::open(data.path(), None).unwrap();
    let reader = store.read().unwrap();
    for space in store.spaces().unwrap() {
        assert!(
            quarry::user_data::is_declared(&space),
            "the space {space} is declared neither as user data nor as not"
        );
        for (key, value) in records_of(&reader, &space) {
            for needle in [user_id.as_bytes(), b"alice@acme.test".as_slice()] {
                assert!(
                    !contains(&key, needle) && !contains(&value, needle),
                    "{space} still holds a record of alice: {:?}",
                    String::from_utf8_lossy(&key)
                );
            }
        }
    }
}

fn records_of(reader: &quarry_store::records::Reader, space: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    use quarry_store::records::{Flow, Records};
    use std::ops::Bound;
    let mut out = Vec::new();
    reader
        .raw()
        .scan(space, (Bound::Unbounded, Bound::Unbounded), &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(Flow::Continue)
        })
        .unwrap();
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The rows of the Activity page's table of questions, newest first.
fn question_rows(page: &Page) -> Vec<String> {
    page.text
        .split(r#"<tr data-question=""#)
        .skip(1)
        .map(|row| row.split("</tr>").next().unwrap().to_string())
        .collect()
}

/// What Quarry did, from the person's sealed history: the questions asked
/// through the API, newest first, each tool by its label with what it did;
/// the last day's chart as inline SVG under the same strict CSP; when each
/// tool was last asked; and a question run again through the query
/// pipeline, over the tools it asked, charged like a query.
#[tokio::test]
async fn the_activity_page_shows_the_questions_and_runs_one_again() {
    // Three queries today: two through the API, one run again.
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "100"),
        ("QUARRY_LIMITS__QUERY__DAY", "3"),
    ]);
    let mut alice = signed_in(&demo, "alice").await;
    let empty = alice.get("/dashboard/activity").await;
    assert_eq!(empty.status, 200, "{}", empty.text);
    assert!(
        empty
            .text
            .contains("You have not asked Quarry anything yet")
    );
    assert!(
        empty
            .text
            .contains("No tool was asked anything in the last 24 hours.")
    );

    let everything = demo
        .query(demo.alice(), &json!({ "query": "checkout timeouts" }))
        .await;
    assert_eq!(everything.status, 200, "{everything}");
    let marked_up = "checkout <b>timeouts</b> & retries";
    let linear = demo
        .query(
            demo.alice(),
            &json!({ "query": marked_up, "connectors": ["linear"] }),
        )
        .await;
    assert_eq!(linear.status, 200, "{linear}");

    let page = alice.get("/dashboard/activity").await;
    assert_eq!(page.status, 200, "{}", page.text);
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'none'; style-src 'self'; img-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe") && !csp.contains("script"), "{csp}");
    let rows = question_rows(&page);
    assert_eq!(rows.len(), 2, "{}", page.text);
    assert!(rows[0].starts_with("1\""), "newest first: {}", rows[0]);
    assert!(
        rows[0].contains("<td>checkout &lt;b&gt;timeouts&lt;/b&gt; &amp; retries</td>"),
        "{}",
        rows[0]
    );
    assert!(!page.text.contains("<b>timeouts"));
    // Each tool asked by its label, with what it did and how fast.
    let linear_there = between(&rows[0], r#"<li data-connector="linear""#, "</li>").unwrap();
    assert!(
        linear_there.contains("<strong>Linear</strong>: "),
        "{linear_there}"
    );
    assert!(linear_there.contains(" ms"), "{linear_there}");
    assert!(
        !rows[0].contains(r#"data-connector="github""#),
        "only Linear was asked"
    );
    let github_there = between(&rows[1], r#"<li data-connector="github""#, "</li>").unwrap();
    assert!(
        github_there.contains("<strong>GitHub</strong>: "),
        "{github_there}"
    );
    // The last day: a chart per tool asked, and the same figures as a table.
    let figure = between(
        &page.text,
        r#"<figure data-connector="linear">"#,
        "</figure>",
    )
    .unwrap();
    assert!(figure.contains(r#"<svg class="chart""#) && figure.contains(r#"role="img""#));
    assert!(figure.contains("Linear: latency and failures over the last 24 hours</title>"));
    assert!(
        figure.contains(">2 questions in the last 24 hours"),
        "{figure}"
    );
    assert!(figure.contains(r#"<rect class="bar""#), "{figure}");
    assert!(
        page.text
            .contains("<caption>Each tool over the last 24 hours</caption>")
    );

    // The tools page: labels, and when each was last asked.
    let tools = alice.get("/dashboard/tools").await;
    let row = between(&tools.text, r#"<tr data-connector="linear""#, "</tr>").unwrap();
    assert!(row.contains("</svg>Linear</td>"), "{row}");
    assert!(
        row.contains(r#"<td class="last-used"><time datetime="20"#),
        "{row}"
    );

    // Run again: over the tools it asked, the answer grouped by tool.
    let answer = alice
        .submit("/dashboard/activity", "/dashboard/activity/1/run", &[])
        .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert!(answer.text.contains("<h1>Answer</h1>"), "{}", answer.text);
    assert_eq!(
        answer.text.matches("<section").count(),
        1,
        "{}",
        answer.text
    );
    assert!(answer.text.contains(r#"data-connector="linear""#));
    assert!(answer.text.contains("</svg>Linear</h2>"), "{}", answer.text);
    // The same passages as the API found for the same question.
    let found = linear.body["results"][0]["chunks"]
        .as_array()
        .unwrap()
        .len();
    let shown = answer.text.matches(r#"<li class="passage">"#).count();
    assert_eq!(shown, found, "{}", answer.text);
    let page = alice.get("/dashboard/activity").await;
    let rows = question_rows(&page);
    assert_eq!(rows.len(), 3, "asked again, recorded again");
    assert!(rows[0].starts_with("2\"") && rows[0].contains("&lt;b&gt;timeouts"));

    // Numbers that name no question of hers: not found (bob has none).
    let mut bob = signed_in(&demo, "bob").await;
    let foreign = bob
        .submit("/dashboard/activity", "/dashboard/activity/1/run", &[])
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.text);
    let malformed = alice
        .submit("/dashboard/activity", "/dashboard/activity/first/run", &[])
        .await;
    assert_eq!(malformed.status, 404, "{}", malformed.text);
    // Charged like a query: the day's three are used, here and at the API.
    let refused = alice
        .submit("/dashboard/activity", "/dashboard/activity/0/run", &[])
        .await;
    assert_eq!(refused.status, 429, "{}", refused.text);
    assert!(refused.headers.contains_key("retry-after"));
    let api = demo
        .query(demo.alice(), &json!({ "query": "checkout timeouts" }))
        .await;
    assert_eq!(api.status, 429, "{api}");
    // A form without its CSRF token runs nothing.
    let forged = alice.post("/dashboard/activity/0/run", &[]).await;
    assert_eq!(forged.status, 403, "{}", forged.text);
}
