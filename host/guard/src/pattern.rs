//! URL patterns of manifest routes, and the strict parsing of the URLs a
//! guest asks for.
//!
//! A pattern is `https://HOST/PATH`. A `{name}` placeholder matches exactly
//! one host label (`https://{site}.atlassian.net/...`) or one path segment
//! (`/v1/blocks/{id}/children`); everything else matches literally. The query
//! string of a request is free (that is where searches put their terms), the
//! scheme, host and path are not.

use anyhow::{Result, bail, ensure};
use url::{Host, Url};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPattern {
    host: Vec<Part>,
    /// `None` for host-only patterns (credential hosts).
    path: Option<Vec<Part>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Placeholder,
}

impl UrlPattern {
    pub fn parse(pattern: &str) -> Result<UrlPattern> {
        let Some(rest) = pattern.strip_prefix("https://") else {
            bail!("route {pattern:?} must start with https://");
        };
        ensure!(
            !rest.contains(['?', '#']),
            "route {pattern:?} must not contain a query or fragment"
        );
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = parse_host_parts(host)?;
        let path = path
            .split('/')
            .map(|seg| {
                ensure!(
                    seg != "." && seg != "..",
                    "route {pattern:?} has a dot segment"
                );
                Ok(parse_part(seg))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(UrlPattern {
            host,
            path: Some(path),
        })
    }

    /// A pattern that names only a host (`api.github.com`, `{site}.atlassian.net`).
    pub fn parse_host(host: &str) -> Result<UrlPattern> {
        Ok(UrlPattern {
            host: parse_host_parts(host)?,
            path: None,
        })
    }

    pub fn host_only(&self) -> UrlPattern {
        UrlPattern {
            host: self.host.clone(),
            path: None,
        }
    }

    /// Whether `url` (already through [`parse_guest_url`]) matches.
    pub fn matches(&self, url: &Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        if !matches_parts(&self.host, host.split('.')) {
            return false;
        }
        match &self.path {
            None => true,
            Some(path) => {
                let segments = url.path().strip_prefix('/').unwrap_or(url.path());
                matches_parts(path, segments.split('/'))
            }
        }
    }

    /// The host, for messages and for the resolver (`{x}` shown as-is).
    pub fn host_display(&self) -> String {
        self.host
            .iter()
            .map(|p| match p {
                Part::Literal(s) => s.as_str(),
                Part::Placeholder => "{*}",
            })
            .collect::<Vec<_>>()
            .join(".")
    }
}

fn parse_host_parts(host: &str) -> Result<Vec<Part>> {
    ensure!(!host.is_empty(), "route has no host");
    ensure!(
        !host.contains(['@', ':', '[', ']']),
        "route host {host:?} must be a plain host name (no user, port or IP literal)"
    );
    ensure!(
        host.contains('.'),
        "route host {host:?} is not a fully qualified name"
    );
    let parts: Vec<Part> = host.split('.').map(parse_part).collect();
    ensure!(
        parts
            .iter()
            .filter(|p| matches!(p, Part::Literal(_)))
            .count()
            >= 2,
        "route host {host:?} needs at least two literal labels"
    );
    for part in &parts {
        if let Part::Literal(label) = part {
            ensure!(
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "route host {host:?} must be lower-case letters, digits and '-'"
            );
        }
    }
    ensure!(
        !parts
            .iter()
            .all(|p| matches!(p, Part::Literal(l) if l.bytes().all(|b| b.is_ascii_digit()))),
        "route host {host:?} must be a name, not an IP address"
    );
    Ok(parts)
}

fn parse_part(s: &str) -> Part {
    if s.len() > 2 && s.starts_with('{') && s.ends_with('}') {
        Part::Placeholder
    } else {
        Part::Literal(s.to_string())
    }
}

fn matches_parts<'a>(pattern: &[Part], mut actual: impl Iterator<Item = &'a str>) -> bool {
    for part in pattern {
        let Some(got) = actual.next() else {
            return false;
        };
        let ok = match part {
            Part::Literal(lit) => lit == got,
            Part::Placeholder => is_safe_placeholder_value(got),
        };
        if !ok {
            return false;
        }
    }
    actual.next().is_none()
}

/// A placeholder stands for an identifier, never for something that could
/// change which resource is addressed once the upstream decodes it: no
/// dot segment, and no `;` (servlet containers cut a segment at `;`, so
/// that `..;x` is `..` to them).
fn is_safe_placeholder_value(value: &str) -> bool {
    if value.is_empty() || value.bytes().all(|b| b == b'.') || value.contains(';') {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if ["%2f", "%5c", "%2e", "%00", "%25"]
        .iter()
        .any(|bad| lower.contains(bad))
    {
        return false;
    }
    value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~%:@!$&'()*+,=".contains(&b))
}

/// Parses a URL a guest asked for and refuses every form that could reach
/// somewhere other than what it appears to name.
pub fn parse_guest_url(raw: &str) -> Result<Url> {
    ensure!(raw.len() <= 8192, "URL is longer than 8192 bytes");
    ensure!(
        !raw.chars().any(|c| c.is_control() || c == ' '),
        "URL contains spaces or control characters"
    );
    let url = Url::parse(raw).map_err(|e| anyhow::anyhow!("URL {raw:?} does not parse: {e}"))?;
    ensure!(
        url.scheme() == "https",
        "only https is allowed, not {}://",
        url.scheme()
    );
    ensure!(
        url.username().is_empty() && url.password().is_none(),
        "URLs with a user@ part are refused"
    );
    match url.host() {
        Some(Host::Domain(_)) => {}
        Some(Host::Ipv4(ip)) => {
            bail!("IP address hosts are refused ({ip}); use the vendor's host name")
        }
        Some(Host::Ipv6(ip)) => {
            bail!("IP address hosts are refused ([{ip}]); use the vendor's host name")
        }
        None => bail!("URL has no host"),
    }
    ensure!(
        url.port().is_none(),
        "URLs with an explicit port are refused"
    );
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, url: &str) -> bool {
        UrlPattern::parse(pattern)
            .unwrap()
            .matches(&parse_guest_url(url).unwrap())
    }

    #[test]
    fn literal_and_placeholder_segments() {
        let p = "https://api.notion.com/v1/blocks/{id}/children";
        assert!(matches(
            p,
            "https://api.notion.com/v1/blocks/abc-123/children?page_size=100"
        ));
        assert!(!matches(
            p,
            "https://api.notion.com/v1/blocks/abc/children/more"
        ));
        assert!(!matches(
            p,
            "https://api.notion.com/v1/blocks/a%2Fb/children"
        ));
        assert!(!matches(
            p,
            "https://api.notion.com/v1/blocks/%2e%2e/children"
        ));
        assert!(!matches(p, "https://evil.notion.com/v1/blocks/a/children"));
    }

    #[test]
    fn dot_segments_are_resolved_before_matching() {
        let p = "https://api.github.com/search/issues";
        assert!(matches(p, "https://api.github.com/search/x/../issues"));
        assert!(!matches(
            p,
            "https://api.github.com/search/issues/../../user"
        ));
    }

    #[test]
    fn a_placeholder_is_never_a_dot_segment_even_with_path_parameters() {
        let p = "https://api.example.com/v1/projects/{id}/issues";
        assert!(matches(
            p,
            "https://api.example.com/v1/projects/ACME-1/issues"
        ));
        for sneaky in ["..;", "..;jsessionid=1", ".;x", "...", "a;b"] {
            let url = format!("https://api.example.com/v1/projects/{sneaky}/issues");
            assert!(!matches(p, &url), "{url}");
        }
    }

    #[test]
    fn host_placeholders_match_one_label() {
        let p = "https://{sub}.zendesk.com/api/v2/search.json";
        assert!(matches(
            p,
            "https://acme.zendesk.com/api/v2/search.json?query=x"
        ));
        assert!(!matches(p, "https://a.b.zendesk.com/api/v2/search.json"));
        assert!(!matches(
            p,
            "https://zendesk.com.evil.io/api/v2/search.json"
        ));
    }

    #[test]
    fn hostile_urls_are_refused() {
        for bad in [
            "http://api.github.com/search/issues",
            "https://user@api.github.com/search/issues",
            "https://api.github.com@evil.io/search/issues",
            "https://127.0.0.1/search/issues",
            "https://2130706433/search/issues",
            "https://[::1]/search/issues",
            "https://api.github.com:8443/search/issues",
            "file:///etc/passwd",
            "https://api.github.com/search/issues\n",
        ] {
            assert!(parse_guest_url(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn bad_patterns_are_refused() {
        for bad in [
            "http://a.b/x",
            "https://127.0.0.1/x",
            "https://a.b/x?y=1",
            "https://user@a.b/",
            "https://localhost/x",
        ] {
            assert!(UrlPattern::parse(bad).is_err(), "{bad} should be refused");
        }
    }
}
