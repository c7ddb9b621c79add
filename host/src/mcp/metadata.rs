//! OAuth 2.0 Protected Resource Metadata (RFC 9728) for `/mcp`: where a
//! client learns which authorization server issues tokens for it. Served
//! at the path form (`/.well-known/oauth-protected-resource/mcp`) and the
//! root form (`/.well-known/oauth-protected-resource`), which clients try
//! in that order. The authorization server is this server's origin.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Mcp;
use crate::origin::PublicOrigin;
use quarry_store::Permission;

pub const PATH: &str = "/.well-known/oauth-protected-resource/mcp";
pub const ROOT_PATH: &str = "/.well-known/oauth-protected-resource";

/// The metadata's address, as the 401's challenge names it.
pub fn url(origin: &PublicOrigin) -> String {
    format!("{}{PATH}", origin.origin())
}

pub fn document(origin: &PublicOrigin) -> Value {
    let scopes: Vec<&str> = Permission::ALL.iter().map(|p| p.as_str()).collect();
    json!({
        "resource": origin.resource(),
        "authorization_servers": [origin.origin()],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "Quarry",
        "resource_documentation": format!("{}/v1/docs", origin.origin()),
    })
}

pub async fn serve(State(mcp): State<Arc<Mcp>>) -> Response {
    let mut response = axum::Json(document(&mcp.origin)).into_response();
    let headers = response.headers_mut();
    // Browser-based clients read it from another origin.
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_is_the_mcp_url_and_this_server_issues_its_tokens() {
        let origin = PublicOrigin::new(
            Some("https://quarry.example.com"),
            "0.0.0.0:443".parse().unwrap(),
            true,
        );
        let doc = document(&origin);
        assert_eq!(doc["resource"], "https://quarry.example.com/mcp");
        assert_eq!(
            doc["authorization_servers"],
            json!(["https://quarry.example.com"])
        );
        assert_eq!(
            url(&origin),
            "https://quarry.example.com/.well-known/oauth-protected-resource/mcp"
        );
    }
}
