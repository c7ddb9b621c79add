//! Where deliveries may go. A registered URL is an instruction from a user
//! to make the server send requests: without these checks it would be a
//! way to reach the server's own network (SSRF). Targets must be `https`
//! and public unless the operator allows plain HTTP or private addresses.
//! The URL is checked at registration (for a clear 400) and again at every
//! delivery, through a resolver that refuses non-public addresses: a name
//! that resolved to a public address at registration may resolve to a
//! private one later (DNS rebinding).
//!
//! This is the part without I/O: the URL's form, scheme and IP literal.
//! Resolving the name at registration (`check_registration`) and the
//! resolver are the host's (`webhooks::target`, `net.rs`).

use std::net::IpAddr;

use url::{Host, Url};

use crate::net::is_public;

/// Longest URL accepted.
pub const MAX_URL_CHARS: usize = 2048;

/// What the operator allows.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub allow_plain_http: bool,
    pub allow_private: bool,
}

impl Policy {
    /// HTTPS to public addresses only.
    pub const STRICT: Policy = Policy {
        allow_plain_http: false,
        allow_private: false,
    };
    /// Anything a URL may name: plain HTTP, private and loopback addresses.
    pub const LAX: Policy = Policy {
        allow_plain_http: true,
        allow_private: true,
    };
}

/// Checks a URL's form and scheme, and the address when it is an IP
/// literal. The message names `url` (it is shown to the user as a 400).
pub fn check_url(raw: &str, policy: Policy) -> Result<Url, String> {
    if raw.chars().count() > MAX_URL_CHARS {
        return Err(format!(
            "url must be at most {MAX_URL_CHARS} characters long"
        ));
    }
    let url = Url::parse(raw.trim())
        .map_err(|e| format!("url is not an absolute URL ({e}); use https://host/path"))?;
    // What is stored and checked again at every delivery is the URL as
    // serialised, which can be longer than what was typed (a host name in
    // Unicode becomes its `xn--` form): it must fit too, or a registration
    // accepted here would be refused at each of its deliveries.
    if url.as_str().len() > MAX_URL_CHARS {
        return Err(format!(
            "url must be at most {MAX_URL_CHARS} characters long (as an ASCII URL, with its host name in xn-- form)"
        ));
    }
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_plain_http => {}
        "http" => {
            return Err(
                "url must use https: this server does not deliver webhooks over plain http".into(),
            );
        }
        other => return Err(format!("url must use https, not {other}")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "url must not contain a user name or password; the signature authenticates deliveries"
                .into(),
        );
    }
    let Some(host) = url.host() else {
        return Err("url has no host".into());
    };
    if let Some(ip) = literal(&host)
        && !policy.allow_private
        && !is_public(ip)
    {
        return Err(format!(
            "url points at {ip}, which is not a public address; webhooks go to public hosts only"
        ));
    }
    Ok(url)
}

fn literal(host: &Host<&str>) -> Option<IpAddr> {
    match host {
        Host::Ipv4(v4) => Some(IpAddr::V4(*v4)),
        Host::Ipv6(v6) => Some(IpAddr::V6(*v6)),
        Host::Domain(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_when_allowed() {
        let error = check_url("http://1.1.1.1/hook", Policy::STRICT).unwrap_err();
        assert!(error.contains("url") && error.contains("https"), "{error}");
        assert!(check_url("http://1.1.1.1/hook", Policy::LAX).is_ok());
        assert!(check_url("https://1.1.1.1:8443/hook?x=1", Policy::STRICT).is_ok());
    }

    #[test]
    fn non_public_literals_only_when_allowed() {
        for url in [
            "https://127.0.0.1/hook",
            "https://10.1.2.3/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/hook",
            "https://[fd00::1]/hook",
            "https://[::ffff:10.0.0.1]/hook",
            "https://0.0.0.0/",
            "https://2130706433/hook",
        ] {
            let error = check_url(url, Policy::STRICT).unwrap_err();
            assert!(error.contains("not a public address"), "{url}: {error}");
            assert!(check_url(url, Policy::LAX).is_ok(), "{url}");
        }
    }

    /// Found by the fuzz target `webhook_target`: a host name of short
    /// Unicode labels grows in its `xn--` form, and the registration it
    /// passed (its length counted as typed) was refused at each delivery,
    /// which checks the URL as stored.
    #[test]
    fn a_url_accepted_at_registration_is_accepted_at_delivery() {
        let unicode = format!("https://{}example.com/hook", "é.".repeat(400));
        assert!(unicode.chars().count() <= MAX_URL_CHARS);
        let error = check_url(&unicode, Policy::STRICT).unwrap_err();
        assert!(error.starts_with("url must be at most"), "{error}");
        let fits = format!("https://{}example.com/hook", "é.".repeat(100));
        let url = check_url(&fits, Policy::STRICT).unwrap();
        assert_eq!(check_url(url.as_str(), Policy::STRICT).unwrap(), url);
    }

    #[test]
    fn malformed_urls_are_refused_naming_url() {
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        for bad in [
            "",
            "not a url",
            "/relative/path",
            "ftp://example.com/x",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://user:pass@example.com/x",
            "https://token@example.com/x",
            "https://",
            long.as_str(),
        ] {
            let error = check_url(bad, Policy::LAX).unwrap_err();
            assert!(error.starts_with("url"), "{bad:?}: {error}");
        }
    }
}
