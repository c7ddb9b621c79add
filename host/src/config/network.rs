//! The network: the server's TLS certificate, and how upstreams (the
//! vendors) are reached.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// PEM certificate chain.
    pub cert: Option<PathBuf>,
    /// PEM private key.
    pub key: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamConfig {
    /// Vendor host names mapped to fixed addresses (fake upstreams in tests
    /// and the demo). Loopback and private addresses are allowed only here.
    pub host_overrides: BTreeMap<String, SocketAddr>,
    /// Extra PEM root certificates trusted for upstreams.
    pub extra_root_certs: Vec<PathBuf>,
}
