//! Quarry: read-only questions over a company's business tools.
//!
//! See `ARCHITECTURE.md` at the repository root for the map of this crate.

pub mod connectors;
pub mod secret;
