//! `POST /v1/query`: the query service's answer as JSON, at most once per
//! `Idempotency-Key`.

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};

use super::App;
use super::gate::idempotency;
use super::gate::{BodyHash, Caller};
use super::json::ApiJson;
use crate::error::ApiError;
use crate::query::{self, Keyed, Question};
use quarry_guard::bodies::QueryBody;

pub async fn query(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Extension(BodyHash(body_hash)): Extension<BodyHash>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<QueryBody>,
) -> Result<Response, ApiError> {
    let key = idempotency::key_of(&headers)?;
    let question = Question {
        query: body.query,
        keywords: body.keywords,
        connectors: body.connectors,
        max_results: body.max_results,
    };
    let user_id = &caller.user.id;
    let json = match key {
        None => {
            let answered = query::answer(&app, user_id, question, None).await?;
            serde_json::to_vec(&answered.answer)?
        }
        Some(key) => {
            let keyed = (key, body_hash);
            match query::answer_with_key(&app, user_id, question, keyed, None).await? {
                Keyed::Answered { json, .. } => json,
                Keyed::Replayed(json) => return Ok(idempotency::replay_response(json)),
            }
        }
    };
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}
