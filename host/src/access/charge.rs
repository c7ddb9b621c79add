//! Charging a request to the limits as `/v1` and `/mcp` both do, the
//! contract's error for a refusal (also the MCP tools'), and the six
//! rate-limit headers that show the windows on the answers.

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};

use super::{Gate, Identity};
use crate::error::{ApiError, ErrorType};
use crate::limits::{Bucket, Decision, Refused};

/// A request turned away before it is answered, as the contract's error
/// and the windows to show on it.
pub struct Refusal {
    pub error: ApiError,
    pub decision: Decision,
}

impl Refusal {
    /// The limits' refusal as the contract's error: a full window is a 429
    /// naming `what` was limited; windows that could not be read answer
    /// 503 when storage is away, 500 otherwise.
    pub fn from_limits(refused: Refused, what: &str) -> Refusal {
        match refused {
            Refused::Full(decision) => Refusal {
                error: limited(decision, what),
                decision,
            },
            Refused::Unreadable(error, decision) => Refusal {
                error: ApiError::from(error),
                decision,
            },
        }
    }

    pub fn into_response(self) -> Response {
        with_decision(self.error.into_response(), self.decision)
    }
}

/// Charges `identity` (the address when there is none) in `bucket`, as
/// `/v1` and `/mcp` both do (`what` names the endpoint in a 429). A token
/// that could not be checked is charged to nobody (whose request it is is
/// unknown: not the address, as an anonymous one would be), and answers
/// 503 when storage is away, 500 otherwise, showing nothing remaining (the
/// limits fail closed).
pub async fn charge_identity(
    gate: &Gate,
    identity: Option<&Identity>,
    bucket: Bucket,
    what: &str,
) -> Result<Decision, Refusal> {
    if let Some(Identity::Unchecked { unavailable, .. }) = identity {
        let error = match unavailable {
            true => ApiError::unavailable("the bearer token could not be checked"),
            false => ApiError::internal("the bearer token could not be checked"),
        };
        let decision = gate.limiter.unknown(bucket);
        return Err(Refusal { error, decision });
    }
    let subject = identity.map_or_else(|| "addr:unknown".to_string(), Identity::subject);
    let admitted = gate.limiter.admit(&subject, bucket).await;
    admitted.map_err(|refused| Refusal::from_limits(refused, what))
}

/// The answer when the windows cannot be read (as when charging).
pub(crate) fn unreadable_windows(gate: &Gate, bucket: Bucket, error: anyhow::Error) -> Response {
    let refusal = Refusal {
        error: ApiError::from(error),
        decision: gate.limiter.unknown(bucket),
    };
    refusal.into_response()
}

pub fn with_decision(mut response: Response, decision: Decision) -> Response {
    response.extensions_mut().insert(decision);
    response
}

/// The 429 of a full window (`what` names what was limited).
fn limited(decision: Decision, what: &str) -> ApiError {
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
