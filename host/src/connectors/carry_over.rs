//! Connections to retired connectors, carried over to the connectors that
//! took their place (a manifest's `[[carries_over]]`): when Microsoft 365
//! became four connectors, the people who had connected it kept their
//! files and mail without connecting again.
//!
//! It runs at start and after every load of the plugins folder, for every
//! retired id (one no loaded connector has) that a loaded connector
//! carries over: each connection to it moves, in one transaction per
//! person, to each successor the person has not connected yet
//! (`Store::carry_over_grant`). Replicas may run it together: a moved
//! connection is gone, so the second finds nothing to move.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use quarry_store::Store;

use super::{Manifest, Registry};

/// Retired ids, each with the loaded connectors that carry it over.
pub fn successors<'a>(
    loaded: impl IntoIterator<Item = &'a Manifest> + Clone,
) -> BTreeMap<String, Vec<String>> {
    let is_loaded = |id: &str| loaded.clone().into_iter().any(|m| m.id == id);
    let mut retired: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for manifest in loaded.clone() {
        for carry in &manifest.carries_over {
            if !is_loaded(&carry.from) {
                retired
                    .entry(carry.from.clone())
                    .or_default()
                    .push(manifest.id.clone());
            }
        }
    }
    retired
}

/// Moves every connection to a retired connector to its successors; how
/// many connections moved.
pub fn carry_over_connections(store: &Store, registry: &Registry) -> Result<usize> {
    let loaded = registry.list();
    let retired = successors(loaded.iter().map(|c| c.manifest.as_ref()));
    let mut moved = 0;
    for (from, to) in &retired {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        for user in store.users_connected_to(from)? {
            let given = store.carry_over_grant(&user, from, &to)?;
            tracing::info!(user = %user, from = %from, to = ?given, "carried a connection over to the connectors that replace it");
            moved += 1;
        }
    }
    Ok(moved)
}

/// Carries connections over now (before the server answers anyone) and
/// after every load, until the registry is gone.
pub fn keep_carrying_over(store: Arc<Store>, registry: &Arc<Registry>) {
    let mut loads = registry.loads();
    carry_over_logged(&store, registry);
    let registry = Arc::downgrade(registry);
    tokio::spawn(async move {
        while loads.changed().await.is_ok() {
            let Some(registry) = registry.upgrade() else {
                return;
            };
            carry_over_logged(&store, &registry);
        }
    });
}

fn carry_over_logged(store: &Store, registry: &Registry) {
    if let Err(error) = carry_over_connections(store, registry) {
        tracing::error!(error = %format!("{error:#}"), "cannot carry connections over (tried again at the next load)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(id: &str, carries: &str) -> Manifest {
        let mut m = Manifest::for_tests(&format!(
            "[[routes]]\nmethod = \"GET\"\nurl = \"https://api.example.com/x\"\n\
             [oauth]\nauthorize_url = \"https://login.example.com/a\"\n\
             token_url = \"https://login.example.com/t\"\n\
             scopes = [{{ name = \"read\", read_only = true }}]\n{carries}"
        ));
        m.id = id.to_string();
        m
    }

    #[test]
    fn a_retired_id_goes_to_every_loaded_connector_that_carries_it() {
        let carry = |from: &str| {
            format!("[[carries_over]]\nfrom = {from:?}\ngranted_scopes = [\"read\"]\n")
        };
        let files = manifest("files", &carry("suite"));
        let mail = manifest("mail", &carry("suite"));
        let calendar = manifest("calendar", "");
        let renamed = manifest("wiki", &carry("calendar"));
        let all = [files, mail, calendar, renamed];
        let got = successors(all.iter());
        assert_eq!(got.len(), 1, "calendar is loaded: not retired");
        assert_eq!(got["suite"], vec!["files", "mail"]);
        assert!(successors(all[2..].iter()).is_empty());
    }
}
