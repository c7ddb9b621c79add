//! The endpoints of `/v1`: what each one is (its path and methods, its
//! rate-limit bucket, whether it needs a token, how logs name it). The
//! router (`api::router`) is built from [`Endpoint::ALL`], so this is the
//! one table; a test holds it to `openapi.yaml` both ways. `/oauth/*`,
//! `/dashboard`, `/mcp` and `/.well-known/*` are outside `/v1` (each has
//! its own router) and the document describes only `/oauth/*` and the
//! authorization server's metadata of them.

use axum::http::Method;

use crate::limits::Bucket;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Query,
    DeepSearch,
    DeleteMyData,
    /// `GET` lists, `POST` registers.
    Webhooks,
    /// `DELETE /v1/webhooks/{id}`.
    Webhook,
    /// `POST /v1/webhooks/{id}/test`: sends a `webhook.test` event.
    WebhookTest,
    Me,
    Connectors,
    OpenApiJson,
    OpenApiYaml,
    Docs,
}

impl Endpoint {
    pub const ALL: [Endpoint; 11] = [
        Endpoint::Query,
        Endpoint::DeepSearch,
        Endpoint::DeleteMyData,
        Endpoint::Webhooks,
        Endpoint::Webhook,
        Endpoint::WebhookTest,
        Endpoint::Me,
        Endpoint::Connectors,
        Endpoint::OpenApiJson,
        Endpoint::OpenApiYaml,
        Endpoint::Docs,
    ];

    /// The path, in axum's syntax (`{id}` is one segment).
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Query => "/v1/query",
            Endpoint::DeepSearch => "/v1/deep_search",
            Endpoint::DeleteMyData => "/v1/delete_my_data",
            Endpoint::Webhooks => "/v1/webhooks",
            Endpoint::Webhook => "/v1/webhooks/{id}",
            Endpoint::WebhookTest => "/v1/webhooks/{id}/test",
            Endpoint::Me => "/v1/me",
            Endpoint::Connectors => "/v1/connectors",
            Endpoint::OpenApiJson => "/v1/openapi.json",
            Endpoint::OpenApiYaml => "/v1/openapi.yaml",
            Endpoint::Docs => "/v1/docs",
        }
    }

    /// The methods it serves (`GET` ones answer `HEAD` too).
    pub fn methods(self) -> &'static [Method] {
        match self {
            Endpoint::Query | Endpoint::DeepSearch | Endpoint::WebhookTest => &[Method::POST],
            Endpoint::DeleteMyData | Endpoint::Webhook => &[Method::DELETE],
            Endpoint::Webhooks => &[Method::GET, Method::POST],
            Endpoint::Me
            | Endpoint::Connectors
            | Endpoint::OpenApiJson
            | Endpoint::OpenApiYaml
            | Endpoint::Docs => &[Method::GET],
        }
    }

    /// The methods served at a path, as `Allow` lists them.
    pub fn methods_at(path: &str) -> Vec<&'static str> {
        let mut methods: Vec<&'static str> = Endpoint::ALL
            .iter()
            .filter(|e| e.path() == path)
            .flat_map(|e| e.methods().iter().map(Method::as_str))
            .collect();
        if methods.contains(&"GET") {
            methods.push("HEAD");
        }
        methods
    }

    pub fn bucket(self) -> Bucket {
        match self {
            Endpoint::Query => Bucket::Query,
            Endpoint::DeepSearch => Bucket::DeepSearch,
            Endpoint::DeleteMyData => Bucket::DeleteMyData,
            other => Bucket::Other(other.label()),
        }
    }

    /// The published description and its UI are readable without a token.
    pub fn is_public(self) -> bool {
        matches!(
            self,
            Endpoint::OpenApiJson | Endpoint::OpenApiYaml | Endpoint::Docs
        )
    }

    /// Whether an `Idempotency-Key` makes a repeated request a replay.
    pub fn is_idempotent(self) -> bool {
        self == Endpoint::Query
    }

    /// How messages and metrics name it.
    pub fn label(self) -> &'static str {
        match self {
            Endpoint::Query => "POST /query",
            Endpoint::DeepSearch => "POST /deep_search",
            Endpoint::DeleteMyData => "DELETE /delete_my_data",
            Endpoint::Webhooks => "/webhooks",
            Endpoint::Webhook => "DELETE /webhooks/{id}",
            Endpoint::WebhookTest => "POST /webhooks/{id}/test",
            Endpoint::Me => "GET /me",
            Endpoint::Connectors => "GET /connectors",
            Endpoint::OpenApiJson => "GET /openapi.json",
            Endpoint::OpenApiYaml => "GET /openapi.yaml",
            Endpoint::Docs => "GET /docs",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// `(METHOD, /v1 path)` of every operation `openapi.yaml` documents
    /// under `/v1` (the `/oauth` endpoints have their own router).
    fn documented() -> BTreeSet<(String, String)> {
        let document: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(include_str!("../../openapi/openapi.yaml")).unwrap();
        let paths = document["paths"].as_mapping().unwrap();
        let mut out = BTreeSet::new();
        for (path, item) in paths {
            let path = path.as_str().unwrap();
            if path.starts_with("/oauth/") || path.starts_with("/.well-known/") {
                continue;
            }
            for method in item.as_mapping().unwrap().keys() {
                let method = method.as_str().unwrap().to_uppercase();
                if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method.as_str()) {
                    out.insert((method, format!("/v1{path}")));
                }
            }
        }
        out
    }

    fn routed() -> BTreeSet<(String, String)> {
        Endpoint::ALL
            .iter()
            .flat_map(|e| {
                e.methods()
                    .iter()
                    .map(move |m| (m.to_string(), e.path().to_string()))
            })
            .collect()
    }

    #[test]
    fn the_router_serves_what_the_document_describes_and_nothing_else() {
        let (documented, routed) = (documented(), routed());
        let undocumented: Vec<_> = routed.difference(&documented).collect();
        let unrouted: Vec<_> = documented.difference(&routed).collect();
        assert!(
            undocumented.is_empty(),
            "routed, not in openapi.yaml: {undocumented:?}"
        );
        assert!(
            unrouted.is_empty(),
            "in openapi.yaml, not routed: {unrouted:?}"
        );
    }

    #[test]
    fn allow_lists_a_paths_methods_with_head_for_get() {
        assert_eq!(
            Endpoint::methods_at("/v1/webhooks"),
            ["GET", "POST", "HEAD"]
        );
        assert_eq!(Endpoint::methods_at("/v1/query"), ["POST"]);
        assert!(Endpoint::methods_at("/v1/nope").is_empty());
    }
}
