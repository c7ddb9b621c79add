//! JSON request bodies, with a message for every way a body can be wrong,
//! naming the field. The host's `api::json::ApiJson` extractor (axum) checks
//! the content type, reads the bytes and turns a refusal here into its 400
//! with the contract's error shape; the parsing itself is here, without
//! axum, so that it can be fuzzed with the real body types ([`crate::bodies`]).

use serde::de::DeserializeOwned;

/// A request body type: says, per field, what a valid value looks like, so
/// that a wrong value gets a message about the API rather than about Rust
/// types.
pub trait Body: DeserializeOwned {
    fn expectation(field: &str) -> Option<&'static str>;
}

/// Parses a body of type `T`. Unknown fields, duplicate fields, wrong types
/// and nulls where a value is required are all refused with a message (the
/// host's 400) that names the field.
pub fn parse<T: Body>(bytes: &[u8]) -> Result<T, String> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {
            return Err("the request body is empty; a JSON object is expected".into());
        }
        // serde would also read an array as the fields in order.
        Some(b'{') => {}
        Some(_) => {
            return Err("the request body must be a JSON object".into());
        }
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = path.split(['.', '[']).next().unwrap_or_default();
        if inner.is_syntax() || inner.is_eof() {
            format!("the body is not valid JSON: {inner}")
        } else if let Some(expected) = T::expectation(field).filter(|_| is_wrong_value(&inner)) {
            format!("invalid `{path}`: {expected}")
        } else {
            // Unknown, duplicate and missing fields: serde names them.
            format!(
                "invalid request body: {}",
                strip_position(&inner.to_string())
            )
        }
    })?;
    deserializer
        .end()
        .map_err(|e| format!("the body is not valid JSON: {e}"))?;
    Ok(value)
}

fn is_wrong_value(error: &serde_json::Error) -> bool {
    let message = error.to_string();
    error.is_data()
        && (message.starts_with("invalid type")
            || message.starts_with("invalid value")
            || message.starts_with("invalid length"))
}

/// serde's messages end with " at line 1 column 20": useful for syntax
/// errors, noise for the others.
fn strip_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

/// For optional fields: absent is `None`, but an explicit `null` is an
/// error (a client sending `null` most likely has a bug worth reporting).
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
