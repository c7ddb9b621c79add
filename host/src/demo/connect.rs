//! Connecting the demo users to connectors installed after the demo
//! started: an author's `quarry connector install` into the demo's plugins
//! folder is hot-loaded by the registry, and the demo's users can ask it
//! at once, without `quarry admin connect` (which needs the server stopped
//! on redb).

use std::collections::BTreeSet;
use std::convert::Infallible;

use fake_saas::FakeSaas;

use crate::connectors::Registry;
use crate::store::Store;

use super::DemoUser;

/// Connects every demo user to each connector the registry loads from now
/// on that was not loaded before, as the demo does at start for the ones
/// present then (`known`): the credential `fake-<id>-<user>` (the seeded
/// ones of the fake vendors), never expiring and with no refresh token, so
/// the host never asks the connector's OAuth endpoints for another. A
/// replaced connector keeps its connections. Runs until the demo stops.
pub(super) async fn connect_later_connectors(
    fake: &FakeSaas,
    store: &Store,
    registry: &Registry,
    users: &[DemoUser],
    mut loads: tokio::sync::watch::Receiver<u64>,
    mut known: BTreeSet<String>,
) -> Infallible {
    loop {
        if loads.changed().await.is_err() {
            // The registry is gone: the demo is stopping.
            return std::future::pending().await;
        }
        let new: Vec<String> = registry
            .list()
            .iter()
            .map(|connector| connector.manifest.id.clone())
            .filter(|id| !known.contains(id))
            .collect();
        for id in new {
            match connect_everyone(fake, store, users, &id) {
                Ok(()) => {
                    tracing::info!(connector = %id, users = users.len(), token = %format!("fake-{id}-<user>"), "demo users connected to a new connector");
                    known.insert(id);
                }
                // Tried again at the next load.
                Err(error) => {
                    tracing::error!(connector = %id, error = %format!("{error:#}"), "cannot connect the demo users")
                }
            }
        }
    }
}

fn connect_everyone(
    fake: &FakeSaas,
    store: &Store,
    users: &[DemoUser],
    connector: &str,
) -> anyhow::Result<()> {
    for user in users {
        super::connect_user(fake, store, &user.id, &user.name, connector)?;
    }
    Ok(())
}
