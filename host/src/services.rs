//! What the three front doors stand on: `/v1` (`api/`), `/mcp` (`mcp/`)
//! and the dashboard (`dashboard/`) each take what they use from the
//! [`Services`], built once by `server.rs`, and turn the services' typed
//! results ([`crate::query::Answer`], [`crate::error::ApiError`]) into
//! their own wire format. None of the three imports another.

use std::sync::Arc;

use crate::archive::Archive;
use crate::connectors::Registry;
use crate::deletion::Deletions;
use crate::issuer::Issuer;
use crate::limits::Limiter;
use crate::metrics::Metrics;
use crate::oauth::Refresher;
use crate::search::Search;
use crate::webhooks::Webhooks;
use quarry_store::Store;

/// The services, each shared.
#[derive(Clone)]
pub struct Services {
    pub store: Arc<Store>,
    pub registry: Arc<Registry>,
    /// The one limiter every front door charges.
    pub limiter: Arc<Limiter>,
    pub search: Arc<Search>,
    pub metrics: Arc<Metrics>,
    /// Registrations, the outbox and its delivery worker.
    pub webhooks: Arc<Webhooks>,
    pub archive: Arc<Archive>,
    pub deletions: Arc<Deletions>,
    pub refresher: Arc<Refresher>,
    pub issuer: Arc<Issuer>,
    /// The host as an OAuth client of the vendors, with the guarded HTTP
    /// client it reaches them with (`net::Purpose::Vendors`).
    pub vendors: Arc<crate::oauth::Vendors>,
}
