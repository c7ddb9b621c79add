//! The published description of the API: OpenAPI 3.0.3 as JSON and YAML,
//! and its reference page. The YAML file is the source; the JSON is the
//! same document, converted once at start-up.
//!
//! The page (`/v1/docs`) is Swagger UI, from the npm package
//! `swagger-ui-dist`, vendored in `host/openapi/vendor/swagger-ui-dist/`
//! by `tools/vendor-api-reference` (one pinned version, checked against
//! the registry's integrity hash; a test here checks each embedded file
//! against its SHA-256). Why Swagger UI rather than Scalar or Redoc:
//!
//! - It runs under a strict CSP: scripts and style sheets from this server
//!   only, no inline script or style element, no `eval` (its bundle's
//!   `Function("return this")` fallbacks are never reached in a browser).
//!   Scalar's standalone bundle adds `<style>` elements at run time and
//!   probes `Function("")`, so it would need `'unsafe-inline'` styles (or a
//!   nonce per response) and report an eval violation; Redoc's styles are
//!   injected too.
//! - It renders the descriptions' Markdown (sanitised) and has "Try it out"
//!   with the document's bearer scheme ("Authorize"). Redoc has no try-it.
//! - Its size: a 1.7 MB script and a 0.2 MB style sheet, where Scalar's
//!   standalone bundle is 4.9 MB. It loads nothing from elsewhere once its
//!   online validator badge is off.
//! - Upkeep: maintained by SmartBear, released about monthly, Apache-2.0
//!   (its LICENSE and NOTICE are beside the files).
//!
//! Its files are served outside `/v1` (`/api-reference/...`): they are not
//! part of the API the document describes, and, like the dashboard's style
//! sheet, are public and not rate limited. The configuration is a small
//! script of ours (`host/openapi/api-reference.js`), not an inline one.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const YAML: &str = include_str!("../../openapi/openapi.yaml");

/// Scripts, style sheets and the description from this server only; the
/// style sheet's icons are `data:` images. "Try it out" reaches this
/// server only (`connect-src 'self'`).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarry API reference</title>
<link rel="icon" href="/dashboard/icon.svg">
<link rel="stylesheet" href="/api-reference/swagger-ui.css">
</head>
<body>
<main id="swagger-ui">
<noscript><p>This page needs JavaScript. The description it shows is at
<a href="/v1/openapi.yaml">/v1/openapi.yaml</a> and <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></noscript>
</main>
<script src="/api-reference/swagger-ui-bundle.js"></script>
<script src="/api-reference/api-reference.js"></script>
</body>
</html>
"#;

/// A file the page loads, embedded in the binary.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

static ASSETS: [Asset; 3] = [
    Asset {
        path: "/api-reference/swagger-ui-bundle.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../openapi/vendor/swagger-ui-dist/swagger-ui-bundle.js"),
    },
    Asset {
        path: "/api-reference/swagger-ui.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../openapi/vendor/swagger-ui-dist/swagger-ui.css"),
    },
    Asset {
        path: "/api-reference/api-reference.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../openapi/api-reference.js"),
    },
];

pub struct Published {
    json: Vec<u8>,
}

impl Published {
    pub fn load() -> anyhow::Result<Published> {
        let document: serde_json::Value = serde_yaml_ng::from_str(YAML)?;
        Ok(Published {
            json: serde_json::to_vec_pretty(&document)?,
        })
    }
}

pub async fn openapi_json(State(published): State<Arc<Published>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        published.json.clone(),
    )
        .into_response()
}

pub async fn openapi_yaml() -> Response {
    ([(header::CONTENT_TYPE, "application/yaml")], YAML).into_response()
}

pub async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE,
    )
        .into_response()
}

/// The routes of the page's files (see the module's comment for why they
/// are outside `/v1`).
pub fn asset_routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    ASSETS.iter().fold(Router::new(), |router, asset| {
        router.route(asset.path, get(move || async move { asset.response() }))
    })
}

impl Asset {
    fn response(&self) -> Response {
        (
            [
                (header::CONTENT_TYPE, self.content_type),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            self.bytes,
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    /// `SHA256SUMS` of the vendored folder, written by
    /// `tools/vendor-api-reference` from the pinned npm package.
    const PINNED: &str = include_str!("../../openapi/vendor/swagger-ui-dist/SHA256SUMS");

    #[test]
    fn the_embedded_swagger_ui_files_are_the_pinned_ones() {
        let vendored: Vec<&Asset> = ASSETS
            .iter()
            .filter(|a| a.path.starts_with("/api-reference/swagger-ui"))
            .collect();
        assert_eq!(vendored.len(), 2, "the bundle and its style sheet");
        for asset in vendored {
            let file = asset.path.rsplit('/').next().unwrap();
            let pinned = PINNED
                .lines()
                .find_map(|line| line.strip_suffix(file)?.strip_suffix("  "))
                .unwrap_or_else(|| panic!("{file} is not in SHA256SUMS"));
            let embedded = format!("{:x}", Sha256::digest(asset.bytes));
            assert_eq!(
                embedded, pinned,
                "{file} is not the file tools/vendor-api-reference vendored"
            );
        }
    }
}
