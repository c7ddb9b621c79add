//! Charging a request to the limits, as `/v1` and `/mcp` both do, and the
//! six rate-limit headers that show the windows on their answers.

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};

use super::{Gate, Identity};
use crate::error::{ApiError, ErrorType};
use crate::limits::{Bucket, Decision};

/// Charges `identity` (the address when there is none) in `bucket`: the
/// one way `/v1` and `/mcp` charge a request. A token that could not be
/// checked is charged to nobody (whose request it is is unknown: not the
/// address, as an anonymous one would be), and answers 503 when storage is
/// away, 500 otherwise; windows that cannot be read answer their error.
/// Either answer carries a decision showing nothing remaining (the limits
/// fail closed).
pub async fn charge_identity(
    gate: &Gate,
    identity: Option<&Identity>,
    bucket: Bucket,
) -> Result<Decision, Response> {
    if let Some(Identity::Unchecked { unavailable, .. }) = identity {
        let error = match unavailable {
            true => ApiError::unavailable("the bearer token could not be checked"),
            false => ApiError::internal("the bearer token could not be checked"),
        };
        return Err(with_decision(
            error.into_response(),
            gate.limiter.unknown(bucket),
        ));
    }
    let subject = identity.map_or_else(|| "addr:unknown".to_string(), Identity::subject);
    let charged = gate.limiter.charge(&subject, bucket).await;
    charged.map_err(|error| unreadable_windows(gate, bucket, error))
}

pub(crate) fn unreadable_windows(gate: &Gate, bucket: Bucket, error: anyhow::Error) -> Response {
    let response = ApiError::from(error).into_response();
    with_decision(response, gate.limiter.unknown(bucket))
}

pub fn with_decision(mut response: Response, decision: Decision) -> Response {
    response.extensions_mut().insert(decision);
    response
}

/// The 429 of a full window (`what` names what was limited; `/mcp` and
/// its tools use it too).
pub fn limited(decision: Decision, what: &str) -> ApiError {
    let window = if decision.remaining_day == 0 {
        "day"
    } else {
        "minute"
    };
    ApiError::new(
        ErrorType::RateLimited,
        format!(
            "rate limit exceeded for {what} ({window} window): retry in {} seconds",
            decision.retry_after
        ),
    )
    .with_retry_after(decision.retry_after)
}

/// The request id and the six rate-limit headers (also `/mcp`'s).
pub fn decorate(headers: &mut HeaderMap, request_id: &str, decision: Option<&Decision>) {
    headers.insert(
        HeaderName::from_static("x-request-id"),
        HeaderValue::from_str(request_id).expect("ascii id"),
    );
    let Some(d) = decision else { return };
    let pairs: [(&'static str, i64); 6] = [
        ("x-ratelimit-limit-minute", d.limit_minute.into()),
        ("x-ratelimit-remaining-minute", d.remaining_minute.into()),
        ("x-ratelimit-reset-minute", d.reset_minute),
        ("x-ratelimit-limit-day", d.limit_day.into()),
        ("x-ratelimit-remaining-day", d.remaining_day.into()),
        ("x-ratelimit-reset-day", d.reset_day),
    ];
    for (name, value) in pairs {
        headers.insert(HeaderName::from_static(name), HeaderValue::from(value));
    }
}
