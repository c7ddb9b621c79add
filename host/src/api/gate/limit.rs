//! The rate limits at the gate: every answer is charged to its subject
//! (the user, or the client's address) in the endpoint's bucket, except an
//! idempotent replay; the [`Decision`] goes with the response so that
//! [`super::observe`] shows the windows on it.

use axum::extract::{Request, State};
use axum::http::Extensions;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::RequestStart;
use crate::access::charge::unreadable_windows;
use crate::access::{Gate, Identity, Refusal, charge_identity, with_decision};
use crate::api::routes::Endpoint;
use crate::error::ApiError;
use crate::limits::{Bucket, Decision};

/// The bucket a request is charged to.
fn bucket(identity: Option<&Identity>, endpoint: Option<Endpoint>) -> Bucket {
    match (identity, endpoint) {
        (Some(Identity::Valid(_) | Identity::Unchecked { .. }), Some(endpoint)) => {
            endpoint.bucket()
        }
        (Some(Identity::Valid(_)), None) => Bucket::Other("unmatched"),
        _ => Bucket::Anonymous,
    }
}

fn subject_and_bucket(extensions: &Extensions) -> (String, Bucket) {
    let identity = extensions.get::<Identity>();
    let endpoint = extensions.get::<Endpoint>().copied();
    let subject = identity.map_or_else(|| "addr:unknown".to_string(), Identity::subject);
    (subject, bucket(identity, endpoint))
}

/// Layer: charges the request; refuses it (429) when a window is full.
pub async fn charge(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let decision = match charged(&gate, request.extensions()).await {
        Ok(decision) => decision,
        Err(refusal) => return refusal.into_response(),
    };
    if request.extensions().get::<Endpoint>() == Some(&Endpoint::Query)
        && let Some(RequestStart(started)) = request.extensions().get::<RequestStart>()
    {
        gate.metrics.observe_stage("auth_limits", started.elapsed());
    }
    with_decision(next.run(request).await, decision)
}

/// Charges the request, durably (see `limits.rs`); a 429 names the
/// endpoint.
async fn charged(gate: &Gate, extensions: &Extensions) -> Result<Decision, Refusal> {
    let (_, bucket) = subject_and_bucket(extensions);
    let endpoint = extensions.get::<Endpoint>().copied();
    let what = endpoint.map_or("this client", Endpoint::label);
    charge_identity(gate, extensions.get::<Identity>(), bucket, what).await
}

/// The windows as they are, uncharged (an idempotent replay).
pub async fn peek(gate: &Gate, extensions: &Extensions) -> Result<Decision, Response> {
    let (subject, bucket) = subject_and_bucket(extensions);
    let peeked = gate.limiter.peek(&subject, bucket).await;
    peeked.map_err(|error| unreadable_windows(gate, bucket, error))
}

/// Answers `error` (a refused body), charged: the limits' 429 first when a
/// window is full.
pub async fn refuse(gate: &Gate, extensions: &Extensions, error: ApiError) -> Response {
    match charged(gate, extensions).await {
        Ok(decision) => with_decision(error.into_response(), decision),
        Err(refusal) => refusal.into_response(),
    }
}
