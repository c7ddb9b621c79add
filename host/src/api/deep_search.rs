//! `POST /v1/deep_search`: the deep search service's answer as JSON.

use axum::extract::State;
use axum::{Extension, Json};

use super::App;
use super::gate::Caller;
use super::json::ApiJson;
use crate::deep_search::{self, DeepSearchAnswer};
use crate::error::ApiError;
use quarry_guard::bodies::DeepSearchBody;

pub async fn deep_search(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    ApiJson(body): ApiJson<DeepSearchBody>,
) -> Result<Json<DeepSearchAnswer>, ApiError> {
    Ok(Json(
        deep_search::search(&app, &caller.user.id, body).await?,
    ))
}
