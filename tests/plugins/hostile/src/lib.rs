//! A connector that attacks its sandbox. The search query names the attack;
//! each attempted fetch is reported back as one document whose content says
//! what the host answered (`ok 200`, `denied: ...`, `limit: ...`), so the
//! tests can check the host refused and the fake upstream saw nothing.

use quarry_connector_sdk::bindings::quarry::connector::http::{
    self as host, FetchError, Header, Method,
};
use quarry_connector_sdk::{Connector, Document, SearchError, SearchRequest};

struct Hostile;

const ALLOWED_GET: &str = "https://api.github.com/search/issues?q=checkout%20is%3Aissue";
const GRAPHQL: &str = "https://api.linear.app/graphql";

impl Connector for Hostile {
    fn search(request: SearchRequest) -> Result<Vec<Document>, SearchError> {
        let attempts = match request.query.as_str() {
            "infinite-loop" => infinite_loop(),
            "memory-bomb" => memory_bomb(),
            "foreign-hosts" => [
                "https://evil.example.com/steal",
                "https://api.github.com.evil.example.com/search/issues",
                "https://api.github.com@evil.example.com/search/issues",
                "https://user:pass@api.github.com/search/issues",
                "https://127.0.0.1/search/issues",
                "https://[::1]/search/issues",
                "https://2130706433/search/issues",
                "https://169.254.169.254/latest/meta-data/",
                "http://api.github.com/search/issues",
                "https://api.github.com:8443/search/issues",
                "https://api.github.com/user",
                "https://api.github.com/search/issues/../../user",
            ]
            .iter()
            .map(|url| attempt(url, get(url)))
            .collect(),
            "undeclared-method" => vec![attempt("put", raw_fetch_with_method(3))],
            "post-to-read-route" => vec![attempt("post", post(ALLOWED_GET, "{}"))],
            "get-with-body" => {
                let mut request = get(ALLOWED_GET);
                request.body = Some(b"{}".to_vec());
                vec![attempt("get-with-body", request)]
            }
            "graphql-mutation" => [
                r#"{"query":"mutation { issueDelete(id: \"ENG-1\") { success } }"}"#,
                r#"{"query":"query A { viewer { id } } mutation B { issueDelete(id: \"ENG-1\") { success } }","operationName":"B"}"#,
                r#"[{"query":"query { viewer { id } }"},{"query":"mutation { issueDelete(id: \"ENG-1\") { success } }"}]"#,
                r#"{"query":"subscription { issues { id } }"}"#,
            ]
            .iter()
            .enumerate()
            .map(|(i, body)| attempt(&format!("graphql-{i}"), post(GRAPHQL, body)))
            .collect(),
            "set-authorization" => {
                let mut request = get(ALLOWED_GET);
                request.headers.push(header("Authorization", "Bearer guest-chosen-token"));
                request.headers.push(header("Cookie", "session=guest"));
                request.headers.push(header("Proxy-Authorization", "Basic Z3Vlc3Q6Z3Vlc3Q="));
                vec![attempt("authorization", request)]
            }
            "redirect" | "oversize" | "allowed" => vec![attempt(&request.query, get(ALLOWED_GET))],
            "many-fetches" => (0..50).map(|i| attempt(&format!("fetch-{i}"), get(ALLOWED_GET))).collect(),
            // One batch past the fetch cap (5): refused whole, none sent.
            "batch-over-cap" => attempt_many("batch", (0..6).map(|_| get(ALLOWED_GET)).collect()),
            // Allowed and denied requests in one batch: each on its own.
            "batch-mixed" => attempt_many(
                "mixed",
                vec![
                    get(ALLOWED_GET),
                    get("https://evil.example.com/steal"),
                    get(ALLOWED_GET),
                    get("https://api.github.com/user"),
                ],
            ),
            // Five fetches in one batch: at most `max_concurrent_fetches`
            // (2) reach the upstream at once.
            "batch-wide" => attempt_many("wide", (0..5).map(|_| get(ALLOWED_GET)).collect()),
            // A batch whose requests the test makes slow: the call's
            // deadline ends it, whatever is in flight.
            "batch-slow" => attempt_many("slow", (0..3).map(|_| get(ALLOWED_GET)).collect()),
            // The credential goes where a single fetch would send it, and
            // only there: to api.github.com (`auth.hosts`), never to
            // Linear, and never the guest's own.
            "batch-credential" => attempt_many(
                "credential",
                vec![
                    get(ALLOWED_GET),
                    post(GRAPHQL, r#"{"query":"query { viewer { id } }"}"#),
                    {
                        let mut request = get(ALLOWED_GET);
                        request.headers.push(header("Authorization", "Bearer guest-chosen-token"));
                        request
                    },
                ],
            ),
            "panic" => panic!("the connector panicked on purpose"),
            // Nothing at all: the cost of a call apart from the upstream.
            "noop" => Vec::new(),
            other => return Err(SearchError::InvalidRequest(format!("unknown attack {other:?}"))),
        };
        Ok(attempts)
    }
}

fn header(name: &str, value: &str) -> Header {
    Header {
        name: name.into(),
        value: value.into(),
    }
}

fn get(url: &str) -> host::Request {
    host::Request {
        method: Method::Get,
        url: url.into(),
        headers: vec![],
        body: None,
    }
}

fn post(url: &str, body: &str) -> host::Request {
    host::Request {
        method: Method::Post,
        url: url.into(),
        headers: vec![header("content-type", "application/json")],
        body: Some(body.as_bytes().to_vec()),
    }
}

/// Sends a request and reports what the host answered.
fn attempt(label: &str, request: host::Request) -> Document {
    report(label, outcome(host::fetch(&request)))
}

/// Sends requests as one batch (`fetch-many`) and reports each answer.
fn attempt_many(label: &str, requests: Vec<host::Request>) -> Vec<Document> {
    host::fetch_many(&requests)
        .into_iter()
        .enumerate()
        .map(|(i, result)| report(&format!("{label}-{i}"), outcome(result)))
        .collect()
}

fn outcome(result: Result<host::Response, FetchError>) -> String {
    match result {
        Ok(response) => format!("ok {}", response.status),
        Err(FetchError::Denied(why)) => format!("denied: {why}"),
        Err(FetchError::LimitExceeded(why)) => format!("limit: {why}"),
        Err(FetchError::Timeout) => "timeout".into(),
        Err(FetchError::Network(why)) => format!("network: {why}"),
    }
}

fn report(label: &str, outcome: String) -> Document {
    Document {
        id: label.into(),
        title: label.into(),
        content: outcome,
        url: "https://example.com/hostile".into(),
        author: None,
        created_at: None,
        updated_at: None,
        metadata: "{}".into(),
    }
}

fn infinite_loop() -> Vec<Document> {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

fn memory_bomb() -> Vec<Document> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut block = vec![0u8; 8 * 1024 * 1024];
        block[0] = hoard.len() as u8;
        hoard.push(std::hint::black_box(block));
    }
}

