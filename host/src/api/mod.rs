//! The HTTP API: `/v1/...` behind the [`gate`], plus `/healthz`
//! (liveness), `/readyz` (readiness) and `/metrics` outside it. One file per endpoint; the logic lives in the
//! modules they call.

pub mod deep_search;
pub mod delete;
pub mod docs;
pub mod gate;
pub mod json;
pub mod me;
pub mod query;
pub mod routes;
pub mod webhooks;

use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, FromRef, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, post};

use self::routes::Endpoint;
use crate::limits;
use crate::metrics::Metrics;
use crate::search::Search;
use crate::services::Services;
use crate::webhooks::Webhooks;
use quarry_store::Store;

/// The API's state: the services its handlers use, each shared, and what
/// only `/v1` serves. A handler (or layer) takes the part it needs as
/// `State<Arc<Part>>` (see [`FromRef`] below) rather than the whole.
#[derive(Clone)]
pub struct App {
    pub services: Services,
    pub published: Arc<docs::Published>,
    /// The operator's `/metrics` scrape token, if any.
    pub metrics_token: Option<Arc<quarry_store::secret::Secret>>,
}

/// The services' parts read as the API's own (`app.store`).
impl std::ops::Deref for App {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}

/// `State<Arc<Part>>` for each part of [`App`].
macro_rules! parts {
    ($($field:ident: $part:ty),* $(,)?) => {$(
        impl FromRef<App> for Arc<$part> {
            fn from_ref(app: &App) -> Arc<$part> {
                app.$field.clone()
            }
        }
    )*};
}

parts! {
    store: Store,
    search: Search,
    metrics: Metrics,
    published: docs::Published,
    webhooks: Webhooks,
    deletions: crate::deletion::Deletions,
}

pub fn router(app: App) -> Router {
    let gate = gate::Gate::from_ref(&app);
    let v1 = Endpoint::ALL
        .into_iter()
        .fold(Router::new(), |router, endpoint| {
            router.route(
                endpoint.path(),
                gate::guard(&gate, endpoint, handlers(endpoint)),
            )
        })
        .fallback(gate::not_found)
        .method_not_allowed_fallback(gate::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            gate::observe,
        ));
    Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }),
        )
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .merge(docs::asset_routes())
        .merge(v1)
        .with_state(app)
}

/// The handlers of each endpoint, by method.
fn handlers(endpoint: Endpoint) -> MethodRouter<App> {
    match endpoint {
        Endpoint::Query => post(query::query),
        Endpoint::DeepSearch => post(deep_search::deep_search),
        Endpoint::DeleteMyData => delete(delete::delete_my_data),
        Endpoint::Webhooks => get(webhooks::list).post(webhooks::register),
        Endpoint::Webhook => delete(webhooks::remove),
        Endpoint::WebhookTest => post(webhooks::test),
        Endpoint::Me => get(me::me),
        Endpoint::Connectors => get(me::connectors),
        Endpoint::OpenApiJson => get(docs::openapi_json),
        Endpoint::OpenApiYaml => get(docs::openapi_yaml),
        Endpoint::Docs => get(docs::page),
    }
}

/// Readiness (for a load balancer): 200 when this replica reaches its
/// storage and its limits' windows, else 503. `/healthz` is liveness: the
/// process answers at all.
async fn ready(State(app): State<App>) -> axum::response::Response {
    let store = app.store.clone();
    let storage = tokio::task::spawn_blocking(move || store.read().map(drop))
        .await
        .map_err(anyhow::Error::from)
        .and_then(|reached| reached);
    let windows = app.limiter.peek("readyz", limits::Bucket::Anonymous).await;
    let problem = match (storage, windows) {
        (Ok(()), Ok(_)) => None,
        (Err(error), _) => Some(format!("storage: {error:#}")),
        (_, Err(error)) => Some(format!("limits: {error:#}")),
    };
    match problem {
        None => axum::Json(serde_json::json!({ "status": "ready" })).into_response(),
        Some(problem) => {
            tracing::warn!(%problem, "not ready");
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({ "status": "unavailable" })),
            )
                .into_response()
        }
    }
}

/// `/metrics`: with the operator's scrape token when one is configured,
/// else to clients on this machine only (request rates, latencies and
/// connector health are for the operator, not for anyone on the network).
async fn metrics(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: axum::http::HeaderMap,
) -> Response {
    let allowed = match &app.metrics_token {
        Some(token) => headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|sent| quarry_store::secret::constant_time_eq(sent, token.expose())),
        None => peer.ip().is_loopback(),
    };
    if !allowed {
        return (
            axum::http::StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "the metrics need the operator's scrape token\n",
        )
            .into_response();
    }
    app.metrics.set_memory_use(app.archive.memory_use());
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(),
    )
        .into_response()
}
