//! The published description (public paths, versions, the same document as
//! JSON and YAML, the reference page and its files), routing misses (404,
//! 405), the transports (HTTPS only, HTTP/1.1 and HTTP/2), and the contract
//! checker itself.

use quarry_tests::contract::{RATE_LIMIT_HEADERS, contract, document_path};
use quarry_tests::repo_root;
use quarry_tests::server::{Demo, Reply};
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::{QUESTION, generous_demo};

#[tokio::test]
async fn the_description_is_public_as_json_and_yaml() {
    let demo = Demo::start(&[]);
    let json = demo.get("/openapi.json", None).await;
    json.expect(200, None);
    assert!(
        json.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let yaml = demo.get("/openapi.yaml", None).await;
    yaml.expect(200, None);
    let yaml_type = yaml.header("content-type").unwrap();
    assert!(
        yaml_type.contains("yaml"),
        "the YAML's Content-Type: {yaml_type}"
    );

    // The same document, the one in the repository, the versions the
    // contract names.
    let from_yaml: Value = serde_yaml_ng::from_slice(&yaml.raw).expect("the served YAML parses");
    assert_eq!(
        json.body, from_yaml,
        "openapi.json and openapi.yaml are the same document"
    );
    let file = std::fs::read(document_path()).expect("the document in the repository");
    assert_eq!(
        yaml.raw, file,
        "the served YAML is host/openapi/openapi.yaml (the one the tests check against)"
    );
    assert_eq!(json.body["openapi"], json!("3.0.3"));
    assert_eq!(json.body["info"]["version"], json!("1.0.0"));
    for server in json.body["servers"].as_array().expect("servers") {
        let url = server["url"].as_str().expect("server url");
        assert!(
            url.ends_with("/v1"),
            "the version is part of the base URL: {url}"
        );
    }
    // Every server is relative: resolved against where the document was
    // fetched, never a host of its own (a client generated from it, and
    // Swagger UI's "Try it out", reach the server that served it).
    let mut servers = Vec::new();
    collect_servers(&json.body, &mut servers);
    assert!(servers.len() > 1, "{servers:?}");
    assert!(
        servers.iter().all(|url| url.starts_with('/')),
        "servers: {servers:?}"
    );
}

/// The `url` of every `servers` entry in `doc`, wherever it is.
fn collect_servers(doc: &Value, urls: &mut Vec<String>) {
    match doc {
        Value::Object(object) => {
            for (key, value) in object {
                if key == "servers"
                    && let Some(list) = value.as_array()
                {
                    urls.extend(
                        list.iter()
                            .filter_map(|s| s["url"].as_str().map(String::from)),
                    );
                }
                collect_servers(value, urls);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_servers(item, urls)),
        _ => {}
    }
}

/// The document as served is valid OpenAPI 3.0.3 by a validator nobody
/// here wrote: openapi-spec-validator (in `target/py`, made by
/// `tools/py-env`), the one openapi-core and schemathesis's users rely on.
#[tokio::test]
async fn the_served_document_validates_as_openapi_3_0_3() {
    let demo = Demo::start(&[]);
    let json = demo.get("/openapi.json", None).await;
    json.expect(200, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openapi.json");
    std::fs::write(&path, &json.raw).unwrap();
    let output = std::process::Command::new(quarry_tests::webhook_receiver::python())
        .args([
            "-c",
            "import json, sys\n\
             from openapi_spec_validator import validate\n\
             from openapi_spec_validator.validation import OpenAPIV30SpecValidator\n\
             validate(json.load(open(sys.argv[1])), cls=OpenAPIV30SpecValidator)\n\
             print('valid')",
        ])
        .arg(&path)
        .output()
        .expect("target/py's python (tools/py-env) runs openapi-spec-validator");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success() && said.contains("valid"), "{said}");
}

#[tokio::test]
async fn the_reference_page_loads_its_files_from_this_server_under_a_strict_csp() {
    let demo = Demo::start(&[]);
    let docs = demo.get("/docs", None).await;
    docs.expect(200, None);
    assert!(
        docs.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(docs.header("x-content-type-options"), Some("nosniff"));
    let csp = docs.header("content-security-policy").expect("a CSP");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(
            csp.split(';').any(|d| d.trim() == directive),
            "the CSP has {directive}: {csp}"
        );
    }
    for loophole in ["unsafe-", "http", "*"] {
        assert!(!csp.contains(loophole), "the CSP allows {loophole}: {csp}");
    }

    let page = String::from_utf8(docs.raw.clone()).expect("UTF-8 page");
    let scripts: Vec<&str> = elements(&page, "script")
        .into_iter()
        .filter_map(|e| attribute(e, "src"))
        .collect();
    let style_sheets: Vec<&str> = elements(&page, "link")
        .into_iter()
        .filter(|e| attribute(e, "rel") == Some("stylesheet"))
        .filter_map(|e| attribute(e, "href"))
        .collect();
    assert_eq!(
        scripts.len(),
        page.matches("<script").count(),
        "no inline script: {page}"
    );
    assert!(
        !page.contains("<style") && !page.contains(" style="),
        "no inline style: {page}"
    );
    assert!(!scripts.is_empty() && !style_sheets.is_empty(), "{page}");

    // Each file from this server (a path, no origin of its own), with its
    // type; Swagger UI's files are the vendored ones, byte for byte.
    let origin = demo.base_url.trim_end_matches("/v1");
    let vendored = repo_root().join("host/openapi/vendor/swagger-ui-dist");
    let mut setup = String::new();
    for (path, content_type) in scripts
        .iter()
        .map(|p| (p, "text/javascript"))
        .chain(style_sheets.iter().map(|p| (p, "text/css")))
    {
        assert!(
            path.starts_with('/') && !path.starts_with("//"),
            "{path} is on this server"
        );
        let response = demo.fetch(&format!("{origin}{path}")).await;
        let (file, _) = Reply::read(response).await.unwrap();
        assert_eq!(file.status, 200, "GET {path}");
        let served_type = file.header("content-type").unwrap_or_default();
        assert!(
            served_type.starts_with(content_type),
            "{path} is {served_type}"
        );
        assert_eq!(
            file.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        let name = path.rsplit('/').next().unwrap();
        match std::fs::read(vendored.join(name)) {
            Ok(pinned) => assert!(file.raw == pinned, "{path} is the vendored {name}"),
            Err(_) => setup.push_str(&String::from_utf8(file.raw).expect("UTF-8 script")),
        }
    }
    assert!(
        setup.contains("'/v1/openapi.json'"),
        "the page's own script loads the description"
    );
}

/// Each `<tag ...>` of `html`: its attributes, as written.
fn elements<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    html.split(&format!("<{tag} "))
        .skip(1)
        .filter_map(|rest| Some(&rest[..rest.find('>')?]))
        .collect()
}

/// The value of `name` in an element's attributes (no spaces in values).
fn attribute<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("{name}=\"");
    element
        .split_whitespace()
        .find_map(|a| a.strip_prefix(&prefix)?.strip_suffix('"'))
}

#[tokio::test]
async fn public_paths_ignore_a_bad_token_and_are_limited_per_address() {
    let demo = Demo::start(&[]);
    let reply = demo.get("/openapi.json", Some("qt_not_a_token")).await;
    reply.expect(200, None);
    // Without a valid token, the anonymous per-address bucket is reported.
    let anonymous = demo.get("/docs", None).await;
    let signed_in = demo.get("/me", Some(demo.alice())).await;
    signed_in.expect(200, None);
    assert_eq!(anonymous.int_header("x-ratelimit-limit-minute"), 60);
    assert_eq!(anonymous.int_header("x-ratelimit-limit-day"), 2000);
    assert_eq!(signed_in.int_header("x-ratelimit-limit-minute"), 120);
    assert_eq!(signed_in.int_header("x-ratelimit-limit-day"), 10_000);
}

#[tokio::test]
async fn metrics_need_the_operators_scrape_token_when_one_is_set() {
    let demo = Demo::start(&[("QUARRY_METRICS_TOKEN", "scrape-secret")]);
    let metrics = demo.metrics_url();
    let get = |token: Option<String>| {
        let mut request = demo.client.get(&metrics);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(get(None).await.unwrap().status(), 401);
    let api_token = Some(demo.alice().to_string());
    assert_eq!(get(api_token).await.unwrap().status(), 401);
    assert_eq!(get(Some("wrong".into())).await.unwrap().status(), 401);
    let scraped = get(Some("scrape-secret".into())).await.unwrap();
    assert_eq!(scraped.status(), 200);
    assert!(scraped.text().await.unwrap().contains("quarry_"));
}

#[tokio::test]
async fn unknown_paths_are_404_not_found() {
    let demo = Demo::start(&[]);
    let token = demo.alice().to_string();
    for path in [
        "/nope",
        "/query/",
        "/QUERY",
        "/querys",
        "/v1/query",
        "/",
        "",
        "/me/extra",
        "/openapi.yml",
        "/docs/index.html",
        "/query%20",
    ] {
        for token in [Some(token.as_str()), None] {
            let reply = demo.get(path, token).await;
            reply.expect(404, Some("not_found"));
            let reply = demo.post(path, token, &json!({ "query": QUESTION })).await;
            reply.expect(404, Some("not_found"));
        }
    }
}

#[tokio::test]
async fn every_described_operation_is_served() {
    let demo = Demo::start(&[]);
    let document = &contract().document;
    let mut operations: Vec<(Method, String)> = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        // Operations with servers of their own are outside /v1 (the OAuth
        // endpoints; tests/api/device.rs covers them).
        if item.get("servers").is_some() {
            continue;
        }
        for method in item.as_object().expect("path item").keys() {
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            operations.push((method, path.clone()));
        }
    }
    // Deletions go last (the webhook is sent a test first), and deleting
    // the account, which ends the session, goes very last.
    operations.sort_by_key(|(method, path)| (path == "/delete_my_data", method == Method::DELETE));
    let mut webhook_id = String::new();
    for (method, path) in operations {
        let path = path.replace("{id}", &webhook_id);
        let mut call = demo.call(method.clone(), &path).token(demo.alice());
        if method == Method::POST {
            let body = match path.as_str() {
                "/webhooks" => {
                    json!({ "url": "https://127.0.0.1:9/hook", "events": ["user.deleted"] })
                }
                p if p.starts_with("/webhooks/") => json!({}),
                _ => json!({ "query": QUESTION, "max_results": 1 }),
            };
            call = call.json(&body);
        }
        let reply = call.send().await;
        assert!(
            reply.status.is_success(),
            "{method} {path} is described: {reply}"
        );
        if method == Method::POST && path == "/webhooks" {
            webhook_id = reply.body["id"].as_str().expect("webhook id").to_string();
        }
    }
}

#[tokio::test]
async fn wrong_methods_are_405_with_allow() {
    let demo = Demo::start(&[]);
    let alice = demo.alice().to_string();
    let cases: [(Method, &str, &str); 9] = [
        (Method::GET, "/query", "POST"),
        (Method::PUT, "/query", "POST"),
        (Method::DELETE, "/query", "POST"),
        (Method::PATCH, "/query", "POST"),
        (Method::OPTIONS, "/query", "POST"),
        (Method::POST, "/me", "GET"),
        (Method::DELETE, "/connectors", "GET"),
        (Method::POST, "/openapi.json", "GET"),
        (Method::PUT, "/docs", "GET"),
    ];
    for (method, path, allowed) in cases {
        for token in [Some(alice.as_str()), None] {
            let mut call = demo.call(method.clone(), path);
            if let Some(token) = token {
                call = call.token(token);
            }
            let reply = call.send().await;
            reply.expect(405, Some("bad_request"));
            let allow = reply
                .header("allow")
                .unwrap_or_else(|| panic!("{method} {path}: a 405 without Allow"));
            assert!(
                allow.split(',').any(|m| m.trim() == allowed),
                "{method} {path}: Allow is {allow:?}, expected it to list {allowed}"
            );
            assert!(
                reply.error_message().contains(method.as_str()),
                "the message names the method: {}",
                reply.error_message()
            );
        }
    }
}

#[tokio::test]
async fn head_is_get_without_a_body() {
    let demo = Demo::start(&[]);
    let reply = demo
        .call(Method::HEAD, "/me")
        .token(demo.alice())
        .send()
        .await;
    reply.expect(200, None);
    assert!(reply.raw.is_empty(), "HEAD has no body");
}

#[tokio::test]
async fn http2_and_http1_both_work_and_plain_http_is_refused() {
    let demo = generous_demo();
    let h2 = demo.get("/me", Some(demo.alice())).await;
    h2.expect(200, None);
    assert_eq!(h2.version, reqwest::Version::HTTP_2, "ALPN picks HTTP/2");
    let h1 = demo
        .call(Method::GET, "/me")
        .token(demo.alice())
        .http1()
        .send()
        .await;
    h1.expect(200, None);
    assert_eq!(h1.version, reqwest::Version::HTTP_11);
    let query = demo
        .call(Method::POST, "/query")
        .token(demo.alice())
        .json(&json!({ "query": QUESTION, "max_results": 2 }))
        .http1()
        .send()
        .await;
    super::assert_query_answer(&query, QUESTION, 2);

    // The API is HTTPS only: a plain-HTTP request to its port gets no answer.
    let plain_url = demo.url("/me").replacen("https://", "http://", 1);
    let plain = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap()
        .get(&plain_url)
        .bearer_auth(demo.alice())
        .send()
        .await;
    if let Ok(response) = plain {
        assert!(
            !response.status().is_success(),
            "plain HTTP must not be served: {}",
            response.status()
        );
    }
}

#[tokio::test]
async fn request_ids_are_unique() {
    let demo = Demo::start(&[]);
    let mut ids = std::collections::HashSet::new();
    for _ in 0..5 {
        let reply = demo.get("/me", Some(demo.alice())).await;
        assert!(ids.insert(reply.header("x-request-id").unwrap().to_string()));
        let reply = demo.get("/nope", None).await;
        assert!(ids.insert(reply.header("x-request-id").unwrap().to_string()));
    }
}

/// The document must mark as required the headers that every response
/// carries (contract section 8, rule 1, and `X-Request-Id`), `X-Token-Expired`
/// on 401 and `Retry-After` on 429: the contract check reads `required` to
/// know what must be present.
#[test]
fn the_document_marks_the_always_present_headers_required() {
    let contract = contract();
    let document = &contract.document;
    let mut missing = Vec::new();
    let mut responses: Vec<(String, &Value)> = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        // The OAuth endpoints (servers of their own) are outside /v1 and its gate.
        if item.get("servers").is_some() {
            continue;
        }
        for (method, operation) in item.as_object().expect("path item") {
            for (status, response) in operation["responses"].as_object().expect("responses") {
                responses.push((
                    format!("{} {path} {status}", method.to_ascii_uppercase()),
                    contract.resolve(response).expect("resolves"),
                ));
            }
        }
    }
    for name in ["NotFound", "MethodNotAllowed"] {
        responses.push((
            format!("components/responses/{name}"),
            &document["components"]["responses"][name],
        ));
    }
    for (at, response) in responses {
        let mut required: Vec<&str> = RATE_LIMIT_HEADERS.to_vec();
        required.push("x-request-id");
        if at.ends_with(" 401") {
            required.push("x-token-expired");
        }
        if at.ends_with(" 429") {
            required.push("retry-after");
        }
        if at.ends_with("MethodNotAllowed") {
            required.push("allow");
        }
        let declared = response["headers"].as_object();
        for name in required {
            let header = declared.and_then(|h| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v)
            });
            let marked = header
                .map(|h| contract.resolve(h).expect("resolves")["required"] == json!(true))
                .unwrap_or(false);
            if !marked {
                missing.push((
                    at.clone(),
                    name,
                    if header.is_some() {
                        "declared without `required: true`"
                    } else {
                        "not declared"
                    },
                ));
            }
        }
    }
    // Grouped by header: one line each, with where it is not required.
    let mut by_header: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (at, name, problem) in missing {
        by_header
            .entry(format!("{name} ({problem})"))
            .or_default()
            .push(at);
    }
    let report: Vec<String> = by_header
        .iter()
        .map(|(header, places)| {
            format!(
                "{header}: {} responses, e.g. {}",
                places.len(),
                places[..places.len().min(3)].join(", ")
            )
        })
        .collect();
    assert!(
        report.is_empty(),
        "headers the contract says are always present are not marked `required: true` in {}\n\
         (put it in the Header Object, e.g. components/headers/X-RateLimit-Limit-Minute: a sibling of $ref is ignored):\n{}",
        document_path().display(),
        report.join("\n")
    );
}

