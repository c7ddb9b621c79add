//! The fetch policy: the one place that decides whether a request a guest
//! asks for may leave the host, and in what form.
//!
//! Everything here is a pure function of the manifest and the request. The
//! sandbox (`quarry_sandbox::fetch`) calls [`admit`] for every request and
//! every redirect hop, and applies the fetch cap and the time per fetch;
//! the host's `connectors::upstream` sends what was admitted (address
//! checks after DNS, the size cap) with the user's credential (the host's
//! `connectors::credential`): the credential never enters this crate.

use url::Url;

use crate::graphql;
use crate::manifest::{AuthScheme, Manifest, Method, Route, RouteKind};
use crate::pattern::parse_guest_url;

/// Largest request body a guest may send (a search query, not an upload).
pub const MAX_REQUEST_BODY: usize = 256 * 1024;
const MAX_HEADERS: usize = 32;
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// A request as the guest asked for it.
#[derive(Debug, Clone)]
pub struct GuestRequest {
    pub method: Method,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// A request the policy let through: parsed URL, cleaned headers. Only
/// [`admit`] makes one, and it is read-only (private fields, getters), so
/// a function that takes an `Admitted` (the host's fetch) cannot be handed
/// a request the policy did not see, or one changed since.
#[derive(Debug, Clone)]
pub struct Admitted {
    method: Method,
    url: Url,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl Admitted {
    pub fn method(&self) -> Method {
        self.method
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    pub fn body(&self) -> Option<&[u8]> {
        self.body.as_deref()
    }
}

/// Why a request was refused; the text is returned to the guest and logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied(pub String);

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Headers a guest may never set: credentials (the host adds its own) and
/// anything that changes how the request is framed or routed.
const FORBIDDEN_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
];

/// Header families that proxies and frameworks read as routing or as the
/// client's identity (`X-Original-URL`, `X-Rewrite-URL`,
/// `X-Forwarded-Prefix`, `X-Real-IP`, ...): a guest could use them to
/// reach a path the manifest does not name.
const ROUTING_HEADER_PREFIXES: &[&str] = &[
    "x-forwarded-",
    "x-original-",
    "x-rewrite-",
    "x-real-",
    "x-client-ip",
    "x-cluster-client-ip",
    "true-client-ip",
    "cf-connecting-ip",
    "x-envoy-",
    "x-host",
    "via",
];

/// Query parameters frameworks read as the request's method (Rails,
/// Laravel, Symfony): a GET could otherwise act as a DELETE.
const METHOD_OVERRIDE_PARAMETERS: &[&str] = &["_method", "x-http-method-override", "_httpmethod"];

/// Decides whether `request` may be sent for the connector described by
/// `manifest`.
pub fn admit(manifest: &Manifest, request: GuestRequest) -> Result<Admitted, Denied> {
    let url = parse_guest_url(&request.url).map_err(|e| Denied(format!("{e:#}")))?;
    if let Some((name, _)) = url
        .query_pairs()
        .find(|(name, _)| METHOD_OVERRIDE_PARAMETERS.contains(&name.to_ascii_lowercase().as_str()))
    {
        return Err(Denied(format!(
            "the URL parameter {name:?} overrides the method; it is refused"
        )));
    }
    let matching: Vec<_> = manifest
        .routes
        .iter()
        .filter(|r| r.url.matches(&url))
        .collect();
    let Some(route) = matching.iter().find(|r| r.admits_method(request.method)) else {
        let shown = shown_url(&url);
        return Err(Denied(if matching.is_empty() {
            format!(
                "{} {shown} is not a route in the manifest of {:?}",
                request.method.as_str(),
                manifest.id
            )
        } else {
            format!(
                "{} is not allowed on {shown}: the manifest allows only {}",
                request.method.as_str(),
                allowed_methods(&matching)
            )
        }));
    };
    check_body(route.kind, request.method, request.body.as_deref())?;
    let mut headers = clean_headers(manifest, request.headers)?;
    if route.kind == RouteKind::Graphql {
        graphql_framing(&url, &mut headers)?;
    }
    // Again on what is sent, the host's own content type included: an
    // admitted request is admitted unchanged when asked for again (a
    // redirect hop), so it must be within the limits itself.
    check_header_limits(&headers)?;
    let mut url = url;
    url.set_fragment(None);
    Ok(Admitted {
        method: request.method,
        url,
        headers,
        body: request.body,
    })
}

fn allowed_methods(routes: &[&Route]) -> String {
    let mut methods: Vec<&str> = routes.iter().map(|r| r.method.as_str()).collect();
    methods.dedup();
    methods.join(", ")
}

/// The URL without its query string, for messages and logs: the query
/// string carries the user's search terms.
pub fn shown_url(url: &Url) -> String {
    format!("https://{}{}", url.host_str().unwrap_or(""), url.path())
}

fn check_body(kind: RouteKind, method: Method, body: Option<&[u8]>) -> Result<(), Denied> {
    match (method, body) {
        (Method::Get | Method::Head, Some(_)) => {
            Err(Denied("a GET or HEAD request cannot carry a body".into()))
        }
        (Method::Get | Method::Head, None) => Ok(()),
        (Method::Post, body) => {
            let body = body.unwrap_or_default();
            if body.len() > MAX_REQUEST_BODY {
                return Err(Denied(format!(
                    "request body of {} bytes exceeds {MAX_REQUEST_BODY}",
                    body.len()
                )));
            }
            match kind {
                RouteKind::Graphql => {
                    graphql::check_body(body).map_err(|e| Denied(format!("{e:#}")))
                }
                RouteKind::Query => Ok(()),
                RouteKind::Read => Err(Denied("POST is allowed only on query routes".into())),
            }
        }
    }
}

/// A GraphQL request is what its checked JSON body says, and nothing
/// else: no GraphQL parameters in the URL (servers read them on a POST
/// too), and the body sent as JSON whatever the guest said (a server may
/// read a form body otherwise).
fn graphql_framing(url: &Url, headers: &mut Vec<(String, String)>) -> Result<(), Denied> {
    if let Some((name, _)) = url
        .query_pairs()
        .find(|(name, _)| graphql::REQUEST_PARAMETERS.contains(&name.as_ref()))
    {
        return Err(Denied(format!(
            "a GraphQL request cannot carry {name:?} in its URL: send the query in the body"
        )));
    }
    headers.retain(|(name, _)| name != "content-type");
    headers.push(("content-type".into(), "application/json".into()));
    Ok(())
}

fn clean_headers(
    manifest: &Manifest,
    headers: Vec<(String, String)>,
) -> Result<Vec<(String, String)>, Denied> {
    check_header_limits(&headers)?;
    let credential_header = match &manifest.auth.scheme {
        AuthScheme::Header(name) => Some(name.as_str()),
        _ => None,
    };
    let mut kept = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if !is_token(&lower) || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(Denied(format!("header {name:?} is malformed")));
        }
        if FORBIDDEN_HEADERS.contains(&lower.as_str())
            || ROUTING_HEADER_PREFIXES.iter().any(|p| lower.starts_with(p))
            || Some(lower.as_str()) == credential_header
        {
            // Stripped, not refused: the host owns these, and a connector
            // written against a vendor's examples may set them innocently.
            tracing::warn!(connector = %manifest.id, header = %lower, "guest-set header stripped");
            continue;
        }
        kept.push((lower, value));
    }
    Ok(kept)
}

