//! Connectors: sandboxed WebAssembly components that search one tool each.
//!
//! - [`manifest`]: what a connector declares (`<id>.toml`);
//! - [`pattern`], [`policy`], [`graphql`]: the fetch policy, the one choke
//!   point every outgoing request passes;
//! - [`credential`]: where the user's token goes once a request is admitted;
//! - [`upstream`]: the HTTP client behind it, sending one admitted hop
//!   (address checks after DNS, the size cap, credential injection; the
//!   sandbox admits each request and redirect hop and caps fetches and
//!   time);
//! - [`runtime`]: wasmtime: compiling, caching, instantiating and calling
//!   components. It is the `quarry-sandbox` crate (`host/sandbox/`), the
//!   only one that depends on wasmtime; it also defines the types of a
//!   search ([`SearchRequest`], [`Document`], [`ConnectorError`]) and of a
//!   fetch, and the host hands it [`upstream::Upstream`] as its one way out;
//! - [`registry`]: the plugins folder, loaded and hot-reloaded;
//! - [`problem`]: what is wrong with a connector, as the load path finds it
//!   (the registry refuses errors; `quarry connector check` lists them all).
//!
//! `manifest`, `pattern`, `policy`, `graphql` and `problem` are pure rules
//! over untrusted input, so they live in the `quarry-guard` crate (fuzzed
//! apart from the host, see its crate doc); they are re-exported here, where
//! the rest of the host has always found them.

pub use quarry_guard::{graphql, manifest, pattern, policy, problem};
pub use quarry_sandbox as runtime;
pub use quarry_sandbox::{ConnectorError, Document, ErrorKind, SearchRequest};

pub mod carry_over;
pub mod credential;
pub mod registry;
pub mod upstream;

pub use manifest::{Manifest, SandboxLimits};
pub use problem::{Problem, Severity};
pub use registry::{Registry, RegistryConfig};
pub use runtime::{Runtime, RuntimeConfig};
pub use upstream::NetworkConfig;
