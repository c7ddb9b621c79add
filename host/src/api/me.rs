//! `GET /v1/me` and `GET /v1/connectors`.

use std::sync::Arc;

use axum::extract::State;
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::App;
use super::gate::Caller;
use crate::account::{self, ConnectorList};
use crate::calendar::rfc3339;
use crate::error::ApiError;

pub async fn me(
    State(store): State<Arc<quarry_store::Store>>,
    State(search): State<Arc<crate::search::Search>>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<Value>, ApiError> {
    let connectors: Vec<Value> = store
        .grants(&caller.user.id)?
        .into_iter()
        .map(|(id, grant)| json!({ "id": id, "label": search.label_of(&id), "status": account::status_name(grant.status) }))
        .collect();
    Ok(Json(json!({
        "user_id": caller.user.id,
        "email": caller.user.email,
        "token_expires_at": rfc3339(caller.token_expires_at),
        "connectors": connectors,
    })))
}

pub async fn connectors(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<ConnectorList>, ApiError> {
    Ok(Json(account::connectors(&app, &caller.user.id)?))
}