/// Calls the host's `fetch` import directly, with a method discriminant the
/// contract does not define (3 would be "put"): the host must refuse to
/// lift it rather than guess.
#[cfg(target_arch = "wasm32")]
fn raw_fetch_with_method(method: i32) -> host::Request {
    #[link(wasm_import_module = "quarry:connector/http@1.0.0")]
    unsafe extern "C" {
        #[link_name = "fetch"]
        fn fetch(
            method: i32,
            url: *const u8,
            url_len: usize,
            headers: *const u8,
            headers_len: usize,
            has_body: i32,
            body: *const u8,
            body_len: usize,
            ret: *mut u8,
        );
    }
    let url = ALLOWED_GET.as_bytes();
    let mut ret = [0u64; 8];
    // SAFETY: the signature is the canonical ABI of `fetch`; only the
    // method's value is out of range, which is the point.
    unsafe {
        fetch(
            method,
            url.as_ptr(),
            url.len(),
            std::ptr::null(),
            0,
            0,
            std::ptr::null(),
            0,
            ret.as_mut_ptr().cast(),
        )
    };
    get("https://example.com/unreachable")
}

#[cfg(not(target_arch = "wasm32"))]
fn raw_fetch_with_method(_method: i32) -> host::Request {
    unreachable!("only meaningful inside the sandbox")
}

quarry_connector_sdk::export!(Hostile);
