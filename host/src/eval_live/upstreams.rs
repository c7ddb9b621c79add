//! What the evaluation needs of the vendors it measures against, whichever
//! they are: the connectors to install, each client's connections, and
//! which corpus documents each search returned.

use std::net::SocketAddr;
use std::path::Path;

use anyhow::{Context, Result};

/// One connection of a client's user: a connector, its token at the
/// vendor, and its settings.
pub(super) struct Connection {
    pub id: String,
    pub token: String,
    pub settings: Vec<(String, String)>,
}

/// One search a connector made: which connector, what it sent (the query
/// string, or the body of a POST), and the corpus documents the vendor
/// answered with (empty: it found nothing).
#[derive(Clone, Debug)]
pub(super) struct Search {
    pub connector: String,
    pub sent: String,
    pub returned: Vec<usize>,
}

/// The vendors under measurement.
pub(super) trait Upstreams: Send + Sync {
    /// The connectors to install: id, and the built connector whose
    /// component and manifest it is a copy of.
    fn connectors(&self) -> Vec<(String, String)>;
    /// The vendor host names the server must send to [`Upstreams::addr`].
    fn hosts(&self) -> Vec<String>;
    fn addr(&self) -> SocketAddr;
    /// The CA that signed the vendors' certificates, PEM.
    fn ca_pem(&self) -> String;
    /// The connections of client `client`'s user.
    fn connections(&self, client: usize) -> Vec<Connection>;
    /// How many searches have been recorded so far.
    fn mark(&self) -> usize;
    /// The searches recorded between two marks on behalf of `client`.
    fn searches(&self, client: usize, from: usize, to: usize) -> Vec<Search>;
    /// The corpus document a citation URL is the record of.
    fn document_of(&self, url: &str) -> Option<usize>;
}

/// Installs the connectors into `plugins`: each a copy of a built one from
/// `built`, renamed where its id differs.
pub(super) fn install(upstreams: &dyn Upstreams, built: &Path, plugins: &Path) -> Result<()> {
    std::fs::create_dir_all(plugins)?;
    for (index, (id, original)) in upstreams.connectors().iter().enumerate() {
        let wasm = std::fs::read(built.join(format!("{original}.wasm"))).with_context(|| {
            format!(
                "the {original} connector is missing from {}: build the connectors with \
                 `cargo run -p quarry-plugin-builder`",
                built.display()
            )
        })?;
        let mut manifest = std::fs::read_to_string(built.join(format!("{original}.toml")))?;
        if id != original {
            manifest = manifest
                .lines()
                .map(|line| {
                    if line.starts_with("id = ") {
                        format!("id = \"{id}\"")
                    } else if line.starts_with("label = ") {
                        format!("label = \"Vendor {}\"", index + 1)
                    } else {
                        line.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        std::fs::write(plugins.join(format!("{id}.wasm")), wasm)?;
        std::fs::write(plugins.join(format!("{id}.toml")), manifest)?;
    }
    Ok(())
}
