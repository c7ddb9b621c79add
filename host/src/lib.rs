//! Quarry: read-only questions over a company's business tools.
//!
//! See `ARCHITECTURE.md` at the repository root for the map of this crate.

pub mod access;
pub mod account;
pub mod admin;
pub mod api;
pub mod archive;
pub mod config;
pub mod connector_kit;
pub mod connectors;
pub mod coordination;
pub mod dashboard;
pub mod deep_search;
pub mod deletion;
#[cfg(feature = "demo")]
pub mod demo;
pub mod error;
#[cfg(feature = "demo")]
pub mod eval_live;
#[cfg(test)]
mod invariants;
pub mod issuer;
pub mod limits;
pub mod logging;
pub mod mcp;
pub mod metrics;
pub mod net;
pub mod oauth;
pub mod oidc;
pub mod origin;
pub mod query;
pub mod search;
pub mod server;
pub mod services;
pub mod user_data;
pub mod webhooks;

// The ranking is a crate of its own (host/rank); the host reaches it, and
// the calendar it keeps, under the names they had as modules.
pub use quarry_rank as rank;
pub use quarry_rank::calendar;
