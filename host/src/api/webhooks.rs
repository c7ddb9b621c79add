//! `POST /v1/webhooks` (register), `GET /v1/webhooks` (list),
//! `DELETE /v1/webhooks/{id}` and `POST /v1/webhooks/{id}/test`. The logic
//! lives in [`crate::webhooks`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::gate::Caller;
use super::json::ApiJson;
use crate::calendar::rfc3339;
use crate::error::ApiError;
use crate::webhooks::registrations::Registration;
use crate::webhooks::{RegisterError, WEBHOOK_TEST};
use quarry_guard::bodies::{RegisterBody, TestBody};

pub async fn register(
    State(webhooks): State<Arc<crate::webhooks::Webhooks>>,
    Extension(caller): Extension<Caller>,
    ApiJson(body): ApiJson<RegisterBody>,
) -> Result<Response, ApiError> {
    let registration = webhooks
        .register(&caller.user.id, &body.url, body.events)
        .await
        .map_err(|error| match error {
            RegisterError::Invalid(message) => ApiError::bad_request(message),
            RegisterError::Internal(error) => ApiError::from(error),
        })?;
    let mut shown = render(&registration);
    // The only time the secret is shown.
    shown["secret"] = json!(registration.secret);
    Ok((StatusCode::CREATED, Json(shown)).into_response())
}

pub async fn list(
    State(webhooks): State<Arc<crate::webhooks::Webhooks>>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<Value>, ApiError> {
    let webhooks: Vec<Value> = webhooks.list(&caller.user.id)?.iter().map(render).collect();
    Ok(Json(json!({ "webhooks": webhooks })))
}

pub async fn remove(
    State(webhooks): State<Arc<crate::webhooks::Webhooks>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if webhooks.unregister(&caller.user.id, &id)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(&id))
    }
}

pub async fn test(
    State(webhooks): State<Arc<crate::webhooks::Webhooks>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    if !body.iter().all(u8::is_ascii_whitespace) {
        super::json::parse::<TestBody>(&body)?;
    }
    let Some(queued) = webhooks.send_test(&caller.user.id, &id)? else {
        return Err(not_found(&id));
    };
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({
            "webhook_id": id,
            "message_id": queued.message_id,
            "type": WEBHOOK_TEST,
            "queued_at": rfc3339(queued.queued_at),
        })),
    )
        .into_response())
}

/// A registration as listed: never its secret.
fn render(registration: &Registration) -> Value {
    json!({
        "id": registration.id,
        "url": registration.url,
        "events": registration.events,
        "created_at": rfc3339(registration.created_at),
    })
}

/// Another user's webhook is as unknown as one that never existed.
fn not_found(id: &str) -> ApiError {
    let shown: String = id.chars().take(64).collect();
    ApiError::not_found(format!("no webhook {shown:?} for this user"))
}
