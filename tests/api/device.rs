//! The OAuth 2.0 device flow for assistants (RFC 8628) and revocation
//! (RFC 7009), over HTTPS against the real binary: form requests, the
//! OAuth error shape, polling rules. (Approval happens in the dashboard at
//! `/device`; the issuer's own tests cover approval and refresh rotation.)

use quarry_tests::server::Demo;
use serde_json::Value;

fn origin(demo: &Demo) -> String {
    demo.base_url.trim_end_matches("/v1").to_string()
}

async fn form(
    demo: &Demo,
    path: &str,
    fields: &[(&str, &str)],
) -> (u16, Value, reqwest::header::HeaderMap) {
    let response = demo
        .client
        .post(format!("{}{path}", origin(demo)))
        .form(fields)
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body, headers)
}

#[tokio::test]
async fn an_assistant_starts_a_device_flow_and_polls_by_the_rules() {
    let demo = Demo::start(&[]);
    let (status, start, headers) = form(
        &demo,
        "/oauth/device_authorization",
        &[("client_id", "Claude Desktop")],
    )
    .await;
    assert_eq!(status, 200, "{start}");
    assert_eq!(headers["cache-control"], "no-store");
    let device_code = start["device_code"].as_str().unwrap();
    let user_code = start["user_code"].as_str().unwrap();
    assert!(device_code.len() >= 40, "a long random device code");
    assert!(
        user_code.len() == 9 && user_code.chars().nth(4) == Some('-'),
        "XXXX-XXXX: {user_code}"
    );
    assert_eq!(
        start["verification_uri"],
        format!("{}/device", origin(&demo))
    );
    assert_eq!(
        start["verification_uri_complete"],
        format!("{}/device?user_code={user_code}", origin(&demo))
    );
    assert_eq!(start["expires_in"], 600);
    assert_eq!(start["interval"], 5);

    let poll = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ("device_code", device_code),
        ("client_id", "Claude Desktop"),
    ];
    let (status, body, _) = form(&demo, "/oauth/token", &poll).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("authorization_pending")),
        "{body}"
    );
    let (status, body, _) = form(&demo, "/oauth/token", &poll).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("slow_down")),
        "{body}"
    );

    let mut stranger = poll;
    stranger[2] = ("client_id", "another app");
    let (status, body, _) = form(&demo, "/oauth/token", &stranger).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
}

#[tokio::test]
async fn bad_requests_get_oauth_errors() {
    let demo = Demo::start(&[]);
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case<'_>; 6] = [
        ("/oauth/device_authorization", vec![], "invalid_request"),
        (
            "/oauth/device_authorization",
            vec![("client_id", "bad\u{7}name")],
            "invalid_client",
        ),
        (
            "/oauth/token",
            vec![("client_id", "cli")],
            "invalid_request",
        ),
        (
            "/oauth/token",
            vec![("client_id", "cli"), ("grant_type", "password")],
            "unsupported_grant_type",
        ),
        (
            "/oauth/token",
            vec![
                ("client_id", "cli"),
                ("grant_type", "refresh_token"),
                ("refresh_token", "qr_forged"),
            ],
            "invalid_grant",
        ),
        ("/oauth/revoke", vec![], "invalid_request"),
    ];
    for (path, fields, error) in cases {
        let (status, body, _) = form(&demo, path, &fields).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some(error)),
            "{path} {fields:?}: {body}"
        );
        assert!(
            body["error_description"]
                .as_str()
                .is_some_and(|d| !d.is_empty())
        );
    }
    // JSON is not what OAuth clients send: a clear invalid_request.
    let response = demo
        .client
        .post(format!("{}/oauth/token", origin(&demo)))
        .json(&serde_json::json!({ "grant_type": "refresh_token" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request");
}

#[tokio::test]
async fn revoking_an_api_token_ends_it_and_unknown_tokens_are_fine() {
    let demo = Demo::start(&[]);
    demo.get("/me", Some(demo.bob())).await.expect(200, None);
    let (status, _, _) = form(&demo, "/oauth/revoke", &[("token", demo.bob())]).await;
    assert_eq!(status, 200);
    demo.get("/me", Some(demo.bob()))
        .await
        .expect(401, Some("unauthorized"));
    let (status, _, _) = form(&demo, "/oauth/revoke", &[("token", "qr_never_issued")]).await;
    assert_eq!(status, 200, "RFC 7009: unknown tokens are not an error");
    demo.get("/me", Some(demo.alice())).await.expect(200, None);
}
