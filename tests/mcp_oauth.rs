//! Authorization for `/mcp`, black-box: the real `quarry demo` over HTTPS.
//!
//! The official Python SDK's OAuth client provider (`tests/mcp/oauth_client.py`)
//! signs in as MCP clients do: discovery from the 401, registration both
//! ways (RFC 7591, and a Client ID Metadata Document the fake upstreams
//! publish), PKCE, consent in the dashboard (played here by a person's
//! hand-driven browser, signing in on the way), the token, a refresh; the
//! test then revokes and checks. Raw requests check the rules an SDK
//! follows by itself: the metadata, exact redirect matching (loopback on
//! any port), PKCE required, a code used once, scope, audience, expiry,
//! refusal, registration's limits and the dashboard's list of assistants.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use quarry_tests::dashboard_client::{Browser, between, consent, signed_in};
use quarry_tests::repo_root;
use quarry_tests::server::Demo;
use quarry_tests::webhook_receiver::python;
use reqwest::StatusCode;
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:33418/callback";
/// The access tokens' life in these demos: short, so that the SDK has to
/// refresh and an expired token can be seen refused.
const TOKEN_SECONDS: u64 = 4;

fn origin(demo: &Demo) -> String {
    demo.mcp_url.trim_end_matches("/mcp").to_string()
}

/// Where the fake upstreams serve the document posted as `name`: by their
/// address (which their certificate names too), as a client's own host.
fn document_url(demo: &Demo, name: &str) -> String {
    let port = demo.fake_url.rsplit(':').next().unwrap();
    format!("https://127.0.0.1:{port}/_fake/documents/{name}")
}

/// Runs the SDK's client; plays the person when it asks; its summary.
async fn sdk_sign_in(demo: &Demo, client_metadata_url: Option<&str>) -> Value {
    let mut command = Command::new(python());
    command
        .arg(repo_root().join("tests/mcp/oauth_client.py"))
        .args(["--url", &demo.mcp_url, "--redirect-uri", REDIRECT])
        .arg("--ca")
        .arg(&demo.ca_cert)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(url) = client_metadata_url {
        command.args(["--client-metadata-url", url]);
    }
    let mut child = command
        .spawn()
        .expect("the Python client runs (tools/py-env)");
    let mut stdin = child.stdin.take().unwrap();
    // Its lines, as they come: the question, then the summary.
    let (lines, mut said) = tokio::sync::mpsc::unbounded_channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let Some(line) = said.recv().await else {
        let output = child.wait_with_output().unwrap();
        panic!(
            "the client asked nothing: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let asked: Value = serde_json::from_str(&line).unwrap();
    let authorize = asked["authorize"].as_str().expect("an authorization URL");
    assert!(
        authorize.starts_with(&format!("{}/oauth/authorize?", origin(demo))),
        "{authorize}"
    );

    // Not signed in yet: sign in first, then back to the request.
    let mut person = Browser::new(demo);
    let page = person.get(authorize).await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location.as_deref(), Some("/dashboard/login"));
    let signed_in = person
        .sign_in("alice@acme.test", quarry_tests::dashboard_client::PASSWORD)
        .await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.text);
    let back = signed_in.location.expect("back to the request");
    assert!(back.starts_with("/oauth/authorize?"), "{back}");
    let sent_back = consent(&mut person, &back, "allow").await;
    assert!(sent_back.starts_with(REDIRECT), "{sent_back}");
    writeln!(stdin, "{sent_back}").unwrap();
    drop(stdin);

    let summary = said.recv().await;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed:\n{stderr}");
    let summary = summary.expect("a summary");
    serde_json::from_str(&summary).unwrap_or_else(|e| panic!("not JSON ({e}): {summary}"))
}

/// A raw POST to `/mcp` with `token`.
async fn mcp_call(demo: &Demo, token: &str, body: &Value) -> reqwest::Response {
    demo.client
        .post(&demo.mcp_url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap()
}

fn tools_list() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })
}

fn tool_call(name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": name, "arguments": arguments },
    })
}

