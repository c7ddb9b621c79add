//! The HTTP API: `/v1/...` behind the [`gate`], plus `/healthz` and
//! `/metrics` outside it. One file per endpoint; the logic lives in the
//! modules they call.

pub mod deep_search;
pub mod delete;
pub mod docs;
pub mod error;
pub mod gate;
pub mod idempotency;
pub mod json;
pub mod limits;
pub mod me;
pub mod query;
pub mod routes;
pub mod webhooks;

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{delete, get, post};

use self::error::ApiError;
use self::idempotency::InFlight;
use self::limits::RateLimiter;
use crate::connectors::Registry;
use crate::metrics::Metrics;
use crate::search::Search;
use crate::store::Store;
use crate::webhooks::Webhooks;

/// Everything a request handler can reach.
pub struct App {
    pub store: Arc<Store>,
    pub registry: Arc<Registry>,
    pub limiter: Arc<RateLimiter>,
    pub search: Search,
    pub metrics: Arc<Metrics>,
    pub published: docs::Published,
    pub in_flight: InFlight,
    /// Registrations, the outbox and its delivery worker.
    pub webhooks: Arc<Webhooks>,
    pub archive: Arc<crate::archive::Archive>,
    pub deletions: Arc<crate::deletion::Deletions>,
    pub refresher: Arc<crate::oauth::Refresher>,
    pub issuer: Arc<crate::issuer::Issuer>,
    /// Users whose requests are refused (a deletion in progress).
    pub blocked: RwLock<HashSet<String>>,
}

impl App {
    pub fn is_blocked(&self, user_id: &str) -> bool {
        self.blocked.read().expect("blocked lock").contains(user_id)
    }
}

pub fn router(app: Arc<App>) -> Router {
    let v1 = Router::new()
        .route("/v1/query", post(query::query))
        .route("/v1/deep_search", post(deep_search::deep_search))
        .route(
            "/v1/delete_my_data",
            axum::routing::delete(delete::delete_my_data),
        )
        .route("/v1/me", get(me::me))
        .route("/v1/connectors", get(me::connectors))
        .route("/v1/webhooks", get(webhooks::list).post(webhooks::register))
        .route("/v1/webhooks/{id}", delete(webhooks::remove))
        .route("/v1/webhooks/{id}/test", post(webhooks::test))
        .route("/v1/openapi.json", get(docs::openapi_json))
        .route("/v1/openapi.yaml", get(docs::openapi_yaml))
        .route("/v1/docs", get(docs::page))
        // The gate answers unknown paths and wrong methods itself.
        .fallback(|| async { ApiError::not_found("not found") })
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            gate::gate,
        ));
    Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }),
        )
        .route("/metrics", get(metrics))
        .merge(crate::issuer::http::routes())
        .merge(v1)
        .with_state(app)
}

async fn metrics(State(app): State<Arc<App>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(),
    )
}
