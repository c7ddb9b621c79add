//! The published OpenAPI document (`host/openapi/openapi.yaml`) as the judge
//! of every response the tests see.
//!
//! For a response to `METHOD path` with status `S`:
//! - the document must describe the operation and declare `S` for it
//!   (a path the document does not list must answer 404 as described by
//!   `components/responses/NotFound`; a listed path with a method it does
//!   not list must answer 405 as described by `MethodNotAllowed`; an
//!   operation marked `x-quarry-available: false` may answer that 404);
//! - every header the response declares `required: true` must be present,
//!   and every declared header that is present must match its schema;
//! - the `Content-Type` must be one the response declares, and a JSON body
//!   must validate against its schema (OpenAPI 3.0 schemas converted to JSON
//!   Schema draft 7: `#/components/schemas/X` becomes `#/definitions/X`,
//!   `nullable: true` admits `null`); so must a YAML body, parsed.
//!
//! On top of the document, [`check_invariants`] holds every response to the
//! rules the contract states in prose (the rate-limit headers on every
//! response, `X-Token-Expired` on 401, `Retry-After` on 429), so that they
//! are checked even where the document does not mark them required.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::header::{CONTENT_TYPE, HeaderMap};
use serde_json::{Map, Value, json};

use crate::server::Reply;

/// The six headers every response carries (contract, section 8, rule 1).
pub const RATE_LIMIT_HEADERS: [&str; 6] = [
    "x-ratelimit-limit-minute",
    "x-ratelimit-remaining-minute",
    "x-ratelimit-reset-minute",
    "x-ratelimit-limit-day",
    "x-ratelimit-remaining-day",
    "x-ratelimit-reset-day",
];

pub fn document_path() -> PathBuf {
    crate::repo_root().join("host/openapi/openapi.yaml")
}

/// The document, loaded once per test process.
pub fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(Contract::load)
}

