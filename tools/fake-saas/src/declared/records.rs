//! Records as JSON: reading values at pointers, writing an answer.

use serde_json::{Map, Value};

/// The strings at a JSON pointer whose `*` segments stand for every
/// element of an array (numbers are written as text).
pub(super) fn strings_at(value: &Value, pointer: &str) -> Vec<String> {
    let mut found = vec![value];
    for segment in pointer.split('/').skip(1) {
        found = found
            .into_iter()
            .flat_map(|v| match (segment, v) {
                ("*", Value::Array(items)) => items.iter().collect(),
                (key, Value::Object(map)) => map.get(key).into_iter().collect(),
                (index, Value::Array(items)) => index
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
    }
    found
        .into_iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect()
}

/// A record as the vendor answers it: without the fake's own `_` keys.
pub(super) fn without_own_keys(record: &Value) -> Value {
    match record {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !key.starts_with('_'))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A record's link: the string at a JSON pointer, or a template whose
/// `{/pointer}`s are filled with the record's values.
pub(super) fn link(record: &Value, citation: &str) -> Option<String> {
    if citation.starts_with('/') {
        return strings_at(record, citation).into_iter().next();
    }
    if !citation.contains('{') {
        return None; // neither a pointer nor a template
    }
    let mut link = String::new();
    let mut rest = citation;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        link.push_str(&rest[..open]);
        link.push_str(strings_at(record, &rest[open + 1..close]).first()?);
        rest = &rest[close + 1..];
    }
    link.push_str(rest);
    Some(link)
}

/// Puts `value` at a JSON pointer, making the objects on the way (at the
/// empty pointer, `value` is the whole).
pub(super) fn put_at(target: &mut Value, pointer: &str, value: Value) {
    if pointer.is_empty() {
        *target = value;
        return;
    }
    let mut at = target;
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    for (n, segment) in segments.iter().enumerate() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let map = at.as_object_mut().expect("made an object");
        if n + 1 == segments.len() {
            map.insert((*segment).to_string(), value);
            return;
        }
        at = map
            .entry(*segment)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}
