//! The gate: what every `/v1` request passes before and after its handler,
//! as layers with one job each. axum's router is the table of endpoints
//! (`api/routes.rs` says what each is: its path, methods, rate-limit
//! bucket and whether it is public); each route is wrapped in the same
//! stack, outermost first:
//!
//! 1. [`observe`] (the whole `/v1` router): request id, the six rate-limit
//!    headers and the error shape on every response, metrics, one log line.
//! 2. [`auth::identify`]: who is asking ([`Identity`]); refuses nothing yet.
//! 3. [`body::limit`]: reads at most 64 KiB ([`BodyHash`]).
//! 4. `idempotency::replay`, on `POST /v1/query` only: a repeated request
//!    gets its stored answer, free.
//! 5. [`limit::charge`]: the per-user, per-endpoint windows (429).
//! 6. [`auth::require`]: a valid token ([`Caller`]), unless the endpoint is
//!    public (401).
//!
//! A path that is not routed (404) or a method the path does not serve
//! (405) gets [`fallback`]: identified and charged like any request.
//!
//! What the inner layers learn for the outer one travels in the response's
//! extensions: the [`Endpoint`], the user's id and the limits' [`Decision`].
//! The layers see only the [`Gate`] part of the API's state.

pub mod auth;
pub mod body;
mod fallback;
pub mod idempotency;
pub mod limit;
mod observe;

use axum::extract::FromRef;
use axum::routing::MethodRouter;

pub use self::body::BodyHash;
pub use self::fallback::{method_not_allowed, not_found};
pub use self::observe::observe;
use super::App;
use super::routes::Endpoint;
pub use crate::access::{Caller, Gate, Identity};

impl FromRef<App> for Gate {
    fn from_ref(app: &App) -> Gate {
        Gate::new(&app.services)
    }
}

/// The user a response was for (for the log line), when known.
#[derive(Debug, Clone)]
pub struct UserId(pub String);

/// When the request reached the gate.
#[derive(Debug, Clone, Copy)]
pub struct RequestStart(pub std::time::Instant);

/// Wraps one endpoint's handlers in the gate's per-route layers.
pub fn guard(gate: &Gate, endpoint: Endpoint, route: MethodRouter<App>) -> MethodRouter<App> {
    use axum::middleware::{from_fn, from_fn_with_state};
    // Layers run outermost last-added: the list below reads inside out.
    let route = route.route_layer(from_fn(auth::require));
    let route = route.route_layer(from_fn_with_state(gate.clone(), limit::charge));
    let route = if endpoint.is_idempotent() {
        route.route_layer(from_fn_with_state(gate.clone(), idempotency::replay))
    } else {
        route
    };
    route
        .route_layer(from_fn_with_state(gate.clone(), body::limit))
        .route_layer(from_fn_with_state(gate.clone(), auth::identify))
        .route_layer(axum::Extension(endpoint))
}