/// Every example in the document is valid for the schema beside it, so
/// that what a reader copies from the document is what the server accepts
/// and answers.
#[test]
fn the_document_examples_match_their_schemas() {
    let contract = contract();
    let document = &contract.document;
    let mut problems = Vec::new();
    let mut check = |at: String, schema: &Value, example: &Value| {
        let example = contract.resolve(example).expect("resolves");
        // An Example Object holds its value under `value`.
        let value = if example.get("value").is_some() && example.get("summary").is_some() {
            &example["value"]
        } else {
            example
        };
        if let Err(errors) = contract.validate(schema, value) {
            problems.push(format!("{at}: {}", errors.join("; ")));
        }
    };
    let media_examples = |media: &Value| -> Vec<(String, Value)> {
        let mut out = Vec::new();
        if let Some(example) = media.get("example") {
            out.push(("example".to_string(), example.clone()));
        }
        if let Some(examples) = media.get("examples").and_then(Value::as_object) {
            for (name, example) in examples {
                out.push((name.clone(), example.clone()));
            }
        }
        out
    };
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            if method == "servers" {
                continue;
            }
            let op = format!("{} {path}", method.to_ascii_uppercase());
            if let Some(content) = operation["requestBody"]["content"].as_object() {
                for (media, object) in content {
                    let schema = contract.resolve(&object["schema"]).unwrap();
                    for (name, example) in media_examples(object) {
                        check(format!("{op} request {media} {name}"), schema, &example);
                    }
                }
            }
            for (status, response) in operation["responses"].as_object().expect("responses") {
                let response = contract.resolve(response).unwrap();
                for (media, object) in response["content"].as_object().into_iter().flatten() {
                    let schema = contract.resolve(&object["schema"]).unwrap();
                    for (name, example) in media_examples(object) {
                        check(format!("{op} {status} {media} {name}"), schema, &example);
                    }
                }
            }
        }
    }
    for (name, schema) in document["components"]["schemas"]
        .as_object()
        .expect("schemas")
    {
        if let Some(example) = schema.get("example") {
            check(
                format!("components/schemas/{name} example"),
                schema,
                example,
            );
        }
    }
    for (name, parameter) in document["components"]["parameters"]
        .as_object()
        .into_iter()
        .flatten()
    {
        for (example_name, example) in media_examples(parameter) {
            check(
                format!("components/parameters/{name} {example_name}"),
                &parameter["schema"],
                &example,
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The headers every response carries, plus `pairs`: the checker's
/// self-test varies one thing at a time.
fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for name in RATE_LIMIT_HEADERS {
        map.insert(
            reqwest::header::HeaderName::from_static(name),
            "1".parse().unwrap(),
        );
    }
    map.insert(
        reqwest::header::HeaderName::from_static("x-request-id"),
        "req_1".parse().unwrap(),
    );
    for (name, value) in pairs {
        map.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    map
}

/// The checker refuses what it should (so that a passing suite means
/// something).
#[test]
fn the_contract_checker_catches_drift() {
    let c = contract();
    let json_type = ("content-type", "application/json");
    let error = br#"{"error":{"type":"bad_request","message":"m"}}"#;
    // Most cases vary the body alone, under the JSON content type.
    let check_json = |method: &str, path: &str, status: u16, body: &[u8]| {
        c.check(method, path, status, &headers(&[json_type]), body)
    };
    // Declared: POST /query 400 with an error body.
    assert!(check_json("POST", "/query", 400, error).is_ok());
    // Undeclared status.
    let e = check_json("POST", "/query", 418, error).unwrap_err();
    assert!(e.contains("418"), "{e}");
    // A body that misses required fields.
    let e = check_json("POST", "/query", 200, b"{}").unwrap_err();
    assert!(e.contains("query_id"), "{e}");
    // A field of the wrong type.
    let me = br#"{"user_id":"usr_1","email":"a@b","token_expires_at":"2025-01-01T00:00:00Z","connectors":"x"}"#;
    let e = check_json("GET", "/me", 200, me).unwrap_err();
    assert!(e.contains("connectors"), "{e}");
    // A nullable field admits null; a non-nullable one does not.
    let chunk = |author: &str, title: &str| {
        format!(
            r#"{{"query_id":"qry_1","query":"q","search_summary":{{"connectors_searched":1,"total_chunks_found":1,"duration_ms":1}},
            "results":[{{"connector":"github","source_label":"GitHub","chunks":[{{"chunk_id":"chnk_1","content":"c",
            "source_url":"https://github.com/a","relevance_score":0.5,"metadata":{{"author":{author},"title":{title}}}}}]}}]}}"#
        )
    };
    assert!(check_json("POST", "/query", 200, chunk("null", "\"t\"").as_bytes()).is_ok());
    assert!(check_json("POST", "/query", 200, chunk("\"a\"", "null").as_bytes()).is_err());
    // A relevance out of [0, 1], an id without its prefix.
    let bad = chunk("null", "\"t\"").replace("0.5", "1.5");
    assert!(check_json("POST", "/query", 200, bad.as_bytes()).is_err());
    let bad = chunk("null", "\"t\"").replace("chnk_1", "chunk_1");
    assert!(check_json("POST", "/query", 200, bad.as_bytes()).is_err());
    // An undeclared content type.
    let e = c
        .check(
            "GET",
            "/me",
            401,
            &headers(&[("content-type", "text/plain")]),
            b"no",
        )
        .unwrap_err();
    assert!(e.contains("Content-Type"), "{e}");
    // Unknown paths must be 404 and wrong methods 405, as the components say.
    let not_found = br#"{"error":{"type":"not_found","message":"m"}}"#;
    assert!(check_json("GET", "/nope", 404, not_found).is_ok());
    assert!(check_json("GET", "/nope", 200, b"{}").is_err());
    assert!(
        c.check(
            "PUT",
            "/me",
            405,
            &headers(&[json_type, ("allow", "GET, HEAD")]),
            error
        )
        .is_ok()
    );
    assert!(check_json("PUT", "/me", 404, not_found).is_err());
    // A malformed declared header.
    let e = c
        .check(
            "GET",
            "/me",
            401,
            &headers(&[json_type, ("x-token-expired", "maybe")]),
            br#"{"error":{"type":"unauthorized","message":"m"}}"#,
        )
        .unwrap_err();
    assert!(e.contains("X-Token-Expired"), "{e}");
}
