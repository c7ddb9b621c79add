//! The table of endpoints: one place that knows every path, its methods,
//! its rate-limit bucket and whether it needs a token. The gate uses it to
//! answer unknown paths (404) and wrong methods (405) in the contract's
//! error shape, and to pick the bucket before the request is routed.

use axum::http::Method;

use super::limits::Bucket;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Query,
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
    let matching: Vec<&Route> = ROUTES.iter().filter(|r| r.path == path).collect();
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

impl Endpoint {
    pub fn bucket(self) -> Bucket {
        match self {
            Endpoint::Query => Bucket::Query,
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
        assert_eq!(lookup(&Method::HEAD, "/v1/me"), Lookup::Found(Endpoint::Me));
    }
}
