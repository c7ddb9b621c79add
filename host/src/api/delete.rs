//! `DELETE /v1/delete_my_data`: executes the deletion, then confirms it.

use std::sync::Arc;

use axum::extract::State;
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::gate::Caller;
use crate::error::ApiError;

pub async fn delete_my_data(
    State(deletions): State<Arc<crate::deletion::Deletions>>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<Value>, ApiError> {
    let user_id = caller.user.id.clone();
    // From here on the user's token stops working, for this and every
    // other request; the job finishes even if this request is dropped.
    let report = deletions.delete(&user_id).await?;
    Ok(Json(json!({
        "status": "deletion_confirmed",
        "details": report,
        "message": "All of your data has been permanently deleted: connected tools' tokens revoked, \
                    query history, archive, profile, configuration, webhooks and API tokens. \
                    This cannot be undone.",
    })))
}
