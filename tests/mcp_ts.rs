//! The MCP endpoint through the clients most assistants are built on,
//! black-box: the real `quarry demo` over HTTPS, and Node.js scripts in
//! tests/mcp/ts on the packages tools/node-env installs into target/node
//! (pinned and hash-checked in tests/mcp/ts/package-lock.json; nothing is
//! installed here):
//! - `client.mjs`: the official TypeScript SDK (`@modelcontextprotocol/sdk`)
//!   with a bearer token: every tool called, each answer validated as the
//!   SDK validates it (`callTool` checks `structuredContent` against the
//!   tool's `outputSchema`, and throws when it does not match), tool errors
//!   that must reach the caller as `isError` results; raw requests with
//!   `Accept: */*` and with malformed JSON.
//! - `inspector.mjs`: the MCP Inspector's CLI (`@modelcontextprotocol/inspector`,
//!   on the SDK's next generation) in both protocols (`initialize`, and
//!   2026-07-28's `server/discover`).
//! - `oauth.mjs`: the SDK's own OAuth client (discovery from the 401,
//!   registration, consent in the dashboard, PKCE), two calls in flight
//!   when the access token expires (both refresh with the same refresh
//!   token; the person stays signed in), and a client that registers asking
//!   for `client_secret_post`.
//!
//! Each script prints one JSON summary line; its `problems` list is empty
//! when all went as the clients need.

use std::path::PathBuf;
use std::process::Command;

use quarry_tests::dashboard_client::PASSWORD;
use quarry_tests::repo_root;
use quarry_tests::server::Demo;
use serde_json::{Value, json};

const TOOLS: [&str; 5] = ["deep_search", "fetch", "list_connectors", "query", "search"];
/// The access tokens' life in the OAuth test's demo: short, so that calls
/// find theirs expired.
const TOKEN_SECONDS: u64 = 4;

/// target/node/node_modules, as tools/node-env leaves it.
fn node_modules() -> PathBuf {
    let modules = repo_root().join("target/node/node_modules");
    assert!(
        modules
            .join("@modelcontextprotocol/sdk/package.json")
            .exists()
            && modules
                .join("@modelcontextprotocol/inspector/package.json")
                .exists(),
        "no MCP SDK and Inspector in {}: run tools/node-env (tools/test does)",
        modules.display()
    );
    modules
}

