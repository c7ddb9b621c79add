//! The GraphQL rule: a body sent to a GraphQL route must hold exactly one
//! operation, and it must be a `query`.
//!
//! The document is parsed with a real GraphQL parser rather than searched for
//! the word "mutation": comments, strings, aliases and multi-operation
//! documents (`query A {..} mutation B {..}` with `operationName: "B"`) all
//! defeat text matching.

use anyhow::{Result, bail, ensure};
use apollo_parser::{Parser, cst};
use serde_json::Value;

/// Checks a GraphQL-over-HTTP POST body (`{"query": "...", "variables": ..}`).
pub fn check_body(body: &[u8]) -> Result<()> {
    let fields: Fields = serde_json::from_slice(body).map_err(|e| {
        anyhow::anyhow!("GraphQL body must be one JSON object (batched requests are refused): {e}")
    })?;
    // A repeated field is read as its first copy by some servers and its
    // last by others (and by serde): the guard must see what is run.
    let mut request = serde_json::Map::new();
    for (key, value) in fields.0 {
        ensure!(
            !request.contains_key(&key),
            "GraphQL body repeats the field {key:?}"
        );
        request.insert(key, value);
    }
    for key in request.keys() {
        ensure!(
            matches!(key.as_str(), "query" | "variables" | "operationName"),
            "GraphQL body has an unexpected field {key:?}"
        );
    }
    let Some(Value::String(document)) = request.get("query") else {
        bail!("GraphQL body has no \"query\" string (persisted queries are refused)");
    };
    let operation_name = match request.get("operationName") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(_) => bail!("GraphQL operationName must be a string"),
    };
    check_document(document, operation_name)
}

/// A JSON object's fields in order, repeats kept.
struct Fields(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Fields {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Fields, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The URL query parameters GraphQL servers read as the request (GET
/// transport): on a POST they could replace the body the guard checked.
pub const REQUEST_PARAMETERS: [&str; 4] = ["query", "operationName", "variables", "extensions"];

/// Checks one GraphQL document.
pub fn check_document(document: &str, operation_name: Option<&str>) -> Result<()> {
    let tree = Parser::new(document)
        .recursion_limit(64)
        .token_limit(20_000)
        .parse();
    if let Some(error) = tree.errors().next() {
        bail!("GraphQL document does not parse: {}", error.message());
    }
    let mut operations = Vec::new();
    for definition in tree.document().definitions() {
        match definition {
            cst::Definition::OperationDefinition(op) => operations.push(op),
            cst::Definition::FragmentDefinition(_) => {}
            _ => bail!("GraphQL document may contain only operations and fragments"),
        }
    }
    ensure!(!operations.is_empty(), "GraphQL document has no operation");
    ensure!(
        operations.len() == 1,
        "GraphQL document has {} operations; exactly one query is allowed",
        operations.len()
    );
    let op = &operations[0];
    if let Some(kind) = op.operation_type() {
        if kind.mutation_token().is_some() {
            bail!("GraphQL mutations are refused: connectors are read-only");
        }
        if kind.subscription_token().is_some() {
            bail!("GraphQL subscriptions are refused");
        }
    }
    if let Some(wanted) = operation_name {
        let actual = op.name().map(|n| n.text().to_string());
        ensure!(
            actual.as_deref() == Some(wanted),
            "operationName {wanted:?} names no operation in the document"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_query_passes() {
        check_document(
            "query Search($t: String!) { searchIssues(term: $t) { nodes { id } } }",
            None,
        )
        .unwrap();
        check_document("{ viewer { id } }", None).unwrap();
        check_document(
            "query A { ...F } fragment F on Query { viewer { id } }",
            Some("A"),
        )
        .unwrap();
        check_body(br#"{"query":"query { viewer { id } }","variables":{"t":"x"}}"#).unwrap();
    }

    #[test]
    fn writes_and_tricks_are_refused() {
        for (doc, op) in [
            ("mutation { issueDelete(id: \"1\") { success } }", None),
            ("subscription { issues { id } }", None),
            (
                "query A { viewer { id } } mutation B { issueDelete(id: \"1\") { success } }",
                Some("B"),
            ),
            ("query A { viewer { id } } query B { viewer { id } }", None),
            ("# query\nmutation { x }", None),
            ("query { viewer { id }", None),
            ("type Query { x: Int }", None),
            ("query A { viewer { id } }", Some("B")),
        ] {
            assert!(check_document(doc, op).is_err(), "{doc} should be refused");
        }
        assert!(check_body(br#"[{"query":"{ a }"}]"#).is_err());
        assert!(check_body(br#"{"extensions":{"persistedQuery":{}}}"#).is_err());
    }
}
