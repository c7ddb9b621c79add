//! The MCP endpoint, black-box: the real `quarry demo` over HTTPS. The
//! official Python SDK (`tests/mcp/client.py`, mcp 2.3.0 in `target/py`)
//! uses every tool in both protocols (2026-07-28's `server/discover`, and
//! the `initialize` handshake); raw HTTP checks the transport's rules and
//! the authorization's: the 401 challenge and the metadata it points to,
//! tokens bound to their audience, one message per POST, Origin, no
//! session, and a `query` call counted and archived like `/v1/query`.

use std::process::Command;

use quarry_tests::repo_root;
use quarry_tests::server::Demo;
use quarry_tests::webhook_receiver::python;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The older protocol the raw requests speak (no `_meta` needed).
const LEGACY: &str = "2025-11-25";

/// Runs the Python client in `mode` as alice; its summary.
fn sdk_summary(demo: &Demo, mode: &str) -> Value {
    let output = Command::new(python())
        .arg(repo_root().join("tests/mcp/client.py"))
        .args(["--url", &demo.mcp_url, "--mode", mode])
        .arg("--ca")
        .arg(&demo.ca_cert)
        .args(["--token", demo.mcp_token("alice")])
        .output()
        .expect("the Python client runs (tools/py-env makes target/py)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client.py --mode {mode} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.lines().last().expect("a summary line");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_sdk_uses_every_tool_in_both_protocols() {
    let demo = Demo::start(&[]);
    let mut alice_id = String::new();
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", LEGACY)] {
        let summary = tokio::task::block_in_place(|| sdk_summary(&demo, mode));
        assert_eq!(summary["problems"], json!([]), "{mode}: {summary:#}");
        assert_eq!(summary["protocol_version"], version, "{mode}");
        assert_eq!(
            summary["tools"],
            json!(["deep_search", "fetch", "list_connectors", "query", "search"])
        );
        assert!(
            !summary["connected"].as_array().unwrap().is_empty(),
            "{mode}: alice has connected tools"
        );
        let first = &summary["search"]["first"];
        assert!(summary["search"]["count"].as_u64().unwrap() > 0, "{mode}");
        let id = first["id"].as_str().expect("an id");
        assert!(id.starts_with("doc_"), "{id}");
        assert!(first["url"].as_str().unwrap().starts_with("https://"));
        assert_eq!(summary["fetch"]["id"], *id, "{mode}: fetched by its id");
        assert_eq!(summary["fetch"]["text"], first["text"]);
        assert_eq!(summary["fetch"]["metadata"]["query"], "checkout timeouts");
        assert!(summary["query"]["connectors_searched"].as_u64().unwrap() > 0);
        assert!(summary["deep_search"]["results"].as_u64().unwrap() > 0);
        assert_eq!(summary["errors"]["fetch_unknown"], "not_found");
        assert_eq!(summary["errors"]["query_empty"], "bad_request");
        let progress = summary["progress"]["query"].as_array().expect("progress");
        assert!(
            progress.len() >= 2,
            "{mode}: start, then connectors: {progress:?}"
        );
        alice_id = id.to_string();
    }
    // Another user's id is no id of theirs.
    let bob = Raw::new(&demo, demo.mcp_token("bob"));
    let answer = bob.tool("fetch", json!({ "id": alice_id })).await;
    assert_eq!(answer["isError"], true);
    assert_eq!(tool_error(&answer)["type"], "not_found");
}

/// The contract's error of an `isError` result: the JSON of its one text
/// block (no `structuredContent`, which clients hold to the output schema).
fn tool_error(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"], Value::Null, "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str::<Value>(text).expect("the error's JSON")["error"].clone()
}

/// Raw JSON-RPC over HTTP, as a client would send it.
struct Raw<'a> {
    demo: &'a Demo,
    token: Option<String>,
}

