//! The published description of the API: OpenAPI 3.0.3 as JSON and YAML,
//! and an interactive page. The YAML file is the source; the JSON is the
//! same document, converted once at start-up.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

const YAML: &str = include_str!("../../openapi/openapi.yaml");
const PAGE: &str = include_str!("../../openapi/docs.html");

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
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
            ),
        ],
        PAGE,
    )
        .into_response()
}
