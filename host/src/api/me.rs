//! `GET /v1/me` and `GET /v1/connectors`.

use std::sync::Arc;

use axum::extract::State;
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::error::ApiError;
use super::gate::Caller;
use crate::calendar::rfc3339;
use crate::store::GrantStatus;

fn status_name(status: GrantStatus) -> &'static str {
    match status {
        GrantStatus::Connected => "connected",
        GrantStatus::NeedsReconnect => "needs_reconnect",
    }
}

pub async fn me(
    State(store): State<Arc<crate::store::Store>>,
    State(search): State<Arc<crate::search::Search>>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<Value>, ApiError> {
    let connectors: Vec<Value> = store
        .grants(&caller.user.id)?
        .into_iter()
        .map(|(id, grant)| json!({ "id": id, "label": search.label_of(&id), "status": status_name(grant.status) }))
        .collect();
    Ok(Json(json!({
        "user_id": caller.user.id,
        "email": caller.user.email,
        "token_expires_at": rfc3339(caller.token_expires_at),
        "connectors": connectors,
    })))
}

pub async fn connectors(
    State(store): State<Arc<crate::store::Store>>,
    State(registry): State<Arc<crate::connectors::Registry>>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(list_connectors(&store, &registry, &caller.user.id)?))
}

/// `GET /v1/connectors`'s answer (MCP's `list_connectors` too): every
/// loaded connector and whether the user connected it.
pub fn list_connectors(
    store: &crate::store::Store,
    registry: &crate::connectors::Registry,
    user_id: &str,
) -> Result<Value, ApiError> {
    let grants = store.grants(user_id)?;
    let connectors: Vec<Value> = registry
        .list()
        .iter()
        .map(|c| {
            let grant = grants
                .iter()
                .find(|(id, _)| *id == c.manifest.id)
                .map(|(_, g)| g.status);
            json!({
                "id": c.manifest.id,
                "label": c.manifest.label,
                "description": c.manifest.description,
                "connected": grant.is_some(),
                "status": grant.map_or("not_connected", status_name),
            })
        })
        .collect();
    Ok(json!({ "connectors": connectors }))
}
