//! `POST /query` refusing bad input: 400 `bad_request` with a message that
//! names the field, and 413 `payload_too_large` over 64 KiB.

use quarry_tests::server::Demo;
use reqwest::Method;
use serde_json::{Value, json};

use super::{QUESTION, ask, assert_query_answer, generous_demo};

/// Sends a raw body with `Content-Type: application/json`.
async fn raw(demo: &Demo, body: impl AsRef<[u8]>) -> quarry_tests::server::Reply {
    demo.call(Method::POST, "/query")
        .token(demo.alice())
        .raw(body.as_ref().to_vec(), Some("application/json"))
        .send()
        .await
}

/// alice asks [`QUESTION`] of `connectors` (any JSON, valid or not).
async fn ask_of(demo: &Demo, connectors: Value) -> quarry_tests::server::Reply {
    let body = json!({ "query": QUESTION, "connectors": connectors });
    demo.query(demo.alice(), &body).await
}

#[tokio::test]
async fn the_query_must_have_1_to_2000_characters_after_trimming() {
    let demo = generous_demo();
    for query in ["", " ", "   \t\n  ", "\u{3000}\u{a0}"] {
        let reply = demo.query(demo.alice(), &ask(query)).await;
        reply.expect_bad_request_naming("query");
    }
    let reply = demo.query(demo.alice(), &ask(&"a".repeat(2001))).await;
    reply.expect_bad_request_naming("query");
    assert!(
        reply.error_message().contains("2000"),
        "the message gives the limit: {}",
        reply.error_message()
    );
    let reply = demo.query(demo.alice(), &ask(&"é".repeat(2001))).await;
    reply.expect_bad_request_naming("query");
    let words = "checkout ".repeat(223) + "timeouts"; // 2015 characters
    assert_eq!(words.chars().count(), 2015);
    demo.query(demo.alice(), &ask(&words))
        .await
        .expect_bad_request_naming("query");

    // 2000 characters are allowed, also with whitespace around them.
    let exact = format!("{}{}", "checkout ".repeat(221), "timeouts timeouts x");
    let exact: String = exact.chars().take(2000).collect();
    assert_eq!(exact.trim().chars().count(), 2000);
    let reply = demo.query(demo.alice(), &ask(&exact)).await;
    assert_query_answer(&reply, &exact, 10);
    let padded = format!("   \n\t{exact}  \n ");
    let reply = demo.query(demo.alice(), &ask(&padded)).await;
    assert_query_answer(&reply, &padded, 10);
}

#[tokio::test]
async fn keywords_are_1_to_10_strings_of_1_to_100_characters() {
    let demo = generous_demo();
    let long = "k".repeat(101);
    let eleven: Vec<String> = (0..11).map(|i| format!("word{i}")).collect();
    for keywords in [
        json!([]),
        json!(eleven),
        json!(["checkout", "  "]),
        json!(["checkout", "?!"]),
        json!([long]),
        json!("checkout"),
        json!([5]),
        json!(null),
    ] {
        let body = json!({ "query": QUESTION, "keywords": keywords });
        let reply = demo.query(demo.alice(), &body).await;
        reply.expect_bad_request_naming("keyword");
    }
    let ten: Vec<String> = (0..10).map(|i| format!("word{i}")).collect();
    let hundred = format!("  {}  ", "k".repeat(100));
    for keywords in [json!(ten), json!([hundred, "gateway timeout"])] {
        let body = json!({ "query": QUESTION, "keywords": keywords });
        let reply = demo.query(demo.alice(), &body).await;
        assert_query_answer(&reply, QUESTION, 10);
    }
}

