//! `policy::admit`: the decision on every request a connector asks for.
//!
//! The manifests are the real ones in plugins/ (GraphQL, query routes,
//! placeholders in hosts and paths, a vendor header for the credential);
//! the input names one and is the request, in text: method and URL,
//! headers, body (see `read_request`). Checks the admitted request, not
//! just "no panic".
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use quarry_guard::graphql;
use quarry_guard::manifest::{AuthScheme, Manifest, Method, RouteKind};
use quarry_guard::policy::{Admitted, GuestRequest, MAX_REQUEST_BODY, admit};
use url::Host;

const MANIFESTS: &[&str] = &[
    include_str!("../../plugins/linear/connector.toml"),
    include_str!("../../plugins/hubspot/connector.toml"),
    include_str!("../../plugins/notion/connector.toml"),
    include_str!("../../plugins/zendesk/connector.toml"),
    include_str!("../../plugins/confluence/connector.toml"),
    include_str!("../../plugins/trello/connector.toml"),
    include_str!("../../plugins/github/connector.toml"),
];

/// Each manifest, parsed.
fn manifests() -> &'static [Manifest] {
    static PARSED: OnceLock<Vec<Manifest>> = OnceLock::new();
    PARSED.get_or_init(|| {
        MANIFESTS
            .iter()
            .map(|text| Manifest::parse(text).expect("a plugin's manifest parses"))
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some(request) = read_request(data) else {
        return;
    };
    let (manifest, request) = request;
    let Ok(admitted) = admit(manifest, request.clone()) else {
        return;
    };
    check(manifest, &request, &admitted);

    // Admitting is stable: the admitted request, asked for again (as a
    // redirect hop is), passes unchanged.
    let again = admit(
        manifest,
        GuestRequest {
            method: admitted.method(),
            url: admitted.url().to_string(),
            headers: admitted.headers().to_vec(),
            body: admitted.body().map(<[u8]>::to_vec),
        },
    )
    .unwrap_or_else(|denied| panic!("{admitted:?} is refused when asked again: {denied}"));
    assert_eq!(again.url(), admitted.url());
    assert_eq!(again.headers(), admitted.headers());
    assert_eq!(again.body(), admitted.body());
});

/// The input, read as a request in text (the seeds are readable):
///
/// ```text
/// linear                       the connector (its id; else any manifest)
/// POST https://api.linear.app/graphql
/// content-type: application/json
///                              a blank line, then the body (none without it)
/// {"query":"query { viewer { id } }"}
/// ```
fn read_request(data: &[u8]) -> Option<(&'static Manifest, GuestRequest)> {
    let text = std::str::from_utf8(data).ok()?;
    let (head, body) = match text.split_once("\n\n") {
        Some((head, body)) => (head, Some(body.as_bytes().to_vec())),
        None => (text, None),
    };
    let mut lines = head.split('\n');
    let id = lines.next()?;
    let all = manifests();
    let manifest = all
        .iter()
        .find(|m| m.id == id)
        .unwrap_or(&all[id.len() % all.len()]);
    let (method, url) = lines.next()?.split_once(' ').unwrap_or(("GET", ""));
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        other => [Method::Get, Method::Head, Method::Post][other.len() % 3],
    };
    let headers = lines
        .map(|line| match line.split_once(':') {
            Some((name, value)) => (
                name.to_string(),
                value.strip_prefix(' ').unwrap_or(value).to_string(),
            ),
            None => (line.to_string(), String::new()),
        })
        .collect();
    Some((
        manifest,
        GuestRequest {
            method,
            url: url.to_string(),
            headers,
            body,
        },
    ))
}

/// Headers a guest can never set, listed here apart from the policy's own
/// lists: credentials, framing, and routing families.
fn host_owned(name: &str) -> bool {
    matches!(
        name,
        "authorization"
            | "proxy-authorization"
            | "cookie"
            | "host"
            | "content-length"
            | "transfer-encoding"
            | "connection"
            | "upgrade"
            | "te"
            | "forwarded"
            | "via"
            | "x-http-method-override"
            | "x-http-method"
            | "x-method-override"
    ) || ["x-forwarded-", "x-original-", "x-rewrite-", "x-real-"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

fn check(manifest: &Manifest, request: &GuestRequest, admitted: &Admitted) {
    let url = admitted.url();
    assert_eq!(url.scheme(), "https", "{request:?}");
    assert!(
        url.username().is_empty() && url.password().is_none(),
        "{request:?}"
    );
    assert!(matches!(url.host(), Some(Host::Domain(_))), "{request:?}");
    assert!(url.port().is_none(), "{request:?}");
    assert!(url.fragment().is_none(), "{request:?}");
    assert_eq!(admitted.method(), request.method);
    assert_eq!(admitted.body(), request.body.as_deref());

    // The URL is one of the manifest's routes, for this method.
    let route = manifest
        .routes
        .iter()
        .find(|r| r.url.matches(url) && r.admits_method(admitted.method()))
        .unwrap_or_else(|| panic!("{url} matches no route of {} for {request:?}", manifest.id));

    for (name, _) in url.query_pairs() {
        let name = name.to_ascii_lowercase();
        assert!(
            !matches!(
                name.as_str(),
                "_method" | "x-http-method-override" | "_httpmethod"
            ),
            "{request:?}"
        );
    }

    let credential_header = match &manifest.auth.scheme {
        AuthScheme::Header(name) => Some(name.as_str()),
        _ => None,
    };
    for (name, value) in admitted.headers() {
        assert_eq!(name, &name.to_ascii_lowercase(), "{request:?}");
        assert!(!host_owned(name), "{name:?} passed in {request:?}");
        assert_ne!(Some(name.as_str()), credential_header, "{request:?}");
        assert!(!value.contains(['\r', '\n', '\0']), "{request:?}");
    }

    match admitted.method() {
        Method::Get | Method::Head => {
            assert!(admitted.body().is_none(), "{request:?}");
            assert_eq!(route.kind, RouteKind::Read, "{request:?}");
        }
        Method::Post => {
            let body = admitted.body().unwrap_or_default();
            assert!(body.len() <= MAX_REQUEST_BODY, "{request:?}");
            assert_ne!(route.kind, RouteKind::Read, "{request:?}");
            if route.kind == RouteKind::Graphql {
                graphql::check_body(body)
                    .unwrap_or_else(|e| panic!("admitted GraphQL body fails the guard: {e}"));
                let types: Vec<&str> = admitted
                    .headers()
                    .iter()
                    .filter(|(n, _)| n == "content-type")
                    .map(|(_, v)| v.as_str())
                    .collect();
                assert_eq!(types, ["application/json"], "{request:?}");
                for (name, _) in url.query_pairs() {
                    assert!(
                        !graphql::REQUEST_PARAMETERS.contains(&name.as_ref()),
                        "{request:?}"
                    );
                }
            }
        }
    }
}