async fn oauth_post(demo: &Demo, path: &str, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let response = demo
        .client
        .post(format!("{}{path}", origin(demo)))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_signs_in_with_oauth_registering_either_way() {
    let demo = Demo::options().token_ttl_seconds(TOKEN_SECONDS).start();
    // A client that publishes its metadata (on the fake upstreams, which
    // the demo trusts as an operator's pinned host).
    let document_url = document_url(&demo, "quarry-test-client.json");
    let document = json!({
        "client_id": document_url,
        "client_name": "Quarry test client (published)",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    demo.fake_post("/_fake/documents/quarry-test-client.json", &document)
        .await;

    for (how, metadata_url) in [
        ("dynamic registration", None),
        ("metadata document", Some(document_url.as_str())),
    ] {
        let summary = sdk_sign_in(&demo, metadata_url).await;
        assert_eq!(
            summary["tools"],
            json!(["deep_search", "fetch", "list_connectors", "query", "search"]),
            "{how}: {summary:#}"
        );
        assert_eq!(summary["search_error"], false, "{how}");
        assert!(summary["search_results"].as_u64().unwrap() > 0, "{how}");
        let client_id = summary["client_id"].as_str().unwrap();
        match metadata_url {
            None => assert!(client_id.starts_with("mcp_"), "{client_id}"),
            Some(url) => assert_eq!(client_id, url),
        }
        assert_eq!(summary["first"]["scope"], "search archive", "{how}");
        assert_eq!(summary["first"]["expires_in"], TOKEN_SECONDS, "{how}");
        // The SDK refreshed the expired token, and the call went through.
        assert_eq!(summary["after_expiry_error"], false, "{how}");
        assert!(
            summary["token_sets"].as_u64().unwrap() >= 2,
            "{how}: refreshed"
        );
        let (first, last) = (&summary["first"], &summary["last"]);
        assert_ne!(first["refresh_token"], last["refresh_token"], "rotated");

        // The expired access token is refused, saying so.
        let expired = mcp_call(
            &demo,
            first["access_token"].as_str().unwrap(),
            &tools_list(),
        )
        .await;
        assert_eq!(expired.status(), StatusCode::UNAUTHORIZED, "{how}");
        let challenge = expired.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            challenge.contains("invalid_token") && challenge.contains("expired"),
            "{challenge}"
        );

        // An MCP token is no /v1 token.
        let access = last["access_token"].as_str().unwrap();
        let at_v1 = demo
            .client
            .get(format!("{}/me", demo.base_url))
            .bearer_auth(access)
            .send()
            .await
            .unwrap();
        assert_eq!(at_v1.status(), StatusCode::UNAUTHORIZED, "{how}");
        assert_eq!(
            mcp_call(&demo, access, &tools_list()).await.status(),
            StatusCode::OK
        );

        // Revoked (the SDK never revokes; a client may): the refresh token
        // and the access tokens of its family stop at once.
        let refresh = last["refresh_token"].as_str().unwrap();
        let (status, _) = oauth_post(
            &demo,
            "/oauth/revoke",
            &[("token", refresh), ("client_id", client_id)],
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            mcp_call(&demo, access, &tools_list()).await.status(),
            StatusCode::UNAUTHORIZED,
            "{how}: revoked"
        );
        let (status, refused) = oauth_post(
            &demo,
            "/oauth/token",
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", client_id),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(refused["error"], "invalid_grant");
    }
}

/// `BASE64URL(SHA256(verifier))`, as a client computes its challenge.
fn challenge_of(verifier: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

fn query_of(url: &str) -> std::collections::HashMap<String, String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

async fn register(demo: &Demo, metadata: &Value) -> (StatusCode, Value) {
    let response = demo
        .client
        .post(format!("{}/oauth/register", origin(demo)))
        .json(metadata)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Registered clients are kept a day: everyone's registrations together
/// stop at a limit, from however many addresses they come.
#[tokio::test(flavor = "multi_thread")]
async fn registrations_from_many_addresses_stop_at_everyones_limit() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__ALL_CLIENT_REGISTRATIONS__MINUTE", "100"),
        ("QUARRY_LIMITS__ALL_CLIENT_REGISTRATIONS__DAY", "4"),
    ]);
    let mut statuses = Vec::new();
    for n in 10..16u8 {
        let from = demo.client_from(std::net::IpAddr::from([127, 0, 0, n]));
        let response = from
            .post(format!("{}/oauth/register", origin(&demo)))
            .json(&json!({ "redirect_uris": [REDIRECT] }))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(response.headers().contains_key("retry-after"));
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "slow_down", "{body}");
        }
    }
    assert_eq!(statuses, [201, 201, 201, 201, 429, 429]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_authorization_server_keeps_the_rules_clients_rely_on() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__CLIENT_REGISTRATION__MINUTE", "3"),
        ("QUARRY_LIMITS__CLIENT_REGISTRATION__DAY", "200"),
    ]);
    let issuer = origin(&demo);

    // RFC 8414 metadata, as clients read it before anything else.
    let metadata: Value = demo
        .fetch(&format!("{issuer}/.well-known/oauth-authorization-server"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["issuer"], issuer);
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        json!(["none"])
    );
    assert_eq!(
        metadata["authorization_response_iss_parameter_supported"],
        true
    );
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    assert_eq!(
        metadata["authorization_endpoint"],
        format!("{issuer}/oauth/authorize")
    );
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{issuer}/oauth/register")
    );

    // Registration: public clients with redirect URIs a browser may be sent to.
    let (status, refused) = register(
        &demo,
        &json!({ "redirect_uris": ["http://evil.example/cb"] }),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"], "invalid_redirect_uri");
    // A client asking for a secret (some assistants ask for
    // client_secret_post by habit) is registered public, and told so.
    let (status, public) = register(
        &demo,
        &json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post" }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{public}");
    assert_eq!(public["token_endpoint_auth_method"], "none");
    assert!(public.get("client_secret").is_none(), "{public}");
    let (status, client) = register(
        &demo,
        &json!({ "client_name": "Raw <client>", "redirect_uris": ["http://127.0.0.1:9/cb"] }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    assert_eq!(client["token_endpoint_auth_method"], "none");
    let client_id = client["client_id"].as_str().unwrap().to_string();
    // Three a minute from one address in this demo: the fourth is refused.
    let (status, limited) = register(&demo, &json!({ "redirect_uris": [REDIRECT] })).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{limited}");

    let mut alice = signed_in(&demo, "alice").await;
    let verifier = "a-verifier-of-at-least-forty-three-characters-0123456789";
    let authorize = |redirect: &str, extra: &[(&str, &str)]| {
        let mut url = url::Url::parse(&format!("{issuer}/oauth/authorize")).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", redirect)
            .append_pair("state", "st-1")
            .extend_pairs(extra);
        url.to_string()
    };
    let pkce = [
        ("code_challenge", challenge_of(verifier)),
        ("code_challenge_method", "S256".to_string()),
    ];
    let pkce: Vec<(&str, &str)> = pkce.iter().map(|(k, v)| (*k, v.as_str())).collect();

    // A redirect URI it did not register: shown to the person, never sent.
    let page = alice
        .get(&authorize("https://evil.example/cb", &pkce))
        .await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert!(page.location.is_none());
    // Without PKCE: shown to the person too (anyone can register a client
    // with any redirect URI: only the person's answer is sent there).
    let page = alice.get(&authorize("http://127.0.0.1:9/cb", &[])).await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert!(page.location.is_none());
    assert!(page.text.contains("PKCE is required"), "{}", page.text);

    // Refused by the person, even with an "allow" slipped into the request
    // (it is not carried to the form).
    let mut slipped = pkce.clone();
    slipped.push(("decision", "allow"));
    let sent = consent(
        &mut alice,
        &authorize("http://127.0.0.1:9/cb", &slipped),
        "deny",
    )
    .await;
    let back = query_of(&sent);
    assert_eq!(back["error"], "access_denied");
    assert_eq!(back["state"], "st-1");
    assert_eq!(back["iss"], issuer);

    // A loopback redirect on another port (RFC 8252), for one scope only.
    let mut narrow = pkce.clone();
    narrow.push(("scope", "search"));
    let page = alice
        .get(&authorize("http://127.0.0.1:51234/cb", &narrow))
        .await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        page.text.contains("Raw &lt;client&gt;"),
        "the client is named, escaped"
    );
    assert!(
        page.text.contains("127.0.0.1"),
        "where it sends the person back"
    );
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("form-action 'self' http://127.0.0.1:51234"),
        "{csp}"
    );
    let sent = consent(
        &mut alice,
        &authorize("http://127.0.0.1:51234/cb", &narrow),
        "allow",
    )
    .await;
    assert!(sent.starts_with("http://127.0.0.1:51234/cb?"), "{sent}");
    let back = query_of(&sent);
    assert_eq!(
        (back["state"].as_str(), back["iss"].as_str()),
        ("st-1", issuer.as_str())
    );
    let code = back["code"].clone();

    let exchange = |verifier: &'static str, redirect: &'static str| {
        let (code, client_id) = (code.clone(), client_id.clone());
        let demo = &demo;
        async move {
            oauth_post(
                demo,
                "/oauth/token",
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", redirect),
                    ("client_id", &client_id),
                    ("code_verifier", verifier),
                    ("resource", &demo.mcp_url),
                ],
            )
            .await
        }
    };
    let wrong = "another-verifier-of-at-least-forty-three-characters-012345";
    let (status, refused) = exchange(wrong, "http://127.0.0.1:51234/cb").await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let (status, tokens) = exchange(verifier, "http://127.0.0.1:51234/cb").await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["scope"], "search");
    let access = tokens["access_token"].as_str().unwrap().to_string();

    // The scope consented to, and no more: deep search needs the other
    // scope, and the 403 names the scope to ask for.
    let listed = mcp_call(&demo, &access, &tool_call("list_connectors", json!({}))).await;
    assert_eq!(listed.status(), StatusCode::OK);
    let deep = mcp_call(
        &demo,
        &access,
        &tool_call("deep_search", json!({ "query": "x" })),
    )
    .await;
    assert_eq!(deep.status(), StatusCode::FORBIDDEN);
    let challenge = deep.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"search archive\""),
        "{challenge}"
    );
    assert_eq!(
        challenge.matches('"').count() % 2,
        0,
        "well-formed: {challenge}"
    );
    let body: Value = deep.json().await.unwrap();
    assert_eq!(body["error"]["type"], "forbidden");

    // The dashboard lists the assistant, with what it may do.
    let tokens_page = alice.get("/dashboard/tokens").await;
    assert!(tokens_page.text.contains("Connected assistants"));
    assert!(
        tokens_page.text.contains("Raw &lt;client&gt;"),
        "{}",
        tokens_page.text
    );
    assert!(tokens_page.text.contains("MCP (/mcp)"));

    // The code again (a replay): refused, and what it gave is revoked.
    let (status, refused) = exchange(verifier, "http://127.0.0.1:51234/cb").await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let revoked = mcp_call(&demo, &access, &tools_list()).await;
    assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
    let tokens_page = alice.get("/dashboard/tokens").await;
    assert!(
        !tokens_page.text.contains("Raw &lt;client&gt;"),
        "gone from the list"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_disconnects_an_assistant_and_a_bad_metadata_document_is_shown_not_followed() {
    let demo = Demo::start(&[]);
    let issuer = origin(&demo);
    let mut alice = signed_in(&demo, "alice").await;

    // Documents that cannot be used, each refused on the page.
    let wrong_id = document_url(&demo, "wrong-id.json");
    demo.fake_post(
        "/_fake/documents/wrong-id.json",
        &json!({ "client_id": "https://elsewhere.example/client.json", "redirect_uris": [REDIRECT] }),
    )
    .await;
    let huge = document_url(&demo, "huge.json");
    demo.fake_post(
        "/_fake/documents/huge.json",
        &json!({ "client_id": huge, "redirect_uris": [REDIRECT], "padding": "x".repeat(20_000) }),
    )
    .await;
    let missing = document_url(&demo, "missing.json");
    let verifier = "a-verifier-of-at-least-forty-three-characters-0123456789";
    let authorize = |client_id: &str| {
        let mut url = url::Url::parse(&format!("{issuer}/oauth/authorize")).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("code_challenge", &challenge_of(verifier))
            .append_pair("code_challenge_method", "S256");
        url.to_string()
    };
    for (document, problem) in [
        (
            &wrong_id,
            "its client_id is not the URL it was fetched from",
        ),
        (&huge, "is larger than"),
        (&missing, "answered 404"),
    ] {
        let page = alice.get(&authorize(document)).await;
        assert_eq!(page.status, 400, "{document}: {}", page.text);
        assert!(page.text.contains(problem), "{document}: {}", page.text);
        assert!(page.location.is_none());
    }

    // A good one, allowed, then disconnected from the dashboard.
    let good = document_url(&demo, "good.json");
    demo.fake_post(
        "/_fake/documents/good.json",
        &json!({ "client_id": good, "client_name": "Published client", "redirect_uris": [REDIRECT] }),
    )
    .await;
    let page = alice.get(&authorize(&good)).await;
    assert!(
        page.text.contains("Its description is published at"),
        "{}",
        page.text
    );
    let sent = consent(&mut alice, &authorize(&good), "allow").await;
    let code = query_of(&sent)["code"].clone();
    let (status, tokens) = oauth_post(
        &demo,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &good),
            ("code_verifier", verifier),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        mcp_call(&demo, access, &tools_list()).await.status(),
        StatusCode::OK
    );
    let listing = alice.get("/dashboard/tokens").await;
    let id = between(&listing.text, r#"data-assistant-id=""#, "\"").expect("an assistant row");
    let disconnected = alice
        .submit(
            "/dashboard/tokens",
            &format!("/dashboard/assistants/{id}/disconnect"),
            &[],
        )
        .await;
    assert_eq!(disconnected.status, 303, "{}", disconnected.text);
    assert_eq!(
        mcp_call(&demo, access, &tools_list()).await.status(),
        StatusCode::UNAUTHORIZED,
        "its tokens stop at once"
    );
    let (status, _) = oauth_post(
        &demo,
        "/oauth/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &good),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
