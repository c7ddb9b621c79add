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

/// Encodes one path segment (an id that goes between slashes).
pub fn segment(text: &str) -> String {
    encode(text)
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
}