impl<'a> Raw<'a> {
    fn new(demo: &'a Demo, token: &str) -> Raw<'a> {
        Raw {
            demo,
            token: Some(token.to_string()),
        }
    }

    fn request(&self, method: Method) -> reqwest::RequestBuilder {
        let mut request = self
            .demo
            .client
            .request(method, &self.demo.mcp_url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", LEGACY);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        self.request(Method::POST)
            .json(body)
            .send()
            .await
            .expect("POST /mcp")
    }

    /// A `tools/call`'s result (the JSON-RPC `result`).
    async fn tool(&self, name: &str, arguments: Value) -> Value {
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": { "name": name, "arguments": arguments },
        });
        let response = self.post(&body).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers().get("mcp-session-id").is_none());
        let answer: Value = response.json().await.expect("a JSON answer");
        answer["result"].clone()
    }
}

fn origin(demo: &Demo) -> String {
    demo.mcp_url.trim_end_matches("/mcp").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_token_the_challenge_leads_to_the_metadata() {
    let demo = Demo::start(&[]);
    let anonymous = Raw {
        demo: &demo,
        token: None,
    };
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": LEGACY, "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "1" } },
    });
    let response = anonymous.post(&initialize).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let origin = origin(&demo);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\"")
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "unauthorized");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = demo.fetch(&format!("{origin}{path}")).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let metadata: Value = response.json().await.unwrap();
        assert_eq!(metadata["resource"], demo.mcp_url, "{path}");
        assert_eq!(metadata["authorization_servers"], json!([origin]), "{path}");
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_are_bound_to_their_audience() {
    let demo = Demo::start(&[]);
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let api_token_at_mcp = Raw::new(&demo, demo.token("alice")).post(&list).await;
    assert_eq!(api_token_at_mcp.status(), StatusCode::UNAUTHORIZED);
    let challenge = api_token_at_mcp.headers()["www-authenticate"]
        .to_str()
        .unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\"")
            && challenge.contains("resource_metadata="),
        "{challenge}"
    );
    demo.call(Method::GET, "/me")
        .token(demo.mcp_token("alice"))
        .send()
        .await
        .expect(401, Some("unauthorized"));
    demo.call(Method::GET, "/me")
        .token(demo.token("alice"))
        .send()
        .await
        .expect(200, None);
    let listed = Raw::new(&demo, demo.mcp_token("alice")).post(&list).await;
    assert_eq!(listed.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_transport_is_stateless_and_one_message_per_post() {
    let demo = Demo::start(&[]);
    let alice = Raw::new(&demo, demo.mcp_token("alice"));
    for method in [Method::GET, Method::DELETE] {
        let response = alice.request(method.clone()).send().await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
    }
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": LEGACY, "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "1" } },
    });
    let response = alice.post(&initialize).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers().get("mcp-session-id").is_none(),
        "never a session"
    );
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["result"]["protocolVersion"], LEGACY);
    assert_eq!(answer["result"]["serverInfo"]["name"], "quarry");

    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let response = alice.post(&initialized).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);

    let batch = json!([initialize, initialized]);
    let response = alice.post(&batch).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let refused: Value = response.json().await.unwrap();
    assert_eq!(refused["error"]["code"], -32600);

    let cross_site = alice
        .request(Method::POST)
        .header("origin", "https://evil.example")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    let same_site = alice
        .request(Method::POST)
        .header("origin", origin(&demo))
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(same_site.status(), StatusCode::OK);

    // DNS rebinding: a name that is not this server's, over HTTP/1.1
    // (where the name travels in Host).
    let rebound = demo
        .client_http1
        .post(&demo.mcp_url)
        .header("host", "evil.example")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", LEGACY)
        .bearer_auth(demo.mcp_token("alice"))
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    let refused: Value = rebound.json().await.unwrap();
    assert_eq!(refused["error"]["type"], "forbidden");

    let trailing = demo
        .client
        .post(format!("{}/", demo.mcp_url))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(demo.mcp_token("alice"))
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(trailing.status(), StatusCode::OK, "/mcp/ is served too");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_call_counts_against_the_query_limits_and_is_archived() {
    // A day window: no minute boundary can refill it mid-test.
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "100"),
        ("QUARRY_LIMITS__QUERY__DAY", "2"),
    ]);
    let alice = Raw::new(&demo, demo.mcp_token("alice"));
    let first = alice
        .tool("query", json!({ "query": "checkout timeouts" }))
        .await;
    assert_eq!(first["isError"], false, "{first}");
    let query_id = first["structuredContent"]["query_id"]
        .as_str()
        .unwrap()
        .to_string();
    let text: Value = serde_json::from_str(first["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text, first["structuredContent"],
        "the text is the same JSON"
    );
    assert!(
        first["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "resource_link"),
        "the sources as resource links: {first}"
    );
    let second = alice
        .tool("search", json!({ "query": "refund policy" }))
        .await;
    assert_eq!(second["isError"], false, "{second}");
    let third = alice
        .tool("query", json!({ "query": "checkout timeouts" }))
        .await;
    assert_eq!(third["isError"], true, "{third}");
    assert_eq!(tool_error(&third)["type"], "rate_limited");
    // The same allowance as /v1/query's.
    demo.call(Method::POST, "/query")
        .token(demo.token("alice"))
        .json(&json!({ "query": "checkout timeouts" }))
        .send()
        .await
        .expect(429, Some("rate_limited"));
    // Archived like a /v1 query: deep search finds what it found.
    let found = demo
        .call(Method::POST, "/deep_search")
        .token(demo.token("alice"))
        .json(&json!({ "query": "checkout timeouts" }))
        .send()
        .await
        .expect(200, None)
        .body
        .clone();
    let ids: Vec<&str> = found["archive_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["original_query_id"].as_str())
        .collect();
    assert!(ids.contains(&query_id.as_str()), "{ids:?} has {query_id}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idempotency_key_replays_a_query_call_for_free() {
    let demo = Demo::start(&[
        ("QUARRY_LIMITS__QUERY__MINUTE", "100"),
        ("QUARRY_LIMITS__QUERY__DAY", "1"),
    ]);
    let alice = Raw::new(&demo, demo.mcp_token("alice"));
    let arguments = json!({ "query": "checkout timeouts", "idempotency_key": "k-1" });
    let first = alice.tool("query", arguments.clone()).await;
    assert_eq!(first["isError"], false, "{first}");
    let again = alice.tool("query", arguments).await;
    assert_eq!(again["isError"], false, "a replay is not charged: {again}");
    assert_eq!(
        again["structuredContent"]["query_id"],
        first["structuredContent"]["query_id"]
    );
    let bad = alice
        .tool("query", json!({ "query": "x", "idempotency_key": "" }))
        .await;
    assert_eq!(tool_error(&bad)["type"], "bad_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_are_refused_with_what_is_wrong() {
    let demo = Demo::start(&[]);
    let alice = Raw::new(&demo, demo.mcp_token("alice"));
    // Not the tool's schema: rmcp answers a tool error that says what
    // does not fit (so that the model can correct its call), and runs
    // nothing.
    for (arguments, named) in [
        (json!({}), "query"),
        (json!({ "query": 7 }), "string"),
        (json!({ "query": "x", "extra": 1 }), "extra"),
    ] {
        let answer = alice.tool("search", arguments.clone()).await;
        assert_eq!(answer["isError"], true, "{arguments}: {answer}");
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(named), "{arguments}: {text}");
    }
    // Within the schema but out of the contract's bounds: a tool error
    // with the contract's error type and a message that names the field.
    let answer = alice
        .tool("query", json!({ "query": "x", "max_results": 1000 }))
        .await;
    assert_eq!(answer["isError"], true, "{answer}");
    let error = tool_error(&answer);
    assert_eq!(error["type"], "bad_request");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("max_results"), "{message}");
    let answer = alice
        .tool("query", json!({ "query": "x", "connectors": ["nope"] }))
        .await;
    assert_eq!(tool_error(&answer)["type"], "bad_request");
    let answer = alice
        .tool("query", json!({ "query": "x", "keywords": [] }))
        .await;
    let error = tool_error(&answer);
    assert_eq!(error["type"], "bad_request");
    assert!(
        error["message"].as_str().unwrap().contains("keywords"),
        "{error}"
    );
    // An unknown tool.
    let body = json!({
        "jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": { "name": "delete_my_data", "arguments": {} },
    });
    let answer: Value = alice.post(&body).await.json().await.unwrap();
    assert!(
        answer["error"]["code"].is_i64() || answer["result"]["isError"] == true,
        "{answer}"
    );
}
