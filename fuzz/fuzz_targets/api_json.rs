//! `json::parse` with the API's real request bodies (`POST /v1/query`,
//! `/v1/deep_search`, `/v1/webhooks` and its test endpoint).
//!
//! Invariants: a body is accepted only if it is one JSON object, with no
//! repeated field, no field the type does not have, no `null`, and the
//! required fields present; a refusal always says something.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use quarry_guard::bodies::{DeepSearchBody, QueryBody, RegisterBody, TestBody};
use quarry_guard::json::{Body, parse};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    check::<QueryBody>(data, &["query", "connectors", "max_results"], &["query"]);
    check::<DeepSearchBody>(
        data,
        &["query", "max_results", "date_from", "date_to"],
        &["query"],
    );
    check::<RegisterBody>(data, &["url", "events"], &["url"]);
    check::<TestBody>(data, &[], &[]);
});

fn check<T: Body>(data: &[u8], fields: &[&str], required: &[&str]) {
    let error = parse::<T>(data).err();
    let Some(entries) = object_entries(data) else {
        assert!(
            error.is_some(),
            "{:?} is not one JSON object",
            String::from_utf8_lossy(data)
        );
        return;
    };
    let Some(error) = error else {
        let mut seen = BTreeSet::new();
        for (key, value) in &entries {
            assert!(seen.insert(key.as_str()), "repeated field {key:?} accepted");
            assert!(
                fields.contains(&key.as_str()),
                "unknown field {key:?} accepted"
            );
            assert!(!value.is_null(), "null {key:?} accepted");
        }
        for name in required {
            assert!(seen.contains(name), "missing {name:?} accepted");
        }
        return;
    };
    assert!(!error.is_empty());
}

/// The fields of `data` if it is exactly one JSON object, repeats kept.
fn object_entries(data: &[u8]) -> Option<Vec<(String, Value)>> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = Vec<(String, Value)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_slice(data);
    let entries = (&mut deserializer).deserialize_map(Entries).ok()?;
    deserializer.end().ok()?;
    Some(entries)
}
