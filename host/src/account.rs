//! What a person has connected: every loaded connector and whether they
//! connected it (`/v1/connectors`, MCP's `list_connectors`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::services::Services;
use quarry_store::GrantStatus;

/// `GET /v1/connectors`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConnectorList {
    pub connectors: Vec<ConnectorInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConnectorInfo {
    pub id: String,
    pub label: String,
    pub description: String,
    pub connected: bool,
    /// `connected`, `needs_reconnect` or `not_connected`.
    pub status: String,
}

/// A grant's status as answers name it.
pub fn status_name(status: GrantStatus) -> &'static str {
    match status {
        GrantStatus::Connected => "connected",
        GrantStatus::NeedsReconnect => "needs_reconnect",
    }
}

/// Every loaded connector, and whether `user_id` connected it.
pub fn connectors(services: &Services, user_id: &str) -> Result<ConnectorList, ApiError> {
    let grants = services.store.grants(user_id)?;
    let connectors = services
        .registry
        .list()
        .iter()
        .map(|c| {
            let grant = grants
                .iter()
                .find(|(id, _)| *id == c.manifest.id)
                .map(|(_, g)| g.status);
            ConnectorInfo {
                id: c.manifest.id.clone(),
                label: c.manifest.label.clone(),
                description: c.manifest.description.clone(),
                connected: grant.is_some(),
                status: grant.map_or("not_connected", status_name).to_string(),
            }
        })
        .collect();
    Ok(ConnectorList { connectors })
}
