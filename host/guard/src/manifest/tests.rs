//! Manifests parsed, validated and warned about.

use super::*;

#[test]
fn oauth_endpoints_are_filled_with_host_labels_only() {
    let zendesk = "https://{subdomain}.zendesk.com/oauth/tokens";
    let set = |v: &str| vec![("subdomain".to_string(), v.to_string())];
    assert_eq!(
        fill_endpoint(zendesk, &set("acme")).unwrap(),
        "https://acme.zendesk.com/oauth/tokens"
    );
    for bad in ["", "evil.com/x", "a@b", "-x", "a.b"] {
        assert!(fill_endpoint(zendesk, &set(bad)).is_err(), "{bad:?}");
    }
    assert!(
        fill_endpoint(zendesk, &[])
            .unwrap_err()
            .contains("subdomain")
    );
    assert_eq!(
        fill_endpoint("https://x.test/t", &set("acme")).unwrap(),
        "https://x.test/t"
    );
}

const GOOD: &str = r#"
        id = "notion"
        label = "Notion"
        version = "1.0.0"
        wit = "1.0.0"
        [[routes]]
        method = "POST"
        url = "https://api.notion.com/v1/search"
        kind = "query"
        [[routes]]
        method = "GET"
        url = "https://api.notion.com/v1/blocks/{id}/children"
        [oauth]
        authorize_url = "https://api.notion.com/v1/oauth/authorize"
        token_url = "https://api.notion.com/v1/oauth/token"
        scopes = []
        revoke = { url = "https://api.notion.com/v1/oauth/revoke" }
    "#;

#[test]
fn parses_a_good_manifest() {
    let m = Manifest::parse(GOOD).unwrap();
    assert_eq!(m.id, "notion");
    assert_eq!(m.routes.len(), 2);
    assert_eq!(m.auth.scheme, AuthScheme::Bearer);
    assert_eq!(m.auth.hosts.len(), 2);
    assert_eq!(m.wit_major(), 1);
}

#[test]
fn reports_every_problem() {
    let bad = r#"
            id = "Bad Id"
            label = ""
            version = "1"
            wit = "2.0.0"
            [[routes]]
            method = "POST"
            url = "https://api.example.com/things"
            [[routes]]
            method = "GET"
            url = "http://api.example.com/x"
            [oauth]
            authorize_url = "https://example.com/a"
            token_url = "https://example.com/t"
            scopes = [{ name = "repo", read_only = false }]
        "#;
    let err = format!("{:#}", Manifest::parse(bad).unwrap_err());
    for needle in [
        "id \"Bad Id\"",
        "label is empty",
        "wit version 2.0.0",
        "not marked as a query route",
        "https",
        "\"repo\" is not read-only",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
}

#[test]
fn unknown_keys_are_refused() {
    let text = GOOD.replace("label = \"Notion\"", "label = \"Notion\"\nwrite = true");
    assert!(format!("{:#}", Manifest::parse(&text).unwrap_err()).contains("write"));
}

#[test]
fn operator_limits_clamp_what_a_connector_asks() {
    let operator = SandboxLimits::default();
    let asked = RequestedLimits {
        max_fetches: Some(1000),
        memory_bytes: Some(1024),
        max_concurrent_fetches: Some(64),
        ..Default::default()
    };
    let got = operator.for_connector(&asked);
    assert_eq!(got.max_fetches, operator.max_fetches);
    assert_eq!(got.memory_bytes, 1024);
    assert_eq!(got.max_concurrent_fetches, operator.max_concurrent_fetches);
    let fewer = RequestedLimits {
        max_concurrent_fetches: Some(2),
        ..Default::default()
    };
    assert_eq!(operator.for_connector(&fewer).max_concurrent_fetches, 2);
    let silent = operator.for_connector(&RequestedLimits::default());
    assert_eq!(silent.max_concurrent_fetches, DEFAULT_CONCURRENT_FETCHES);
}

#[test]
fn oauth_addresses_must_name_a_vendors_public_host() {
    for (url, needle) in [
        ("http://api.notion.com/v1/oauth/token", "https"),
        ("https://127.0.0.1/token", "IP address"),
        ("https://[::1]/token", "IP address"),
        ("https://169.254.169.254/latest", "IP address"),
        ("https://localhost/token", "local host"),
        ("https://vault.internal/token", "local host"),
        ("https://intranet/token", "local host"),
        ("https://user:pw@api.notion.com/token", "user part"),
    ] {
        let text = GOOD.replace("https://api.notion.com/v1/oauth/revoke", url);
        let err = format!("{:#}", Manifest::parse(&text).unwrap_err());
        assert!(err.contains(needle), "{url}: {err}");
    }
}
