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

/// The codes of what `text` has wrong.
fn codes(text: &str) -> Vec<&'static str> {
    let (_, problems) = Manifest::parse_reporting(text);
    problems.iter().map(|p| p.code).collect()
}

fn message(text: &str) -> String {
    format!("{:#}", Manifest::parse(text).unwrap_err())
}

#[test]
fn a_read_only_scope_named_like_a_write_needs_a_reviewed_reason() {
    let with_scope = |scope: &str| GOOD.replace("scopes = []", &format!("scopes = [{scope}]"));
    let plain = with_scope(r#"{ name = "pages:write", read_only = true }"#);
    assert_eq!(codes(&plain), ["write-looking-scope"]);
    let error = message(&plain);
    for needle in [
        r#"oauth scope "pages:write" is marked read-only, but its name says "write""#,
        r#"reviewed_read_only = "<why>""#,
    ] {
        assert!(error.contains(needle), "{needle:?} missing from: {error}");
    }
    let reviewed = with_scope(
        r#"{ name = "pages:write", read_only = true, reviewed_read_only = "Acme's pages:write only lists pages (docs.acme.example/scopes)" }"#,
    );
    let manifest = Manifest::parse(&reviewed).unwrap();
    assert_eq!(manifest.oauth.unwrap().scopes, ["pages:write"]);
    // A blank reason is no review; a reason does not make a write scope
    // read-only; a scope whose name reads needs none.
    let blank =
        with_scope(r#"{ name = "pages:write", read_only = true, reviewed_read_only = "  " }"#);
    assert_eq!(codes(&blank), ["review"]);
    let write = with_scope(
        r#"{ name = "pages:write", read_only = false, reviewed_read_only = "it is fine" }"#,
    );
    assert_eq!(codes(&write), ["write-scope"]);
    let camel = with_scope(r#"{ name = "Mail.ReadWrite", read_only = true }"#);
    assert_eq!(codes(&camel), ["write-looking-scope"]);
    assert!(Manifest::parse(&with_scope(r#"{ name = "pages:read", read_only = true }"#)).is_ok());
}

#[test]
fn a_query_route_named_like_a_write_needs_a_reviewed_reason() {
    let search = "https://api.notion.com/v1/search";
    let comments = GOOD.replace(search, "https://api.notion.com/v1/pages/{id}/comments");
    assert_eq!(codes(&comments), ["write-looking-route"]);
    let error = message(&comments);
    for needle in [
        r#"POST https://api.notion.com/v1/pages/{id}/comments is marked kind = "query", but its path ends in "comments", which names a write ("comments")"#,
        "routes[0]",
        r#"reviewed_read_only = "<why>""#,
    ] {
        assert!(error.contains(needle), "{needle:?} missing from: {error}");
    }
    let unknown = GOOD.replace(search, "https://api.notion.com/v1/things");
    assert_eq!(codes(&unknown), ["write-looking-route"]);
    assert!(message(&unknown).contains("which names no search"));

    let review = |text: &str, reason: &str| {
        text.replace(
            "kind = \"query\"",
            &format!("kind = \"query\"\nreviewed_read_only = {reason:?}"),
        )
    };
    let reviewed = review(
        &comments,
        "Notion's comment listing is a GET; this POST only filters",
    );
    assert!(Manifest::parse(&reviewed).is_ok());
    assert_eq!(codes(&review(&comments, "")), ["review"]);
    // Search-shaped paths pass as they are; GraphQL routes are checked by
    // their bodies, not their paths.
    let query = GOOD.replace(search, "https://api.notion.com/v1/databases/{id}/query");
    assert!(Manifest::parse(&query).is_ok());
    let graphql = GOOD
        .replace(search, "https://api.notion.com/v1/graphql")
        .replace("kind = \"query\"", "kind = \"graphql\"");
    assert!(Manifest::parse(&graphql).is_ok());
}

#[test]
fn every_manifest_in_the_repository_is_valid() {
    // The shipped connectors, the examples in other languages and the
    // tests' plugins (none needs a reviewed_read_only today).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    for folder in ["plugins", "examples/connectors", "tests/plugins"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path().join("connector.toml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if let Err(error) = Manifest::parse(&text) {
                panic!("{}: {error:#}", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} manifests found");
}

#[test]
fn a_carried_connection_must_hold_every_scope_asked() {
    let oauth = r#"
        [oauth]
        authorize_url = "https://login.example.com/authorize"
        token_url = "https://login.example.com/token"
        scopes = [{ name = "Mail.Read", read_only = true }, { name = "offline_access", read_only = true }]
    "#;
    let carried = |from: &str, granted: &str| {
        GOOD.split("[oauth]").next().unwrap().to_string()
            + oauth
            + &format!("[[carries_over]]\nfrom = {from:?}\ngranted_scopes = [{granted}]\n")
    };
    let m = Manifest::parse(&carried(
        "microsoft-365",
        r#""Files.Read.All", "Mail.Read", "offline_access""#,
    ))
    .unwrap();
    assert_eq!(m.carries_over[0].from, "microsoft-365");
    for (from, granted, needle) in [
        (
            "microsoft-365",
            r#""Files.Read.All""#,
            "not granted Mail.Read, offline_access",
        ),
        (
            "notion",
            r#""Mail.Read", "offline_access""#,
            "another connector's id",
        ),
        (
            "Bad Id",
            r#""Mail.Read", "offline_access""#,
            "another connector's id",
        ),
    ] {
        let err = format!(
            "{:#}",
            Manifest::parse(&carried(from, granted)).unwrap_err()
        );
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
}
