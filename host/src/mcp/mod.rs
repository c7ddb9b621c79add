//! The MCP endpoint, `/mcp`: the Model Context Protocol over Streamable
//! HTTP, for AI assistants that speak it rather than `/v1`. rmcp (the
//! official Rust SDK) speaks the protocol, statelessly: `server/discover`
//! and per-request metadata (2026-07-28), `initialize` for older clients,
//! never a session. Around it, ours: the gate (Host and Origin, the MCP
//! token, its own rate-limit bucket, one message per POST), the protected
//! resource metadata that points clients at the authorization server, and
//! the tools, which run the `/v1` pipeline.
//!
//! One file per concept: [`origin`] (the public origin, Host and Origin),
//! [`gate`], [`metadata`] (RFC 9728), [`tools`] (the server and its
//! tools), [`shapes`] (their arguments and answers), [`documents`]
//! (`search`'s ids, `fetch`), [`progress`], [`cancel`] (the older
//! protocol's cancellation).
//!
//! Tokens: `/mcp` accepts only tokens whose audience is MCP
//! (`store::Audience::Mcp`, RFC 8707), and `/v1` refuses them. Assistants
//! get them from the authorization server (`crate::issuer`: the
//! authorization code grant with PKCE, client registration, the consent
//! page in the dashboard), which the 401's challenge and [`metadata`] lead
//! them to; `quarry admin issue-token --audience mcp` and the demo issue
//! them too.

mod caller;
pub mod cancel;
pub mod documents;
pub mod gate;
pub mod metadata;
pub mod progress;
pub mod shapes;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::access::Gate;
pub use crate::origin::PublicOrigin;
use crate::services::Services;

/// What the endpoint's layers and tools reach.
pub struct Mcp {
    pub services: Services,
    /// What the endpoint's gate uses of the services.
    pub gate: Gate,
    pub origin: PublicOrigin,
    pub cancels: Arc<cancel::Cancels>,
}

pub const PATH: &str = "/mcp";

/// `/mcp` (and `/mcp/`, so that no redirect drops `Authorization`) behind
/// the gate, and the metadata documents.
pub fn router(services: Services, origin: PublicOrigin) -> Router {
    let mcp = Arc::new(Mcp {
        gate: Gate::new(&services),
        services,
        origin,
        cancels: Arc::default(),
    });
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        // The gate checked both already; rmcp checks again.
        .with_allowed_hosts(mcp.origin.hosts().to_vec())
        .with_allowed_origins([mcp.origin.origin().to_string()]);
    let server = mcp.clone();
    let service = StreamableHttpService::new(
        move || Ok(tools::QuarryMcp::new(server.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let endpoint = Router::new()
        .route_service(PATH, service.clone())
        .route_service("/mcp/", service)
        .layer(axum::middleware::from_fn_with_state(
            mcp.clone(),
            gate::gate,
        ));
    let metadata = Router::new()
        .route(metadata::PATH, get(metadata::serve))
        .route(metadata::ROOT_PATH, get(metadata::serve))
        .with_state(mcp);
    endpoint.merge(metadata)
}
