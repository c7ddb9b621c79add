//! Request parsing and response building helpers.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use serde_json::{Map, Value};

/// A fully read request.
pub(crate) struct Req {
    pub method: Method,
    pub host: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The most results a page may hold (see `Fault::max_page_size`).
    pub page_cap: Option<usize>,
}

impl Req {
    /// `asked`, capped by the page size a fault imposes.
    pub fn page_size(&self, asked: usize) -> usize {
        self.page_cap.map_or(asked, |cap| asked.min(cap.max(1)))
    }
}

/// Headers as the fake records them: name (lower case, as `HeaderName`
/// always is) and value, read as text even when it is not UTF-8.
pub(crate) fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

pub(crate) fn parse_pairs(s: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(s.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

impl Req {
    /// The path's segments between its slashes, a trailing slash ignored
    /// (`/a/b/` is `["a", "b"]`).
    pub fn segments(&self) -> Vec<&str> {
        self.path
            .trim_end_matches('/')
            .trim_start_matches('/')
            .split('/')
            .collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn query_pairs(&self) -> Vec<(String, String)> {
        self.query.as_deref().map(parse_pairs).unwrap_or_default()
    }

    /// First value of a query parameter.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    pub fn content_type(&self) -> String {
        self.header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    pub fn is_form(&self) -> bool {
        self.content_type() == "application/x-www-form-urlencoded"
    }

    /// Body parameters when the body is a form.
    pub fn form(&self) -> Vec<(String, String)> {
        if self.is_form() {
            parse_pairs(&String::from_utf8_lossy(&self.body))
        } else {
            Vec::new()
        }
    }

    /// Parameters from a form or JSON body (JSON scalars as strings).
    pub fn body_params(&self) -> Vec<(String, String)> {
        if self.is_form() {
            return self.form();
        }
        if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&self.body) {
            return m
                .into_iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some((k, s)),
                    Value::Number(n) => Some((k, n.to_string())),
                    Value::Bool(b) => Some((k, b.to_string())),
                    _ => None,
                })
                .collect();
        }
        // Some clients send a form without the content type.
        let text = String::from_utf8_lossy(&self.body);
        if !text.trim_start().starts_with('{') && text.contains('=') {
            return parse_pairs(&text);
        }
        Vec::new()
    }

    /// A parameter from the body (form or JSON) or, failing that, the query string.
    pub fn body_or_query(&self, name: &str) -> Option<String> {
        self.body_params()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .or_else(|| self.param(name))
    }

    pub fn json(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| e.to_string())
    }

    /// The body, if it is a JSON object.
    pub fn json_object(&self) -> Option<Map<String, Value>> {
        match self.json() {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        }
    }

    /// The token of `Authorization: Bearer <token>` (scheme case-insensitive).
    pub fn bearer(&self) -> Option<String> {
        let v = self.header("authorization")?.trim();
        let (scheme, rest) = v.split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| rest.trim().to_string())
            .filter(|t| !t.is_empty())
    }

    /// `Authorization: Basic` credentials.
    pub fn basic(&self) -> Option<(String, String)> {
        let v = self.header("authorization")?.trim();
        let (scheme, rest) = v.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let raw = base64::engine::general_purpose::STANDARD
            .decode(rest.trim())
            .ok()?;
        let s = String::from_utf8(raw).ok()?;
        let (u, p) = s.split_once(':')?;
        Some((u.to_string(), p.to_string()))
    }

    pub fn accepts_json(&self) -> bool {
        self.header("accept")
            .is_some_and(|a| a.to_ascii_lowercase().contains("json"))
    }
}

pub(crate) fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A JSON response.
pub(crate) fn json(code: u16, v: &Value) -> Response {
    raw(code, "application/json; charset=utf-8", v.to_string())
}

/// A response with a body and content type.
pub(crate) fn raw(code: u16, content_type: &str, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = status(code);
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

/// An HTML page, as vendors answer browsers (and the odd API error).
pub(crate) fn html(code: u16, body: impl Into<Body>) -> Response {
    raw(code, "text/html; charset=utf-8", body)
}

/// A response without body.
pub(crate) fn empty(code: u16) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = status(code);
    r
}

/// A 302 redirect.
pub(crate) fn redirect(location: &str) -> Response {
    let mut r = empty(302);
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// Sets (replaces) a header.
pub(crate) fn set(r: &mut Response, name: &'static str, value: impl AsRef<str>) {
    if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
        r.headers_mut().insert(name, v);
    }
}

/// The header on which a vendor's search notes the records its answer
/// holds; the server takes it off before the answer leaves (it records
/// them with the request).
const RETURNED: &str = "x-fake-saas-returned";

/// Notes the citation URLs of the records a search's answer holds, in
/// order (none: it found nothing).
pub(crate) fn note_returned<'a>(r: &mut Response, urls: impl IntoIterator<Item = &'a str>) {
    let list: Vec<String> = urls.into_iter().map(enc).collect();
    set(r, RETURNED, list.join(" "));
}

/// Takes the note [`note_returned`] left, if any.
pub(crate) fn take_returned(headers: &mut axum::http::HeaderMap) -> Option<Vec<String>> {
    let note = headers.remove(RETURNED)?;
    let note = note.to_str().unwrap_or_default();
    Some(
        note.split(' ')
            .filter(|u| !u.is_empty())
            .map(|u| {
                form_urlencoded::parse(format!("u={u}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            })
            .collect(),
    )
}

/// Percent-encodes a query component.
pub(crate) fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Appends query parameters to a URL that may already have a query.
pub(crate) fn with_query(url: &str, params: &[(&str, &str)]) -> String {
    let mut out = url.to_string();
    let mut sep = if url.contains('?') { '&' } else { '?' };
    for (k, v) in params {
        out.push(sep);
        out.push_str(&enc(k));
        out.push('=');
        out.push_str(&enc(v));
        sep = '&';
    }
    out
}

/// A random-looking request id (not deterministic: responses are, the ids are not).
pub(crate) fn request_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(crate::time::now_unix() as u64);
    crate::dataset::uuid(&h.finish().to_string())
}

/// A JSON body of exactly `n` bytes (n >= 2; smaller sizes give `{}` truncated).
pub(crate) fn oversize_json(n: usize) -> String {
    const HEAD: &str = "{\"padding\":\"";
    const TAIL: &str = "\"}";
    if n >= HEAD.len() + TAIL.len() {
        let mut s = String::with_capacity(n);
        s.push_str(HEAD);
        s.extend(std::iter::repeat_n('x', n - HEAD.len() - TAIL.len()));
        s.push_str(TAIL);
        s
    } else if n >= 2 {
        let mut s = String::from("{}");
        s.extend(std::iter::repeat_n(' ', n - 2));
        s
    } else {
        "0".repeat(n)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn oversize() {
        for n in [0, 1, 2, 5, 14, 15, 1000] {
            let s = super::oversize_json(n);
            assert_eq!(s.len(), n);
            if n >= 1 {
                assert!(serde_json::from_str::<serde_json::Value>(&s).is_ok(), "{n}");
            }
        }
    }
}
