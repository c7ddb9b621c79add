//! `UrlPattern::parse` / `matches` and `parse_guest_url`.
//!
//! Input: a route pattern, a newline, a URL a guest asks for (the seeds are
//! readable that way). Beyond "no panic", checks that a URL the guest
//! parser accepts is one the host can send as it is, and that a match
//! means what the pattern says, re-derived here from the pattern's text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quarry_guard::pattern::{UrlPattern, parse_guest_url};
use url::Host;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern_text, raw_url) = text.split_once('\n').unwrap_or((text, text));

    let pattern = UrlPattern::parse(pattern_text);
    let _ = UrlPattern::parse_host(pattern_text);
    let guest = parse_guest_url(raw_url);

    if let Ok(url) = &guest {
        assert_eq!(url.scheme(), "https", "{raw_url:?}");
        assert!(
            url.username().is_empty() && url.password().is_none(),
            "{raw_url:?}"
        );
        assert!(matches!(url.host(), Some(Host::Domain(_))), "{raw_url:?}");
        assert!(url.port().is_none(), "{raw_url:?}");
        // What is sent is the serialised URL: it must parse back to itself
        // and pass again (a redirect hop, a log line, a retry).
        let again = parse_guest_url(url.as_str())
            .unwrap_or_else(|e| panic!("{raw_url:?} -> {:?} is refused: {e}", url.as_str()));
        assert_eq!(again.as_str(), url.as_str(), "{raw_url:?}");
    }

    let (Ok(pattern), Ok(url)) = (pattern, guest) else {
        return;
    };
    if !pattern.matches(&url) {
        return;
    }
    // A URL that matches a route matches that route's host-only pattern
    // (the credential's hosts default to those).
    assert!(
        pattern.host_only().matches(&url),
        "{pattern_text:?} {raw_url:?}"
    );

    // The match, re-derived from the pattern's text: the same number of
    // host labels and path segments, literals equal, and a placeholder's
    // value an identifier (no dot segment, no '/', no ';').
    let rest = pattern_text
        .strip_prefix("https://")
        .expect("a parsed pattern is https");
    let (host_text, path_text) = rest.split_once('/').unwrap_or((rest, ""));
    let host = url.host_str().expect("a matched URL has a host");
    check_parts(host_text.split('.'), host.split('.'), pattern_text, raw_url);
    let path = url.path().strip_prefix('/').unwrap_or(url.path());
    check_parts(path_text.split('/'), path.split('/'), pattern_text, raw_url);
});

fn check_parts<'a>(
    pattern: impl Iterator<Item = &'a str>,
    actual: impl Iterator<Item = &'a str>,
    pattern_text: &str,
    raw_url: &str,
) {
    let pattern: Vec<&str> = pattern.collect();
    let actual: Vec<&str> = actual.collect();
    assert_eq!(
        pattern.len(),
        actual.len(),
        "{pattern_text:?} matched {raw_url:?}"
    );
    for (p, a) in pattern.iter().zip(&actual) {
        let placeholder = p.len() > 2 && p.starts_with('{') && p.ends_with('}');
        if placeholder {
            assert!(
                !a.is_empty() && *a != "." && *a != ".." && !a.contains(['/', ';', '\\']),
                "{pattern_text:?} matched {raw_url:?}: placeholder value {a:?}"
            );
            let decoded = a.to_ascii_lowercase();
            assert!(
                !decoded.contains("%2f") && !decoded.contains("%2e") && !decoded.contains("%5c"),
                "{pattern_text:?} matched {raw_url:?}: placeholder value {a:?}"
            );
        } else {
            assert_eq!(p, a, "{pattern_text:?} matched {raw_url:?}");
        }
    }
}
