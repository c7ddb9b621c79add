//! The rules the host applies to untrusted input, with no I/O: guest URLs
//! and URL patterns, request admission, the GraphQL guard, manifests, API
//! JSON bodies, webhook targets.
//!
//! These are pure functions of their input, kept apart from the host
//! (`quarry`) for two reasons: they are the code that untrusted bytes reach
//! first, so they are fuzzed (`fuzz/` at the repository's root), and a
//! fuzz build instruments every crate it compiles: this crate depends on
//! nothing heavier than `url`, `serde`, `toml` and a GraphQL parser, where
//! the host pulls in wasmtime, candle and a C++ vector index. The host does
//! the I/O around them (DNS, HTTP, the axum extractor, the credential).
//!
//! - [`pattern`]: URL patterns of routes, and the strict guest URL parser;
//! - [`policy`] and [`graphql`]: the fetch policy, `admit`;
//! - [`manifest`] and [`problem`]: `connector.toml`, parsed and validated;
//! - [`json`] and [`bodies`]: API request bodies, with errors that name the
//!   field;
//! - [`net`] and [`webhook_target`]: which addresses are public, and where
//!   a webhook may be delivered.

pub mod bodies;
pub mod graphql;
pub mod json;
pub mod manifest;
pub mod net;
pub mod pattern;
pub mod policy;
pub mod problem;
pub mod webhook_target;