fn check_header_limits(headers: &[(String, String)]) -> Result<(), Denied> {
    if headers.len() > MAX_HEADERS {
        return Err(Denied(format!("more than {MAX_HEADERS} headers")));
    }
    let total: usize = headers
        .iter()
        .map(|(name, value)| name.len() + value.len())
        .sum();
    if total > MAX_HEADER_BYTES {
        return Err(Denied(format!("headers exceed {MAX_HEADER_BYTES} bytes")));
    }
    Ok(())
}

fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::for_tests(
            r#"
            [[routes]]
            method = "GET"
            url = "https://api.example.com/search"
            [[routes]]
            method = "POST"
            url = "https://api.example.com/query"
            kind = "query"
            [[routes]]
            method = "POST"
            url = "https://api.example.com/graphql"
            kind = "graphql"
            "#,
        )
    }

    fn req(method: Method, url: &str, body: Option<&str>) -> GuestRequest {
        GuestRequest {
            method,
            url: url.into(),
            headers: vec![],
            body: body.map(|b| b.as_bytes().to_vec()),
        }
    }

    #[test]
    fn routes_and_methods() {
        let m = manifest();
        assert!(
            admit(
                &m,
                req(Method::Get, "https://api.example.com/search?q=a", None)
            )
            .is_ok()
        );
        assert!(
            admit(
                &m,
                req(Method::Head, "https://api.example.com/search", None)
            )
            .is_ok()
        );
        let err = admit(
            &m,
            req(Method::Post, "https://api.example.com/search", Some("{}")),
        )
        .unwrap_err();
        assert!(err.0.contains("POST is not allowed"), "{err}");
        let err = admit(&m, req(Method::Get, "https://api.example.com/admin", None)).unwrap_err();
        assert!(err.0.contains("not a route"), "{err}");
        assert!(
            admit(
                &m,
                req(Method::Get, "https://api.example.com/search", Some("x"))
            )
            .is_err()
        );
        assert!(
            admit(
                &m,
                req(
                    Method::Post,
                    "https://api.example.com/query",
                    Some("{\"q\":1}")
                )
            )
            .is_ok()
        );
    }

    #[test]
    fn graphql_routes_take_only_queries() {
        let m = manifest();
        let ok = r#"{"query":"query { viewer { id } }"}"#;
        let bad = r#"{"query":"mutation { deleteAll }"}"#;
        assert!(
            admit(
                &m,
                req(Method::Post, "https://api.example.com/graphql", Some(ok))
            )
            .is_ok()
        );
        assert!(
            admit(
                &m,
                req(Method::Post, "https://api.example.com/graphql", Some(bad))
            )
            .is_err()
        );
    }

    #[test]
    fn a_graphql_request_is_its_checked_body_and_nothing_else() {
        let m = manifest();
        let ok = r#"{"query":"query { viewer { id } }"}"#;
        let url = "https://api.example.com/graphql";
        // A form content type is replaced: the body goes as JSON.
        let mut form = req(Method::Post, url, Some(ok));
        form.headers = vec![(
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into(),
        )];
        let admitted = admit(&m, form).unwrap();
        let types: Vec<_> = admitted
            .headers
            .iter()
            .filter(|(n, _)| n == "content-type")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(types, ["application/json"]);
        // A mutation in the URL of a POST whose body is a query.
        let sneaky = "https://api.example.com/graphql?query=mutation%7BdeleteAll%7D";
        assert!(admit(&m, req(Method::Post, sneaky, Some(ok))).is_err());
        // Two "query" fields: a server may run the first, serde keeps the last.
        let twice = r#"{"query":"mutation { deleteAll }","query":"query { viewer { id } }"}"#;
        let refused = admit(&m, req(Method::Post, url, Some(twice))).unwrap_err();
        assert!(refused.0.contains("repeats"), "{refused}");
    }

    /// Found by the policy_admit fuzz target: 32 guest headers, then the
    /// host's content type made 33, and the admitted request was refused
    /// when asked for again (as a redirect hop is).
    #[test]
    fn the_header_limits_hold_for_what_is_sent() {
        let m = manifest();
        let ok = r#"{"query":"query { viewer { id } }"}"#;
        let url = "https://api.example.com/graphql";
        let with_headers = |count: usize| {
            let mut request = req(Method::Post, url, Some(ok));
            request.headers = (0..count)
                .map(|n| (format!("x-note-{n}"), "a".to_string()))
                .collect();
            request
        };
        let refused = admit(&m, with_headers(MAX_HEADERS)).unwrap_err();
        assert!(refused.0.contains("more than 32 headers"), "{refused}");
        let admitted = admit(&m, with_headers(MAX_HEADERS - 1)).unwrap();
        assert_eq!(admitted.headers.len(), MAX_HEADERS);
        let again = GuestRequest {
            method: admitted.method,
            url: admitted.url.to_string(),
            headers: admitted.headers.clone(),
            body: admitted.body.clone(),
        };
        assert_eq!(admit(&m, again).unwrap().headers, admitted.headers);
    }

    #[test]
    fn routing_headers_and_method_overrides_do_not_pass() {
        let m = manifest();
        let mut r = req(Method::Get, "https://api.example.com/search", None);
        r.headers = vec![
            ("X-Original-URL".into(), "/admin/delete".into()),
            ("X-Rewrite-URL".into(), "/admin".into()),
            ("X-Forwarded-Prefix".into(), "/internal".into()),
            ("X-Real-IP".into(), "10.0.0.1".into()),
            ("Via".into(), "1.1 internal".into()),
            ("Accept".into(), "application/json".into()),
        ];
        let admitted = admit(&m, r).unwrap();
        let names: Vec<&str> = admitted.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["accept"]);
        for url in [
            "https://api.example.com/search?_method=DELETE",
            "https://api.example.com/search?q=x&_METHOD=delete",
        ] {
            assert!(admit(&m, req(Method::Get, url, None)).is_err(), "{url}");
        }
    }

    #[test]
    fn credentials_and_framing_headers_are_stripped() {
        let m = manifest();
        let mut r = req(Method::Get, "https://api.example.com/search", None);
        r.headers = vec![
            ("Authorization".into(), "Bearer stolen".into()),
            ("Cookie".into(), "a=b".into()),
            ("Accept".into(), "application/json".into()),
        ];
        let admitted = admit(&m, r).unwrap();
        assert_eq!(
            admitted.headers,
            vec![("accept".to_string(), "application/json".to_string())]
        );
        let mut r = req(Method::Get, "https://api.example.com/search", None);
        r.headers = vec![("x-a".into(), "b\r\nHost: evil".into())];
        assert!(admit(&m, r).is_err());
    }
}
