//! URLs with properly encoded query strings.

/// Builds `base?k=v&k=v` with every key and value percent-encoded.
#[derive(Debug, Clone)]
pub struct Url {
    base: String,
    params: Vec<(String, String)>,
}

impl Url {
    pub fn new(base: impl Into<String>) -> Url {
        Url {
            base: base.into(),
            params: Vec::new(),
        }
    }

    pub fn param(mut self, key: &str, value: impl ToString) -> Url {
        self.params.push((key.to_string(), value.to_string()));
        self
    }

    pub fn param_opt(self, key: &str, value: Option<impl ToString>) -> Url {
        match value {
            Some(v) => self.param(key, v),
            None => self,
        }
    }

    pub fn build(&self) -> String {
        if self.params.is_empty() {
            return self.base.clone();
        }
        let query: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        format!("{}?{}", self.base, query.join("&"))
    }
}

/// Percent-encodes everything but the unreserved characters of RFC 3986.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The tenant name that starts a vendor's hosts (`acme` in
/// `acme.zendesk.com`), from a setting holding the name, the host or its
/// `https://` URL; `domain` is the rest of the host (`.zendesk.com`).
/// `None` unless the name is one DNS label, so it cannot steer requests
/// to another host.
pub fn tenant_name(setting: &str, domain: &str) -> Option<String> {
    let s = setting.trim().to_ascii_lowercase();
    let s = s.strip_prefix("https://").unwrap_or(&s);
    let s = s.trim_end_matches('/');
    let s = s.strip_suffix(domain).unwrap_or(s);
    let valid = !s.is_empty()
        && s.len() <= 63
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    valid.then(|| s.to_string())
}

/// Encodes one path segment (an id that goes between slashes).
pub fn segment(text: &str) -> String {
    encode(text)
}

/// Decodes percent-encoding (and `+` as a space, as in query strings).
pub fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                match (
                    bytes.get(i + 1).copied().and_then(hex),
                    bytes.get(i + 2).copied().and_then(hex),
                ) {
                    (Some(hi), Some(lo)) => {
                        out.push(hi * 16 + lo);
                        i += 3;
                    }
                    _ => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The decoded value of the query parameter `name` of a URL (absolute or
/// relative), such as the cursor in a vendor's `next` link.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1.split('#').next()?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(k) == name).then(|| decode(v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_keys_and_values() {
        let url = Url::new("https://x.io/s")
            .param("q", "a b&c=\"d\"")
            .param("n", 5)
            .build();
        assert_eq!(url, "https://x.io/s?q=a%20b%26c%3D%22d%22&n=5");
        assert_eq!(segment("a/b"), "a%2Fb");
    }

    #[test]
    fn decodes_and_reads_parameters() {
        assert_eq!(decode("a%20b+c%3D%zz%"), "a b c=%zz%");
        let next = "/rest/api/search?cql=x&limit=3&cursor=b2Zm%3D%3D";
        assert_eq!(query_param(next, "cursor").as_deref(), Some("b2Zm=="));
        assert_eq!(query_param(next, "page"), None);
        assert_eq!(query_param("https://x.io/s", "q"), None);
    }
}