/// Runs `tests/mcp/ts/<script>` against the demo's `/mcp` with `args`,
/// trusting the demo's CA; its summary (the last line it printed).
fn node_summary(demo: &Demo, script: &str, args: &[&str]) -> Value {
    let modules = node_modules();
    let output = Command::new("node")
        .arg(repo_root().join("tests/mcp/ts").join(script))
        .args(["--url", &demo.mcp_url])
        .args(args)
        .env("NODE_EXTRA_CA_CERTS", &demo.ca_cert)
        .env("QUARRY_NODE_MODULES", &modules)
        .current_dir(repo_root().join("target/node"))
        .output()
        .expect("node runs (tools/node-env installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The SDK's Ajv warns about every format it does not know (schemars'
    // `uint64`, `double`, ...): left out of the failure's text.
    let stderr: String = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| !line.starts_with("unknown format"))
        .collect::<Vec<_>>()
        .join("\n");
    let Some(line) = stdout.lines().last() else {
        panic!(
            "{script} printed no summary ({}):\n{stderr}\nserver log:\n{}",
            output.status,
            demo.log()
        );
    };
    let summary: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{script}: not JSON ({e}): {line}\n{stderr}"));
    assert_eq!(
        summary["problems"],
        json!([]),
        "{script} ({}) found problems:\n{summary:#}\n--- stderr ---\n{stderr}",
        output.status
    );
    assert!(
        output.status.success(),
        "{script} failed ({}):\n{summary:#}\n{stderr}",
        output.status
    );
    summary
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_sdk_uses_every_tool_and_receives_tool_errors_as_results() {
    let demo = Demo::start(&[]);
    let summary = tokio::task::block_in_place(|| {
        node_summary(&demo, "client.mjs", &["--token", demo.mcp_token("alice")])
    });
    assert_eq!(summary["tools"], json!(TOOLS));
    // The SDK (1.x) speaks the `initialize` protocol.
    assert_eq!(summary["protocol_version"], "2025-11-25");
    assert_eq!(summary["server"]["name"], "quarry");
    for tool in TOOLS {
        assert_eq!(summary["calls"][tool]["ok"], true, "{tool}: {summary:#}");
    }
    assert!(summary["calls"]["search"]["count"].as_u64().unwrap() > 0);
    assert!(
        summary["calls"]["query"]["connectors_searched"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(summary["calls"]["deep_search"]["results"].as_u64().unwrap() > 0);
    let first = &summary["search_first"];
    assert!(first["id"].as_str().unwrap().starts_with("doc_"), "{first}");
    assert_eq!(summary["fetched"]["id"], first["id"]);
    assert!(
        summary["progress"]["query"].as_u64().unwrap_or(0) >= 2,
        "start, then connectors: {}",
        summary["progress"]
    );
    // Tool errors reach the caller: a result with isError and Quarry's
    // error in its text, and no structuredContent for the SDK to hold to
    // the tool's outputSchema.
    for (label, kind) in [
        ("query_max_results", "bad_request"),
        ("fetch_unknown", "not_found"),
        ("query_empty", "bad_request"),
    ] {
        let seen = &summary["errors"][label];
        assert_eq!(seen["reached"], true, "{label}: {seen}");
        assert_eq!(seen["is_error"], true, "{label}: {seen}");
        assert_eq!(seen["type"], kind, "{label}: {seen}");
        assert_eq!(seen["structured_content"], Value::Null, "{label}: {seen}");
    }
    assert!(
        summary["errors"]["query_max_results"]["message"]
            .as_str()
            .unwrap()
            .contains("max_results")
    );
    // What the SDK sends on every POST.
    assert_eq!(
        summary["accept"],
        json!(["application/json, text/event-stream"])
    );
    // Raw: any media type is answered with JSON; malformed JSON with a
    // JSON-RPC parse error.
    let raw = &summary["raw"];
    assert_eq!(raw["accept_any"]["status"], 200, "{raw}");
    assert!(
        raw["accept_any"]["content_type"]
            .as_str()
            .unwrap_or_default()
            .starts_with("application/json"),
        "{raw}"
    );
    assert_eq!(raw["malformed"]["code"], -32700, "{raw}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_cli_lists_and_calls_tools_in_both_protocols() {
    let demo = Demo::start(&[]);
    let summary = tokio::task::block_in_place(|| {
        node_summary(
            &demo,
            "inspector.mjs",
            &["--token", demo.mcp_token("alice")],
        )
    });
    for (era, handshake, version) in [
        ("legacy", "initialize", "2025-11-25"),
        ("modern", "server/discover", "2026-07-28"),
    ] {
        let seen = &summary["eras"][era];
        assert_eq!(seen["tools"], json!(TOOLS), "{era}: {seen:#}");
        assert_eq!(seen["methods"][0], handshake, "{era}: {seen:#}");
        assert_eq!(seen["protocol_versions"], json!([version]), "{era}");
        assert_eq!(seen["list_connectors"]["is_error"], false, "{era}");
        assert!(seen["list_connectors"]["connectors"].as_u64().unwrap() > 0);
        // The CLI printed the tool error and exited 5 ("tool_error").
        assert_eq!(seen["fetch_unknown"]["status"], 5, "{era}: {seen:#}");
        assert_eq!(seen["fetch_unknown"]["type"], "not_found", "{era}");
    }
    // The Inspector's portability report finds no error in the schemas
    // (its warnings are in the summary).
    assert_eq!(summary["strict"]["errors"], 0, "{:#}", summary["strict"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_sdk_signs_in_and_stays_signed_in_through_a_concurrent_refresh() {
    let demo = Demo::options().token_ttl_seconds(TOKEN_SECONDS).start();
    let summary = tokio::task::block_in_place(|| {
        node_summary(
            &demo,
            "oauth.mjs",
            &["--email", "alice@acme.test", "--password", PASSWORD],
        )
    });
    let origin = demo.mcp_url.trim_end_matches("/mcp").to_string();

    // Discovery from the 401, then registration.
    assert_eq!(
        summary["discovery"][0], "POST /mcp 401",
        "{:#}",
        summary["discovery"]
    );
    assert!(
        summary["discovery"]
            .as_array()
            .unwrap()
            .contains(&json!("POST /oauth/register 201")),
        "{:#}",
        summary["discovery"]
    );
    let signed_in = &summary["sign_in"];
    assert_eq!(signed_in["authorize"], format!("{origin}/oauth/authorize"));
    assert_eq!(signed_in["asked"]["code_challenge_method"], "S256");
    assert_eq!(signed_in["asked"]["resource"], demo.mcp_url);
    assert_eq!(
        signed_in["registered"]["token_endpoint_auth_method"],
        "none"
    );
    assert!(
        signed_in["registered"]["client_id"]
            .as_str()
            .unwrap()
            .starts_with("mcp_")
    );
    assert_eq!(signed_in["state_kept"], true);
    assert_eq!(signed_in["iss"], origin);
    assert_eq!(signed_in["first"]["scope"], "search archive");
    assert_eq!(signed_in["first"]["expires_in"], TOKEN_SECONDS);
    assert_eq!(signed_in["tools"], json!(TOOLS));
    assert!(signed_in["search"]["results"].as_u64().unwrap() > 0);

    // Two calls, one expired token, two refreshes with the same refresh
    // token: both answered with the same new pair, both calls done, and
    // the person still signed in afterwards.
    let concurrent = &summary["concurrent_refresh"];
    let refreshes = concurrent["refreshes"].as_array().unwrap();
    assert_eq!(refreshes.len(), 2, "{concurrent:#}");
    for refresh in refreshes {
        assert_eq!(refresh["same_token"], true, "{concurrent:#}");
        assert_eq!(refresh["status"], 200, "{concurrent:#}");
    }
    assert_eq!(concurrent["same_new_pair"], true, "{concurrent:#}");
    assert_eq!(
        concurrent["calls"],
        json!([
            { "ok": true, "is_error": false },
            { "ok": true, "is_error": false }
        ]),
        "{concurrent:#}"
    );
    assert_eq!(concurrent["invalidated"], json!([]), "{concurrent:#}");
    assert_eq!(summary["later_call"]["ok"], true);
    assert_eq!(summary["later_call"]["signed_out"], false);

    // Asked for client_secret_post: registered as a public client, and
    // signed in as one.
    let posted = &summary["client_secret_post"];
    assert_eq!(
        posted["registered"]["token_endpoint_auth_method"], "none",
        "{posted:#}"
    );
    assert_eq!(posted["registered"]["client_secret"], false);
    assert_eq!(posted["first"]["scope"], "search archive");
    assert!(posted["search"]["results"].as_u64().unwrap() > 0);
}
