//! The manifest parser: `Manifest::parse` and `parse_reporting` on the
//! input as TOML text.
//!
//! Invariants: the two agree (a manifest parses exactly when the reporting
//! parser finds no error); a parsed manifest keeps the promises the rest of
//! the host relies on (a valid id, a supported contract, at least one
//! route, POST only on query and GraphQL routes, https OAuth addresses, limits
//! within the operator's ceilings).
#![no_main]

use libfuzzer_sys::fuzz_target;
use quarry_guard::manifest::{
    AuthScheme, Manifest, Method, RouteKind, SUPPORTED_WIT_MAJORS, SandboxLimits, is_valid_id,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Manifest::parse(text);
    let (reported, problems) = Manifest::parse_reporting(text);
    let errors = problems.iter().filter(|p| p.is_error()).count();
    assert_eq!(
        parsed.is_ok(),
        reported.is_some() && errors == 0,
        "parse and parse_reporting disagree: {:?} / {problems:?}",
        parsed.as_ref().err()
    );
    if reported.is_none() {
        assert!(errors > 0, "no manifest and no error");
    }
    for problem in &problems {
        assert!(!problem.message.is_empty() && !problem.code.is_empty());
    }
    let Ok(manifest) = parsed else {
        return;
    };

    assert!(is_valid_id(&manifest.id), "{:?}", manifest.id);
    assert!(!manifest.label.trim().is_empty());
    assert!(
        SUPPORTED_WIT_MAJORS.contains(&manifest.wit_major()),
        "{:?}",
        manifest.wit
    );
    assert!(!manifest.routes.is_empty());
    for route in &manifest.routes {
        match route.method {
            Method::Post => assert_ne!(route.kind, RouteKind::Read),
            Method::Get | Method::Head => assert_eq!(route.kind, RouteKind::Read),
        }
        assert!(route.url.host_display().contains('.'));
    }
    if let AuthScheme::Header(name) = &manifest.auth.scheme {
        assert!(
            !name.is_empty() && *name == name.to_ascii_lowercase(),
            "{name:?}"
        );
    }
    if let Some(oauth) = &manifest.oauth {
        for url in [&oauth.authorize_url, &oauth.token_url] {
            let concrete = url.replace('{', "p").replace('}', "");
            let parsed = url::Url::parse(&concrete).expect("an accepted OAuth address parses");
            assert_eq!(parsed.scheme(), "https", "{url:?}");
        }
    }
    let ceilings = SandboxLimits::default();
    let limits = ceilings.for_connector(&manifest.limits);
    assert!(limits.max_fetches >= 1 && limits.max_fetches <= ceilings.max_fetches);
    assert!(limits.max_response_bytes <= ceilings.max_response_bytes);
    assert!(limits.fetch_timeout_ms <= ceilings.fetch_timeout_ms);
    assert!(limits.call_timeout_ms <= ceilings.call_timeout_ms);
    assert!(limits.memory_bytes <= ceilings.memory_bytes);
    assert!(limits.max_concurrent_fetches <= ceilings.max_concurrent_fetches);
    let _ = manifest.warnings();
});
