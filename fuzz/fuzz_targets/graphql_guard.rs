//! The GraphQL guard: `check_body` on the input as a POST body, and
//! `check_document` on it as a document.
//!
//! Invariants: an accepted body is one JSON object whose `query` is an
//! accepted document; the guard's two entry points agree; an accepted
//! document stops being accepted when a mutation is added to it (one
//! operation only) or when an operation name it does not have is asked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quarry_guard::graphql::{check_body, check_document};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    if check_body(data).is_ok() {
        let value: Value = serde_json::from_slice(data).expect("an accepted body is JSON");
        let object = value.as_object().expect("an accepted body is one object");
        assert!(
            object
                .keys()
                .all(|k| matches!(k.as_str(), "query" | "variables" | "operationName")),
            "{object:?}"
        );
        let query = object["query"]
            .as_str()
            .expect("an accepted body has a query string");
        let name = object.get("operationName").and_then(Value::as_str);
        check_document(query, name).expect("the body's document passes on its own");
        // What the host forwards is these bytes, but a server re-encoding
        // the same object must see the same decision.
        check_body(&serde_json::to_vec(&value).unwrap()).expect("the re-encoded body passes");
    }

    let Ok(document) = std::str::from_utf8(data) else {
        return;
    };
    if check_document(document, None).is_err() {
        return;
    }
    let body = serde_json::to_vec(&serde_json::json!({ "query": document })).unwrap();
    check_body(&body).expect("an accepted document passes as a body");

    let with_mutation = format!("{document}\nmutation Fuzz {{ deleteEverything {{ id }} }}");
    assert!(
        check_document(&with_mutation, Some("Fuzz")).is_err(),
        "{document:?} plus a mutation is accepted"
    );
    assert!(
        check_document(document, Some("NoSuchOperation_7f3a")).is_err()
            || document.contains("NoSuchOperation_7f3a"),
        "{document:?} accepted with an operation name it does not have"
    );
});
