//! Connecting the demo users to connectors installed after the demo
//! started: an author's `quarry connector install` into the demo's plugins
//! folder is hot-loaded by the registry, and the demo's users can ask it
//! at once, without `quarry admin connect` (which needs the server stopped
//! on redb).

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::str::FromStr;

use fake_saas::FakeSaas;

use crate::connectors::Registry;
use quarry_store::Store;

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
    settings: &[ConnectionSetting],
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
            match connect_everyone(fake, store, users, &id, settings) {
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
    settings: &[ConnectionSetting],
) -> anyhow::Result<()> {
    for user in users {
        super::connect_user(fake, store, &user.id, &user.name, connector, settings)?;
    }
    Ok(())
}

/// `--setting ID:NAME=VALUE`: a setting of the demo users' connections to
/// the connector `ID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionSetting {
    pub connector: String,
    pub name: String,
    pub value: String,
}

impl FromStr for ConnectionSetting {
    type Err = String;

    fn from_str(text: &str) -> Result<ConnectionSetting, String> {
        let shape = || format!("{text:?} is not ID:NAME=VALUE (for example acme-wiki:site=acme)");
        let (connector, setting) = text.split_once(':').ok_or_else(shape)?;
        let (name, value) = setting.split_once('=').ok_or_else(shape)?;
        if connector.is_empty() || name.is_empty() {
            return Err(shape());
        }
        Ok(ConnectionSetting {
            connector: connector.to_string(),
            name: name.to_string(),
            value: value.to_string(),
        })
    }
}

/// The settings of a demo connection to `connector`: the fake company's,
/// then those `--setting` gives (which win for the same name).
pub(super) fn settings_for(connector: &str, given: &[ConnectionSetting]) -> Vec<(String, String)> {
    let mut settings = super::demo_settings(connector);
    for setting in given.iter().filter(|s| s.connector == connector) {
        settings.retain(|(name, _)| *name != setting.name);
        settings.push((setting.name.clone(), setting.value.clone()));
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_settings_add_to_the_fake_companys_and_win() {
        let given: Vec<ConnectionSetting> = ["acme-wiki:site=acme", "github:scope=repo:acme/x"]
            .iter()
            .map(|text| text.parse().unwrap())
            .collect();
        assert_eq!(
            settings_for("acme-wiki", &given),
            [("site".to_string(), "acme".to_string())]
        );
        assert_eq!(
            settings_for("github", &given),
            [("scope".to_string(), "repo:acme/x".to_string())]
        );
        assert_eq!(settings_for("slack", &given), []);
        for bad in ["acme-wiki", "acme-wiki:site", ":site=a", "acme-wiki:=a"] {
            let message = bad.parse::<ConnectionSetting>().unwrap_err();
            assert!(message.contains("is not ID:NAME=VALUE"), "{bad}: {message}");
        }
    }
}