#[tokio::test]
async fn wrong_types_and_nulls_are_400_naming_the_field() {
    let demo = generous_demo();
    let cases: Vec<(Value, &str)> = vec![
        (json!({ "query": 5 }), "query"),
        (json!({ "query": true }), "query"),
        (json!({ "query": ["checkout"] }), "query"),
        (json!({ "query": { "text": "checkout" } }), "query"),
        (json!({ "query": null }), "query"),
        (
            json!({ "query": QUESTION, "connectors": "github" }),
            "connectors",
        ),
        (
            json!({ "query": QUESTION, "connectors": { "github": true } }),
            "connectors",
        ),
        (
            json!({ "query": QUESTION, "connectors": [5] }),
            "connectors",
        ),
        (
            json!({ "query": QUESTION, "connectors": [null] }),
            "connectors",
        ),
        (
            json!({ "query": QUESTION, "connectors": [["github"]] }),
            "connectors",
        ),
        (
            json!({ "query": QUESTION, "connectors": null }),
            "connectors",
        ),
        (
            json!({ "query": QUESTION, "max_results": "10" }),
            "max_results",
        ),
        (
            json!({ "query": QUESTION, "max_results": 10.5 }),
            "max_results",
        ),
        (
            json!({ "query": QUESTION, "max_results": true }),
            "max_results",
        ),
        (
            json!({ "query": QUESTION, "max_results": [10] }),
            "max_results",
        ),
        (
            json!({ "query": QUESTION, "max_results": null }),
            "max_results",
        ),
    ];
    for (body, field) in cases {
        let reply = demo.query(demo.alice(), &body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {reply}");
        reply.expect_bad_request_naming(field);
    }
}

#[tokio::test]
async fn max_results_must_be_an_integer_from_1_to_100() {
    let demo = generous_demo();
    for n in [
        "0",
        "101",
        "-1",
        "1000",
        "1e20",
        "-1e20",
        "99999999999999999999",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "0.0",
        "-0",
    ] {
        let reply = raw(
            &demo,
            format!(r#"{{"query": "{QUESTION}", "max_results": {n}}}"#),
        )
        .await;
        assert_eq!(reply.status.as_u16(), 400, "max_results {n}: {reply}");
        reply.expect_bad_request_naming("max_results");
    }
    // Valid JSON that no number type holds: a 400 too.
    let reply = raw(
        &demo,
        format!(r#"{{"query": "{QUESTION}", "max_results": 1e400}}"#),
    )
    .await;
    reply.expect(400, Some("bad_request"));
    for n in [1usize, 100] {
        let reply = demo
            .query(
                demo.alice(),
                &json!({ "query": QUESTION, "max_results": n }),
            )
            .await;
        assert_query_answer(&reply, QUESTION, n);
    }
}

#[tokio::test]
async fn missing_unknown_and_duplicate_fields_are_400_naming_the_field() {
    let demo = generous_demo();
    let cases = [
        (r#"{}"#, "query"),
        (r#"{"connectors": ["github"]}"#, "query"),
        (r#"{"query": "checkout", "max_result": 5}"#, "max_result"),
        (r#"{"query": "checkout", "Query": "x"}"#, "Query"),
        (
            r#"{"query": "checkout", "connector": ["github"]}"#,
            "connector",
        ),
        (
            r#"{"query": "checkout", "date_from": "2025-01-01T00:00:00Z"}"#,
            "date_from",
        ),
        (r#"{"query": "checkout", "query": "timeouts"}"#, "query"),
        (
            r#"{"query": "checkout", "max_results": 5, "max_results": 5}"#,
            "max_results",
        ),
        (
            r#"{"query": "checkout", "connectors": ["github"], "connectors": ["slack"]}"#,
            "connectors",
        ),
    ];
    for (body, field) in cases {
        let reply = raw(&demo, body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body}: {reply}");
        reply.expect_bad_request_naming(field);
    }
}

#[tokio::test]
async fn connectors_must_be_1_to_50_known_ids() {
    let demo = generous_demo();
    let reply = ask_of(&demo, json!([])).await;
    reply.expect_bad_request_naming("connectors");

    let many: Vec<String> = (0..51).map(|i| format!("tool{i}")).collect();
    let reply = ask_of(&demo, json!(many)).await;
    reply.expect_bad_request_naming("connectors");
    assert!(
        reply.error_message().contains("50"),
        "{}",
        reply.error_message()
    );
    // 51 entries are too many even when they name known tools.
    let many: Vec<&str> = (0..51)
        .map(|i| ["github", "slack", "jira"][i % 3])
        .collect();
    let reply = ask_of(&demo, json!(many)).await;
    reply.expect_bad_request_naming("connectors");
    // 50 are fine (duplicates are ignored).
    let fifty: Vec<&str> = (0..50).map(|i| ["github", "slack"][i % 2]).collect();
    let reply = ask_of(&demo, json!(fifty)).await;
    assert_query_answer(&reply, QUESTION, 10);

    for (asked, unknown) in [
        (json!(["nope"]), json!(["nope"])),
        (
            json!(["github", "jira-cloud", "slack"]),
            json!(["jira-cloud"]),
        ),
        (json!(["GitHub"]), json!(["GitHub"])),
        (json!(["github "]), json!(["github "])),
        (json!([""]), json!([""])),
        (json!(["../github"]), json!(["../github"])),
        (json!(["zeta", "alpha", "zeta"]), json!(["alpha", "zeta"])),
    ] {
        let reply = ask_of(&demo, asked.clone()).await;
        reply.expect(400, Some("bad_request"));
        let mut listed = reply.body["error"]["details"]["unknown_connectors"].clone();
        if let Some(list) = listed.as_array_mut() {
            list.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
        assert_eq!(listed, unknown, "{asked}: {reply}");
        for id in unknown.as_array().unwrap() {
            let id = id.as_str().unwrap();
            if !id.trim().is_empty() {
                assert!(
                    reply.error_message().contains(id),
                    "the message names {id:?}: {}",
                    reply.error_message()
                );
            }
        }
    }
}

#[tokio::test]
async fn bodies_that_are_not_a_json_object_are_400() {
    let demo = generous_demo();
    for body in [
        "",
        "   \n",
        "{",
        r#"{"query": "checkout""#,
        r#"{"query": "checkout",}"#,
        r#"{'query': 'checkout'}"#,
        r#"{query: "checkout"}"#,
        r#"{"query": "checkout"} trailing"#,
        r#"{"query": "checkout"}{"query": "again"}"#,
        "[]",
        r#"[{"query": "checkout"}]"#,
        r#""checkout""#,
        "5",
        "null",
        "true",
        r#"{"query": "\ud800"}"#,
        r#"{"query": "bad escape \x"}"#,
    ] {
        let reply = raw(&demo, body).await;
        assert_eq!(reply.status.as_u16(), 400, "{body:?}: {reply}");
        reply.expect(400, Some("bad_request"));
    }
    // Bytes that are not UTF-8.
    let reply = raw(&demo, b"{\"query\": \"\xff\xfe checkout\"}").await;
    reply.expect(400, Some("bad_request"));
    // Nesting deeper than any parser should follow.
    let deep = format!(
        r#"{{"query": "checkout", "connectors": {}{}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    raw(&demo, deep).await.expect(400, Some("bad_request"));
    // Whitespace around a valid object is fine.
    let reply = raw(&demo, "\n  {\"query\": \"checkout\"}  \n").await;
    assert_query_answer(&reply, "checkout", 10);
}

#[tokio::test]
async fn the_content_type_must_be_application_json() {
    let demo = generous_demo();
    let body = serde_json::to_vec(&ask(QUESTION)).unwrap();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonx"),
        Some("application/json-patch+json"),
        Some("text/json"),
        None,
    ] {
        let reply = demo
            .call(Method::POST, "/query")
            .token(demo.alice())
            .raw(body.clone(), content_type)
            .send()
            .await;
        assert_eq!(reply.status.as_u16(), 400, "{content_type:?}: {reply}");
        reply.expect_bad_request_naming("Content-Type");
    }
    for content_type in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/json;charset=UTF-8",
    ] {
        let reply = demo
            .call(Method::POST, "/query")
            .token(demo.alice())
            .raw(body.clone(), Some(content_type))
            .send()
            .await;
        assert_query_answer(&reply, QUESTION, 10);
    }
}

/// A valid body of exactly `size` bytes (JSON whitespace as padding).
fn padded_body(size: usize) -> Vec<u8> {
    let core = format!(r#"{{"query": "{QUESTION}"}}"#);
    let mut body = core.clone().into_bytes();
    body.truncate(core.len() - 1);
    body.resize(size - 1, b' ');
    body.push(b'}');
    assert_eq!(body.len(), size);
    body
}

#[tokio::test]
async fn bodies_over_64_kib_are_413() {
    let demo = generous_demo();
    // Exactly 64 KiB is accepted, one byte more is not.
    let reply = raw(&demo, padded_body(65_536)).await;
    assert_query_answer(&reply, QUESTION, 10);
    let reply = raw(&demo, padded_body(65_537)).await;
    reply.expect(413, Some("payload_too_large"));
    // Far over, and with a long query rather than padding.
    let huge = json!({ "query": "checkout ".repeat(20_000) });
    let reply = demo.query(demo.alice(), &huge).await;
    reply.expect(413, Some("payload_too_large"));
    // Without a Content-Length the server counts what it reads.
    let reply = demo
        .call(Method::POST, "/query")
        .token(demo.alice())
        .streamed(padded_body(200_000), "application/json")
        .send()
        .await;
    reply.expect(413, Some("payload_too_large"));
    for http1 in [false, true] {
        let mut call = demo
            .call(Method::POST, "/query")
            .token(demo.alice())
            .streamed(padded_body(1000), "application/json");
        if http1 {
            call = call.http1();
        }
        assert_query_answer(&call.send().await, QUESTION, 10);
    }
    // Any content type: the size is checked first.
    let reply = demo
        .call(Method::POST, "/query")
        .token(demo.alice())
        .raw(vec![b'x'; 70_000], Some("text/plain"))
        .send()
        .await;
    reply.expect(413, Some("payload_too_large"));
}

#[tokio::test]
async fn an_idempotency_key_does_not_excuse_a_bad_body() {
    let demo = generous_demo();
    let reply = demo
        .call(Method::POST, "/query")
        .token(demo.alice())
        .idempotency_key("validation-1")
        .json(&json!({ "query": "" }))
        .send()
        .await;
    reply.expect_bad_request_naming("query");
}

/// Over HTTP/1.1, a client still sending its oversized body must get the
/// 413 too, not a broken connection (RFC 9112, section 9.6: a server that
/// closes at once risks the client never reading its last response).
#[tokio::test]
async fn http1_clients_sending_too_much_get_the_413() {
    let demo = generous_demo();
    let mut failures = Vec::new();
    for size in [300_000] {
        for streamed in [false, true] {
            let call = demo
                .call(Method::POST, "/query")
                .token(demo.alice())
                .http1();
            let call = if streamed {
                call.streamed(padded_body(size), "application/json")
            } else {
                call.raw(padded_body(size), Some("application/json"))
            };
            let how = format!(
                "HTTP/1.1, {size} bytes {}",
                if streamed {
                    "chunked"
                } else {
                    "with Content-Length"
                }
            );
            match call.try_send().await {
                Ok(reply) if reply.status.as_u16() == 413 => {
                    reply.expect(413, Some("payload_too_large"));
                }
                Ok(reply) => failures.push(format!("{how}: {reply}")),
                Err(e) => failures.push(format!("{how}: no response ({e:?})")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The body is a JSON object: an array must not be read as the fields in
/// order (`["q"]` as `{"query": "q"}`, serde's sequence form of a struct).
#[tokio::test]
async fn a_json_array_is_not_a_query_body() {
    let demo = generous_demo();
    for body in [
        r#"["checkout timeouts"]"#,
        r#"["checkout timeouts", ["github"], 1]"#,
    ] {
        let reply = raw(&demo, body).await;
        assert_eq!(
            reply.status.as_u16(),
            400,
            "a JSON array was accepted as the body: {body} → {reply}"
        );
        reply.expect(400, Some("bad_request"));
    }
}