/// Checks a reply against the document and the contract's invariants.
pub fn check_reply(method: &str, path: &str, reply: &Reply) -> Result<(), String> {
    let mut problems = Vec::new();
    if let Err(p) = contract().check(
        method,
        path,
        reply.status.as_u16(),
        &reply.headers,
        &reply.raw,
    ) {
        problems.push(p);
    }
    if let Err(p) = check_invariants(reply.status.as_u16(), &reply.headers, &reply.body) {
        problems.push(p);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The rules of the contract's prose that hold for every response.
pub fn check_invariants(status: u16, headers: &HeaderMap, body: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    for name in RATE_LIMIT_HEADERS {
        match text(name) {
            None => problems.push(format!("missing header {name} (every response carries it)")),
            Some(v) if v.parse::<u64>().is_err() => problems.push(format!(
                "header {name} is not a non-negative integer: {v:?}"
            )),
            Some(_) => {}
        }
    }
    match text("x-request-id") {
        Some(id) if !id.is_empty() => {}
        _ => problems.push("missing or empty X-Request-Id".to_string()),
    }
    if status == 401 {
        match text("x-token-expired") {
            Some("true") | Some("false") => {}
            other => problems.push(format!(
                "a 401 must carry X-Token-Expired: true|false, not {other:?}"
            )),
        }
    }
    if status == 429 {
        let header = text("retry-after").and_then(|v| v.parse::<i64>().ok());
        let field = body["error"]["retry_after_seconds"].as_i64();
        match (header, field) {
            (Some(h), Some(f)) if h == f && h > 0 => {}
            _ => problems.push(format!(
                "a 429 must carry Retry-After and error.retry_after_seconds, equal and positive (header {header:?}, body {field:?})"
            )),
        }
    }
    if status >= 400 {
        let kind = body["error"]["type"].as_str();
        let message = body["error"]["message"].as_str();
        if kind.is_none() || message.is_none_or(str::is_empty) {
            problems
                .push("an error must have the body {\"error\": {\"type\", \"message\"}}".into());
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// What the document says about a (method, path).
pub enum Lookup<'a> {
    Operation {
        template: String,
        operation: &'a Value,
    },
    /// The path is listed, the method is not.
    WrongMethod { template: String },
    /// The path is not listed.
    NoPath,
}

pub struct Contract {
    pub document: Value,
    /// `components/schemas`, converted to JSON Schema.
    definitions: Value,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl Contract {
    fn load() -> Contract {
        let path = document_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let document: Value = serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()));
        let mut definitions = Map::new();
        if let Some(schemas) = document["components"]["schemas"].as_object() {
            for (name, schema) in schemas {
                definitions.insert(name.clone(), convert_schema(schema));
            }
        }
        Contract {
            document,
            definitions: Value::Object(definitions),
            validators: Mutex::default(),
        }
    }

    /// The value at a local reference (`#/components/...`).
    pub fn pointer(&self, reference: &str) -> Result<&Value, String> {
        let pointer = reference
            .strip_prefix('#')
            .ok_or_else(|| format!("only local references are supported: {reference}"))?;
        self.document
            .pointer(pointer)
            .ok_or_else(|| format!("the reference {reference} points at nothing"))
    }

    /// Follows `$ref`s until a value that is not one.
    pub fn resolve<'a>(&'a self, mut value: &'a Value) -> Result<&'a Value, String> {
        for _ in 0..16 {
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => value = self.pointer(reference)?,
                None => return Ok(value),
            }
        }
        Err("a reference cycle".into())
    }

    pub fn lookup(&self, method: &str, path: &str) -> Lookup<'_> {
        let path = path.split('?').next().unwrap_or(path);
        let method = match method.to_ascii_lowercase().as_str() {
            "head" => "get".to_string(),
            m => m.to_string(),
        };
        let Some(paths) = self.document["paths"].as_object() else {
            return Lookup::NoPath;
        };
        for (template, item) in paths {
            if !template_matches(template, path) {
                continue;
            }
            return match item.get(&method) {
                Some(operation) => Lookup::Operation {
                    template: template.clone(),
                    operation,
                },
                None => Lookup::WrongMethod {
                    template: template.clone(),
                },
            };
        }
        Lookup::NoPath
    }

    /// The response object the document declares for this exchange, and
    /// where it is (for messages).
    pub fn response_for(
        &self,
        method: &str,
        path: &str,
        status: u16,
    ) -> Result<(String, &Value), String> {
        let component = |name: &str| -> Result<(String, &Value), String> {
            let at = format!("#/components/responses/{name}");
            Ok((at.clone(), self.pointer(&at)?))
        };
        match self.lookup(method, path) {
            Lookup::NoPath if status == 404 => component("NotFound"),
            Lookup::NoPath => Err(format!(
                "{method} {path}: the document lists no such path, so the answer must be 404 (components/responses/NotFound), not {status}"
            )),
            Lookup::WrongMethod { .. } if status == 405 => component("MethodNotAllowed"),
            Lookup::WrongMethod { template } => Err(format!(
                "{method} {path}: the document lists {template} without {method}, so the answer must be 405 (components/responses/MethodNotAllowed), not {status}"
            )),
            Lookup::Operation {
                template,
                operation,
            } => {
                let responses = &operation["responses"];
                let code = status.to_string();
                let class = format!("{}XX", status / 100);
                for key in [code.as_str(), class.as_str(), "default"] {
                    if let Some(response) = responses.get(key) {
                        let at = format!("{} {template} → {key}", method.to_ascii_uppercase());
                        return Ok((at, self.resolve(response)?));
                    }
                }
                if status == 404 && operation["x-quarry-available"] == json!(false) {
                    return component("NotFound");
                }
                let declared: Vec<&String> = responses
                    .as_object()
                    .map(|o| o.keys().collect())
                    .unwrap_or_default();
                Err(format!(
                    "{} {template}: status {status} is not declared (declared: {declared:?})",
                    method.to_ascii_uppercase()
                ))
            }
        }
    }

    /// Checks one response against the document.
    pub fn check(
        &self,
        method: &str,
        path: &str,
        status: u16,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<(), String> {
        let (at, response) = self.response_for(method, path, status)?;
        let mut problems = Vec::new();

        // Headers: required ones present, present ones well-formed.
        if let Some(declared) = response.get("headers").and_then(Value::as_object) {
            for (name, header) in declared {
                let header = self.resolve(header)?;
                let value = headers.get(name.as_str());
                let required = header["required"] == json!(true);
                match value {
                    None if required => {
                        problems.push(format!("{at}: the required header {name} is missing"))
                    }
                    None => {}
                    Some(value) => {
                        let Ok(text) = value.to_str() else {
                            problems.push(format!("{at}: header {name} is not visible ASCII"));
                            continue;
                        };
                        let schema = self.resolve(&header["schema"])?;
                        let instance = header_instance(schema, text);
                        if let Err(errors) = self.validate(schema, &instance) {
                            problems.push(format!(
                                "{at}: header {name}: {text:?} does not match its schema: {}",
                                errors.join("; ")
                            ));
                        }
                    }
                }
            }
        }

        // Body: a declared media type, and a JSON body valid for its schema.
        let is_head = method.eq_ignore_ascii_case("HEAD");
        match response.get("content").and_then(Value::as_object) {
            None => {
                if !body.is_empty() {
                    problems.push(format!(
                        "{at}: declares no content, but the body is not empty"
                    ));
                }
            }
            Some(_) if is_head => {}
            Some(content) => {
                let content_type = headers
                    .get(CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                let essence = content_type
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                match content
                    .iter()
                    .find(|(media, _)| media.to_ascii_lowercase() == essence)
                {
                    None => problems.push(format!(
                        "{at}: Content-Type {content_type:?} is not declared (declared: {:?})",
                        content.keys().collect::<Vec<_>>()
                    )),
                    Some((media, media_object)) => {
                        let schema = self.resolve(&media_object["schema"])?;
                        let instance = if media.contains("json") {
                            match serde_json::from_slice::<Value>(body) {
                                Ok(v) => v,
                                Err(e) => {
                                    problems.push(format!("{at}: the body is not JSON: {e}"));
                                    Value::Null
                                }
                            }
                        } else if media.contains("yaml") {
                            // A YAML body's schema describes the document
                            // it holds, as for JSON (schemathesis reads it so).
                            match serde_yaml_ng::from_slice::<Value>(body) {
                                Ok(v) => v,
                                Err(e) => {
                                    problems.push(format!("{at}: the body is not YAML: {e}"));
                                    Value::Null
                                }
                            }
                        } else {
                            match std::str::from_utf8(body) {
                                Ok(text) => Value::String(text.to_string()),
                                Err(_) => {
                                    problems.push(format!("{at}: the {media} body is not UTF-8"));
                                    Value::Null
                                }
                            }
                        };
                        if let Err(errors) = self.validate(schema, &instance) {
                            problems.push(format!(
                                "{at}: the body does not match the schema of {media}:\n  {}",
                                errors.join("\n  ")
                            ));
                        }
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// Validates `instance` against an OpenAPI schema of the document.
    pub fn validate(&self, schema: &Value, instance: &Value) -> Result<(), Vec<String>> {
        let validator = self.validator(schema).map_err(|e| vec![e])?;
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| {
                let at = e.instance_path().to_string();
                format!("at `{}`: {e}", if at.is_empty() { "/" } else { &at })
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    fn validator(&self, schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
        let key = schema.to_string();
        if let Some(v) = self.validators.lock().expect("lock").get(&key) {
            return Ok(v.clone());
        }
        let root = json_schema(schema, &self.definitions);
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .should_validate_formats(true)
            .build(&root)
            .map_err(|e| format!("the document's schema {schema} does not compile: {e}"))?;
        let validator = Arc::new(validator);
        self.validators
            .lock()
            .expect("lock")
            .insert(key, validator.clone());
        Ok(validator)
    }
}

/// A JSON Schema document for an OpenAPI schema: the converted schema, with
/// every component schema beside it under `definitions`.
pub fn json_schema(schema: &Value, definitions: &Value) -> Value {
    json!({
        "definitions": definitions,
        "allOf": [convert_schema(schema)],
    })
}

/// OpenAPI 3.0 Schema Object → JSON Schema draft 7.
pub fn convert_schema(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in object {
        let converted = match key.as_str() {
            "$ref" => {
                let reference = value.as_str().unwrap_or_default();
                match reference.strip_prefix("#/components/schemas/") {
                    Some(name) => json!(format!("#/definitions/{name}")),
                    None => value.clone(),
                }
            }
            "properties" | "patternProperties" | "definitions" => match value.as_object() {
                Some(props) => Value::Object(
                    props
                        .iter()
                        .map(|(k, v)| (k.clone(), convert_schema(v)))
                        .collect(),
                ),
                None => value.clone(),
            },
            "items" | "additionalProperties" | "not" | "additionalItems" => {
                if value.is_object() {
                    convert_schema(value)
                } else {
                    value.clone()
                }
            }
            "allOf" | "anyOf" | "oneOf" => match value.as_array() {
                Some(list) => Value::Array(list.iter().map(convert_schema).collect()),
                None => value.clone(),
            },
            // Not JSON Schema keywords (or not with this meaning).
            "nullable" | "example" | "discriminator" | "xml" | "externalDocs" | "deprecated" => {
                continue;
            }
            _ if key.starts_with("x-") => continue,
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    // OpenAPI 3.0's boolean exclusive bounds are draft 4's.
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(exclusive)) = out.get(flag).cloned() {
            out.remove(flag);
            if let (true, Some(limit)) = (exclusive, out.get(bound).cloned()) {
                out.remove(bound);
                out.insert(flag.to_string(), limit);
            }
        }
    }
    if object.get("nullable") == Some(&json!(true)) {
        match out.get("type").cloned() {
            Some(Value::String(t)) => {
                out.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(mut types)) => {
                if !types.contains(&json!("null")) {
                    types.push(json!("null"));
                }
                out.insert("type".into(), Value::Array(types));
            }
            _ => {}
        }
        if let Some(Value::Array(mut values)) = out.get("enum").cloned() {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
            out.insert("enum".into(), Value::Array(values));
        }
        if out.contains_key("$ref") {
            let reference = out.remove("$ref").expect("checked");
            return json!({ "anyOf": [{ "$ref": reference }, { "type": "null" }] });
        }
    }
    Value::Object(out)
}

/// A header's text as the JSON value its schema describes.
fn header_instance(schema: &Value, text: &str) -> Value {
    match schema["type"].as_str() {
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| json!(text)),
        Some("number") => text
            .parse::<f64>()
            .map(Value::from)
            .unwrap_or_else(|_| json!(text)),
        Some("boolean") => match text {
            "true" => json!(true),
            "false" => json!(false),
            _ => json!(text),
        },
        _ => json!(text),
    }
}

/// Whether a path template (`/webhooks/{id}`) matches a concrete path.
fn template_matches(template: &str, path: &str) -> bool {
    let t: Vec<&str> = template.split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    t.len() == p.len()
        && t.iter()
            .zip(&p)
            .all(|(t, p)| (t.starts_with('{') && t.ends_with('}') && !p.is_empty()) || t == p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        assert!(template_matches("/query", "/query"));
        assert!(!template_matches("/query", "/query/"));
        assert!(template_matches("/webhooks/{id}", "/webhooks/wh_1"));
        assert!(!template_matches("/webhooks/{id}", "/webhooks/"));
    }

    #[test]
    fn nullable_and_refs() {
        let schema = json!({"type": "string", "nullable": true, "example": "x"});
        assert_eq!(convert_schema(&schema), json!({"type": ["string", "null"]}));
        let schema =
            json!({"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}});
        assert_eq!(
            convert_schema(&schema)["properties"]["a"]["$ref"],
            json!("#/definitions/A")
        );
    }
}
