//! The table of endpoints: one place that knows every path, its methods,
//! its rate-limit bucket and whether it needs a token. The gate uses it to
//! answer unknown paths (404) and wrong methods (405) in the contract's
//! error shape, and to pick the bucket before the request is routed.

use axum::http::Method;

use super::limits::Bucket;

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

struct Route {
    method: Method,
    path: &'static str,
    endpoint: Endpoint,
}

const ROUTES: &[Route] = &[
    Route {
        method: Method::POST,
        path: "/v1/query",
        endpoint: Endpoint::Query,
    },
    Route {
        method: Method::POST,
        path: "/v1/deep_search",
        endpoint: Endpoint::DeepSearch,
    },
    Route {
        method: Method::DELETE,
        path: "/v1/delete_my_data",
        endpoint: Endpoint::DeleteMyData,
    },
    Route {
        method: Method::GET,
        path: "/v1/webhooks",
        endpoint: Endpoint::Webhooks,
    },
    Route {
        method: Method::POST,
        path: "/v1/webhooks",
        endpoint: Endpoint::Webhooks,
    },
    Route {
        method: Method::DELETE,
        path: "/v1/webhooks/{id}",
        endpoint: Endpoint::Webhook,
    },
    Route {
        method: Method::POST,
        path: "/v1/webhooks/{id}/test",
        endpoint: Endpoint::WebhookTest,
    },
    Route {
        method: Method::GET,
        path: "/v1/me",
        endpoint: Endpoint::Me,
    },
    Route {
        method: Method::GET,
        path: "/v1/connectors",
        endpoint: Endpoint::Connectors,
    },
    Route {
        method: Method::GET,
        path: "/v1/openapi.json",
        endpoint: Endpoint::OpenApiJson,
    },
    Route {
        method: Method::GET,
        path: "/v1/openapi.yaml",
        endpoint: Endpoint::OpenApiYaml,
    },
    Route {
        method: Method::GET,
        path: "/v1/docs",
        endpoint: Endpoint::Docs,
    },
];

/// What a request's method and path name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Found(Endpoint),
    /// The path exists, with these methods only.
    WrongMethod(Vec<&'static str>),
    NotFound,
}

pub fn lookup(method: &Method, path: &str) -> Lookup {
    let matching: Vec<&Route> = ROUTES
        .iter()
        .filter(|r| path_matches(r.path, path))
        .collect();
    if let Some(route) = matching
        .iter()
        .find(|r| r.method == method || (r.method == Method::GET && method == Method::HEAD))
    {
        return Lookup::Found(route.endpoint);
    }
    if matching.is_empty() {
        Lookup::NotFound
    } else {
        let mut methods: Vec<&'static str> = matching.iter().map(|r| r.method.as_str()).collect();
        if methods.contains(&"GET") {
            methods.push("HEAD");
        }
        Lookup::WrongMethod(methods)
    }
}

/// Whether `path` fits `pattern`, where a `{name}` segment matches any one
/// non-empty segment.
fn path_matches(pattern: &str, path: &str) -> bool {
    let mut pattern = pattern.split('/');
    let mut path = path.split('/');
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some(p), Some(s)) if p.starts_with('{') && p.ends_with('}') && !s.is_empty() => {}
            (Some(p), Some(s)) if p == s => {}
            _ => return false,
        }
    }
}

impl Endpoint {
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
    use super::*;

    #[test]
    fn paths_methods_and_misses() {
        assert_eq!(
            lookup(&Method::POST, "/v1/query"),
            Lookup::Found(Endpoint::Query)
        );
        assert_eq!(
            lookup(&Method::GET, "/v1/query"),
            Lookup::WrongMethod(vec!["POST"])
        );
        assert_eq!(lookup(&Method::GET, "/v1/nope"), Lookup::NotFound);
        assert_eq!(
            lookup(&Method::DELETE, "/v1/webhooks/wh_1"),
            Lookup::Found(Endpoint::Webhook)
        );
        assert_eq!(lookup(&Method::DELETE, "/v1/webhooks/"), Lookup::NotFound);
        assert_eq!(
            lookup(&Method::GET, "/v1/webhooks/wh_1/test"),
            Lookup::WrongMethod(vec!["POST"])
        );
        assert_eq!(lookup(&Method::HEAD, "/v1/me"), Lookup::Found(Endpoint::Me));
    }
}
