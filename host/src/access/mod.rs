//! What every front door that takes bearer tokens checks (`/v1`'s gate,
//! `/mcp`'s): who is asking ([`Identity`]), a body read within its bound
//! ([`read_body`]), the request charged to the one limiter
//! ([`charge_identity`]) and the windows shown on the answer
//! ([`decorate`]). Each door arranges these its own way (`/v1` as layers
//! around each route, `/mcp` in one layer).

pub mod body;
pub mod charge;
mod identity;

use std::sync::Arc;

pub use self::body::{MAX_BODY_BYTES, read_body};
pub use self::charge::{Refusal, charge_identity, decorate, with_decision};
pub use self::identity::{Caller, Identity};
use crate::deletion::Deletions;
use crate::limits::Limiter;
use crate::metrics::Metrics;
use crate::services::Services;
use quarry_store::Store;

/// What the checks use of the services, and nothing more: the tokens (in
/// the store), whose deletion has begun, the limits and the metrics.
#[derive(Clone)]
pub struct Gate {
    pub store: Arc<Store>,
    pub deletions: Arc<Deletions>,
    pub limiter: Arc<Limiter>,
    pub metrics: Arc<Metrics>,
}

impl Gate {
    pub fn new(services: &Services) -> Gate {
        Gate {
            store: services.store.clone(),
            deletions: services.deletions.clone(),
            limiter: services.limiter.clone(),
            metrics: services.metrics.clone(),
        }
    }
}
